import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { freePort } from '../db/embedded.ts';
import { createAccount } from '../src/services/accounts.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { connect } from '../db/client.ts';
import { exited, ROOT, waitForOutput } from './helpers/process.ts';

/**
 * Two gateway processes without workers and two worker processes, all on one Postgres: runs
 * started on gateway B are executed by the workers, and a subscriber on gateway A sees every event.
 */

let database: TestDatabase;
const processes: ChildProcess[] = [];
const logs = new Map<ChildProcess, string>();
let gatewayA: string;
let gatewayB: string;
let apiKey: string;
const clients: Client[] = [];

function start(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'info', AUTH_CACHE_SECS: '0', RATE_LIMIT_PER_MINUTE: '100000', ...env },
  });
  processes.push(child);
  logs.set(child, '');
  child.stdout!.on('data', (d) => logs.set(child, logs.get(child) + String(d)));
  return child;
}

async function gateway(): Promise<string> {
  const port = await freePort();
  const child = start(['--import', 'tsx', 'src/main.ts'], { PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: `http://127.0.0.1:${port}`, LEADGATE_INLINE_WORKER: 'false' });
  await waitForOutput(child, /leadgate is listening/);
  return `127.0.0.1:${port}`;
}

async function worker() {
  const child = start(['src/cli/leadgate.mjs', 'worker'], { WORKER_CONCURRENCY: '1' });
  await waitForOutput(child, /worker started/);
  return child;
}

beforeAll(async () => {
  database = await createTestDatabase();
  [gatewayA, gatewayB] = await Promise.all([gateway(), gateway()]);
  await Promise.all([worker(), worker()]);
  const { db, sql } = connect(database.url, { max: 1 });
  ({ apiKey } = await createAccount(db, { name: 'multi', plan: 'scale', subscriptionStatus: 'ACTIVE', creditsMicros: 100_000_000n }));
  await sql.end();
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  for (const child of processes) child.kill('SIGTERM');
  await Promise.all(processes.map(exited));
  await database?.drop();
});

describe('several processes on one Postgres', () => {
  it('a subscriber on gateway A sees runs started on gateway B and executed by the worker processes', { timeout: 120_000 }, async () => {
    const client = createClient({ url: `ws://${gatewayA}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${apiKey}` }, retryAttempts: 0 });
    clients.push(client);
    const RUNS = 4;
    const events: { kind: string; run: { id: string; status: string; itemCount: number } }[] = [];
    const finished = new Promise<void>((resolve, reject) => {
      client.subscribe<{ runEvents: (typeof events)[number] }>(
        { query: 'subscription { runEvents { kind run { id status itemCount } } }' },
        {
          next: ({ data, errors }) => {
            if (errors) reject(new Error(JSON.stringify(errors)));
            if (data) events.push(data.runEvents);
            if (events.filter((e) => e.kind === 'FINISHED').length === RUNS) resolve();
          },
          error: reject,
          complete: () => {},
        },
      );
    });
    await new Promise((r) => setTimeout(r, 500)); // the subscription is listening

    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const res = await fetch(`http://${gatewayB}/api/v1/scrape/maps`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 60 + i }),
      });
      expect(res.status).toBe(200);
      runIds.push(((await res.json()) as { runId: string }).runId);
    }
    await finished;

    for (const id of runIds) {
      const mine = events.filter((e) => e.run.id === id);
      expect(mine[0]).toMatchObject({ kind: 'CREATED' });
      expect(mine.at(-1)).toMatchObject({ kind: 'FINISHED', run: { status: 'SUCCEEDED' } });
      expect(mine.some((e) => e.kind === 'PROGRESS' && e.run.itemCount > 0)).toBe(true);
      const status = await fetch(`http://${gatewayA}/api/v1/scrape/status/${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(((await status.json()) as { status: string }).status).toBe('SUCCEEDED');
    }
    // Gateways run no worker: every run was executed by one of the two worker processes.
    const workers = processes.slice(2);
    const executed = workers.map((w) => (logs.get(w)!.match(/"msg":"run succeeded"/g) ?? []).length);
    expect(executed.reduce((a, b) => a + b, 0)).toBe(RUNS);
    for (const g of processes.slice(0, 2)) expect(logs.get(g)).not.toContain('"msg":"run succeeded"');
  });
});
