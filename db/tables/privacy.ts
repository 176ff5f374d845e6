import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { accountTable } from './accounts.ts';
import { runTable } from './runs.ts';

/** What a suppression entry names (src/privacy/suppression.ts normalises each). */
export const SUPPRESSION_KINDS = ['email', 'domain', 'phone', 'profile', 'hash'] as const;
export type SuppressionKind = (typeof SUPPRESSION_KINDS)[number];

/** Where an entry came from. */
export const SUPPRESSION_SOURCES = ['account', 'operator', 'opt_out', 'erasure', 'drop'] as const;
export type SuppressionSource = (typeof SUPPRESSION_SOURCES)[number];

/**
 * People no row may carry out of the gateway: the deployment's list (no account: every account's rows)
 * and each account's own do-not-contact list. Values are normalised (an email in lower case, a phone in
 * E.164, a profile URL without its scheme, `www.` or query, a DROP hash as `<list type>:<hash>`).
 */
export const suppressionTable = pgTable(
  'suppression',
  {
    id: text('id').primaryKey(),
    /** Null: the operator's entry, for every account. */
    accountId: text('account_id').references(() => accountTable.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: SUPPRESSION_KINDS }).notNull(),
    value: text('value').notNull(),
    source: text('source', { enum: SUPPRESSION_SOURCES }).notNull(),
    note: text('note'),
    createdBy: text('created_by'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('suppression_entry_idx').on(sql`coalesce(${t.accountId}, '')`, t.kind, t.value),
    index('suppression_value_idx').on(t.kind, t.value),
  ],
);
export type Suppression = typeof suppressionTable.$inferSelect;

/** DROP list types the gateway holds records for, as stored here (lower case). */
export const HASHED_LIST_TYPES = ['email', 'phone'] as const;
export type HashedListType = (typeof HASHED_LIST_TYPES)[number];

/** Where an indexed identifier was found. */
export const IDENTIFIER_SOURCES = ['person', 'property', 'rental_host', 'run_item'] as const;
export type IdentifierSource = (typeof IDENTIFIER_SOURCES)[number];

/**
 * Where each person's identifiers are held, by their DROP hash (docs/privacy.md): the catalog's people,
 * property owners and rental hosts (kept current by triggers, migration 0035, on every write however
 * made), and the rows runs stored (written with each batch, removed with the run). A DROP list and an
 * erasure find a person's records here by one index lookup.
 */
export const identifierHashTable = pgTable(
  'identifier_hash',
  {
    listType: text('list_type', { enum: HASHED_LIST_TYPES }).notNull(),
    /** SHA-256 of the DROP-standardised identifier, Base64 (as DROP lists carry it). */
    hash: text('hash').notNull(),
    source: text('source', { enum: IDENTIFIER_SOURCES }).notNull(),
    /** The catalog row's id (sources other than run_item). */
    recordId: bigint('record_id', { mode: 'number' }),
    runId: text('run_id').references(() => runTable.id, { onDelete: 'cascade' }),
    seq: integer('seq'),
  },
  (t) => [
    index('identifier_hash_idx').on(t.hash, t.listType),
    index('identifier_hash_record_idx').on(t.source, t.recordId),
    index('identifier_hash_run_idx').on(t.runId, t.seq),
  ],
);

export const DROP_CYCLE_STATES = ['reading', 'matching', 'answered', 'uploaded'] as const;
export type DropCycleState = (typeof DROP_CYCLE_STATES)[number];

/** One downloaded DROP archive and what became of it; the archive's name makes a re-run the same cycle. */
export const dropCycleTable = pgTable('drop_cycle', {
  id: text('id').primaryKey(),
  fileName: text('file_name').notNull().unique(),
  state: text('state', { enum: DROP_CYCLE_STATES }).notNull().default('reading'),
  workItems: integer('work_items').notNull().default(0),
  removed: integer('removed').notNull().default(0),
  deleted: integer('deleted').notNull().default(0),
  optedOut: integer('opted_out').notNull().default(0),
  notFound: integer('not_found').notNull().default(0),
  /** Catalog and run rows deleted. */
  recordsDeleted: integer('records_deleted').notNull().default(0),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
  answeredAt: timestamp('answered_at', { withTimezone: true }),
  uploadedAt: timestamp('uploaded_at', { withTimezone: true }),
});
export type DropCycle = typeof dropCycleTable.$inferSelect;

/** A cycle's work items as read, in file order, each with the status it was answered (null until matched). */
export const dropWorkItemTable = pgTable(
  'drop_work_item',
  {
    cycleId: text('cycle_id')
      .notNull()
      .references(() => dropCycleTable.id, { onDelete: 'cascade' }),
    /** The CSV it came from and its line: the response lists items in this order. */
    file: text('file').notNull(),
    line: integer('line').notNull(),
    /** As in the archive (`Email`, `NDZ`…). */
    listType: text('list_type').notNull(),
    workItemId: text('work_item_id').notNull(),
    hash: text('hash').notNull(),
    /** A withdrawn identifier (the Removed file): never answered. */
    removed: boolean('removed').notNull().default(false),
    status: smallint('status'),
  },
  (t) => [
    primaryKey({ columns: [t.cycleId, t.file, t.line] }),
    // The next chunk to answer, read without walking past the items answered.
    index('drop_work_item_open_idx').on(t.cycleId, t.file, t.line).where(sql`${t.status} is null and not ${t.removed}`),
  ],
);

/**
 * The identifiers of the people a cycle deleted: a later work item of the same cycle naming one of them
 * (their phone on the Phone list after their address on the Email list) is answered deleted too.
 */
export const dropGoneHashTable = pgTable(
  'drop_gone_hash',
  {
    cycleId: text('cycle_id')
      .notNull()
      .references(() => dropCycleTable.id, { onDelete: 'cascade' }),
    listType: text('list_type').notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [primaryKey({ columns: [t.cycleId, t.listType, t.hash] })],
);

/** What a person asked about their data: erasure (GDPR art. 17) or access (art. 15). */
export const PRIVACY_REQUEST_KINDS = ['erasure', 'access'] as const;
export type PrivacyRequestKind = (typeof PRIVACY_REQUEST_KINDS)[number];

/**
 * What a request found about the person, and for an erasure removed (src/privacy/requests.ts): catalog
 * people, property owners and rental hosts, stored run rows and their runs, delivered-lead records, dataset
 * identities, the accounts that held the person, suppression entries (added by an erasure, held at an
 * access request), and records left because an identifier names other people too.
 */
export interface PrivacyCounts {
  people: number;
  propertyOwners: number;
  rentalHosts: number;
  runRows: number;
  runs: number;
  deliveredLeads: number;
  datasetIdentities: number;
  /** Enrichment jobs whose kept rows named the person: deleted, or read out (absent on older receipts). */
  enrichmentJobs?: number;
  accounts: number;
  suppressions: number;
  /** Records reached only through an identifier that names other people too: kept, and not read out. */
  shared: number;
}

/**
 * The receipt of each request a person made about their data, kept as the record of it
 * (docs/privacy.md): who asked, the identifiers as keyed hashes only (`<kind>:<hash>`, the audit log's
 * `personHash`; never the identifier itself), and what was found and removed, counted.
 */
export const privacyRequestTable = pgTable(
  'privacy_request',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: PRIVACY_REQUEST_KINDS }).notNull(),
    /** An erasure's suppression source: `erasure` (the operator's) or `opt_out` (the person's own); null for access. */
    source: text('source', { enum: SUPPRESSION_SOURCES }),
    /** Who asked, as written on the receipt: `operator`, `opt-out page`… */
    requestedBy: text('requested_by').notNull(),
    note: text('note'),
    personHashes: text('person_hashes').array().notNull(),
    counts: jsonb('counts').$type<PrivacyCounts>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('privacy_request_created_idx').on(t.createdAt.desc(), t.id.desc()),
    index('privacy_request_person_idx').using('gin', t.personHashes),
  ],
);
export type PrivacyRequest = typeof privacyRequestTable.$inferSelect;
