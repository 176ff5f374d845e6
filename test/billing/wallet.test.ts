import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../workers/index.ts';
import { AppError } from '../../src/shared/errors.ts';
import { startRun } from '../../src/runs/start.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { graphql } from '../helpers/gql/index.ts';
import { walletAndLedger } from '../helpers/money.ts';

const RunEnd = graphql(`query WalletRunEnd($id: ID!) { run(id: $id) { status complete stoppedReason } }`);

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.stop());

const money = (accountId: string) => walletAndLedger(t.app.core.sql, accountId);

async function waitAllFinished(accountId: string, timeoutMs = 30_000) {
  const unfinished = async () =>
    (
      await t.app.core
        .sql`select count(*)::int as n from run where account_id = ${accountId} and status not in ('SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED-OUT')`
    )[0]!.n as number;
  await waitFor(unfinished, (n) => n === 0, { timeoutMs, intervalMs: 100, what: 'every run to finish' });
}

describe('holds and charges', () => {
  it('200 concurrent starts against a small wallet never overdraw, and the ledger sums to the balances', async () => {
    const { accountId, apiKey } = await t.account({ creditsMicros: 1_000_000n }); // 1.00 USD
    const principal = await t.app.core.auth.authenticate(`Bearer ${apiKey}`);
    const input = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 10 }; // 0.099 USD each
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, () => startRun(t.app.core, principal, 'maps', input)),
    );
    const started = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(AppError);
      expect((r.reason as AppError).code).toBe('insufficient_funds');
      expect((r.reason as AppError).status).toBe(402);
    }
    // 10 full holds of 0.099 and one of the last 0.01; then not even one business is covered.
    expect(started).toHaveLength(11);
    const during = await money(accountId);
    expect(during.wallet.plan + during.wallet.purchased).toBeGreaterThanOrEqual(0n);
    expect(during.ledger).toEqual(during.wallet);

    await waitAllFinished(accountId);
    const after = await money(accountId);
    expect(after.ledger).toEqual(after.wallet);
    const [runs] = await t.app.core
      .sql`select sum(charged_micros)::bigint as charged, sum(item_count)::int as items, count(*)::int as n from run where account_id = ${accountId}`;
    expect(runs!.n).toBe(11);
    expect(BigInt(runs!.charged)).toBe(BigInt(runs!.items) * 9_900n);
    expect(after.wallet.plan + after.wallet.purchased).toBe(1_000_000n - BigInt(runs!.charged));
    expect(after.wallet.plan).toBeGreaterThanOrEqual(0n);
  });

  it('releases the unused hold and charges 0.0099 per business, linking every entry to the run', async () => {
    const { accountId, apiKey } = await t.account({ creditsMicros: 5_000_000n });
    const started = await t.request('POST', '/api/v1/scrape/maps', { key: apiKey, body: DENVER_DENTISTS });
    expect(started.body.estimatedCost).toBe(0.99);
    const done = await t.waitForRun(apiKey, started.body.runId);
    // The hold paid for everything the search found: the run did all it was asked.
    expect(done).toMatchObject({ status: 'SUCCEEDED', complete: true, stoppedReason: null });
    const run = await t.graphql(apiKey, RunEnd, { id: started.body.runId });
    expect(run.body.data?.run).toEqual({ status: 'SUCCEEDED', complete: true, stoppedReason: null });
    const entries = await t.app.core
      .sql`select kind, (plan_micros + purchased_micros)::bigint as amount from ledger_entry where run_id = ${started.body.runId} order by id`;
    expect(entries.map((e) => [e.kind, BigInt(e.amount)])).toEqual([
      ['hold', -990_000n],
      ['release', 990_000n],
      ['charge', -BigInt(done.handled as number) * 9_900n],
    ]);
    const wallet = await t.request('GET', '/api/v1/wallet', { key: apiKey });
    const expected = ((5_000_000 - (done.handled as number) * 9_900) / 1e6)
      .toFixed(4)
      .replace(/0+$/, '')
      .replace(/\.(\d)$/, '.$10');
    expect(wallet.body).toEqual({
      wallet: {
        balance_dollars: expected,
        purchased_credits_dollars: '0.00',
        total_balance_dollars: expected,
        held_dollars: '0.00',
      },
      payments: { mode: 'demo' },
    });
    const m = await money(accountId);
    expect(m.ledger).toEqual(m.wallet);
  });

  it('stops a run whose hold runs out, keeping and billing what it produced', async () => {
    const { accountId, apiKey } = await t.account({ creditsMicros: 50_000n }); // 0.05 USD: five businesses
    const started = await t.request('POST', '/api/v1/scrape/maps', { key: apiKey, body: DENVER_DENTISTS });
    expect(started.status).toBe(200);
    const done = await t.waitForRun(apiKey, started.body.runId);
    // SUCCEEDED as the spec has it, but stopped short: not complete, for its budget.
    expect(done).toMatchObject({ status: 'SUCCEEDED', handled: 5, complete: false, stoppedReason: 'budget_exhausted' });
    expect(done.statusMessage).toBe(
      'Stopped after 5 businesses: the 0.05 USD held for this run is used up. Buy credits to get more.',
    );
    const run = await t.graphql(apiKey, RunEnd, { id: started.body.runId });
    expect(run.body.data?.run).toEqual({ status: 'SUCCEEDED', complete: false, stoppedReason: 'BUDGET_EXHAUSTED' });
    const csv = await t.request('GET', `/api/downloads/${started.body.runId}`, { key: apiKey });
    expect(csv.text.trim().split('\n')).toHaveLength(6);
    const m = await money(accountId);
    expect(m.wallet.plan).toBe(50_000n - 5n * 9_900n);
    expect(m.ledger).toEqual(m.wallet);
  });

  it('answers 402 insufficient_funds at start with an empty wallet, writing nothing', async () => {
    const { accountId, apiKey } = await t.account({ creditsMicros: 0n });
    const res = await t.request('POST', '/api/v1/scrape/maps', { key: apiKey, body: DENVER_DENTISTS });
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('insufficient_funds');
    expect(res.body.error.message).toMatch(/0\.0099 USD/);
    const [runs] = await t.app.core.sql`select count(*)::int as n from run where account_id = ${accountId}`;
    const [entries] = await t.app.core.sql`select count(*)::int as n from ledger_entry where account_id = ${accountId}`;
    expect([runs!.n, entries!.n]).toEqual([0, 0]);
  });

  it('spends purchased credits before plan credits', async () => {
    const { accountId, apiKey } = await t.account({ creditsMicros: 1_000_000n, plan: 'starter' });
    await t.request('POST', '/api/v1/buy-credits', { key: apiKey, body: { amount: 10 } });
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key: apiKey,
      body: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 3 },
    });
    await t.waitForRun(apiKey, started.body.runId);
    const m = await money(accountId);
    expect(m.wallet).toEqual({ plan: 1_000_000n, purchased: 10_000_000n - 3n * 9_900n });
    expect(m.ledger).toEqual(m.wallet);
  });

  it('shows the wallet and the ledger in GraphQL', async () => {
    const { apiKey } = await t.account({ creditsMicros: 2_000_000n });
    await t.graphql(apiKey, 'mutation { buyCredits(amount: "20") { userErrors { code } } }');
    const res = await t.graphql(
      apiKey,
      '{ viewer { wallet { balance purchasedCredits totalBalance } ledger(first: 1) { totalCount edges { node { id kind amount } } pageInfo { hasNextPage endCursor } } } }',
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.viewer.wallet).toEqual({ balance: '2.00', purchasedCredits: '26.00', totalBalance: '28.00' });
    const ledger = res.body.data.viewer.ledger;
    expect(ledger.edges).toEqual([
      { node: { id: expect.stringMatching(/^ledger_\d+$/), kind: 'PURCHASE', amount: '26.00' } },
    ]);
    expect(ledger.totalCount).toBe(2);
    expect(ledger.pageInfo.hasNextPage).toBe(true);
    const next = await t.graphql(
      apiKey,
      `{ viewer { ledger(first: 5, after: "${ledger.pageInfo.endCursor}") { nodes { kind amount } pageInfo { hasNextPage } } } }`,
    );
    expect(next.body.data.viewer.ledger).toEqual({
      nodes: [{ kind: 'PLAN_GRANT', amount: '2.00' }],
      pageInfo: { hasNextPage: false },
    });
    // An entry refetches by its global id, for its own account only.
    const id = ledger.edges[0].node.id;
    const refetch = 'query($id: ID!) { node(id: $id) { ... on LedgerEntry { kind amount } } }';
    expect((await t.graphql(apiKey, refetch, { id })).body.data.node).toEqual({ kind: 'PURCHASE', amount: '26.00' });
    expect((await t.graphql((await t.account()).apiKey, refetch, { id })).body.data.node).toBeNull();
  });
});

describe('the run queue', () => {
  it('runs 10 at once per account: 12 started together give 10 RUNNING and 2 READY, and all finish', async () => {
    const queued = await startTestApp({ worker: false });
    try {
      const { accountId, apiKey } = await queued.account();
      const starts = await Promise.all(
        Array.from({ length: 12 }, () =>
          queued.request('POST', '/api/v1/scrape/maps', {
            key: apiKey,
            body: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 5 },
          }),
        ),
      );
      expect(starts.map((s) => s.status)).toEqual(Array(12).fill(200));
      const statuses = starts.map((s) => s.body.status).sort();
      expect(statuses).toEqual([...Array(2).fill('READY'), ...Array(10).fill('RUNNING')]);
      const ready = await queued.app.core
        .sql`select status_message from run where account_id = ${accountId} and status = 'READY'`;
      for (const r of ready) expect(r.status_message).toMatch(/^Waiting: 10 runs of this account are running/);
      const [jobs] = await queued.app.core.sql`select count(*)::int as n from graphile_worker.jobs`;
      expect(jobs!.n).toBe(10);

      const runner = await startWorker(queued.app.core, { pollInterval: 200 });
      try {
        for (const s of starts)
          expect((await queued.waitForRun(apiKey, s.body.runId, 30_000)).status).toBe('SUCCEEDED');
      } finally {
        await runner.stop();
      }
      const order = await queued.app.core.sql`select status from run where account_id = ${accountId}`;
      expect(order.every((r) => r.status === 'SUCCEEDED')).toBe(true);
    } finally {
      await queued.stop();
    }
  });
});
