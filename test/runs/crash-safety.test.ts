import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mapsTool } from '../../src/tools/maps.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { runColumns } from '../helpers/runs.ts';
import { killServices, spawnGateway, spawnWorker, type Service } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { closeCode, disposeClients, wsClient } from '../helpers/ws.ts';

/**
 * Real processes: a worker killed with SIGKILL in the middle of a run, and a gateway stopped with
 * SIGTERM. The run's second batch is held back by a row this test inserts and keeps uncommitted at
 * seq 50, so each process is caught after storing 50 rows and before storing more.
 */

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account());
});
afterEach(async () => {
  await disposeClients();
  await killServices();
});
afterAll(() => t?.stop());

const INPUT = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 120 };
const PRICE_MICROS = mapsTool.price.unitMicros;
const baseEnv = () => ({ DATABASE_URL: t.database.url, WORKER_LIVENESS_SECS: '2', WORKER_CONCURRENCY: '1' });

/** The exit code, with the process's output in the failure message. */
async function exitCode(service: Service) {
  const code = await service.exited();
  return { code, output: service.output().slice(-3000) };
}

/** Holds back seq 50 of a run: the worker's second batch waits on this uncommitted row. */
async function holdBackSecondBatch(runId: string) {
  const tx = await t.app.core.sql.reserve();
  await tx`begin`;
  await tx`insert into run_item (run_id, seq, data) values (${runId}, 50, '{}')`;
  return async () => {
    await tx`rollback`;
    tx.release();
  };
}

/** Statements of other sessions waiting on a lock to write a run's rows. */
const secondBatchWaiting = async () =>
  (
    (
      await t.app.core
        .sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%insert into%run_item%'`
    )[0] as { n: number }
  ).n;

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string) =>
  waitFor(read, ok, { timeoutMs: 60_000, intervalMs: 100, what });

const runRow = (id: string) => runColumns(t.app.core.sql, id, ['status', 'item_count', 'charged_micros']);

async function expectCompleteOnce(runId: string) {
  const [expected] = await t.app.core
    .sql`select count(*)::int as n from local_business where search_text @@ plainto_tsquery('english', 'dentist')`;
  const total = Math.min(120, expected!.n as number);
  expect(total).toBeGreaterThan(100);
  const row = await runRow(runId);
  expect(row.status).toBe('SUCCEEDED');
  expect(row.item_count).toBe(total);
  expect(BigInt(row.charged_micros)).toBe(BigInt(total) * PRICE_MICROS);
  const items = await t.app.core
    .sql`select seq, data->>'place_id' as place from run_item where run_id = ${runId} order by seq`;
  expect(items.map((r) => r.seq)).toEqual([...Array(total).keys()]);
  expect(new Set(items.map((r) => r.place)).size).toBe(total);
  const charges = await t.app.core
    .sql`select kind, plan_micros + purchased_micros as micros from ledger_entry where run_id = ${runId} and kind = 'charge'`;
  expect(charges).toHaveLength(1);
  expect(BigInt(charges[0]!.micros)).toBe(-BigInt(total) * PRICE_MICROS);
}

describe('crash safety', { timeout: 120_000 }, () => {
  it('a worker killed mid-run: after a worker comes back the run completes with no duplicate and no missing rows, billed once', async () => {
    const started = await t.request('POST', '/api/v1/scrape/maps', { key, body: INPUT });
    expect(started.status).toBe(200);
    const runId = started.body.runId as string;
    const release = await holdBackSecondBatch(runId);

    const first = await spawnWorker(baseEnv());
    await until(
      () => runRow(runId),
      (r) => r.item_count === 50,
      'the first batch',
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nworker output: ${first.output()}`);
    });
    first.kill('SIGKILL');
    await first.exited();
    await release();
    expect(await runRow(runId)).toMatchObject({ status: 'RUNNING', item_count: 50 });

    const second = await spawnWorker(baseEnv());
    await until(
      () => runRow(runId),
      (r) => r.status !== 'RUNNING',
      'the run to end',
    );
    await expectCompleteOnce(runId);
    second.kill('SIGTERM');
    expect(await exitCode(second)).toMatchObject({ code: 0 });
  });

  it('a gateway stopped with SIGTERM closes its sockets, hands its run back and exits; another worker completes the run', async () => {
    // The run is queued before the gateway starts, so its inline worker takes it and is caught after the first batch.
    const started = await t.request('POST', '/api/v1/scrape/maps', { key, body: INPUT });
    const runId = started.body.runId as string;
    const release = await holdBackSecondBatch(runId);

    const gateway = await spawnGateway({ ...baseEnv(), LEADGATE_INLINE_WORKER: 'true', AUTH_CACHE_SECS: '0' });
    const client = wsClient(gateway.url, key, { lazy: false, onNonLazyError: () => {} });
    const closed = closeCode(client);
    client.subscribe(
      { query: 'subscription { runEvents { kind } }' },
      { next: () => {}, error: () => {}, complete: () => {} },
    );
    await until(
      () => runRow(runId),
      (r) => r.item_count === 50,
      'the first batch',
    );
    // The second batch is in hand once its insert waits on the held row: stop the gateway only then.
    await until(secondBatchWaiting, (n) => n > 0, 'the second batch to wait on the held row');

    gateway.kill('SIGTERM');
    // Logged as the stop reaches the run in hand: from then on the batch it holds is stored, then the run is handed back.
    await gateway.waitFor(/"msg":"worker stopping: handing back runs in flight"/);
    await release();
    expect(await exitCode(gateway)).toMatchObject({ code: 0 });
    expect(await closed).toBe(1001);

    expect(await runRow(runId)).toMatchObject({ status: 'RUNNING', item_count: 100 });
    const [job] = await t.app.core.sql`select locked_at from graphile_worker.jobs where key = ${runId}`;
    expect(job, 'the run is handed back: its job is queued again').toBeDefined();
    expect(job!.locked_at).toBeNull();

    const worker = await spawnWorker(baseEnv());
    await until(
      () => runRow(runId),
      (r) => r.status !== 'RUNNING',
      'the run to end',
    );
    worker.kill('SIGTERM');
    await worker.exited();
    await expectCompleteOnce(runId);
  });
});
