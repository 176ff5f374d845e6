import { createHash } from 'node:crypto';
import { and, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../../db/client.ts';
import { accountTable, type Plan } from '../../../db/tables/accounts.ts';
import { cardPaymentTable, type CardPayment } from '../../../db/tables/payments.ts';
import type { StripeConfig } from '../../config.ts';
import { AppError, RetryLaterError } from '../../shared/errors.ts';
import { formatDollars, microsToNumber, usdToMicros } from '../money.ts';
import { creditPurchase, purchaseOf, type PurchaseTerms } from '../wallet.ts';
import type { StripePayments } from './port.ts';
import { Stripe, stripeClient } from './stripe-client.ts';

/**
 * PaymentIntent statuses that wait for the customer (after an off-session
 * `authentication_required`, `requires_payment_method`).
 */
const WAITING = ['requires_action', 'requires_confirmation', 'requires_payment_method'];

/**
 * A purchase's status once its card was declined: Stripe leaves the PaymentIntent
 * `requires_payment_method`, but nothing waits for the customer.
 */
const DECLINED = 'declined';

/** Stripe charges in cents; money here is micro-dollars. */
const MICROS_PER_CENT = 10_000n;

/**
 * What a credit purchase's PaymentIntent carries in its metadata, for people reading Stripe's
 * dashboard. Never read back: anyone with access to the Stripe account can write the same, so a
 * purchase is credited from its card_payment row alone (creditCardPayment).
 */
function purchaseMetadata(terms: PurchaseTerms): Record<string, string> {
  return {
    leadgate_purpose: 'credits',
    account_id: terms.accountId,
    plan: terms.plan,
    original_usd: String(terms.originalUsd),
    amount_usd: String(terms.amountUsd),
    bonus_percent: String(terms.bonusPercent),
    paid_micros: terms.paidMicros.toString(),
    bonus_micros: terms.bonusMicros.toString(),
  };
}

/**
 * Records a purchase's PaymentIntent, made but not confirmed yet (nothing charged): its row in
 * card_payment, committed on its own before the charge, so it outlives a request that dies after
 * the charge and the `payment_intent.succeeded` event finds it. A PaymentIntent replayed by Stripe
 * (the same Idempotency-Key) keeps its first row.
 */
async function recordPurchase(records: Executor, intent: Stripe.PaymentIntent, terms: PurchaseTerms): Promise<void> {
  await records
    .insert(cardPaymentTable)
    .values({
      id: intent.id,
      accountId: terms.accountId,
      originalMicros: usdToMicros(terms.originalUsd.toFixed(2)),
      paidMicros: terms.paidMicros,
      plan: terms.plan,
      bonusMicros: terms.bonusMicros,
      status: intent.status,
    })
    .onConflictDoNothing({ target: cardPaymentTable.id });
}

/**
 * Stripe's answer to a confirmation that did not succeed, kept on the purchase's
 * row (outside the request's transaction, which the refusal rolls back).
 */
async function setPurchaseStatus(records: Executor, intentId: string, status: string): Promise<void> {
  await records
    .update(cardPaymentTable)
    .set({ status })
    .where(and(eq(cardPaymentTable.id, intentId), isNull(cardPaymentTable.creditedAt)));
}

/** A recorded purchase's terms, as its row has them. */
function termsOf(row: CardPayment): PurchaseTerms {
  return {
    accountId: row.accountId,
    plan: row.plan,
    originalUsd: microsToNumber(row.originalMicros),
    amountUsd: microsToNumber(row.paidMicros),
    bonusPercent: Number((row.bonusMicros * 100n) / row.paidMicros),
    paidMicros: row.paidMicros,
    bonusMicros: row.bonusMicros,
  };
}

/** What crediting a succeeded PaymentIntent did. */
export type CardCredit =
  /** This gateway made no purchase of that PaymentIntent: nothing credited. */
  | { kind: 'unknown' }
  /** Stripe received another amount than the purchase's: nothing credited. */
  | { kind: 'other_amount'; paidMicros: bigint }
  | { kind: 'credited' | 'credited_already'; terms: PurchaseTerms };

/**
 * Credits a succeeded PaymentIntent's purchase once, whichever of the request and the
 * `payment_intent.succeeded` event comes first: only a PaymentIntent recorded by this gateway
 * (recordPurchase), with the account, amount and bonus of its row, and only when Stripe received
 * the row's amount. Nothing about it is taken from the PaymentIntent but its id and amount received.
 */
export async function creditCardPayment(tx: Executor, intentId: string, receivedCents: number): Promise<CardCredit> {
  const [row] = await tx.select().from(cardPaymentTable).where(eq(cardPaymentTable.id, intentId)).for('update');
  if (!row) return { kind: 'unknown' };
  if (BigInt(receivedCents) * MICROS_PER_CENT !== row.paidMicros)
    return { kind: 'other_amount', paidMicros: row.paidMicros };
  const terms = termsOf(row);
  const credited = await creditPurchase(tx, terms, { mode: 'stripe', reference: intentId });
  await tx
    .update(cardPaymentTable)
    .set({ status: 'succeeded', ...(credited ? { creditedAt: sql`now()` } : {}) })
    .where(eq(cardPaymentTable.id, intentId));
  return { kind: credited ? 'credited' : 'credited_already', terms };
}

/** The account's Stripe customer, if it has one yet. */
async function customerOf(db: Executor, accountId: string): Promise<string | null> {
  const [row] = await db
    .select({ customer: accountTable.stripeCustomerId })
    .from(accountTable)
    .where(eq(accountTable.id, accountId));
  return row?.customer ?? null;
}

const paymentMethodRequired = () =>
  new AppError(
    402,
    'payment_method_required',
    'This account has no card on file to charge. ' +
      'Add one in the billing portal (the console’s billing page, or the openBillingPortal mutation), then buy again.',
  );

/**
 * 402 payment_requires_action: what the console needs to let the
 * customer authenticate (Stripe.js `confirmCardPayment`).
 */
function requiresAction(intent: Stripe.PaymentIntent): AppError {
  return new AppError(
    402,
    'payment_requires_action',
    'The bank asks the card holder to authenticate this payment (3-D Secure). Complete it in the console; ' +
      `the credits are added as soon as the payment succeeds. Payment ${intent.id}.`,
    undefined,
    {
      payment: {
        payment_intent: intent.id,
        status: intent.status,
        client_secret: intent.client_secret,
        next_action: intent.next_action ?? null,
      },
    },
  );
}

/** 402 payment_failed: the card was declined, with the reason Stripe gives (`decline_code`, else `code`). */
function paymentFailed(err: Stripe.errors.StripeCardError): AppError {
  const reason = err.decline_code ?? err.code ?? 'declined';
  return new AppError(
    402,
    'payment_failed',
    `The card was declined (${reason}): ${err.message} Nothing was charged or credited.`,
    undefined,
    {
      payment: {
        payment_intent: err.payment_intent?.id ?? null,
        decline_code: err.decline_code ?? null,
        code: err.code ?? null,
      },
    },
  );
}

/**
 * Stripe's idempotency key of a purchase: from the caller's key, the account and the amount, so a
 * retried request (or a concurrent one with the same key) is one charge at Stripe too. Hashed: the
 * caller's key is theirs to choose, Stripe's is at most 255 characters.
 */
function stripeIdempotencyKey(terms: PurchaseTerms, key: string): string {
  const hash = createHash('sha256').update(`${terms.accountId}\n${key}\n${terms.paidMicros}`).digest('hex');
  return `leadgate-credits-${hash}`;
}

/**
 * Stripe out of reach (the network, its 5xx, its rate limit), once the SDK's own retries are spent:
 * 503 payment_provider_unavailable with Retry-After, never a 500. Nothing is credited without
 * Stripe's answer; a payment that did go through is credited by its event, and a retry with the same
 * Idempotency-Key is the same PaymentIntent, so it never charges twice.
 */
async function atStripe<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (
      err instanceof Stripe.errors.StripeConnectionError ||
      err instanceof Stripe.errors.StripeAPIError ||
      err instanceof Stripe.errors.StripeRateLimitError
    ) {
      throw new RetryLaterError(
        'payment_provider_unavailable',
        'The payment provider did not answer. Nothing was credited; ' +
          'retry in a minute with the same Idempotency-Key (a payment is never taken twice).',
        60,
        err,
      );
    }
    throw err;
  }
}

/**
 * `records` commits the purchase rows written outside the request's transaction (before the charge,
 * and the refusals that roll it back) on connections of its own: the request holds one of the main
 * pool's while Stripe answers, and requests waiting on the same Idempotency-Key hold others.
 */
export function createStripePayments(config: StripeConfig, db: Database, records: Database): StripePayments {
  const stripe = stripeClient(config);

  /** The account's customer, made the first time it needs one (one customer per account, by an idempotency key). */
  async function ensureCustomer(accountId: string): Promise<string> {
    const existing = await customerOf(db, accountId);
    if (existing) return existing;
    const [account] = await db
      .select({ name: accountTable.name })
      .from(accountTable)
      .where(eq(accountTable.id, accountId));
    if (!account) throw new AppError(404, 'not_found', 'Account not found');
    const customer = await stripe.customers.create(
      { name: account.name, metadata: { account_id: accountId } },
      { idempotencyKey: `leadgate-customer-${accountId}` },
    );
    // Two first requests at once make the same customer (the idempotency key); the first write wins.
    await db
      .update(accountTable)
      .set({ stripeCustomerId: customer.id })
      .where(sql`${accountTable.id} = ${accountId} and ${accountTable.stripeCustomerId} is null`);
    return (await customerOf(db, accountId)) ?? customer.id;
  }

  return {
    mode: 'stripe',

    async buyCredits(tx, { terms, idempotencyKey }) {
      return atStripe(async () => {
        const customerId = await customerOf(tx, terms.accountId);
        if (!customerId) throw paymentMethodRequired();
        const customer = await stripe.customers.retrieve(customerId).catch((err: unknown) => {
          // Deleted in Stripe's dashboard: as good as no card.
          if (err instanceof Stripe.errors.StripeInvalidRequestError && err.code === 'resource_missing') return null;
          throw err;
        });
        const method = !customer || customer.deleted ? null : customer.invoice_settings?.default_payment_method;
        if (!method) throw paymentMethodRequired();
        // Made, then recorded, then confirmed: the charge comes after the row that lets it be credited.
        const created = await stripe.paymentIntents.create(
          {
            amount: Number(terms.paidMicros / MICROS_PER_CENT),
            currency: 'usd',
            customer: customerId,
            payment_method: typeof method === 'string' ? method : method.id,
            description: `leadgate credits: ${formatDollars(terms.paidMicros)} USD`,
            metadata: purchaseMetadata(terms),
          },
          idempotencyKey === undefined ? undefined : { idempotencyKey: stripeIdempotencyKey(terms, idempotencyKey) },
        );
        await recordPurchase(records, created, terms);
        let intent: Stripe.PaymentIntent;
        try {
          // One confirmation per PaymentIntent: a retried request (the same PaymentIntent) gets Stripe's first answer.
          intent = await stripe.paymentIntents.confirm(
            created.id,
            { off_session: true },
            { idempotencyKey: `leadgate-confirm-${created.id}` },
          );
        } catch (err) {
          if (!(err instanceof Stripe.errors.StripeCardError)) throw err;
          // Off-session, a card that needs 3-D Secure is refused with `authentication_required`; the
          // customer completes it on-session with the PaymentIntent's client secret.
          if (err.code === 'authentication_required' && err.payment_intent) {
            await setPurchaseStatus(records, created.id, err.payment_intent.status);
            throw requiresAction(err.payment_intent);
          }
          await setPurchaseStatus(records, created.id, DECLINED);
          throw paymentFailed(err);
        }
        if (intent.status === 'succeeded') {
          const credit = await creditCardPayment(tx, intent.id, intent.amount_received);
          if (credit.kind === 'unknown' || credit.kind === 'other_amount')
            throw new Error(`PaymentIntent ${intent.id} succeeded but does not match its purchase (${credit.kind})`);
          return purchaseOf(tx, credit.terms, { mode: 'stripe', reference: intent.id });
        }
        await setPurchaseStatus(records, intent.id, intent.status);
        if (intent.status === 'requires_action' || intent.status === 'requires_confirmation')
          throw requiresAction(intent);
        throw new AppError(
          402,
          'payment_failed',
          `The payment was not completed (${intent.status}); ` +
            `if it completes later, the credits are added then. Payment ${intent.id}.`,
          undefined,
          {
            payment: { payment_intent: intent.id, status: intent.status },
          },
        );
      });
    },

    async checkout(accountId: string, plan: Plan, returnUrl: string) {
      return atStripe(async () => {
        const price = config.prices[plan];
        if (!price)
          throw new AppError(
            400,
            'validation_failed',
            `The ${plan} plan has no Stripe price on this server (STRIPE_PRICE_${plan.toUpperCase()}).`,
            [{ path: 'plan', message: `no Stripe price for ${plan}` }],
          );
        const customer = await ensureCustomer(accountId);
        const session = await stripe.checkout.sessions.create({
          mode: 'subscription',
          customer,
          client_reference_id: accountId,
          line_items: [{ price, quantity: 1 }],
          subscription_data: { metadata: { account_id: accountId } },
          success_url: `${returnUrl}?checkout=complete`,
          cancel_url: `${returnUrl}?checkout=cancelled`,
        });
        if (!session.url) throw new Error(`checkout session ${session.id} has no url`);
        return { url: session.url };
      });
    },

    async portal(accountId: string, returnUrl: string) {
      return atStripe(async () => {
        const customer = await ensureCustomer(accountId);
        const session = await stripe.billingPortal.sessions.create({ customer, return_url: returnUrl });
        return { url: session.url };
      });
    },

    async awaitingAction(accountId: string) {
      const [waiting] = await db
        .select({ id: cardPaymentTable.id })
        .from(cardPaymentTable)
        .where(
          and(
            eq(cardPaymentTable.accountId, accountId),
            isNull(cardPaymentTable.creditedAt),
            inArray(cardPaymentTable.status, WAITING),
            sql`${cardPaymentTable.createdAt} > now() - interval '1 day'`,
          ),
        )
        .orderBy(desc(cardPaymentTable.createdAt))
        .limit(1);
      if (!waiting) return null;
      // Stripe's state, not the row's: the customer may have completed or abandoned it since.
      const intent = await stripe.paymentIntents.retrieve(waiting.id);
      if (!WAITING.includes(intent.status) || !intent.client_secret) return null;
      return {
        paymentIntentId: intent.id,
        amountMicros: BigInt(intent.amount) * MICROS_PER_CENT,
        status: intent.status,
        clientSecret: intent.client_secret,
        nextActionType: intent.next_action?.type ?? null,
      };
    },
  };
}
