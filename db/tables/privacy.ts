import { index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { accountTable } from './accounts.ts';

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
