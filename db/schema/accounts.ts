import { sql } from 'drizzle-orm';
import { bigint, integer, index, pgEnum, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const PLANS = ['starter', 'growth', 'scale'] as const;
export type Plan = (typeof PLANS)[number];
export const SUBSCRIPTION_STATUSES = ['ACTIVE', 'TRIAL', 'CANCELLED'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const planEnum = pgEnum('plan', PLANS);
export const subscriptionStatusEnum = pgEnum('subscription_status', SUBSCRIPTION_STATUSES);

export const accountTable = pgTable('account', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  plan: planEnum('plan').notNull().default('starter'),
  subscriptionStatus: subscriptionStatusEnum('subscription_status').notNull().default('ACTIVE'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
export type Account = typeof accountTable.$inferSelect;
export type NewAccount = typeof accountTable.$inferInsert;

/** API keys are stored only as a SHA-256 hash plus a display prefix; the full key is shown once. */
export const apiKeyTable = pgTable(
  'api_key',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    prefix: text('prefix').notNull().unique(),
    hash: text('hash').notNull().unique(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('api_key_account_idx').on(t.accountId)],
);
export type ApiKey = typeof apiKeyTable.$inferSelect;

/** Cached balances in integer micro-dollars; the ledger is the source of truth. */
export const walletTable = pgTable('wallet', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => accountTable.id, { onDelete: 'cascade' }),
  planMicros: bigint('plan_micros', { mode: 'bigint' }).notNull().default(sql`0`),
  purchasedMicros: bigint('purchased_micros', { mode: 'bigint' }).notNull().default(sql`0`),
  /**
   * RUNNING and ABORTING runs of the account. Kept on the row every start locks, so the start's
   * READY/RUNNING decision reads it in the same statement that takes the hold.
   */
  activeRuns: integer('active_runs').notNull().default(0),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
export type Wallet = typeof walletTable.$inferSelect;

export const LEDGER_KINDS = ['purchase', 'plan_grant', 'hold', 'charge', 'release', 'refund'] as const;
export const ledgerKindEnum = pgEnum('ledger_kind', LEDGER_KINDS);

/** Append-only money movements. */
export const ledgerTable = pgTable(
  'ledger_entry',
  {
    id: bigint('id', { mode: 'bigint' }).primaryKey().generatedAlwaysAsIdentity(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    kind: ledgerKindEnum('kind').notNull(),
    planMicros: bigint('plan_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    purchasedMicros: bigint('purchased_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    runId: text('run_id'),
    note: text('note'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('ledger_account_idx').on(t.accountId, t.id)],
);
export type LedgerEntry = typeof ledgerTable.$inferSelect;
