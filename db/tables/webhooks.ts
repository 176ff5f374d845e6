import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { accountTable } from './accounts.ts';
import { runTable } from './runs.ts';

/** Events a webhook may subscribe to: one per way a run ends. */
export const WEBHOOK_EVENTS = [
  'run.succeeded',
  'run.failed',
  'run.aborted',
  'run.timed_out',
  'schedule.paused',
  'pipeline.succeeded',
  'pipeline.failed',
  'pipeline.aborted',
  'connection.broken',
  'delivery.finished',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * Account-level webhooks. The signing secret (Standard Webhooks, `whsec_…`) is kept because every
 * delivery is signed with it; it is shown to the caller once, at creation.
 */
export const webhookTable = pgTable(
  'webhook',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    events: text('events').array().notNull(),
    description: text('description'),
    secret: text('secret').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('webhook_account_idx').on(t.accountId, t.createdAt)],
);
export type Webhook = typeof webhookTable.$inferSelect;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One event sent (or being sent) to one URL: the delivery log; its id is the `webhook-id` header. */
export const webhookDeliveryTable = pgTable(
  'webhook_delivery',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    /** Null for a run's own `webhookUrl`. */
    webhookId: text('webhook_id').references(() => webhookTable.id, { onDelete: 'cascade' }),
    runId: text('run_id').references(() => runTable.id, { onDelete: 'set null' }),
    event: text('event').notNull(),
    url: text('url').notNull(),
    payload: jsonb('payload').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    responseStatus: integer('response_status'),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (t) => [
    index('webhook_delivery_webhook_idx').on(t.webhookId, t.createdAt.desc(), t.id.desc()),
    index('webhook_delivery_run_idx').on(t.runId).where(sql`${t.runId} is not null`),
  ],
);
export type WebhookDelivery = typeof webhookDeliveryTable.$inferSelect;
