import { sql } from 'drizzle-orm';
import { check, index, integer, json, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { accountTable, appUserTable } from './accounts.ts';

/** What an enrichment job matched: people (lead enrichment) or local businesses. */
export const ENRICHMENT_JOB_KINDS = ['leads', 'local_businesses'] as const;
export type EnrichmentJobKind = (typeof ENRICHMENT_JOB_KINDS)[number];

/**
 * A file enriched in bulk from the console or GraphQL (src/endpoints/enrichment-jobs.ts): its counts, kept
 * as the account's history, and its rows, kept 48 hours like a run's result rows (`expiresAt`), then
 * deleted by the hourly housekeeping (`purgedAt`). Previews are not recorded.
 */
export const enrichmentJobTable = pgTable(
  'enrichment_job',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    /** The signed-in user who ran it; null for an API key, or once the user is deleted. */
    createdBy: text('created_by').references(() => appUserTable.id, { onDelete: 'set null' }),
    kind: text('kind', { enum: ENRICHMENT_JOB_KINDS }).notNull(),
    fileName: text('file_name').notNull(),
    total: integer('total').notNull(),
    matched: integer('matched').notNull(),
    notFound: integer('not_found').notNull(),
    skipped: integer('skipped').notNull(),
    /**
     * Each row as sent, with its outcome and what was found apart (`{input, status, matchedBy, found,
     * reasons}`), so a download applies the do-not-contact list again. json, not jsonb: keeps field order.
     */
    rows: json('rows'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** When the rows were deleted after `expiresAt`. */
    purgedAt: timestamp('purged_at', { withTimezone: true }),
  },
  (t) => [
    index('enrichment_job_account_created_idx').on(t.accountId, t.createdAt.desc(), t.id.desc()),
    index('enrichment_job_expires_idx').on(t.expiresAt).where(sql`${t.purgedAt} is null`),
    check('enrichment_job_kind_known', sql`${t.kind} in ('leads', 'local_businesses')`),
  ],
);
export type EnrichmentJob = typeof enrichmentJobTable.$inferSelect;
export type NewEnrichmentJob = typeof enrichmentJobTable.$inferInsert;
