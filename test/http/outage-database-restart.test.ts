import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapsTool } from '../../src/tools/maps.ts';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { connect, type Database, type Sql } from '../../db/client.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import { seedCatalog } from '../../db/seed/index.ts';
import { createAccount, createApiKey } from '../../src/accounts/accounts.ts';
import { sourceOf, type Answer } from '../helpers/documents.ts';
import { runColumns } from '../helpers/runs.ts';
import { createCluster, type Cluster } from '../helpers/postgres-cluster.ts';
import { killServices, spawnGateway, spawnWorker, type Gateway, type Service } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { closeCode, collect, disposeClients, wsClient } from '../helpers/ws.ts';
import { graphql } from '../helpers/gql/index.ts';

/**
 * A database restart under real processes: a gateway and a worker process on a Postgres cluster of
 * this file's own, three runs in flight (each caught after its first batch: the test holds row 50 of
 * each in an uncommitted insert, so the worker's second batch waits on it), graphql-ws subscriptions
 * open. Postgres is stopped (fast shutdown: every session ended with 57P01) for 10 s and started
 * again. Nothing is restarted by hand.
 */

const OUTAGE_MS = 10_000;
const RUNS = 3;
const INPUT = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 120 };
const PRICE_MICROS = mapsTool.price.unitMicros;
const CREDITS_MICROS = 100_000_000n;

let cluster: Cluster;
let url: string;
let sql: Sql;
let db: Database;
let gateway: Gateway;
let worker: Service;
let key: string;
let accountId: string;

beforeAll(async () => {
  cluster = await createCluster();
  url = cluster.url('postgres');
  await migrateDatabase(url);
  ({ sql, db } = connect(url, { max: 4 }));
  // The runs read local businesses only: the other datasets' seeding would add seconds to the serial phase.
  await seedCatalog(sql, { scale: 'small', tables: ['local_business'] });
  const created = await createAccount(db, {
    name: 'outage',
    plan: 'scale',
    subscriptionStatus: 'ACTIVE',
    creditsMicros: CREDITS_MICROS,
  });
  ({ apiKey: key } = created);
  accountId = created.account.id;
  gateway = await spawnGateway({
    DATABASE_URL: url,
    LEADGATE_INLINE_WORKER: 'false',
    AUTH_CACHE_SECS: '600',
    RATE_LIMIT_PER_MINUTE: '100000',
    LOG_LEVEL: 'info',
  });
}, 120_000);

afterAll(async () => {
  await disposeClients();
  await killServices();
  await sql?.end({ timeout: 1 }).catch(() => {});
  await cluster?.destroy();
});

const api = async (
  path: string,
  apiKey: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
) => {
  const res = await fetch(`${gateway.url}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: text ? JSON.parse(text) : undefined };
};
/** A document posted to the spawned gateway, answered with the Retry-After header an outage sets. */
const graphqlPost = <TData, TVariables>(
  apiKey: string,
  document: TypedDocumentNode<TData, TVariables>,
  variables?: NoInfer<TVariables>,
): Promise<{ status: number; retryAfter: string | null; body: Answer<TData> }> =>
  api('/graphql', apiKey, { body: { query: sourceOf(document), variables: variables ?? {} } });
const mcpCall = (apiKey: string, name: string, args: Record<string, unknown>) =>
  api('/mcp?tools=all', apiKey, {
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    headers: { accept: 'application/json, text/event-stream' },
  });

const RunStatus = graphql(`query OutageRunStatus($id: ID!) { run(id: $id) { status } }`);
const WalletBalance = graphql(`query OutageWalletBalance { viewer { wallet { totalBalance } } }`);
const RunProgress = graphql(`subscription OutageRunProgress($id: ID!) { runProgress(id: $id) { status itemCount } }`);
const RunEvents = graphql(`subscription OutageRunEvents { runEvents { kind run { id status } } }`);

const runRow = (id: string) => runColumns(sql, id, ['status', 'item_count']);

/** Holds back row 50 of a run in an uncommitted insert: the worker's second batch waits on it. The outage ends the transaction. */
async function holdBackSecondBatch(runId: string) {
  const tx = await sql.reserve();
  await tx`begin`;
  await tx`insert into run_item (run_id, seq, data) values (${runId}, 50, '{}')`;
  return tx;
}

const secondBatchesWaiting = async () =>
  (
    (
      await sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%insert into%run_item%'`
    )[0] as { n: number }
  ).n;

describe('a database restart', { timeout: 180_000 }, () => {
  it('takes no process down, answers 503 database_unavailable meanwhile, and every run in flight finishes once, each row stored and billed once', async () => {
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = await api('/api/v1/scrape/maps', key, { body: INPUT });
      expect(started.status).toBe(200);
      runIds.push(started.body.runId);
    }
    const held = await Promise.all(runIds.map(holdBackSecondBatch));
    worker = await spawnWorker({ DATABASE_URL: url, WORKER_CONCURRENCY: String(RUNS), WORKER_LIVENESS_SECS: '2' });
    await waitFor(
      () => Promise.all(runIds.map(runRow)),
      (rows) => rows.every((r) => r.item_count === 50),
      { timeoutMs: 60_000, intervalMs: 100, what: 'the first batch of every run' },
    );
    await waitFor(secondBatchesWaiting, (n) => n === RUNS, {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'every second batch to wait on its held row',
    });

    // Subscriptions through the gateway, open across the outage: one run's progress, the account's events.
    const client = wsClient(gateway.url, key, { lazy: false });
    const progress = collect(client, RunProgress, { id: runIds[0]! }, 'runProgress');
    const events = collect(client, RunEvents, {}, 'runEvents');
    await Promise.all([progress.first, events.first]);

    // A second key, first used now: its authentication is cached and its rate-limit lease taken, so
    // during the outage its calls get past admission and meet the database inside the service.
    const second = await createApiKey(db, accountId);
    expect((await api(`/api/v1/scrape/status/${runIds[0]}`, second.apiKey)).status).toBe(200);
    // A third key, never used: its calls meet the database while being admitted.
    const fresh = await createApiKey(db, accountId);

    const stoppedAt = Date.now();
    await cluster.stop();
    for (const tx of held) tx.release();

    // Admitted, then the database is missing: each face in its own shape.
    const rest = await api(`/api/v1/scrape/status/${runIds[0]}`, second.apiKey);
    expect(rest).toMatchObject({
      status: 503,
      retryAfter: expect.stringMatching(/^\d+$/),
      body: { error: { code: 'database_unavailable', message: expect.any(String) } },
    });
    const gql = await graphqlPost(second.apiKey, RunStatus, { id: runIds[0]! });
    expect(gql.status).toBe(503);
    expect(gql.retryAfter).toMatch(/^\d+$/);
    expect(gql.body.errors![0]!.extensions).toMatchObject({
      code: 'DATABASE_UNAVAILABLE',
      retryAfter: expect.any(Number),
    });
    const mcp = await mcpCall(second.apiKey, 'check_run_status', { runId: runIds[0] });
    expect(mcp.status).toBe(200);
    expect(mcp.body.result).toMatchObject({ isError: true });
    expect(JSON.parse(mcp.body.result.content[0].text)).toMatchObject({ error: { code: 'database_unavailable' } });

    // Refused at admission: the key cannot be looked up.
    for (const refused of [
      await api(`/api/v1/scrape/status/${runIds[0]}`, fresh.apiKey),
      await graphqlPost(fresh.apiKey, WalletBalance),
      await mcpCall(fresh.apiKey, 'check_run_status', { runId: runIds[0] }),
    ]) {
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toMatch(/^\d+$/);
    }
    expect((await api(`/api/v1/scrape/status/${runIds[0]}`, fresh.apiKey)).body).toEqual({
      error: { code: 'database_unavailable', message: expect.any(String) },
    });

    // graphql-ws: an operation on the open socket that needs the database gets the same error code,
    // and a socket opened now with a key that cannot be looked up is closed 1013 (try again later).
    const onSocket = await new Promise<{ errors?: { extensions?: Record<string, unknown> }[] }>((resolve, reject) => {
      client.subscribe(
        { query: sourceOf(WalletBalance) },
        {
          next: (result) => resolve(result as never),
          error: (err) => resolve({ errors: err as never }),
          complete: () => reject(new Error('completed without an answer')),
        },
      );
    });
    expect(onSocket.errors?.[0]?.extensions).toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    const late = wsClient(gateway.url, fresh.apiKey, { lazy: false, onNonLazyError: () => {} });
    expect(await closeCode(late)).toBe(1013);

    // The outage lasts 10 s whatever the checks took: the length of the outage is the scenario, not a wait for something.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, stoppedAt + OUTAGE_MS - Date.now())));
    expect(gateway.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    await cluster.start();

    // Every run finishes without a restart of any process.
    const ended = await waitFor(
      () => Promise.all(runIds.map(runRow)).catch(() => []),
      (rows) => rows.length === RUNS && rows.every((r) => r.status !== 'RUNNING'),
      {
        timeoutMs: 90_000,
        intervalMs: 200,
        what: 'every run to end after the restart',
      },
    );
    const [{ n: expectedRows }] =
      (await sql`select count(*)::int as n from local_business where search_text @@ plainto_tsquery('english', 'dentist')`) as unknown as [
        { n: number },
      ];
    const total = Math.min(INPUT.maxCrawledPlacesPerSearch, expectedRows);
    expect(total).toBeGreaterThan(100);
    expect(ended).toEqual(runIds.map(() => ({ status: 'SUCCEEDED', item_count: total })));

    for (const runId of runIds) {
      const items =
        await sql`select seq, data->>'place_id' as place from run_item where run_id = ${runId} order by seq`;
      expect(
        items.map((r) => r.seq),
        'no row lost or stored twice',
      ).toEqual([...Array(total).keys()]);
      expect(new Set(items.map((r) => r.place)).size).toBe(total);
      const charges =
        await sql`select (plan_micros + purchased_micros)::text as micros from ledger_entry where run_id = ${runId} and kind = 'charge'`;
      expect(
        charges.map((c) => BigInt(c.micros)),
        'billed once',
      ).toEqual([-BigInt(total) * PRICE_MICROS]);
    }
    const [wallet] =
      await sql`select (plan_micros + purchased_micros)::text as balance, active_runs from wallet where account_id = ${accountId}`;
    const [ledger] =
      await sql`select coalesce(sum(plan_micros + purchased_micros), 0)::text as sum from ledger_entry where account_id = ${accountId}`;
    expect(BigInt(wallet!.balance)).toBe(BigInt(ledger!.sum));
    expect(BigInt(wallet!.balance)).toBe(CREDITS_MICROS - BigInt(RUNS * total) * PRICE_MICROS);
    expect(wallet!.active_runs).toBe(0);

    // The subscriptions opened before the outage carried on: the run's progress to its end, and the
    // account's events, which after the restart only LISTEN can bring (a run started now).
    expect((await progress.done).at(-1)).toEqual({ status: 'SUCCEEDED', itemCount: total });
    const after = await api('/api/v1/scrape/maps', key, { body: { ...INPUT, maxCrawledPlacesPerSearch: 5 } });
    expect(after.status).toBe(200);
    await waitFor(
      () => events.items,
      (items) =>
        runIds.every((id) => items.some((e) => e.run.id === id && e.run.status === 'SUCCEEDED')) &&
        items.some((e) => e.run.id === after.body.runId && e.kind === 'FINISHED'),
      {
        timeoutMs: 60_000,
        intervalMs: 100,
        what: 'the account events of every run, and of a run started after the restart',
      },
    );

    // Every face answers again, through the same processes.
    expect((await api(`/api/v1/scrape/status/${runIds[0]}`, fresh.apiKey)).body).toMatchObject({ status: 'SUCCEEDED' });
    expect((await graphqlPost(second.apiKey, RunStatus, { id: runIds[0]! })).body).toEqual({
      data: { run: { status: 'SUCCEEDED' } },
    });
    expect((await mcpCall(key, 'check_run_status', { runId: runIds[0] })).body.result.structuredContent).toMatchObject({
      status: 'SUCCEEDED',
    });
    expect(gateway.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    // No 500 (`unhandled error`), no crash, and the worker counts the outage as one, not as failures.
    expect(gateway.output() + worker.output()).not.toMatch(/uncaught|unhandled|"level":60/i);
    expect(worker.output()).not.toMatch(/"level":50/);
  });
});
