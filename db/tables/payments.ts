import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { accountTable, planEnum } from './accounts.ts';

/**
 * A credit purchase paid by card: one Stripe PaymentIntent made by this gateway. Written when the
 * PaymentIntent is made, before it is confirmed, and committed on its own: only a PaymentIntent with
 * a row is ever credited, with the row's account and amounts. `credited_at` is set by the one
 * statement that credits it, so the answer of buy-credits and the `payment_intent.succeeded` event
 * credit it once between them. `reversed_micros` is what refunds and disputes took back so far.
 */
export const cardPaymentTable = pgTable(
  'card_payment',
  {
    /** The PaymentIntent (`pi_…`). */
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    /** USD asked for, and charged after the adjustments (49→48 …), in micro-dollars. */
    originalMicros: bigint('original_micros', { mode: 'bigint' }).notNull(),
    paidMicros: bigint('paid_micros', { mode: 'bigint' }).notNull(),
    /** The plan's bonus at the time of the purchase. */
    plan: planEnum('plan').notNull(),
    bonusMicros: bigint('bonus_micros', { mode: 'bigint' }).notNull(),
    /**
     * The PaymentIntent's last known status (`requires_confirmation`, `succeeded`,
     * `requires_action`, …), or `declined` once the card was refused.
     */
    status: text('status').notNull(),
    creditedAt: timestamp('credited_at', { withTimezone: true }),
    reversedMicros: bigint('reversed_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('card_payment_account_idx').on(t.accountId, t.createdAt)],
);
export type CardPayment = typeof cardPaymentTable.$inferSelect;

/**
 * Every Stripe event received at /hooks/stripe, by its id: a redelivery finds its row and changes
 * nothing. The verified event is kept for the job that applies it; `processed_at` is set in the
 * transaction of its effects, so a retried job applies it once.
 */
export const stripeEventTable = pgTable(
  'stripe_event',
  {
    /** Stripe's event id (`evt_…`). */
    id: text('id').primaryKey(),
    type: text('type').notNull(),
    /** When Stripe created the event (its `created`). */
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    event: jsonb('event').notNull(),
    processedAt: timestamp('processed_at', { withTimezone: true }),
    /** What applying it did, for people (`granted 49.00 USD`, `ignored: pi_… is no purchase made by this gateway`). */
    outcome: text('outcome'),
  },
  (t) => [index('stripe_event_unprocessed_idx').on(t.receivedAt).where(sql`${t.processedAt} is null`)],
);
export type StripeEvent = typeof stripeEventTable.$inferSelect;
