import { sql } from 'drizzle-orm';
import {
  bigint,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  varchar,
} from 'drizzle-orm/pg-core';
import { accountTable } from './accounts.ts';

/**
 * Request counters of the rate limiter, one row per key: requests reserved in the current window
 * (`points`) and when it ends (`expire`, epoch ms). Shared by every gateway process. UNLOGGED (set by
 * a migration): counters need no crash safety, and skipping the WAL keeps reservations cheap.
 */
export const rateLimitTable = pgTable('rate_limit', {
  key: varchar('key', { length: 255 }).primaryKey(),
  points: integer('points').notNull().default(0),
  expire: bigint('expire', { mode: 'number' }),
});

export const ALLOWANCE_KINDS = ['database', 'enrichment'] as const;
export type AllowanceKind = (typeof ALLOWANCE_KINDS)[number];

/** Records or matches used per account, kind and UTC day. */
export const dailyUsageTable = pgTable(
  'daily_usage',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    day: date('day', { mode: 'string' }).notNull(),
    kind: text('kind').notNull(),
    used: integer('used').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day, t.kind] })],
);

/** Responses of POSTs sent with an Idempotency-Key, kept 24 hours per account. */
export const idempotencyKeyTable = pgTable(
  'idempotency_key',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    responseStatus: smallint('response_status').notNull(),
    responseBody: jsonb('response_body').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().default(sql`now()`),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index('idempotency_key_created_idx').on(t.createdAt)],
);
