import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountTable } from '../../db/tables/accounts.ts';
import type { Plan } from '../../db/tables/accounts.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import { AppError } from '../../src/shared/errors.ts';
import { newAccountId } from '../../src/shared/ids.ts';
import { getBalances, grantPlanCredits, listLedger } from '../../src/billing/wallet.ts';
import { settleHold } from '../../src/billing/hold.ts';
import { prepareCreditPurchase as preparePurchase } from '../../src/billing/payments/index.ts';
import { demoPayments } from '../../src/billing/payments/demo.ts';
import type { Subscriber } from '../../src/billing/plans.ts';

/** Purchases in demo mode (recorded without payment), as the rules below are checked. */
const prepareCreditPurchase = (principal: Subscriber, amount: unknown) =>
  preparePurchase(demoPayments, principal, amount, undefined);
import { purchaseView } from '../../src/endpoints/api/account.ts';
import { holdAndPlace, releaseRunSlot, type HoldRequest } from '../../src/runs/queue.ts';
import { openDirectDb, type DirectDb } from '../helpers/direct-db.ts';
import { waitFor } from '../helpers/wait.ts';

let d: DirectDb;

beforeAll(async () => {
  d = await openDirectDb();
});
afterAll(() => d?.close());

/** An account whose wallet holds `plan` plan credits and `purchased` purchased credits (micro-dollars). */
async function accountWith(plan: bigint, purchased = 0n, activeRuns = 0): Promise<string> {
  const id = await d.account({ creditsMicros: plan });
  await d.sql`update wallet set purchased_micros = ${purchased.toString()}::bigint, active_runs = ${activeRuns} where account_id = ${id}`;
  if (purchased !== 0n)
    await d.sql`insert into ledger_entry (account_id, kind, purchased_micros, note) values (${id}, 'purchase', ${purchased.toString()}::bigint, 'bought')`;
  return id;
}

/** An account row with no wallet row yet. */
async function bareAccount(): Promise<string> {
  const id = newAccountId();
  await d.db.insert(accountTable).values({ id, name: 'bare' });
  return id;
}

async function wallet(accountId: string) {
  const [w] =
    await d.sql`select plan_micros::text as plan, purchased_micros::text as purchased, active_runs from wallet where account_id = ${accountId}`;
  return { plan: BigInt(w!.plan), purchased: BigInt(w!.purchased), activeRuns: w!.active_runs as number };
}

async function entries(accountId: string) {
  const rows =
    await d.sql`select kind, plan_micros::text as plan, purchased_micros::text as purchased, run_id, note from ledger_entry where account_id = ${accountId} order by id`;
  return rows.map((r) => ({
    kind: r.kind as string,
    plan: BigInt(r.plan),
    purchased: BigInt(r.purchased),
    runId: r.run_id as string | null,
    note: r.note as string | null,
  }));
}

/** The ledger sums to the cached balances. */
async function expectBalanced(accountId: string) {
  const w = await wallet(accountId);
  const e = await entries(accountId);
  expect({ plan: e.reduce((s, x) => s + x.plan, 0n), purchased: e.reduce((s, x) => s + x.purchased, 0n) }).toEqual({
    plan: w.plan,
    purchased: w.purchased,
  });
}

describe('getBalances and grantPlanCredits', () => {
  it('reads zero for an account without a wallet', async () => {
    expect(await getBalances(d.db, 'acc_missing')).toEqual({ planMicros: 0n, purchasedMicros: 0n });
  });

  it('adds plan credits to the wallet with a ledger entry', async () => {
    const id = await accountWith(5_000_000n, 2_000_000n);
    await d.db.transaction((tx) => grantPlanCredits(tx, id, 1_500_000n, 'monthly plan credits'));
    expect(await getBalances(d.db, id)).toEqual({ planMicros: 6_500_000n, purchasedMicros: 2_000_000n });
    expect((await entries(id)).at(-1)).toEqual({
      kind: 'plan_grant',
      plan: 1_500_000n,
      purchased: 0n,
      runId: null,
      note: 'monthly plan credits',
    });
    await expectBalanced(id);
  });

  it('creates the wallet of an account that has none', async () => {
    const id = await bareAccount();
    await grantPlanCredits(d.db, id, 3_000_000n, 'first grant');
    expect(await wallet(id)).toEqual({ plan: 3_000_000n, purchased: 0n, activeRuns: 0 });
    expect(await entries(id)).toEqual([
      { kind: 'plan_grant', plan: 3_000_000n, purchased: 0n, runId: null, note: 'first grant' },
    ]);
  });

  it('writes no ledger entry for a grant of zero, but still makes the wallet', async () => {
    const id = await bareAccount();
    await grantPlanCredits(d.db, id, 0n, 'nothing');
    expect(await wallet(id)).toEqual({ plan: 0n, purchased: 0n, activeRuns: 0 });
    expect(await entries(id)).toEqual([]);
  });
});

describe('holdAndPlace: the hold, the RUNNING/READY decision and the job, in one statement', () => {
  const notifications: { channel: string; payload: string }[] = [];
  let listener: { unlisten(): Promise<void> } | undefined;

  beforeAll(async () => {
    listener = await d.sql.listen('ledger_test', (payload) => notifications.push({ channel: 'ledger_test', payload }));
  });
  afterAll(() => listener?.unlisten());

  async function place(accountId: string, h: Partial<HoldRequest> = {}) {
    const run = await d.insertRun({ accountId, startedAt: new Date() });
    const result = await d.db.transaction((tx) =>
      holdAndPlace(tx, {
        accountId,
        runId: run.id,
        wanted: 1_000_000n,
        overdraftMicros: 0n,
        maxRunning: 10,
        waitingMessage: 'Waiting for a slot',
        notify: { channels: ['ledger_test'], running: `running ${run.id}`, ready: `ready ${run.id}` },
        enqueue: sql`pg_notify('ledger_test', ${`job ${run.id}`})`,
        ...h,
      }),
    );
    const [after] =
      await d.sql`select status, status_message, started_at, hold_plan_micros::text as hp, hold_purchased_micros::text as hpu from run where id = ${run.id}`;
    return {
      run,
      result,
      after: {
        status: after!.status,
        message: after!.status_message,
        startedAt: after!.started_at,
        holdPlan: BigInt(after!.hp),
        holdPurchased: BigInt(after!.hpu),
      },
    };
  }

  /** True once `payload` has been notified (NOTIFY is delivered after its commit, so it may come a little later). */
  const notified = (payload: string) =>
    waitFor(() => notifications.some((n) => n.payload === payload), Boolean, {
      timeoutMs: 10_000,
      what: `notification ${payload}`,
    });

  it('takes purchased credits first, then plan credits, and records the hold on the run and in the ledger', async () => {
    const id = await accountWith(10_000_000n, 300_000n);
    const { run, result, after } = await place(id);
    expect(result).toEqual({ purchasedMicros: 300_000n, planMicros: 700_000n, queued: false });
    expect(await wallet(id)).toEqual({ plan: 9_300_000n, purchased: 0n, activeRuns: 1 });
    expect(after).toMatchObject({ status: 'RUNNING', holdPlan: 700_000n, holdPurchased: 300_000n });
    expect(after.startedAt).not.toBeNull();
    expect((await entries(id)).at(-1)).toEqual({
      kind: 'hold',
      plan: -700_000n,
      purchased: -300_000n,
      runId: run.id,
      note: 'reserved at start',
    });
    expect(await notified(`running ${run.id}`)).toBe(true);
    await expectBalanced(id);
  });

  it('takes only from purchased credits when they cover the hold', async () => {
    const id = await accountWith(1_000_000n, 5_000_000n);
    const { result } = await place(id, { wanted: 2_000_000n });
    expect(result).toEqual({ purchasedMicros: 2_000_000n, planMicros: 0n, queued: false });
    expect(await wallet(id)).toMatchObject({ plan: 1_000_000n, purchased: 3_000_000n });
  });

  it('holds no more than the wallet has, plus the allowed overdraft', async () => {
    const capped = await accountWith(400_000n, 100_000n);
    expect((await place(capped)).result).toEqual({ purchasedMicros: 100_000n, planMicros: 400_000n, queued: false });
    expect(await wallet(capped)).toMatchObject({ plan: 0n, purchased: 0n });

    const overdraft = await accountWith(400_000n);
    const { result, after } = await place(overdraft, { overdraftMicros: 1_000_000n, wanted: 5_000_000n });
    expect(result).toEqual({ purchasedMicros: 0n, planMicros: 1_400_000n, queued: false });
    expect(await wallet(overdraft)).toMatchObject({ plan: -1_000_000n, purchased: 0n });
    expect(after.holdPlan).toBe(1_400_000n);
    await expectBalanced(overdraft);
  });

  it('holds nothing from an empty or overdrawn wallet, and writes no ledger entry', async () => {
    for (const plan of [0n, -500_000n]) {
      const id = await accountWith(0n);
      await d.sql`update wallet set plan_micros = ${plan.toString()}::bigint where account_id = ${id}`;
      const before = await entries(id);
      const { result, after } = await place(id);
      expect(result).toEqual({ purchasedMicros: 0n, planMicros: 0n, queued: false });
      expect(await wallet(id)).toEqual({ plan, purchased: 0n, activeRuns: 1 });
      expect(await entries(id)).toEqual(before);
      expect(after).toMatchObject({ holdPlan: 0n, holdPurchased: 0n });
    }
  });

  it('holds nothing when nothing is wanted', async () => {
    const id = await accountWith(2_000_000n, 1_000_000n);
    expect((await place(id, { wanted: 0n })).result).toEqual({ purchasedMicros: 0n, planMicros: 0n, queued: false });
    expect(await wallet(id)).toEqual({ plan: 2_000_000n, purchased: 1_000_000n, activeRuns: 1 });
  });

  it('places a run READY, without a job, when the account already has its maximum RUNNING', async () => {
    const id = await accountWith(10_000_000n, 0n, 2);
    const { run, result, after } = await place(id, { maxRunning: 2 });
    expect(result).toEqual({ purchasedMicros: 0n, planMicros: 1_000_000n, queued: true });
    expect(after).toEqual({
      status: 'READY',
      message: 'Waiting for a slot',
      startedAt: null,
      holdPlan: 1_000_000n,
      holdPurchased: 0n,
    });
    expect(await wallet(id)).toEqual({ plan: 9_000_000n, purchased: 0n, activeRuns: 2 });
    expect(await notified(`ready ${run.id}`)).toBe(true);
    expect(notifications.some((n) => n.payload === `running ${run.id}` || n.payload === `job ${run.id}`)).toBe(false);
  });

  it('places a run RUNNING while the account is one below its maximum', async () => {
    const id = await accountWith(10_000_000n, 0n, 1);
    const { result, after } = await place(id, { maxRunning: 2 });
    expect(result.queued).toBe(false);
    expect(after.status).toBe('RUNNING');
    expect(await wallet(id)).toMatchObject({ activeRuns: 2 });
  });

  it('adds the job of a run placed RUNNING', async () => {
    const id = await accountWith(10_000_000n);
    const { run } = await place(id);
    expect(await notified(`job ${run.id}`)).toBe(true);
  });

  it('fails loudly when the account has no wallet or the run was not inserted first', async () => {
    const bare = await bareAccount();
    await expect(place(bare)).rejects.toThrow(`account ${bare} has no wallet, or run`);
    const id = await accountWith(1_000_000n);
    await expect(
      d.db.transaction((tx) =>
        holdAndPlace(tx, {
          accountId: id,
          runId: 'no_such_run',
          wanted: 1n,
          overdraftMicros: 0n,
          maxRunning: 10,
          waitingMessage: 'w',
          notify: { channels: ['ledger_test'], running: 'r', ready: 'q' },
          enqueue: sql`1`,
        }),
      ),
    ).rejects.toThrow(`account ${id} has no wallet, or run no_such_run was not inserted first`);
    // Rolled back: nothing was held.
    expect(await wallet(id)).toEqual({ plan: 1_000_000n, purchased: 0n, activeRuns: 0 });
  });

  it('fails unless exactly one job is added for a run placed RUNNING', async () => {
    const none = await accountWith(1_000_000n);
    await expect(place(none, { enqueue: sql`generate_series(1, 0)` })).rejects.toThrow(/its job was not added/);
    const two = await accountWith(1_000_000n);
    await expect(place(two, { enqueue: sql`generate_series(1, 2)` })).rejects.toThrow(/its job was not added/);
    // A waiting run adds none, whatever the expression.
    const waiting = await accountWith(1_000_000n, 0n, 1);
    expect((await place(waiting, { maxRunning: 1, enqueue: sql`generate_series(1, 2)` })).result.queued).toBe(true);
  });
});

describe('releaseRunSlot', () => {
  it('counts one active run fewer, never below zero', async () => {
    const id = await accountWith(0n, 0n, 2);
    await releaseRunSlot(d.db, id);
    expect((await wallet(id)).activeRuns).toBe(1);
    await releaseRunSlot(d.db, id);
    await releaseRunSlot(d.db, id);
    expect((await wallet(id)).activeRuns).toBe(0);
  });

  it('leaves other accounts alone', async () => {
    const a = await accountWith(0n, 0n, 3);
    const b = await accountWith(0n, 0n, 3);
    await releaseRunSlot(d.db, a);
    expect((await wallet(b)).activeRuns).toBe(3);
  });
});

describe('settleHold: release the hold, charge the cost, purchased credits first', () => {
  /** An account whose run holds `hold`, as holdAndPlace leaves it. */
  async function held(
    hold: { planMicros: bigint; purchasedMicros: bigint },
    rest = { plan: 1_000_000n, purchased: 0n },
  ) {
    const id = await accountWith(rest.plan + hold.planMicros, rest.purchased + hold.purchasedMicros);
    const run = await d.insertRun({ accountId: id });
    await d.db.transaction((tx) =>
      holdAndPlace(tx, {
        accountId: id,
        runId: run.id,
        wanted: hold.planMicros + hold.purchasedMicros,
        overdraftMicros: 0n,
        maxRunning: 10,
        waitingMessage: '',
        notify: { channels: ['ledger_test'], running: '', ready: '' },
        enqueue: sql`1`,
      }),
    );
    return { id, runId: run.id };
  }

  it('charges purchased credits first and returns the rest of the hold', async () => {
    const hold = { planMicros: 500_000n, purchasedMicros: 300_000n };
    const { id, runId } = await held(hold);
    await d.db.transaction((tx) => settleHold(tx, id, runId, hold, 400_000n));
    const e = (await entries(id)).filter((x) => x.runId === runId);
    expect(e).toEqual([
      { kind: 'hold', plan: -500_000n, purchased: -300_000n, runId, note: 'reserved at start' },
      { kind: 'release', plan: 500_000n, purchased: 300_000n, runId, note: 'hold released' },
      { kind: 'charge', plan: -100_000n, purchased: -300_000n, runId, note: 'results delivered' },
    ]);
    expect(await wallet(id)).toMatchObject({ plan: 1_400_000n, purchased: 0n });
    await expectBalanced(id);
  });

  it('charges a cost the purchased part covers from purchased credits only', async () => {
    const hold = { planMicros: 500_000n, purchasedMicros: 300_000n };
    const { id, runId } = await held(hold);
    await settleHold(d.db, id, runId, hold, 299_999n);
    expect((await entries(id)).at(-1)).toEqual({
      kind: 'charge',
      plan: 0n,
      purchased: -299_999n,
      runId,
      note: 'results delivered',
    });
    expect(await wallet(id)).toMatchObject({ plan: 1_500_000n, purchased: 1n });
    const exact = await held(hold);
    await settleHold(d.db, exact.id, exact.runId, hold, 300_000n);
    expect((await entries(exact.id)).at(-1)).toMatchObject({ kind: 'charge', plan: 0n, purchased: -300_000n });
    expect(await wallet(exact.id)).toMatchObject({ plan: 1_500_000n, purchased: 0n });
  });

  it('never charges more than the hold', async () => {
    const hold = { planMicros: 200_000n, purchasedMicros: 100_000n };
    const { id, runId } = await held(hold);
    await settleHold(d.db, id, runId, hold, 5_000_000n);
    expect((await entries(id)).at(-1)).toMatchObject({ kind: 'charge', plan: -200_000n, purchased: -100_000n });
    expect(await wallet(id)).toMatchObject({ plan: 1_000_000n, purchased: 0n });
    await expectBalanced(id);
  });

  it('charges exactly the hold when the cost equals it', async () => {
    const hold = { planMicros: 200_000n, purchasedMicros: 0n };
    const { id, runId } = await held(hold);
    await settleHold(d.db, id, runId, hold, 200_000n);
    expect((await entries(id)).at(-1)).toMatchObject({ kind: 'charge', plan: -200_000n, purchased: 0n });
    expect(await wallet(id)).toMatchObject({ plan: 1_000_000n });
  });

  it('releases everything and writes no charge when nothing was delivered', async () => {
    const hold = { planMicros: 200_000n, purchasedMicros: 50_000n };
    const { id, runId } = await held(hold);
    await settleHold(d.db, id, runId, hold, 0n);
    expect((await entries(id)).filter((x) => x.runId === runId).map((x) => x.kind)).toEqual(['hold', 'release']);
    expect(await wallet(id)).toMatchObject({ plan: 1_200_000n, purchased: 50_000n });
  });

  it('writes nothing for a run that held nothing and delivered nothing', async () => {
    const id = await accountWith(1_000_000n);
    const before = await entries(id);
    await settleHold(d.db, id, 'run_without_hold', { planMicros: 0n, purchasedMicros: 0n }, 0n);
    expect(await entries(id)).toEqual(before);
    expect(await wallet(id)).toMatchObject({ plan: 1_000_000n, purchased: 0n });
  });

  it('caps the charge at the hold: a run that held nothing is charged nothing', async () => {
    const id = await accountWith(1_000_000n);
    await settleHold(d.db, id, 'run_without_hold', { planMicros: 0n, purchasedMicros: 0n }, 700n);
    expect(await entries(id)).toHaveLength(1);
    expect(await wallet(id)).toMatchObject({ plan: 1_000_000n });
  });

  it('touches only the account it settles', async () => {
    const hold = { planMicros: 100_000n, purchasedMicros: 0n };
    const a = await held(hold);
    const b = await held(hold);
    const before = await wallet(b.id);
    await settleHold(d.db, a.id, a.runId, hold, 0n);
    expect(await wallet(b.id)).toEqual(before);
  });
});

describe('credit purchases', () => {
  const principal = (
    accountId: string,
    plan: Plan,
    subscriptionStatus: Principal['subscriptionStatus'] = 'ACTIVE',
  ): Principal => ({ accountId, keyId: 'k', keyPrefix: 'lg_live_x', plan, subscriptionStatus });

  it('refuses accounts without an active subscription before writing anything', async () => {
    const id = await accountWith(0n);
    for (const status of ['TRIAL', 'CANCELLED'] as const) {
      let err: unknown;
      try {
        prepareCreditPurchase(principal(id, 'scale', status), 20);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({
        status: 403,
        code: 'subscription_inactive',
        message: `Buying credits needs an active subscription; this account's subscription is ${status}.`,
      });
    }
    expect(() => prepareCreditPurchase(principal(id, 'scale'), 5)).toThrow(/amount must be between 10 and 10000 USD/);
    expect(await entries(id)).toEqual([]);
  });

  it('buys credits without a bonus on starter', async () => {
    const id = await accountWith(2_000_000n);
    const result = await d.db.transaction(async (tx) =>
      purchaseView(await prepareCreditPurchase(principal(id, 'starter'), 20.5)(tx)),
    );
    expect(result).toEqual({
      success: true,
      amount: 20.5,
      original_amount: 20.5,
      was_adjusted: false,
      message: 'Purchased 20.50 USD of credits. Purchased credits never expire. Demo mode: recorded without payment.',
      bonus: 0,
      wallet: { balance_dollars: '2.00', purchased_credits_dollars: '20.50', total_balance_dollars: '22.50' },
      payment: { mode: 'demo', payment_intent: null },
    });
    expect((await entries(id)).at(-1)).toEqual({
      kind: 'purchase',
      plan: 0n,
      purchased: 20_500_000n,
      runId: null,
      note: 'demo purchase, no payment taken: bought 20.50 USD',
    });
    await expectBalanced(id);
  });

  it('adds the plan’s bonus to purchased credits; the amount is what was charged', async () => {
    const growth = await accountWith(0n, 1_000_000n);
    const g = purchaseView(await prepareCreditPurchase(principal(growth, 'growth'), 100)(d.db));
    expect(g).toMatchObject({
      amount: 100,
      was_adjusted: false,
      bonus: 10,
      message:
        'Purchased 100.00 USD of credits. Your growth plan adds a 10% bonus: 10.00 USD. Purchased credits never expire. Demo mode: recorded without payment.',
    });
    expect(g.wallet.purchased_credits_dollars).toBe('111.00');
    expect((await entries(growth)).at(-1)).toMatchObject({
      kind: 'purchase',
      purchased: 110_000_000n,
      note: 'demo purchase, no payment taken: bought 100.00 USD + 10% growth bonus 10.00 USD',
    });

    const scale = await accountWith(0n);
    const s = purchaseView(await prepareCreditPurchase(principal(scale, 'scale'), 33.33)(d.db));
    expect(s).toMatchObject({
      amount: 33.33,
      bonus: 9.999,
      message:
        'Purchased 33.33 USD of credits. Your scale plan adds a 30% bonus: 9.999 USD. Purchased credits never expire. Demo mode: recorded without payment.',
    });
    expect(await wallet(scale)).toMatchObject({ purchased: 43_329_000n });
  });

  it.each([
    [49, 48],
    [50, 48],
    [149, 148],
    [649, 648],
  ])('adjusts %d USD to %d USD, which clash with subscription prices', async (original, adjusted) => {
    const id = await accountWith(0n);
    const result = purchaseView(await prepareCreditPurchase(principal(id, 'starter'), original)(d.db));
    expect(result).toMatchObject({
      amount: adjusted,
      original_amount: original,
      was_adjusted: true,
      message: `${original}.00 USD was adjusted to ${adjusted}.00 USD to avoid a conflict with subscription prices. Purchased credits never expire. Demo mode: recorded without payment.`,
    });
    expect(await wallet(id)).toMatchObject({ purchased: BigInt(adjusted) * 1_000_000n });
  });

  it('does not adjust neighbours of those amounts', async () => {
    const id = await accountWith(0n);
    for (const amount of [48, 49.5, 51, 150, 650]) {
      expect(purchaseView(await prepareCreditPurchase(principal(id, 'starter'), amount)(d.db))).toMatchObject({
        amount,
        original_amount: amount,
        was_adjusted: false,
      });
    }
  });

  it('creates the wallet of an account that has none', async () => {
    const id = await bareAccount();
    const result = purchaseView(await prepareCreditPurchase(principal(id, 'growth'), 10)(d.db));
    expect(result.wallet).toEqual({
      balance_dollars: '0.00',
      purchased_credits_dollars: '11.00',
      total_balance_dollars: '11.00',
    });
  });
});

describe('listLedger: newest first, by keyset', () => {
  it('pages through every entry once', async () => {
    const id = await accountWith(1_000_000n);
    for (let i = 1; i <= 4; i++) await grantPlanCredits(d.db, id, BigInt(i), `grant ${i}`);
    const first = await listLedger(d.db, id, { first: 2 });
    expect(first.entries.map((e) => e.note)).toEqual(['grant 4', 'grant 3']);
    expect(first.hasNextPage).toBe(true);
    const second = await listLedger(d.db, id, { first: 2, after: first.entries.at(-1)!.id });
    expect(second.entries.map((e) => e.note)).toEqual(['grant 2', 'grant 1']);
    expect(second.hasNextPage).toBe(true);
    const last = await listLedger(d.db, id, { first: 2, after: second.entries.at(-1)!.id });
    expect(last.entries.map((e) => e.note)).toEqual(['initial plan credits']);
    expect(last.hasNextPage).toBe(false);
    const all = await listLedger(d.db, id, { first: 5 });
    expect(all.entries).toHaveLength(5);
    expect(all.hasNextPage).toBe(false);
  });

  it('lists only the account’s own entries', async () => {
    const a = await accountWith(1_000_000n);
    const b = await accountWith(2_000_000n);
    const list = await listLedger(d.db, a, { first: 10 });
    expect(list.entries.map((e) => e.accountId)).toEqual([a]);
    expect(list.entries[0]!.accountId).not.toBe(b);
  });
});
