/**
 * Requests from people about their data (docs/privacy.md): the identifiers a request names, checked and
 * normalised, and the *receipt* each request leaves (`privacy_request`). Glossary: an *erasure* removes
 * what is held about the person and keeps them out for good (GDPR art. 17, or a confirmed opt-out); an
 * *access request* answers what is held (art. 15). A receipt keeps the identifiers as keyed hashes only
 * (the audit log's `personHash`), never the identifiers themselves.
 */
import { and, desc, eq, lt, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../db/client.ts';
import {
  type HashedListType,
  type PrivacyCounts,
  type PrivacyRequest,
  type PrivacyRequestKind,
  privacyRequestTable,
} from '../../db/tables/privacy.ts';
import { personHash } from '../audit/audit.ts';
import { AppError, ValidationError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { storableText, unstorable } from '../shared/params.ts';
import { dropHash } from './drop/hash.ts';
import { standardizeEmail, standardizePhone } from './drop/standardize.ts';
import { hashEntry, normalIdentifier } from './suppression.ts';

export type { PrivacyCounts } from '../../db/tables/privacy.ts';

/** An identifier of a person as a request gives it. */
export interface PersonIdentifier {
  kind: 'email' | 'phone';
  value: string;
}

export interface ErasureRequest {
  identifiers: PersonIdentifier[];
  /** 'erasure' for the operator's requests, 'opt_out' for a person's own confirmed opt-out. */
  source: 'erasure' | 'opt_out';
  /** Who asked, as recorded on the receipt: 'operator', 'opt-out page', … */
  requestedBy: string;
  note?: string;
}

export interface AccessRequest {
  identifiers: PersonIdentifier[];
  requestedBy: string;
  note?: string;
}

/** What a request did, as kept: no identifier in the clear. */
export interface PrivacyReceipt {
  id: string;
  kind: PrivacyRequestKind;
  createdAt: Date;
  /** An erasure's suppression source (`erasure` or `opt_out`); null for an access request. */
  source: 'erasure' | 'opt_out' | null;
  requestedBy: string;
  note: string | null;
  /** Each identifier's kind and keyed hash (`personHash`). */
  identifiers: { kind: 'email' | 'phone'; hash: string }[];
  counts: PrivacyCounts;
}

/** At most this many identifiers a request (one person's addresses and numbers). */
export const MAX_IDENTIFIERS = 10;

/** An identifier as compared: normalised (`value`), its DROP hash (the index's key) and its suppression entry. */
export interface NormalIdentifier {
  kind: 'email' | 'phone';
  value: string;
  listType: HashedListType;
  dropHash: string;
  /** The `hash` suppression entry that keeps the person out (`email:<DROP hash>`). */
  entry: string;
}

/**
 * The identifiers normalised (an e-mail in lower case, a phone in E.164), duplicates once; 400
 * `validation_failed` naming each one that is not an e-mail address or a phone number
 * (`identifiers.<i>.value`), before anything is done.
 */
export function normalIdentifiers(identifiers: readonly PersonIdentifier[]): NormalIdentifier[] {
  if (!Array.isArray(identifiers) || identifiers.length === 0 || identifiers.length > MAX_IDENTIFIERS)
    throw new ValidationError([
      { path: 'identifiers', message: `give from 1 to ${MAX_IDENTIFIERS} e-mail addresses or phone numbers` },
    ]);
  const issues: { path: string; message: string }[] = [];
  const found = new Map<string, NormalIdentifier>();
  identifiers.forEach((identifier, i) => {
    const kind = identifier?.kind;
    const raw = typeof identifier?.value === 'string' ? identifier.value : '';
    if (kind !== 'email' && kind !== 'phone') {
      issues.push({ path: `identifiers.${i}.kind`, message: 'must be email or phone' });
      return;
    }
    const normal = unstorable(raw) ? { refused: unstorable(raw) as string } : normalIdentifier(kind, raw);
    const standard = 'value' in normal ? (kind === 'email' ? standardizeEmail : standardizePhone)(normal.value) : '';
    if ('refused' in normal || !standard) {
      issues.push({ path: `identifiers.${i}.value`, message: 'refused' in normal ? normal.refused : 'is empty' });
      return;
    }
    const hash = dropHash(standard);
    found.set(`${kind}:${normal.value}`, {
      kind,
      value: normal.value,
      listType: kind,
      dropHash: hash,
      entry: hashEntry(kind, hash),
    });
  });
  if (issues.length > 0) throw new ValidationError(issues);
  return [...found.values()];
}

/** The receipt's note and requester, checked like the identifiers. */
export function checkRequester(requestedBy: string, note: string | undefined) {
  const issues: { path: string; message: string }[] = [];
  const by = typeof requestedBy === 'string' ? requestedBy.trim() : '';
  if (!by || by.length > 100 || unstorable(by))
    issues.push({ path: 'requestedBy', message: 'must say who asked, in at most 100 characters' });
  if (note !== undefined && (typeof note !== 'string' || note.length > 500 || unstorable(note)))
    issues.push({ path: 'note', message: 'must be text of at most 500 characters' });
  if (issues.length > 0) throw new ValidationError(issues);
  return { requestedBy: by, note: note?.trim() || null };
}

/** A request as the operator's faces take it (the operator API's body; the command line builds the same). */
export const personRequestInput = z
  .object({
    identifiers: z
      .array(
        z
          .object({
            kind: z.enum(['email', 'phone'], { message: 'must be email or phone' }),
            value: storableText().min(1, 'must not be empty').max(320).describe('The address or number.'),
          })
          .strict(),
      )
      .min(1, 'at least one identifier')
      .max(MAX_IDENTIFIERS, `at most ${MAX_IDENTIFIERS} identifiers`)
      .describe('The person’s e-mail addresses and phone numbers (a number without a country code is a US one).'),
    note: storableText().max(500).optional().describe('For whoever reads the receipt later; no identifier in it.'),
    requestedBy: storableText()
      .trim()
      .min(1)
      .max(100)
      .optional()
      .describe('Who asked, as the receipt records it; default `operator API`.'),
  })
  .strict();

export const newReceiptId = () => `prq_${randomBase62(16)}`;

/** The keyed hashes a receipt keeps of the identifiers, as `<kind>:<hash>`. */
export const personHashesOf = (secret: Buffer, person: readonly NormalIdentifier[]) =>
  person.map((p) => `${p.kind}:${personHash(secret, p.kind, p.value)}`);

const receiptOf = (row: PrivacyRequest): PrivacyReceipt => ({
  id: row.id,
  kind: row.kind,
  createdAt: row.createdAt,
  source: row.source === 'erasure' || row.source === 'opt_out' ? row.source : null,
  requestedBy: row.requestedBy,
  note: row.note,
  identifiers: row.personHashes.map((entry) => {
    const at = entry.indexOf(':');
    return { kind: entry.slice(0, at) === 'phone' ? 'phone' : 'email', hash: entry.slice(at + 1) };
  }),
  counts: row.counts,
});

/** Writes a receipt, in the request's transaction. */
export async function insertReceipt(tx: Executor, receipt: Omit<PrivacyRequest, 'createdAt'>): Promise<PrivacyReceipt> {
  const [row] = await tx.insert(privacyRequestTable).values(receipt).returning();
  if (!row) throw new Error('insert into privacy_request returned no row');
  return receiptOf(row);
}

/** Receipts, newest first; `before` the id of the last of the page before (400 when it names none). */
export async function listReceipts(
  db: Executor,
  page: { limit: number; before?: string } = { limit: 50 },
): Promise<PrivacyReceipt[]> {
  const t = privacyRequestTable;
  const cursor = page.before && !unstorable(page.before) ? await findRow(db, page.before) : undefined;
  if (page.before !== undefined && !cursor)
    throw new ValidationError([{ path: 'before', message: 'must be the id of a receipt (nextBefore of a page)' }]);
  const rows = await db
    .select()
    .from(t)
    .where(
      cursor
        ? or(lt(t.createdAt, cursor.createdAt), and(eq(t.createdAt, cursor.createdAt), lt(t.id, cursor.id)))
        : undefined,
    )
    .orderBy(desc(t.createdAt), desc(t.id))
    .limit(page.limit);
  return rows.map(receiptOf);
}

async function findRow(db: Executor, id: string): Promise<PrivacyRequest | undefined> {
  const [row] = await db.select().from(privacyRequestTable).where(eq(privacyRequestTable.id, id));
  return row;
}

/** One receipt by id; 404 `not_found` when there is none. */
export async function findReceipt(db: Executor, id: string): Promise<PrivacyReceipt> {
  const row = unstorable(id) ? undefined : await findRow(db, id);
  if (!row) throw new AppError(404, 'not_found', `No privacy request ${id}.`);
  return receiptOf(row);
}

/** The receipts of earlier requests naming any of these keyed hashes, oldest first. */
export async function receiptsNaming(db: Executor, personHashes: readonly string[]): Promise<PrivacyReceipt[]> {
  if (personHashes.length === 0) return [];
  const wanted = JSON.stringify(personHashes);
  const rows = await db
    .select()
    .from(privacyRequestTable)
    .where(sql`${privacyRequestTable.personHashes} && array(select json_array_elements_text(${wanted}::json))`)
    .orderBy(privacyRequestTable.createdAt, privacyRequestTable.id);
  return rows.map(receiptOf);
}

const countsView = z
  .object({
    people: z.int().describe('Catalog people (lead database) deleted, or found by an access request.'),
    propertyOwners: z.int().describe('Properties whose owner’s name, address, e-mails and phones were cleared.'),
    rentalHosts: z.int().describe('Rental hosts whose name, e-mail and phone were cleared.'),
    runRows: z.int().describe('Rows of runs still within their retention.'),
    runs: z.int().describe('The runs those rows belonged to.'),
    deliveredLeads: z.int().describe('Records of the people delivered to accounts by the lead database.'),
    datasetIdentities: z.int().describe('Identities of accounts’ datasets that named the person.'),
    enrichmentJobs: z
      .int()
      .optional()
      .describe('Enrichment jobs whose kept rows named the person: deleted by an erasure, read out by an access.'),
    accounts: z.int().describe('Accounts that held the person (an erasure gives each a suppression entry).'),
    suppressions: z.int().describe('Suppression entries: added by an erasure, held at an access request.'),
    shared: z
      .int()
      .describe('Records reached only through an identifier that names other people too: kept, and not read out.'),
  })
  .strict();

/** A receipt as the operator's faces answer it. */
export const receiptView = z
  .object({
    id: z.string().describe('prq_…'),
    kind: z.enum(['erasure', 'access']),
    source: z.enum(['erasure', 'opt_out']).nullable().describe('An erasure’s: the operator’s, or the person’s own.'),
    requestedBy: z.string(),
    note: z.string().nullable(),
    identifiers: z
      .array(z.object({ kind: z.enum(['email', 'phone']), hash: z.string() }).strict())
      .describe('Keyed hashes (HMAC-SHA256 under the installation’s secret), as the audit log writes them.'),
    counts: countsView,
    createdAt: z.string(),
  })
  .strict();

export const receiptAnswer = (r: PrivacyReceipt): z.infer<typeof receiptView> => ({
  id: r.id,
  kind: r.kind,
  source: r.source,
  requestedBy: r.requestedBy,
  note: r.note,
  identifiers: r.identifiers,
  counts: r.counts,
  createdAt: r.createdAt.toISOString(),
});
