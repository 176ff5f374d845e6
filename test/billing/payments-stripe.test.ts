import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { errorBody } from '../../src/rest/schemas.ts';
import { DENVER_DENTISTS, startTestApp, type ErrorBody, type TestApp } from '../helpers/app.ts';
import { FAKE_PRICES, paymentsAt, startFakeStripe, type FakeStripe, type HookReceipt } from '../helpers/fake-stripe.ts';
import { waitFor } from '../helpers/wait.ts';
import { graphql } from '../helpers/gql/index.ts';
import type { Plan } from '../helpers/gql/graphql.ts';

const OpenBillingPortal = graphql(
  `mutation PaymentsStripeOpenBillingPortal { openBillingPortal { url userErrors { code message } } }`,
);
const PaymentsLedger = graphql(
  `query PaymentsStripePaymentsLedger { viewer { payments { mode warning } ledger(first: 5) { nodes { kind paymentReference } } } }`,
);
const BuyCredits = graphql(
  `mutation PaymentsStripeBuyCredits { buyCredits(amount: "100") { purchase { amount } userErrors { code message } } }`,
);
const AwaitingAction = graphql(`
  query PaymentsStripeAwaitingAction { viewer { payments { awaitingAction { paymentIntentId amount status clientSecret nextActionType } } } }
`);
const ChooseGrowth = graphql(
  `mutation PaymentsStripeChooseGrowth { choosePlan(plan: GROWTH) { url userErrors { code message } } }`,
);
const ChoosePlan = graphql(`mutation PaymentsStripeChoosePlan($plan: Plan!) { choosePlan(plan: $plan) { url } }`);
const SubscriptionWarning = graphql(
  `query PaymentsStripeSubscriptionWarning { viewer { subscriptionStatus payments { subscriptionStatus warning } } }`,
);
const SubscriptionStatus = graphql(`query PaymentsStripeSubscriptionStatus { viewer { subscriptionStatus } }`);

/**
 * Payments through Stripe: the gateway's official SDK against a local Stripe (helpers/fake-stripe.ts),
 * which sends its events to /hooks/stripe signed as Stripe signs them.
 */
let t: TestApp;
let stripe: FakeStripe;
/** The gateway's log lines. */
const logs: string[] = [];

beforeAll(async () => {
  stripe = await startFakeStripe();
  t = await startTestApp({
    config: {
      payments: paymentsAt(stripe),
    },
    logger: createLogger('info', { write: (line: string) => void logs.push(line) }),
  });
  stripe.hookUrl = `${t.url}/hooks/stripe`;
}, 60_000);

afterAll(async () => {
  await stripe?.idle();
  await t?.stop();
  await stripe?.close();
});

const buy = (key: string, amount: unknown, idempotencyKey?: string) =>
  t.request('POST', '/api/v1/buy-credits', {
    key,
    body: { amount },
    headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
  });

async function wallet(accountId: string) {
  const [w] = await t.app.core
    .sql`select plan_micros::text as plan, purchased_micros::text as purchased from wallet where account_id = ${accountId}`;
  return { plan: BigInt(w!.plan), purchased: BigInt(w!.purchased) };
}

const ledger = (accountId: string) =>
  t.app.core
    .sql`select kind, plan_micros::text as plan, purchased_micros::text as purchased, payment_ref, note from ledger_entry where account_id = ${accountId} order by id`;

/** The ledger sums to the cached balances: nothing was credited without its entry, or twice. */
async function expectBalanced(accountId: string) {
  const [sum] = await t.app.core
    .sql`select coalesce(sum(plan_micros), 0)::text as plan, coalesce(sum(purchased_micros), 0)::text as purchased from ledger_entry where account_id = ${accountId}`;
  expect({ plan: BigInt(sum!.plan), purchased: BigInt(sum!.purchased) }).toEqual(await wallet(accountId));
}

/** Waits until the job has applied the event; answers its outcome. */
async function applied(eventId: string): Promise<string> {
  const row = await waitFor(
    async () => (await t.app.core.sql`select processed_at, outcome from stripe_event where id = ${eventId}`)[0],
    (r) => Boolean(r?.processed_at),
    { timeoutMs: 15_000, intervalMs: 50, what: `stripe event ${eventId} to be applied` },
  );
  return row!.outcome as string;
}

async function customerOf(accountId: string): Promise<string | null> {
  const [row] = await t.app.core.sql`select stripe_customer_id from account where id = ${accountId}`;
  return row!.stripe_customer_id;
}

/** An account that is a Stripe customer (made through the portal mutation, as the console does), with `card` as its default payment method. */
async function customer(card: string | null, input: Parameters<TestApp['account']>[0] = {}) {
  const account = await t.account({ plan: 'growth', subscriptionStatus: 'ACTIVE', creditsMicros: 0n, ...input });
  const portal = await t.graphql(account.apiKey, OpenBillingPortal);
  expect(portal.body.data!.openBillingPortal).toEqual({
    url: expect.stringMatching(/^https:\/\/billing\.stripe\.com\/p\/session\//),
    userErrors: [],
  });
  const customerId = (await customerOf(account.accountId))!;
  expect(stripe.customers.get(customerId)?.metadata).toEqual({ account_id: account.accountId });
  if (card) stripe.attachCard(customerId, card);
  return { ...account, customerId };
}

describe('buy-credits through Stripe', () => {
  it('charges the card off-session once and credits the purchase with its bonus, referencing the PaymentIntent', async () => {
    const { accountId, apiKey, customerId } = await customer('pm_card_visa');
    const res = await buy(apiKey, 149, 'first-purchase');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      amount: 148,
      original_amount: 149,
      was_adjusted: true,
      bonus: 14.8,
      payment: { mode: 'stripe', payment_intent: expect.stringMatching(/^pi_/) },
    });
    expect(res.body.wallet.purchased_credits_dollars).toBe('162.80');
    expect(res.body.message).not.toMatch(/demo/i);
    const intent = stripe.paymentIntents.get(res.body.payment.payment_intent)!;
    // What Stripe was asked: the adjusted amount, on the default card, then confirmed off-session once.
    expect(intent).toMatchObject({
      amount: 14_800,
      currency: 'usd',
      customer: customerId,
      payment_method: 'pm_card_visa',
      status: 'succeeded',
    });
    expect(intent.metadata).toMatchObject({
      account_id: accountId,
      plan: 'growth',
      paid_micros: '148000000',
      bonus_micros: '14800000',
    });
    const create = stripe.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents').at(-1)!;
    expect(create.idempotencyKey).toMatch(/^leadgate-credits-[0-9a-f]{64}$/);
    expect(stripe.requests.filter((r) => r.path === `/v1/payment_intents/${intent.id}/confirm`)).toEqual([
      {
        method: 'POST',
        path: `/v1/payment_intents/${intent.id}/confirm`,
        idempotencyKey: `leadgate-confirm-${intent.id}`,
      },
    ]);

    // Stripe's own payment_intent.succeeded for it changes nothing more.
    await stripe.idle();
    const event = [...stripe.events.values()].find(
      (e) => e.event.type === 'payment_intent.succeeded' && e.event.data.object.id === intent.id,
    )!;
    expect(await applied(event.event.id)).toMatch(/credited already/);
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 162_800_000n });
    const entries = await ledger(accountId);
    expect(entries.filter((e) => e.kind === 'purchase')).toEqual([
      {
        kind: 'purchase',
        plan: '0',
        purchased: '162800000',
        payment_ref: intent.id,
        note: `bought 148.00 USD + 10% growth bonus 14.80 USD, paid by card (${intent.id})`,
      },
    ]);
    const [payment] = await t.app.core
      .sql`select status, credited_at is not null as credited, paid_micros::text as paid from card_payment where id = ${intent.id}`;
    expect(payment).toEqual({ status: 'succeeded', credited: true, paid: '148000000' });
    await expectBalanced(accountId);

    // GraphQL shows the payment reference and the mode.
    const viewer = await t.graphql(apiKey, PaymentsLedger);
    expect(viewer.body.data!.viewer.payments).toEqual({ mode: 'STRIPE', warning: null });
    expect(viewer.body.data!.viewer.ledger.nodes).toContainEqual({ kind: 'PURCHASE', paymentReference: intent.id });
  });

  it('credits nothing for a declined card and says why', async () => {
    const { accountId, apiKey } = await customer('pm_card_chargeDeclinedInsufficientFunds');
    const res = await buy(apiKey, 100, 'declined');
    expect(res.status).toBe(402);
    expect(res.body.error).toEqual({ code: 'payment_failed', message: expect.stringContaining('insufficient_funds') });
    expect(res.body.payment).toMatchObject({
      decline_code: 'insufficient_funds',
      code: 'card_declined',
      payment_intent: expect.stringMatching(/^pi_/),
    });
    // The documented error body (OpenAPI), payment included.
    expect(errorBody.safeParse(res.body).success).toBe(true);
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 0n });
    expect((await ledger(accountId)).filter((e) => e.kind === 'purchase')).toEqual([]);
    // Its record says so, and the console is not asked to complete it.
    const [record] = await t.app.core
      .sql`select status, credited_at from card_payment where id = ${res.body.payment.payment_intent}`;
    expect(record).toEqual({ status: 'declined', credited_at: null });
    expect((await t.graphql(apiKey, AwaitingAction)).body.data!.viewer.payments.awaitingAction).toBeNull();
    // A retry with the same key is Stripe's replay of the same decline: no second charge attempt.
    const before = stripe.paymentIntents.size;
    expect((await buy(apiKey, 100, 'declined')).body.error.code).toBe('payment_failed');
    expect(stripe.paymentIntents.size).toBe(before);

    const gql = await t.graphql(apiKey, BuyCredits);
    expect(gql.body.data!.buyCredits).toEqual({
      purchase: null,
      userErrors: [{ code: 'PAYMENT_FAILED', message: expect.stringContaining('insufficient_funds') }],
    });
  });

  it('answers 402 payment_method_required without a customer or without a card', async () => {
    const bare = await t.account({ plan: 'growth', subscriptionStatus: 'ACTIVE', creditsMicros: 0n });
    const none = await buy(bare.apiKey, 100);
    expect(none.status).toBe(402);
    expect(none.body.error.code).toBe('payment_method_required');
    const { apiKey, accountId } = await customer(null);
    const noCard = await buy(apiKey, 100);
    expect(noCard.status).toBe(402);
    expect(noCard.body.error).toEqual({
      code: 'payment_method_required',
      message: expect.stringContaining('billing portal'),
    });
    // A customer deleted in Stripe's dashboard has no card either.
    const gone = await customer('pm_card_visa');
    stripe.customers.delete(gone.customerId);
    expect((await buy(gone.apiKey, 100)).body.error.code).toBe('payment_method_required');
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 0n });
    expect(await wallet(gone.accountId)).toEqual({ plan: 0n, purchased: 0n });
  });

  it('asks for 3-D Secure, then credits the purchase once when payment_intent.succeeded arrives', async () => {
    const { accountId, apiKey } = await customer('pm_card_authenticationRequired', { plan: 'scale' });
    const res = await buy(apiKey, 100, '3ds');
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('payment_requires_action');
    const intentId = res.body.payment.payment_intent as string;
    expect(res.body.payment).toMatchObject({
      payment_intent: expect.stringMatching(/^pi_/),
      client_secret: stripe.paymentIntents.get(intentId)!.client_secret,
    });
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 0n });
    // What the console reads to let the customer authenticate.
    expect((await t.graphql(apiKey, AwaitingAction)).body.data!.viewer.payments.awaitingAction).toEqual({
      paymentIntentId: intentId,
      amount: '100.00',
      status: 'requires_payment_method',
      clientSecret: stripe.paymentIntents.get(intentId)!.client_secret,
      nextActionType: null,
    });

    const { event, status } = await stripe.completeAuthentication(intentId);
    expect(status).toBe(200);
    expect(await applied(event.id)).toBe('credited 130.00 USD');
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 130_000_000n });
    // Redelivered: recorded once, applied once.
    const again = await stripe.redeliver(event.id);
    expect(again).toEqual({ status: 200, body: { received: true, id: event.id, duplicate: true } });
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 130_000_000n });
    expect((await ledger(accountId)).filter((e) => e.kind === 'purchase').map((e) => e.payment_ref)).toEqual([
      intentId,
    ]);
    await expectBalanced(accountId);
    expect((await t.graphql(apiKey, AwaitingAction)).body.data!.viewer.payments.awaitingAction).toBeNull();

    // A PaymentIntent that answers requires_action (rather than an authentication_required decline) gives the console its next_action.
    const other = await customer('pm_card_threeDSecureRequired');
    const action = await buy(other.apiKey, 20);
    expect(action.status).toBe(402);
    expect(action.body.payment).toMatchObject({
      status: 'requires_action',
      next_action: { type: 'use_stripe_sdk' },
      client_secret: expect.stringContaining('_secret_'),
    });
    expect(errorBody.safeParse(action.body).success).toBe(true);
    expect(errorBody.safeParse(res.body).success).toBe(true);
  });

  it('makes one charge for 50 concurrent purchases with the same Idempotency-Key', async () => {
    const { accountId, apiKey } = await customer('pm_card_visa');
    const before = stripe.paymentIntents.size;
    const answers = await Promise.all(Array.from({ length: 50 }, () => buy(apiKey, 250, 'fifty-at-once')));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    expect(new Set(answers.map((a) => a.body.payment.payment_intent)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(49);
    expect(stripe.paymentIntents.size - before).toBe(1);
    await stripe.idle();
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 275_000_000n });
    await expectBalanced(accountId);
  });
  it('completes more purchases at once than the pool has connections, each recorded before its charge', async () => {
    // Each request holds a connection of the main pool (20) while Stripe answers, and writes its
    // record before the charge: on the same pool, 60 at once would wait for each other for ever.
    const buyers = await Promise.all(Array.from({ length: 30 }, () => customer('pm_card_visa')));
    const answers = await Promise.all(
      buyers.flatMap((b) => [buy(b.apiKey, 100, 'crowd'), buy(b.apiKey, 100, 'crowd')]),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(60).fill(200));
    await stripe.idle();
    for (const b of buyers) expect(await wallet(b.accountId)).toEqual({ plan: 0n, purchased: 110_000_000n });
  });

  it('answers 503 payment_provider_unavailable with Retry-After while Stripe is down, credits nothing, and charges once when retried', async () => {
    const account = await customer('pm_card_visa');
    stripe.outage = true;
    let down: Awaited<ReturnType<typeof buy>>;
    try {
      down = await buy(account.apiKey, 100, 'outage-1');
    } finally {
      stripe.outage = false;
    }
    expect(down.status, JSON.stringify(down.body)).toBe(503);
    expect(down.headers.get('retry-after')).toBe('60');
    expect(down.body.error.code).toBe('payment_provider_unavailable');
    expect(await wallet(account.accountId)).toEqual({ plan: 0n, purchased: 0n });
    const again = await buy(account.apiKey, 100, 'outage-1');
    expect(again.status).toBe(200);
    await stripe.idle();
    expect((await ledger(account.accountId)).filter((e) => e.kind === 'purchase')).toHaveLength(1);
    expect(await wallet(account.accountId)).toEqual({ plan: 0n, purchased: 110_000_000n });
    const intents = [...stripe.paymentIntents.values()].filter((i) => i.customer === account.customerId);
    expect(intents).toHaveLength(1);
    await expectBalanced(account.accountId);
  });
});

describe('what credits a purchase', () => {
  /** Someone else at the same Stripe account (another integration, a dashboard user), through the same official SDK. */
  const outsider = () => {
    const base = new URL(stripe.url);
    return new Stripe(stripe.secretKey, {
      host: base.hostname,
      port: base.port,
      protocol: 'http',
      maxNetworkRetries: 0,
    });
  };
  const succeeded = (intentId: string) =>
    [...stripe.events.values()].find(
      (e) => e.event.type === 'payment_intent.succeeded' && e.event.data.object.id === intentId,
    )!.event;

  it('credits nothing for a PaymentIntent this gateway did not make, whatever its metadata names; acknowledges it and warns', async () => {
    const { accountId } = await customer('pm_card_visa', { plan: 'scale' });
    // Ten dollars paid elsewhere, its metadata written to look like a purchase of this gateway with a bonus of 990.
    const forged = await outsider().paymentIntents.create({
      amount: 1_000,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      metadata: {
        leadgate_purpose: 'credits',
        account_id: accountId,
        plan: 'scale',
        original_usd: '10',
        amount_usd: '10',
        bonus_percent: '30',
        paid_micros: '10000000',
        bonus_micros: '990000000',
      },
    });
    expect(forged.status).toBe('succeeded');
    await stripe.idle();
    const event = succeeded(forged.id);
    expect(await applied(event.id)).toBe(`ignored: ${forged.id} is no purchase made by this gateway`);
    // Acknowledged, so Stripe does not retry it for days; still nothing credited.
    expect(await stripe.redeliver(event.id)).toEqual({
      status: 200,
      body: { received: true, id: event.id, duplicate: true },
    });
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 0n });
    expect(await ledger(accountId)).toEqual([]);
    expect((await t.app.core.sql`select count(*)::int as n from card_payment where id = ${forged.id}`)[0]!.n).toBe(0);

    const warnings = logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => (line.level as number) >= 40 && JSON.stringify(line).includes(forged.id));
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        stripeEvent: event.id,
        paymentIntent: forged.id,
        amountReceived: 1_000,
        currency: 'usd',
        claimedAccount: accountId,
      }),
    ]);
    for (const secret of [forged.client_secret!, stripe.secretKey, stripe.webhookSecret])
      expect(logs.join('\n')).not.toContain(secret);
  });

  it('credits a purchase from its own record: the account, amount and bonus of its row, whatever the metadata says by then', async () => {
    const buyer = await customer('pm_card_authenticationRequired');
    const other = await customer(null, { plan: 'scale' });
    const res = await buy(buyer.apiKey, 100, 'metadata-altered');
    expect(res.body.error.code).toBe('payment_requires_action');
    const intentId = res.body.payment.payment_intent as string;
    // Changed at Stripe before the customer authenticates: another account, another plan, a bigger bonus.
    await outsider().paymentIntents.update(intentId, {
      metadata: {
        account_id: other.accountId,
        plan: 'scale',
        original_usd: '1000',
        amount_usd: '1000',
        bonus_percent: '30',
        bonus_micros: '900000000',
      },
    });

    const { event } = await stripe.completeAuthentication(intentId);
    expect(event.data.object.metadata).toMatchObject({ account_id: other.accountId, bonus_micros: '900000000' });
    expect(await applied(event.id)).toBe('credited 110.00 USD');
    expect(await wallet(buyer.accountId)).toEqual({ plan: 0n, purchased: 110_000_000n });
    expect(await wallet(other.accountId)).toEqual({ plan: 0n, purchased: 0n });
    expect((await ledger(buyer.accountId)).filter((e) => e.kind === 'purchase')).toEqual([
      {
        kind: 'purchase',
        plan: '0',
        purchased: '110000000',
        payment_ref: intentId,
        note: `bought 100.00 USD + 10% growth bonus 10.00 USD, paid by card (${intentId})`,
      },
    ]);
    await expectBalanced(buyer.accountId);
  });

  it('credits a charge whose answer never came back from the record made before it; a retry is the same payment', async () => {
    const { accountId, apiKey, customerId } = await customer('pm_card_visa');
    stripe.loseAnswers = (method, path) => method === 'POST' && path.endsWith('/confirm');
    let lost: Awaited<ReturnType<typeof buy>>;
    try {
      lost = await buy(apiKey, 100, 'answer-lost');
    } finally {
      stripe.loseAnswers = null;
    }
    expect(lost.status, JSON.stringify(lost.body)).toBe(503);
    expect(lost.body.error.code).toBe('payment_provider_unavailable');
    await stripe.idle();
    const [intent, ...more] = [...stripe.paymentIntents.values()].filter((i) => i.customer === customerId);
    expect(more).toEqual([]);
    expect(intent!.status).toBe('succeeded');
    expect(await applied(succeeded(intent!.id).id)).toBe('credited 110.00 USD');
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 110_000_000n });

    const again = await buy(apiKey, 100, 'answer-lost');
    expect(again.status).toBe(200);
    expect(again.body.payment.payment_intent).toBe(intent!.id);
    expect(again.body.wallet.purchased_credits_dollars).toBe('110.00');
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 110_000_000n });
    await expectBalanced(accountId);
  });
});

describe('subscriptions', () => {
  it('chooses a plan by Checkout; subscription events set plan and status; invoice.paid grants once per invoice', async () => {
    const { accountId, apiKey } = await t.account({ plan: 'starter', subscriptionStatus: 'TRIAL', creditsMicros: 0n });
    const chosen = await t.graphql(apiKey, ChooseGrowth);
    const url = chosen.body.data!.choosePlan.url!;
    expect(url).toMatch(new RegExp(`^${stripe.url}/c/pay/cs_test_`)); // the fake serves Checkout’s page itself
    const { subscription, events } = await stripe.completeCheckout(url.split('/').at(-1)!);
    expect(subscription.items.data[0]!.price.id).toBe(FAKE_PRICES.growth);
    expect(events.map((e) => [e.event.type, e.status])).toEqual([
      ['customer.subscription.created', 200],
      ['invoice.paid', 200],
    ]);
    for (const e of events) await applied(e.event.id);
    const [account] = await t.app.core
      .sql`select plan, subscription_status, stripe_subscription_id, stripe_subscription_status from account where id = ${accountId}`;
    expect(account).toEqual({
      plan: 'growth',
      subscription_status: 'ACTIVE',
      stripe_subscription_id: subscription.id,
      stripe_subscription_status: 'active',
    });
    expect(await wallet(accountId)).toEqual({ plan: 149_000_000n, purchased: 0n });

    // The same invoice.paid delivered again grants nothing; nor does another event about the same invoice.
    const invoicePaid = events[1]!.event;
    expect(((await stripe.redeliver(invoicePaid.id)).body as HookReceipt).duplicate).toBe(true);
    const twin = JSON.stringify({ ...invoicePaid, id: 'evt_same_invoice_again' });
    expect((await stripe.post(twin, stripe.sign(twin))).body).toEqual({
      received: true,
      id: 'evt_same_invoice_again',
      duplicate: false,
    });
    expect(await applied('evt_same_invoice_again')).toBe(
      `ignored: invoice ${invoicePaid.data.object.id} was granted already`,
    );
    expect(await wallet(accountId)).toEqual({ plan: 149_000_000n, purchased: 0n });
    // The next month's invoice grants again.
    const next = await stripe.payInvoice(subscription.id);
    expect(await applied(next.event.id)).toBe('granted 149.00 USD of growth plan credits');
    expect((await ledger(accountId)).filter((e) => e.kind === 'plan_grant').map((e) => e.payment_ref)).toEqual([
      invoicePaid.data.object.id,
      next.event.data.object.id,
    ]);
    await expectBalanced(accountId);

    // past_due: still ACTIVE, with a warning.
    await applied((await stripe.setSubscriptionStatus(subscription.id, 'past_due')).event.id);
    const warned = await t.graphql(apiKey, SubscriptionWarning);
    expect(warned.body.data!.viewer).toEqual({
      subscriptionStatus: 'ACTIVE',
      payments: { subscriptionStatus: 'past_due', warning: expect.stringContaining('renewal payment failed') },
    });

    // Cancelled: CANCELLED, and buying credits is refused.
    await applied((await stripe.setSubscriptionStatus(subscription.id, 'canceled')).event.id);
    const refused = await buy(apiKey, 100);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('subscription_inactive');
    expect((await t.graphql(apiKey, SubscriptionStatus)).body.data!.viewer.subscriptionStatus).toBe('CANCELLED');
  });

  it('changes the plan by a new Checkout and cancels the subscription it replaces', async () => {
    const { accountId, apiKey } = await t.account({ plan: 'starter', subscriptionStatus: 'TRIAL', creditsMicros: 0n });
    const checkout = async (plan: Plan) => {
      const url = (await t.graphql(apiKey, ChoosePlan, { plan })).body.data!.choosePlan.url!;
      const done = await stripe.completeCheckout(url.split('/').at(-1)!);
      for (const e of done.events) await applied(e.event.id);
      return done.subscription;
    };
    const first = await checkout('GROWTH');
    const second = await checkout('SCALE');
    await stripe.idle();
    expect(stripe.subscriptions.get(first.id)!.status).toBe('canceled');
    const deleted = [...stripe.events.values()].find(
      (e) => e.event.type === 'customer.subscription.deleted' && e.event.data.object.id === first.id,
    )!;
    expect(await applied(deleted.event.id)).toMatch(/is not the account's subscription/);
    const [account] = await t.app.core
      .sql`select plan, subscription_status, stripe_subscription_id from account where id = ${accountId}`;
    expect(account).toEqual({ plan: 'scale', subscription_status: 'ACTIVE', stripe_subscription_id: second.id });
    expect(stripe.subscriptions.get(second.id)!.status).toBe('active');
  });

  it('starts a trial as TRIAL, and events applied out of order leave the latest state', async () => {
    const { accountId, apiKey } = await t.account({
      plan: 'starter',
      subscriptionStatus: 'CANCELLED',
      creditsMicros: 0n,
    });
    const url = (await t.graphql(apiKey, ChoosePlan, { plan: 'SCALE' })).body.data!.choosePlan.url!;
    const { subscription, events } = await stripe.completeCheckout(url.split('/').at(-1)!, 'trialing');
    await applied(events[0]!.event.id);
    const state = async () =>
      (await t.app.core.sql`select plan, subscription_status from account where id = ${accountId}`)[0];
    expect(await state()).toEqual({ plan: 'scale', subscription_status: 'TRIAL' });

    stripe.paused = true;
    const active = await stripe.setSubscriptionStatus(subscription.id, 'active');
    const unpaid = await stripe.setSubscriptionStatus(subscription.id, 'unpaid');
    stripe.paused = false;
    // The later event first, then the earlier: the subscription is read back from Stripe, so the account ends as Stripe has it.
    expect((await stripe.redeliver(unpaid.event.id)).status).toBe(200);
    await applied(unpaid.event.id);
    expect((await stripe.redeliver(active.event.id)).status).toBe(200);
    await applied(active.event.id);
    expect(await state()).toEqual({ plan: 'scale', subscription_status: 'CANCELLED' });
  });
});

describe('refunds and disputes', () => {
  it('takes refunded credits back with their bonus, in proportion, and never twice', async () => {
    const { accountId, apiKey } = await customer('pm_card_visa');
    const res = await buy(apiKey, 100, 'to-refund');
    const intent = stripe.paymentIntents.get(res.body.payment.payment_intent)!;
    await stripe.idle();
    const half = await stripe.refund(intent.latest_charge!, 5_000);
    expect(await applied(half.event.id)).toBe('took back 55.00 USD (refund)');
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 55_000_000n });
    await stripe.redeliver(half.event.id);
    const rest = await stripe.refund(intent.latest_charge!, 5_000);
    expect(await applied(rest.event.id)).toBe('took back 55.00 USD (refund)');
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 0n });
    const refunds = (await ledger(accountId)).filter((e) => e.kind === 'refund');
    expect(refunds).toEqual([
      expect.objectContaining({ purchased: '-55000000', payment_ref: intent.id }),
      expect.objectContaining({ purchased: '-55000000', payment_ref: intent.id }),
    ]);
    await expectBalanced(accountId);
  });

  it('takes disputed credits back; a wallet below zero refuses new runs until credits settle it', async () => {
    const { accountId, apiKey } = await customer('pm_card_visa', { plan: 'scale' });
    const res = await buy(apiKey, 100, 'to-dispute');
    const intent = stripe.paymentIntents.get(res.body.payment.payment_intent)!;
    await stripe.idle();
    // 50 cents of the credits are spent before the dispute comes in.
    await t.app.core
      .sql`update wallet set purchased_micros = purchased_micros - 500000 where account_id = ${accountId}`;
    await t.app.core
      .sql`insert into ledger_entry (account_id, kind, purchased_micros, note) values (${accountId}, 'charge', -500000, 'spent')`;

    const dispute = await stripe.dispute(intent.latest_charge!, 10_000);
    expect(await applied(dispute.event.id)).toBe('took back 130.00 USD (dispute)');
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: -500_000n });
    await expectBalanced(accountId);

    // Neither the maps scraper nor the lead scraper, whose 1 USD overdraft would cover the 50 cents, starts now.
    for (const [path, body] of [
      ['/api/v1/scrape/maps', DENVER_DENTISTS],
      [
        '/api/v1/scrape/leadplatform',
        { url: 'https://app.apollo.io/#/people?personTitles[]=engineer&personLocations[]=United%20States', count: 500 },
      ],
    ] as const) {
      const refused = await t.request('POST', path, { key: apiKey, body });
      expect(refused.status, path).toBe(402);
      expect(refused.body.error).toEqual({
        code: 'insufficient_funds',
        message:
          'The wallet is -0.50 USD, below zero: credits of a refunded or disputed purchase were taken back after they were spent. No run starts until it is settled; buy credits with POST /api/v1/buy-credits.',
      });
    }
    expect((await t.app.core.sql`select count(*)::int as n from run where account_id = ${accountId}`)[0]!.n).toBe(0);

    // Credits bought settle it; runs start again.
    expect((await buy(apiKey, 200, 'settle')).status).toBe(200);
    await stripe.idle();
    const again = await t.request('POST', '/api/v1/scrape/maps', { key: apiKey, body: DENVER_DENTISTS });
    expect(again.status).toBe(200);
    await t.waitForRun(apiKey, again.body.runId);
  });
});

describe('POST /hooks/stripe', () => {
  it('refuses a bad signature with 400 and changes nothing', async () => {
    const { accountId, apiKey } = await customer('pm_card_authenticationRequired');
    const intentId = (await buy(apiKey, 100)).body.payment.payment_intent as string;
    stripe.paused = true;
    const { event } = await stripe.completeAuthentication(intentId);
    stripe.paused = false;
    const { payload } = stripe.events.get(event.id)!;
    const refusals = [
      [payload, stripe.sign(payload, undefined, 'whsec_not_the_secret')],
      [payload, undefined],
      [payload, 'garbage'],
      [payload.replace('"amount": 10000', '"amount": 99999'), stripe.sign(payload)],
      [payload, stripe.sign(payload, Math.floor(Date.now() / 1000) - 600)],
    ] as const;
    for (const [body, signature] of refusals) {
      const res = await stripe.post(body, signature);
      expect(res.status, String(signature)).toBe(400);
      expect((res.body as ErrorBody).error.code).toBe('invalid_signature');
    }
    const [recorded] = await t.app.core.sql`select count(*)::int as n from stripe_event where id = ${event.id}`;
    expect(recorded!.n).toBe(0);
    expect(await wallet(accountId)).toEqual({ plan: 0n, purchased: 0n });
    // The genuine delivery still works.
    expect((await stripe.redeliver(event.id)).status).toBe(200);
    expect(await applied(event.id)).toBe('credited 110.00 USD');
  });

  it('records events it does not act on, and answers at once', async () => {
    const payload = JSON.stringify({
      id: 'evt_other_1',
      object: 'event',
      type: 'customer.created',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: 'cus_x', object: 'customer' } },
      api_version: '2026-10-28.endive',
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
    });
    const res = await stripe.post(payload, stripe.sign(payload));
    expect(res).toEqual({ status: 200, body: { received: true, id: 'evt_other_1', duplicate: false } });
    expect(await applied('evt_other_1')).toBe('ignored: customer.created is not acted on');
  });

  it('adds the job again when Stripe redelivers an event that was recorded but never applied', async () => {
    const payload = JSON.stringify({
      id: 'evt_stuck_1',
      object: 'event',
      type: 'customer.updated',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: 'cus_y', object: 'customer' } },
      api_version: '2026-10-28.endive',
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
    });
    // As a job that failed every attempt leaves it: recorded, not applied, no job.
    await t.app.core
      .sql`insert into stripe_event (id, type, created_at, event) values ('evt_stuck_1', 'customer.updated', now(), ${payload}::jsonb)`;
    const res = await stripe.post(payload, stripe.sign(payload));
    expect(res).toEqual({ status: 200, body: { received: true, id: 'evt_stuck_1', duplicate: true } });
    expect(await applied('evt_stuck_1')).toBe('ignored: customer.updated is not acted on');
  });
});
