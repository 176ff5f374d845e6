import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { connect } from '../../db/client.ts';
import { killServices, spawnGateway, spawnWorker, type Gateway, type Service } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { collect, disposeClients, wsClient } from '../helpers/ws.ts';

/**
 * Two gateway processes without workers and two worker processes, all on one Postgres: runs
 * started on gateway B are executed by the workers, and a subscriber on gateway A sees every event.
 */

let database: TestDatabase;
let gatewayA: Gateway;
let gatewayB: Gateway;
let apiKey: string;

const env = () => ({ DATABASE_URL: database.url, AUTH_CACHE_SECS: '0', RATE_LIMIT_PER_MINUTE: '100000' });

beforeAll(async () => {
  database = await createTestDatabase();
  const gateway = () => spawnGateway({ ...env(), LEADGATE_INLINE_WORKER: 'false' });
  [gatewayA, gatewayB] = await Promise.all([gateway(), gateway()]);
  const { db, sql } = connect(database.url, { max: 1 });
  ({ apiKey } = await createAccount(db, {
    name: 'multi',
    plan: 'scale',
    subscriptionStatus: 'ACTIVE',
    creditsMicros: 100_000_000n,
  }));
  await sql.end();
}, 120_000);

afterAll(async () => {
  await disposeClients();
  await killServices('SIGTERM');
  await database?.drop();
});

const start = async (maxCrawledPlacesPerSearch: number) => {
  const res = await fetch(`${gatewayB.url}/api/v1/scrape/maps`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { runId: string }).runId;
};

describe('several processes on one Postgres', () => {
  it('a subscriber on gateway A sees runs started on gateway B and executed by the worker processes', {
    timeout: 120_000,
  }, async () => {
    // No worker runs yet, so this run stays in flight: runEvents reports it first, which proves the subscription is in place.
    const inFlight = await start(59);
    const RUNS = 4;
    type Event = { kind: string; run: { id: string; status: string; itemCount: number } };
    const events = collect<Event>(
      wsClient(gatewayA.url, apiKey),
      'subscription { runEvents { kind run { id status itemCount } } }',
      {},
      'runEvents',
      (items) => items.filter((e) => e.kind === 'FINISHED').length === RUNS + 1,
    );
    expect(await events.first).toMatchObject({ kind: 'PROGRESS', run: { id: inFlight, itemCount: 0 } });

    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) runIds.push(await start(60 + i));
    const workers: Service[] = await Promise.all([0, 1].map(() => spawnWorker({ ...env(), WORKER_CONCURRENCY: '1' })));
    const seen = await events.done;

    for (const id of [inFlight, ...runIds]) {
      const mine = seen.filter((e) => e.run.id === id);
      expect(mine[0]).toMatchObject({ kind: id === inFlight ? 'PROGRESS' : 'CREATED' });
      expect(mine.at(-1)).toMatchObject({ kind: 'FINISHED', run: { status: 'SUCCEEDED' } });
      expect(mine.some((e) => e.kind === 'PROGRESS' && e.run.itemCount > 0)).toBe(true);
      const status = await fetch(`${gatewayA.url}/api/v1/scrape/status/${id}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(((await status.json()) as { status: string }).status).toBe('SUCCEEDED');
    }
    // Gateways run no worker: every run was executed by one of the two worker processes.
    // (A worker logs a run's end just after committing it, so the line may trail the event.)
    const executed = () => workers.reduce((n, w) => n + (w.output().match(/"msg":"run succeeded"/g) ?? []).length, 0);
    expect(await waitFor(executed, (n) => n >= RUNS + 1, { what: 'the workers to log every run' })).toBe(RUNS + 1);
    for (const g of [gatewayA, gatewayB]) expect(g.output()).not.toContain('"msg":"run succeeded"');
  });
});
