import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '../../db/client.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { killServices, spawnGateway, spawnWorker, type Service } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { DENVER_DENTISTS } from '../helpers/app.ts';
import { walletAndLedger } from '../helpers/money.ts';

/**
 * Money and the run queue with two gateway processes on one database: an account's starts arrive
 * through both, so its wallet row is contended by two processes, not only grouped within one.
 * Gateways run no worker; a worker process is started once the starts are placed.
 */

let database: TestDatabase;
let sql: Sql;
let db: ReturnType<typeof connect>['db'];
let gateways: (Service & { url: string })[];

beforeAll(async () => {
  database = await createTestDatabase();
  ({ db, sql } = connect(database.url, { max: 2 }));
  const env = {
    DATABASE_URL: database.url,
    LEADGATE_INLINE_WORKER: 'false',
    AUTH_CACHE_SECS: '0',
    RATE_LIMIT_PER_MINUTE: '100000',
    LOG_LEVEL: 'warn',
  };
  gateways = await Promise.all([spawnGateway(env), spawnGateway(env)]);
}, 120_000);
afterEach(async () => {
  // Workers are per test; gateways live for the file.
  for (const w of workers.splice(0)) {
    w.kill('SIGTERM');
    await w.exited();
  }
});
afterAll(async () => {
  await killServices('SIGTERM');
  await sql?.end();
  await database?.drop();
});

const workers: Service[] = [];
async function worker(concurrency: number) {
  const w = await spawnWorker({ DATABASE_URL: database.url, WORKER_CONCURRENCY: String(concurrency) });
  workers.push(w);
  return w;
}

async function start(gateway: number, apiKey: string, body: unknown) {
  const res = await fetch(`${gateways[gateway]!.url}/api/v1/scrape/maps`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as { runId?: string; status?: string; error?: { code: string } },
  };
}

const money = (accountId: string) => walletAndLedger(sql, accountId);

const unfinished = async (accountId: string) =>
  (
    await sql`select count(*)::int as n from run where account_id = ${accountId} and status not in ('SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED-OUT')`
  )[0]!.n as number;

describe('two gateway processes, one account', () => {
  it('200 concurrent starts through both never overdraw, and the ledger sums to the balances', async () => {
    const { account, apiKey } = await createAccount(db, {
      name: 'spender',
      plan: 'scale',
      subscriptionStatus: 'ACTIVE',
      creditsMicros: 1_000_000n,
    }); // 1.00 USD
    const input = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 10 }; // 0.099 USD each
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => start(i % 2, apiKey, input)));

    const started = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    for (const r of refused) expect(r).toMatchObject({ status: 402, body: { error: { code: 'insufficient_funds' } } });
    // 10 full holds of 0.099 and one of the last 0.01; then not even one business is covered.
    expect(started).toHaveLength(11);
    // Both processes placed runs: the row lock was contended across processes, not only within one.
    const through = new Set(results.map((r, i) => (r.status === 200 ? i % 2 : -1)).filter((g) => g >= 0));
    expect(through.size).toBe(2);
    const during = await money(account.id);
    expect(during.wallet.plan + during.wallet.purchased).toBe(0n);
    expect(during.ledger).toEqual(during.wallet);
    expect(during.activeRuns).toBe(10);
    expect(started.map((s) => s.body.status).sort()).toEqual(['READY', ...Array(10).fill('RUNNING')]);

    await worker(4);
    await waitFor(
      () => unfinished(account.id),
      (n) => n === 0,
      { timeoutMs: 60_000, what: 'every run finished' },
    );
    const after = await money(account.id);
    expect(after.ledger).toEqual(after.wallet);
    expect(after.activeRuns).toBe(0);
    const [runs] =
      await sql`select sum(charged_micros)::bigint as charged, sum(item_count)::int as items, count(*)::int as n from run where account_id = ${account.id}`;
    expect(runs!.n).toBe(11);
    expect(BigInt(runs!.charged)).toBe(BigInt(runs!.items) * 9_900n);
    expect(after.wallet.plan + after.wallet.purchased).toBe(1_000_000n - BigInt(runs!.charged));
    expect(after.wallet.plan).toBeGreaterThanOrEqual(0n);
  });

  it('runs 10 at once across both: later starts wait as READY and start in the order they arrived', async () => {
    const { account, apiKey } = await createAccount(db, {
      name: 'queue',
      plan: 'scale',
      subscriptionStatus: 'ACTIVE',
      creditsMicros: 100_000_000n,
    });
    const body = { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 5 };
    const first = await Promise.all(Array.from({ length: 10 }, (_, i) => start(i % 2, apiKey, body)));
    expect(first.map((s) => s.body.status)).toEqual(Array(10).fill('RUNNING'));

    // One at a time, alternating gateways: the order of arrival is known.
    const waiting: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await start(i % 2, apiKey, body);
      expect(res.body.status).toBe('READY');
      waiting.push(res.body.runId!);
    }
    const [jobs] = await sql`select count(*)::int as n from graphile_worker.jobs`;
    expect(jobs!.n).toBe(10);

    // One job at a time: each run that ends frees the slot for the next waiting one.
    await worker(1);
    await waitFor(
      () => unfinished(account.id),
      (n) => n === 0,
      { timeoutMs: 60_000, what: 'every run finished' },
    );
    const rows =
      await sql`select id, status from run where account_id = ${account.id} and id in ${sql(waiting)} order by started_at`;
    expect(rows.every((r) => r.status === 'SUCCEEDED')).toBe(true);
    expect(rows.map((r) => r.id)).toEqual(waiting);
    expect((await money(account.id)).activeRuns).toBe(0);
  });
});
