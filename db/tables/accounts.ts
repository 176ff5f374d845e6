import { sql } from 'drizzle-orm';
import { bigint, check, integer, index, pgEnum, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

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
  /** The account as a Stripe customer (`cus_…`), made the first time it needs one; null without Stripe. */
  stripeCustomerId: text('stripe_customer_id').unique(),
  /**
   * Its Stripe subscription (`sub_…`) and that subscription's own
   * status (`past_due` shows as a warning); null without one.
   */
  stripeSubscriptionId: text('stripe_subscription_id'),
  stripeSubscriptionStatus: text('stripe_subscription_status'),
  /**
   * When someone in the account acknowledged that the tools about individuals (criminal records, the
   * people finder) are not for regulated purposes (src/accounts/permissible-use.ts), and who (a user or
   * key id); null until then, and their runs are refused.
   */
  permissibleUseAcknowledgedAt: timestamp('permissible_use_acknowledged_at', { withTimezone: true }),
  permissibleUseAcknowledgedBy: text('permissible_use_acknowledged_by'),
  /** When the account first downloaded a file of rows (any face, any format); null until then. */
  firstDownloadAt: timestamp('first_download_at', { withTimezone: true }),
});
export type Account = typeof accountTable.$inferSelect;
export type NewAccount = typeof accountTable.$inferInsert;

/**
 * A person who signs in to the console; a member of accounts (identity.ts). The email is stored
 * case-folded, so it is unique whatever case it is typed in. No password hash until one is set (the
 * demo account's owner, before the link printed at first start is followed).
 */
export const appUserTable = pgTable('app_user', {
  id: text('id').primaryKey(),
  email: text('email').notNull().unique(),
  name: text('name'),
  /** argon2id, in the PHC string format (algorithm, parameters, salt and hash together). */
  passwordHash: text('password_hash'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  /**
   * When the user showed the mailbox is theirs by following a link mailed to it (the verification link
   * of a sign-up, or an invitation); null until then. Users made before verification existed count as verified.
   */
  emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true }),
  /**
   * The account this user's sign-up opened, whose trial credits verifying the
   * email grants (once per mailbox); null for users who joined otherwise.
   */
  signupAccountId: text('signup_account_id').references(() => accountTable.id, { onDelete: 'set null' }),
});
export type AppUser = typeof appUserTable.$inferSelect;

/**
 * Why a key was revoked: `revoked` by an owner or admin (a key the CLI revoked has no reason and reads
 * the same); `creator_removed` because the user who created it left the account or was removed from it.
 */
export const KEY_REVOKED_REASONS = ['revoked', 'creator_removed'] as const;
export type KeyRevokedReason = (typeof KEY_REVOKED_REASONS)[number];

/**
 * API keys are stored only as a SHA-256 hash plus a display prefix; the full key is shown once. A key
 * created in the console acts with at most its creator's current role (src/accounts/roles.ts).
 */
export const apiKeyTable = pgTable(
  'api_key',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    prefix: text('prefix').notNull().unique(),
    hash: text('hash').notNull().unique(),
    /** What the account calls the key (its console list); keys made before names had one are "API key". */
    name: text('name').notNull().default('API key'),
    /**
     * The user who created it in the console, whose current role bounds its rights; null for the
     * operator's keys (the CLI's, an account's first key, the demo's), which keep every key right.
     */
    createdBy: text('created_by').references(() => appUserTable.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** After this the key is refused like a revoked one; null: never. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    /** Last authenticated use, at most a minute stale (written at most once a minute per key and process). */
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    /** Why it was revoked (KEY_REVOKED_REASONS); null while it works. */
    revokedReason: text('revoked_reason', { enum: KEY_REVOKED_REASONS }),
  },
  (t) => [
    index('api_key_account_idx').on(t.accountId),
    check(
      'api_key_revoked_reason_known',
      sql`${t.revokedReason} in (${sql.raw(KEY_REVOKED_REASONS.map((r) => `'${r}'`).join(', '))})`,
    ),
  ],
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
    /** The pipeline whose single hold the entry takes or gives back (src/workflows/pipelines.ts). */
    pipelineId: text('pipeline_id'),
    /**
     * What paid or took back the money at the payment provider: the PaymentIntent (`pi_…`) of a card
     * purchase and of its refund or dispute, the invoice (`in_…`) of a plan grant; null otherwise.
     * Unique per kind where set, so one payment is credited once and one invoice granted once.
     */
    paymentRef: text('payment_ref'),
    note: text('note'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('ledger_account_idx').on(t.accountId, t.id),
    // A run's and a pipeline's entries, by index: the statement's lines (src/billing/statement.ts).
    index('ledger_run_idx').on(t.runId, t.id).where(sql`${t.runId} is not null`),
    index('ledger_pipeline_idx').on(t.pipelineId, t.id).where(sql`${t.pipelineId} is not null`),
    uniqueIndex('ledger_payment_once_idx')
      .on(t.kind, t.paymentRef)
      .where(sql`${t.paymentRef} is not null and ${t.kind} in ('purchase', 'plan_grant')`),
  ],
);
export type LedgerEntry = typeof ledgerTable.$inferSelect;
