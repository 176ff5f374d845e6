import { and, eq, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../../db/client.ts';
import { oneRow } from '../../../db/rows.ts';
import {
  accountTable,
  ledgerTable,
  PLANS,
  walletTable,
  type Plan,
  type SubscriptionStatus,
} from '../../../db/tables/accounts.ts';
import { cardPaymentTable, stripeEventTable } from '../../../db/tables/payments.ts';
import type { PaymentsConfig, StripeConfig } from '../../config.ts';
import type { Logger } from '../../logger.ts';
import { JOBS } from '../../workers/jobs.ts';
import { AppError } from '../../shared/errors.ts';
import { formatDollars, usdToMicros } from '../money.ts';
import { PLAN_MONTHLY_CREDITS_USD } from '../plans.ts';
import { paymentsNotConfigured } from './port.ts';
import { creditCardPayment } from './stripe.ts';
import { Stripe, stripeClient } from './stripe-client.ts';

/** Attempts of the job that applies an event before graphile-worker gives up on it. */
const APPLY_MAX_ATTEMPTS = 10;

/**
 * Receives one delivery of POST /hooks/stripe: verifies its `Stripe-Signature` over the raw body with
 * the SDK (400 `invalid_signature` when it does not match, nothing written) and records the event by
 * its id with the job that applies it, in one statement. A redelivery finds the id and records
 * nothing more. Answers at once; the job does the work.
 */
export async function receiveStripeEvent(
  db: Database,
  config: PaymentsConfig,
  rawBody: Buffer | string,
  signature: string | undefined,
): Promise<{ id: string; duplicate: boolean }> {
  if (config.mode !== 'stripe') throw paymentsNotConfigured();
  let event: Stripe.Event;
  try {
    event = stripeClient(config).webhooks.constructEvent(rawBody, signature ?? '', config.webhookSecret);
  } catch (err) {
    throw new AppError(
      400,
      'invalid_signature',
      `The Stripe-Signature header does not verify: ${(err as Error).message}`,
    );
  }
  // A redelivery of an event not applied yet (its job failed every attempt) adds the job again: Stripe's
  // retries are the retries of last resort. One applied already adds nothing.
  const rows = (await db.execute(sql`
    with recorded as (
      insert into ${stripeEventTable} (id, type, created_at, event)
      values (${event.id}, ${event.type}, to_timestamp(${event.created}), ${JSON.stringify(event)}::jsonb)
      on conflict (id) do nothing
      returning id
    ), pending as (
      select id from recorded
      union
      select id from ${stripeEventTable} where id = ${event.id} and processed_at is null
    ), queued as (
      select graphile_worker.add_job(${JOBS.applyStripeEvent}::text, json_build_object('eventId', id),
        max_attempts => ${APPLY_MAX_ATTEMPTS}, job_key => 'stripe:' || id) from pending
    )
    -- Read, so the job is added: a CTE no one reads is not run.
    select (select count(*)::int from recorded) as recorded,
      (select count(*)::int from queued) as queued`)) as unknown as {
    recorded: number;
    queued: number;
  }[];
  return { id: event.id, duplicate: oneRow(rows, 'record of a stripe event').recorded === 0 };
}

/** Stripe's subscription statuses as the account's: past_due stays ACTIVE (with a warning) until Stripe gives up. */
const STATUS_OF: Record<string, SubscriptionStatus | undefined> = {
  trialing: 'TRIAL',
  active: 'ACTIVE',
  past_due: 'ACTIVE',
  canceled: 'CANCELLED',
  unpaid: 'CANCELLED',
  incomplete_expired: 'CANCELLED',
  paused: 'CANCELLED',
  // `incomplete`: the first payment is still being made; the account is left as it is.
};

const idOf = (value: string | { id: string } | null | undefined) =>
  value == null ? null : typeof value === 'string' ? value : value.id;

/**
 * Applies a recorded event once: its effects and `processed_at` commit together, so a retried job,
 * or one that finds the event done, changes nothing. Subscriptions are read back from Stripe rather
 * than taken from the event, so events applied out of order still leave the latest state.
 */
export async function applyStripeEvent(
  deps: { db: Database; config: StripeConfig; logger: Logger },
  eventId: string,
): Promise<void> {
  const stripe = stripeClient(deps.config);
  const [row] = await deps.db.select().from(stripeEventTable).where(eq(stripeEventTable.id, eventId));
  if (!row || row.processedAt) return;
  const event = row.event as Stripe.Event;
  // Read before the transaction: no row lock is held across a call to Stripe.
  const subscription = event.type.startsWith('customer.subscription.')
    ? await latestSubscription(stripe, event.data.object as Stripe.Subscription)
    : null;
  if (subscription) await endReplacedSubscription(deps.db, stripe, subscription);
  await deps.db.transaction(async (tx) => {
    const [claimed] = await tx
      .select({ id: stripeEventTable.id })
      .from(stripeEventTable)
      .where(and(eq(stripeEventTable.id, eventId), sql`${stripeEventTable.processedAt} is null`))
      .for('update');
    if (!claimed) return;
    const outcome = await apply(tx, deps.config, event, subscription, deps.logger.child({ stripeEvent: eventId }));
    await tx.update(stripeEventTable).set({ processedAt: sql`now()`, outcome }).where(eq(stripeEventTable.id, eventId));
    deps.logger.info({ stripeEvent: eventId, type: event.type, outcome }, 'stripe event applied');
  });
}

async function latestSubscription(stripe: Stripe, sent: Stripe.Subscription): Promise<Stripe.Subscription> {
  try {
    return await stripe.subscriptions.retrieve(sent.id);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeInvalidRequestError && err.code === 'resource_missing') return sent;
    throw err;
  }
}

/**
 * A plan changed through Checkout is a new subscription: once it is live, the one it replaces is
 * cancelled at Stripe (prorated), so the customer never pays for two. The account points to the new
 * one first, so the old one's `deleted` event, which may be applied before this event's own effects,
 * leaves the account alone (applySubscription). Idempotent: a subscription cancelled already is left.
 */
async function endReplacedSubscription(db: Database, stripe: Stripe, sub: Stripe.Subscription): Promise<void> {
  if (sub.status !== 'active' && sub.status !== 'trialing') return;
  const account = await accountOf(db, idOf(sub.customer), sub.metadata?.account_id);
  const previous = account?.stripeSubscriptionId;
  if (!account || !previous || previous === sub.id) return;
  const old = await latestSubscription(stripe, { id: previous } as Stripe.Subscription);
  if (old.status === 'canceled' || old.status === 'incomplete_expired' || !old.customer) return;
  await db
    .update(accountTable)
    .set({ stripeSubscriptionId: sub.id, stripeSubscriptionStatus: sub.status })
    .where(and(eq(accountTable.id, account.id), eq(accountTable.stripeSubscriptionId, previous)));
  await stripe.subscriptions.cancel(previous, { prorate: true }, { idempotencyKey: `leadgate-replaced-${previous}` });
}

async function apply(
  tx: Executor,
  config: StripeConfig,
  event: Stripe.Event,
  subscription: Stripe.Subscription | null,
  logger: Logger,
): Promise<string> {
  switch (event.type) {
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return applySubscription(tx, config, subscription ?? event.data.object);
    case 'invoice.paid':
      return grantInvoice(tx, config, event.data.object);
    case 'payment_intent.succeeded':
      return creditIntent(tx, event.data.object, logger);
    case 'charge.refunded': {
      const charge = event.data.object;
      return takeBack(
        tx,
        idOf(charge.payment_intent),
        charge.amount,
        charge.amount_refunded,
        'refund',
        `refunded (${charge.id})`,
      );
    }
    case 'charge.dispute.created': {
      const dispute = event.data.object;
      return takeBack(tx, idOf(dispute.payment_intent), null, dispute.amount, 'dispute', `disputed (${dispute.id})`);
    }
    default:
      return `ignored: ${event.type} is not acted on`;
  }
}

/** The account a Stripe customer is, by the id stored when it was made (or the subscription's metadata). */
async function accountOf(
  tx: Executor,
  customerId: string | null,
  metadataAccount?: string,
): Promise<{ id: string; plan: Plan; stripeSubscriptionId: string | null } | null> {
  const where = customerId ? eq(accountTable.stripeCustomerId, customerId) : undefined;
  const [byCustomer] = where
    ? await tx
        .select({
          id: accountTable.id,
          plan: accountTable.plan,
          stripeSubscriptionId: accountTable.stripeSubscriptionId,
        })
        .from(accountTable)
        .where(where)
    : [];
  if (byCustomer) return byCustomer;
  if (!metadataAccount) return null;
  const [byMetadata] = await tx
    .select({ id: accountTable.id, plan: accountTable.plan, stripeSubscriptionId: accountTable.stripeSubscriptionId })
    .from(accountTable)
    .where(eq(accountTable.id, metadataAccount));
  return byMetadata ?? null;
}

function planOfPrice(config: StripeConfig, priceId: string | null | undefined): Plan | undefined {
  return PLANS.find((plan) => priceId && config.prices[plan] === priceId);
}

async function applySubscription(tx: Executor, config: StripeConfig, sub: Stripe.Subscription): Promise<string> {
  const account = await accountOf(tx, idOf(sub.customer), sub.metadata?.account_id);
  if (!account) return `ignored: customer ${idOf(sub.customer)} is no account`;
  const status = STATUS_OF[sub.status];
  // An earlier subscription ending (replaced by a new one) does not cancel the account.
  if (account.stripeSubscriptionId && account.stripeSubscriptionId !== sub.id && status === 'CANCELLED')
    return `ignored: ${sub.id} is not the account's subscription`;
  const plan = planOfPrice(config, sub.items?.data?.[0]?.price?.id);
  await tx
    .update(accountTable)
    .set({
      ...(status ? { subscriptionStatus: status } : {}),
      ...(plan ? { plan } : {}),
      stripeSubscriptionId: sub.id,
      stripeSubscriptionStatus: sub.status,
    })
    .where(eq(accountTable.id, account.id));
  return `subscription ${sub.id} ${sub.status}: ${plan ?? account.plan}, ${status ?? 'status unchanged'}`;
}

/** The plan's monthly credits, once per paid subscription invoice (the ledger's unique invoice reference). */
async function grantInvoice(tx: Executor, config: StripeConfig, invoice: Stripe.Invoice): Promise<string> {
  const subscriptionId = idOf(invoice.parent?.subscription_details?.subscription);
  if (!subscriptionId) return 'ignored: not a subscription invoice';
  const account = await accountOf(
    tx,
    idOf(invoice.customer),
    invoice.parent?.subscription_details?.metadata?.account_id,
  );
  if (!account) return `ignored: customer ${idOf(invoice.customer)} is no account`;
  const prices = (invoice.lines?.data ?? []).map((line) => idOf(line.pricing?.price_details?.price));
  const plan = prices.map((price) => planOfPrice(config, price)).find(Boolean) ?? account.plan;
  const credits = usdToMicros(PLAN_MONTHLY_CREDITS_USD[plan].toFixed(2));
  const granted = await tx
    .insert(ledgerTable)
    .values({
      accountId: account.id,
      kind: 'plan_grant',
      planMicros: credits,
      paymentRef: invoice.id,
      note: `${plan} plan credits for invoice ${invoice.id}`,
    })
    .onConflictDoNothing()
    .returning({ id: ledgerTable.id });
  if (granted.length === 0) return `ignored: invoice ${invoice.id} was granted already`;
  await tx
    .insert(walletTable)
    .values({ accountId: account.id, planMicros: credits })
    .onConflictDoUpdate({
      target: walletTable.accountId,
      set: { planMicros: sql`${walletTable.planMicros} + ${credits}`, updatedAt: new Date() },
    });
  return `granted ${formatDollars(credits)} USD of ${plan} plan credits`;
}

/**
 * Credits a succeeded PaymentIntent's purchase, unless the request did: only one this gateway made and
 * recorded, from its row (stripe.ts creditCardPayment). Any other is acknowledged and left: one made
 * at the Stripe account by someone else, whatever its metadata names, credits nothing, and one whose
 * metadata claims to be a purchase of this gateway is logged at warn.
 */
async function creditIntent(tx: Executor, intent: Stripe.PaymentIntent, logger: Logger): Promise<string> {
  const credit = await creditCardPayment(tx, intent.id, intent.amount_received);
  const seen = {
    paymentIntent: intent.id,
    amountReceived: intent.amount_received,
    currency: intent.currency,
    customer: idOf(intent.customer),
    claimedAccount: intent.metadata?.account_id ?? null,
  };
  switch (credit.kind) {
    case 'unknown':
      if (intent.metadata?.leadgate_purpose || intent.metadata?.account_id)
        logger.warn(
          seen,
          'stripe: a PaymentIntent this gateway did not make claims to be a credit purchase; nothing credited',
        );
      return `ignored: ${intent.id} is no purchase made by this gateway`;
    case 'other_amount':
      logger.warn(
        { ...seen, purchaseMicros: credit.paidMicros.toString() },
        'stripe: a purchase received another amount than it was made for; nothing credited',
      );
      return (
        `ignored: ${intent.id} received ${intent.amount_received} cents, ` +
        `not the purchase's ${formatDollars(credit.paidMicros)} USD`
      );
    case 'credited':
      return `credited ${formatDollars(credit.terms.paidMicros + credit.terms.bonusMicros)} USD`;
    case 'credited_already':
      return `ignored: ${intent.id} was credited already`;
  }
}

/**
 * Takes a refunded or disputed purchase back, with its bonus, in proportion to the amount: a refund
 * event carries the total refunded so far (`amount_refunded` of `amount`), a dispute its own amount;
 * never more than was credited. The purchased balance may go below zero (the credits were spent):
 * then no run starts until it is settled (runs/start.ts).
 */
async function takeBack(
  tx: Executor,
  intentId: string | null,
  chargedCents: number | null,
  cents: number,
  what: 'refund' | 'dispute',
  note: string,
): Promise<string> {
  if (!intentId) return `ignored: the ${what} has no PaymentIntent`;
  const [payment] = await tx.select().from(cardPaymentTable).where(eq(cardPaymentTable.id, intentId)).for('update');
  if (!payment?.creditedAt) return `ignored: ${intentId} is no credited purchase`;
  const credited = payment.paidMicros + payment.bonusMicros;
  const paidCents = payment.paidMicros / 10_000n;
  const share = (BigInt(cents) * credited) / (chargedCents === null ? paidCents : BigInt(chargedCents));
  const wanted = what === 'refund' ? share - payment.reversedMicros : share;
  const taken = wanted > credited - payment.reversedMicros ? credited - payment.reversedMicros : wanted;
  if (taken <= 0n) return `ignored: nothing more to take back for ${intentId}`;
  await tx
    .update(cardPaymentTable)
    .set({ reversedMicros: payment.reversedMicros + taken })
    .where(eq(cardPaymentTable.id, intentId));
  await tx.insert(ledgerTable).values({
    accountId: payment.accountId,
    kind: 'refund',
    purchasedMicros: -taken,
    paymentRef: intentId,
    note: `purchase ${note}: ${formatDollars(taken)} USD of credits taken back`,
  });
  await tx
    .update(walletTable)
    .set({ purchasedMicros: sql`${walletTable.purchasedMicros} - ${taken}`, updatedAt: new Date() })
    .where(eq(walletTable.accountId, payment.accountId));
  return `took back ${formatDollars(taken)} USD (${what})`;
}
