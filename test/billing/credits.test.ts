import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan, SubscriptionStatus } from '../../db/tables/accounts.ts';
import { assertPlan } from '../../src/billing/plans.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import { leadgate } from '../helpers/process.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ worker: false });
});
afterAll(() => t?.stop());

const buy = (key: string, body: unknown) => t.request('POST', '/api/v1/buy-credits', { key, body });
const entries = async (accountId: string) =>
  (await t.app.core.sql`select count(*)::int as n from ledger_entry where account_id = ${accountId}`)[0]!.n as number;

describe('POST /api/v1/buy-credits', () => {
  it.each([
    [49, 48],
    [50, 48],
    [149, 148],
    [649, 648],
  ])('adjusts %i down to %i and says so', async (amount, adjusted) => {
    const { apiKey } = await t.account({ plan: 'starter', creditsMicros: 0n });
    const res = await buy(apiKey, { amount });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, amount: adjusted, original_amount: amount, was_adjusted: true });
    expect(res.body.message).toContain(`${amount}.00 USD was adjusted to ${adjusted}.00 USD`);
    expect(res.body.wallet.purchased_credits_dollars).toBe(`${adjusted}.00`);
  });

  it.each([
    ['starter', 100, '100.00', 0],
    ['growth', 100, '110.00', 10],
    ['scale', 100, '130.00', 30],
    ['growth', 149, '162.80', 14.8],
  ] as [Plan, number, string, number][])(
    'on %s, buying %i gives %s of purchased credits',
    async (plan, amount, credited, bonus) => {
      const { apiKey } = await t.account({ plan, creditsMicros: 0n });
      const res = await buy(apiKey, { amount });
      expect(res.body).toMatchObject({ success: true, bonus });
      expect(res.body.amount).toBe(amount === 149 ? 148 : amount);
      expect(res.body.was_adjusted).toBe(amount === 149);
      const wallet = await t.request('GET', '/api/v1/wallet', { key: apiKey });
      expect(wallet.body.wallet).toEqual({
        balance_dollars: '0.00',
        purchased_credits_dollars: credited,
        total_balance_dollars: credited,
        held_dollars: '0.00',
      });
      if (bonus > 0) expect(res.body.message).toMatch(new RegExp(`${plan} plan adds a \\d+% bonus`));
    },
  );

  it('accepts the bounds 10 and 10,000 and cents', async () => {
    const { apiKey } = await t.account({ plan: 'starter', creditsMicros: 0n });
    for (const amount of [10, 10_000, 12.34]) {
      const res = await buy(apiKey, { amount });
      expect(res.body).toMatchObject({ success: true, amount, was_adjusted: false });
    }
    const wallet = await t.request('GET', '/api/v1/wallet', { key: apiKey });
    expect(wallet.body.wallet.purchased_credits_dollars).toBe('10022.34');
  });

  it.each([
    ['below 10', { amount: 9.99 }, /between 10 and 10000/],
    ['above 10,000', { amount: 10_000.01 }, /between 10 and 10000/],
    ['zero', { amount: 0 }, /between 10 and 10000/],
    ['negative', { amount: -50 }, /between 10 and 10000/],
    ['a string', { amount: '100' }, /must be a number/],
    ['null', { amount: null }, /required/],
    ['missing', {}, /required/],
    ['three decimals', { amount: 10.001 }, /at most 2 decimals/],
    ['not an object', [100], /JSON object/],
  ])('refuses %s with 400 and writes nothing', async (_, body, message) => {
    const { accountId, apiKey } = await t.account({ plan: 'scale', creditsMicros: 1_000_000n });
    const before = await entries(accountId);
    const res = await buy(apiKey, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.message).toMatch(message);
    expect(await entries(accountId)).toBe(before);
  });

  it.each(['TRIAL', 'CANCELLED'] as SubscriptionStatus[])(
    'refuses a %s subscription with 403 subscription_inactive',
    async (status) => {
      const { accountId, apiKey } = await t.account({ plan: 'scale', subscriptionStatus: status, creditsMicros: 0n });
      const res = await buy(apiKey, { amount: 100 });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'subscription_inactive' });
      expect(res.body.error.message).toContain(status);
      expect(await entries(accountId)).toBe(0);
    },
  );

  it('follows the same rules in GraphQL', async () => {
    const { apiKey } = await t.account({ plan: 'growth', creditsMicros: 0n });
    const ok = await t.graphql(
      apiKey,
      'mutation { buyCredits(amount: "50") { purchase { amount originalAmount wasAdjusted bonus } wallet { purchasedCredits } userErrors { code } } }',
    );
    expect(ok.body.data.buyCredits).toEqual({
      purchase: { amount: '48.00', originalAmount: '50.00', wasAdjusted: true, bonus: '4.80' },
      wallet: { purchasedCredits: '52.80' },
      userErrors: [],
    });
    const bad = await t.graphql(
      apiKey,
      'mutation { buyCredits(amount: "5") { purchase { amount } userErrors { code field message } } }',
    );
    expect(bad.body.errors).toBeUndefined();
    expect(bad.body.data.buyCredits).toEqual({
      purchase: null,
      userErrors: [
        { code: 'VALIDATION_FAILED', field: ['amount'], message: expect.stringMatching(/between 10 and 10000/) },
      ],
    });
    // Money is a decimal string: a float literal is not Money.
    const float = await t.graphql(apiKey, 'mutation { buyCredits(amount: 50.5) { userErrors { code } } }');
    expect(float.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});

describe('plan gates', () => {
  const principal = (plan: Plan): Principal => ({
    accountId: 'acc',
    keyId: 'k',
    keyPrefix: 'p',
    plan,
    subscriptionStatus: 'ACTIVE',
  });
  it.each([
    ['starter', 'growth', 'growth plan (149 USD/month) or higher; this account is on starter (49 USD/month)'],
    ['starter', 'scale', 'scale plan (649 USD/month) or higher; this account is on starter'],
    ['growth', 'scale', 'scale plan (649 USD/month) or higher; this account is on growth (149 USD/month)'],
  ] as [Plan, Plan, string][])(
    '%s is refused what needs %s, with 403 plan_required naming the plan',
    (has, needs, text) => {
      let error: unknown;
      try {
        assertPlan(principal(has), needs, 'The lead database API');
      } catch (err) {
        error = err;
      }
      expect(error).toMatchObject({ status: 403, code: 'plan_required' });
      expect((error as Error).message).toContain(text);
    },
  );

  it.each([
    ['growth', 'growth'],
    ['scale', 'growth'],
    ['scale', 'scale'],
    ['starter', undefined],
  ] as [Plan, Plan | undefined][])('%s may use what needs %s', (has, needs) => {
    expect(() => assertPlan(principal(has), needs, 'x')).not.toThrow();
  });
});

describe('GET /api/v1/apollo-status', () => {
  it('reports the lead scraper mode with a timestamp', async () => {
    const { apiKey } = await t.account();
    const res = await t.request('GET', '/api/v1/apollo-status', { key: apiKey });
    expect(res.body).toEqual({
      status: 'url-based',
      message: expect.stringContaining('bracket format'),
      timestamp: expect.any(String),
    });
    expect(Math.abs(Date.parse(res.body.timestamp) - Date.now())).toBeLessThan(60_000);
  });
});

describe('npx leadgate accounts grant / set-plan', () => {
  it('grants plan credits and changes the plan', async () => {
    const { accountId, apiKey } = await t.account({ plan: 'starter', creditsMicros: 0n });
    const env = { DATABASE_URL: t.database.url, LOG_LEVEL: 'warn' };
    const granted = await leadgate(['accounts', 'grant', '--account', accountId, '--credits', '25'], env);
    expect(granted.code).toBe(0);
    expect(JSON.parse(granted.stdout).wallet.balance_dollars).toBe('25.00');
    const plan = await leadgate(
      ['accounts', 'set-plan', '--account', accountId, '--plan', 'growth', '--status', 'TRIAL'],
      env,
    );
    expect(JSON.parse(plan.stdout)).toEqual({ accountId, plan: 'growth', subscriptionStatus: 'TRIAL' });
    const viewer = await t.graphql(apiKey, '{ viewer { plan subscriptionStatus wallet { balance } } }');
    expect(viewer.body.data.viewer).toEqual({
      plan: 'GROWTH',
      subscriptionStatus: 'TRIAL',
      wallet: { balance: '25.00' },
    });
    const unknown = await leadgate(['accounts', 'grant', '--account', 'acc_nope', '--credits', '5'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Account not found/);
  });
});
