import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';

const BuyCredits = graphql(
  `mutation PaymentsModesBuyCredits { buyCredits(amount: "100") { purchase { amount } userErrors { code } } }`,
);
const ChoosePlan = graphql(`mutation PaymentsModesChoosePlan { choosePlan(plan: SCALE) { url } }`);
const PaymentsMode = graphql(`query PaymentsModesPaymentsMode { viewer { payments { mode } } }`);
const DemoPurchase = graphql(
  `query PaymentsModesDemoPurchase { viewer { payments { mode } ledger(first: 1) { nodes { note paymentReference } } } }`,
);
const OpenBillingPortal = graphql(`mutation PaymentsModesOpenBillingPortal { openBillingPortal { url } }`);
const DemoChoosePlan = graphql(
  `mutation PaymentsModesDemoChoosePlan { choosePlan(plan: SCALE) { url message userErrors { code } } }`,
);
const Plans = graphql(`
  query PaymentsModesPlans {
    plans { plan price monthlyCredits creditBonusPercent includedPlan adds current choosable }
    viewer { plan subscriptionStatus }
  }
`);

/**
 * The payments modes: demo (recorded without payment, and saying so) and none (buying credits is
 * refused 503 on every face). Stripe itself: payments-stripe.test.ts.
 */
describe('configuration', () => {
  it('is demo only with the embedded database, none with DATABASE_URL, stripe with a secret key', () => {
    expect(loadConfig({}).payments).toEqual({ mode: 'demo' });
    expect(loadConfig({ DATABASE_URL: 'postgres://db/leadgate' }).payments).toEqual({ mode: 'none' });
    expect(loadConfig({ DATABASE_URL: 'postgres://db/leadgate', PAYMENTS: 'demo' }).payments).toEqual({ mode: 'demo' });
    expect(loadConfig({ PAYMENTS: 'none' }).payments).toEqual({ mode: 'none' });
    const stripe = loadConfig({
      DATABASE_URL: 'postgres://db/leadgate',
      STRIPE_SECRET_KEY: 'sk_test_1',
      STRIPE_WEBHOOK_SECRET: 'whsec_1',
      STRIPE_PRICE_GROWTH: 'price_g',
      STRIPE_API_BASE: 'http://127.0.0.1:12111',
    }).payments;
    expect(stripe).toEqual({
      mode: 'stripe',
      secretKey: 'sk_test_1',
      webhookSecret: 'whsec_1',
      prices: { growth: 'price_g' },
      apiBase: new URL('http://127.0.0.1:12111'),
    });
  });

  it('refuses settings that leave it unclear whether purchases are paid', () => {
    expect(() => loadConfig({ STRIPE_SECRET_KEY: 'sk_test_1' })).toThrow(/STRIPE_WEBHOOK_SECRET/);
    expect(() =>
      loadConfig({ PAYMENTS: 'demo', STRIPE_SECRET_KEY: 'sk_test_1', STRIPE_WEBHOOK_SECRET: 'whsec_1' }),
    ).toThrow(/PAYMENTS=demo with STRIPE_SECRET_KEY/);
    expect(() => loadConfig({ PAYMENTS: 'stripe' })).toThrow(/needs STRIPE_SECRET_KEY/);
    expect(() => loadConfig({ PAYMENTS: 'free' })).toThrow(/PAYMENTS must be one of stripe, demo, none/);
    expect(() =>
      loadConfig({ STRIPE_SECRET_KEY: 'sk_test_1', STRIPE_WEBHOOK_SECRET: 'whsec_1', STRIPE_API_BASE: 'ftp://x' }),
    ).toThrow(/STRIPE_API_BASE/);
  });
});

const mcp = (t: TestApp, key: string, name: string, args: unknown = {}) =>
  t.request('POST', '/mcp?tools=all', {
    key,
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  });

describe('PAYMENTS=none', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { payments: { mode: 'none' } } });
  });
  afterAll(() => t?.stop());

  it('refuses buy-credits with 503 payments_not_configured on REST and GraphQL, and writes nothing', async () => {
    const { accountId, apiKey } = await t.account({ creditsMicros: 5_000_000n });
    const rest = await t.request('POST', '/api/v1/buy-credits', {
      key: apiKey,
      body: { amount: 100 },
      headers: { 'idempotency-key': 'none-1' },
    });
    expect(rest.status).toBe(503);
    expect(rest.body).toEqual({
      error: { code: 'payments_not_configured', message: expect.stringContaining('npx leadgate accounts grant') },
    });

    const gql = await t.graphql(apiKey, BuyCredits);
    expect(gql.body.data?.buyCredits ?? null).toBeNull();
    expect(gql.body.errors![0]!.extensions!.code).toBe('PAYMENTS_NOT_CONFIGURED');
    expect(gql.body.errors![0]!.message).toContain('no payment provider is configured');

    const plan = await t.graphql(apiKey, ChoosePlan);
    expect(plan.body.errors![0]!.extensions!.code).toBe('PAYMENTS_NOT_CONFIGURED');
    const hook = await t.request('POST', '/hooks/stripe', {
      rawBody: '{"id":"evt_1"}',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
    });
    expect(hook.status).toBe(503);
    expect(hook.body.error.code).toBe('payments_not_configured');

    const [counts] = await t.app.core.sql`select
      (select count(*)::int from ledger_entry where account_id = ${accountId} and kind = 'purchase') as purchases,
      (select count(*)::int from idempotency_key where account_id = ${accountId}) as keys,
      (select count(*)::int from stripe_event) as events`;
    expect(counts).toEqual({ purchases: 0, keys: 0, events: 0 });
  });

  it('says so in the wallet, on REST, MCP (which has no purchase tool) and GraphQL', async () => {
    const { apiKey } = await t.account();
    expect((await t.request('GET', '/api/v1/wallet', { key: apiKey })).body.payments).toEqual({ mode: 'none' });
    const tool = await mcp(t, apiKey, 'get_wallet');
    expect(tool.body.result.structuredContent.payments).toEqual({ mode: 'none' });
    const tools = await t.request('POST', '/mcp?tools=all', {
      key: apiKey,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(tools.body.result.tools.map((x: { name: string }) => x.name)).not.toContain('buy_credits');
    expect((await t.graphql(apiKey, PaymentsMode)).body.data!.viewer.payments).toEqual({ mode: 'NONE' });
  });
});

describe('PAYMENTS=demo', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ config: { payments: { mode: 'demo' } } });
  });
  afterAll(() => t?.stop());

  it('records a purchase without payment and marks it in the answer, the ledger and the wallet', async () => {
    const { accountId, apiKey } = await t.account({ plan: 'growth', creditsMicros: 0n });
    const res = await t.request('POST', '/api/v1/buy-credits', { key: apiKey, body: { amount: 100 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      amount: 100,
      bonus: 10,
      payment: { mode: 'demo', payment_intent: null },
      message: expect.stringContaining('Demo mode: recorded without payment.'),
    });
    const [entry] = await t.app.core
      .sql`select note, payment_ref from ledger_entry where account_id = ${accountId} and kind = 'purchase'`;
    expect(entry).toEqual({
      note: 'demo purchase, no payment taken: bought 100.00 USD + 10% growth bonus 10.00 USD',
      payment_ref: null,
    });
    expect((await t.request('GET', '/api/v1/wallet', { key: apiKey })).body.payments).toEqual({ mode: 'demo' });
    expect((await mcp(t, apiKey, 'get_wallet')).body.result.structuredContent.payments).toEqual({ mode: 'demo' });
    const viewer = await t.graphql(apiKey, DemoPurchase);
    expect(viewer.body.data!.viewer).toEqual({
      payments: { mode: 'DEMO' },
      ledger: { nodes: [{ note: expect.stringMatching(/^demo purchase, no payment taken/), paymentReference: null }] },
    });
    const portal = await t.graphql(apiKey, OpenBillingPortal);
    expect(portal.body.errors![0]!.extensions!.code).toBe('PAYMENTS_NOT_CONFIGURED');
  });

  it('lists the plans from their declarations and changes a trial’s plan at once, then sells it credits', async () => {
    const { apiKey } = await t.account({ plan: 'growth', subscriptionStatus: 'TRIAL', creditsMicros: 0n });
    expect((await t.request('POST', '/api/v1/buy-credits', { key: apiKey, body: { amount: 100 } })).body).toMatchObject(
      { error: { code: 'subscription_inactive' } },
    );
    const listed = (await t.graphql(apiKey, Plans)).body.data!;
    expect(listed.plans.map((p) => [p.plan, p.price, p.monthlyCredits, p.creditBonusPercent, p.includedPlan])).toEqual([
      ['STARTER', '49.00', '49.00', 0, null],
      ['GROWTH', '149.00', '149.00', 10, 'STARTER'],
      ['SCALE', '649.00', '649.00', 30, 'GROWTH'],
    ]);
    expect(listed.plans.map((p) => [p.current, p.choosable])).toEqual([
      [false, true],
      [true, true],
      [false, true],
    ]);
    // Every gated tool is named once, at its lowest plan.
    expect(listed.plans[2]!.adds).toEqual(expect.arrayContaining([expect.stringMatching(/enrichment/i)]));
    expect(new Set(listed.plans.flatMap((p) => p.adds)).size).toBe(listed.plans.flatMap((p) => p.adds).length);

    const chosen = (await t.graphql(apiKey, DemoChoosePlan)).body.data!.choosePlan;
    expect(chosen).toEqual({
      url: null,
      message: expect.stringMatching(/^Demo mode: .*scale plan, active/),
      userErrors: [],
    });
    expect((await t.graphql(apiKey, Plans)).body.data!.viewer).toEqual({ plan: 'SCALE', subscriptionStatus: 'ACTIVE' });
    const bought = await t.request('POST', '/api/v1/buy-credits', { key: apiKey, body: { amount: 100 } });
    expect(bought.status).toBe(200);
    expect(bought.body).toMatchObject({ amount: 100, bonus: 30 });
  });
});
