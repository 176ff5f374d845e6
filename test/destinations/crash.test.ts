import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { destinations } from '../../src/config/destinations.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { person, writeRun } from '../helpers/deliveries.ts';
import { type FakeHubspot, startFakeHubspot } from '../helpers/fakes/hubspot.ts';
import { killServices, spawnWorker } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { queueDeliveries } from '../../src/destinations/queue.ts';

/**
 * A real worker process SIGKILLed in the middle of a delivery to HubSpot, at the worst moment: HubSpot
 * has taken a batch the worker has not recorded yet (the test holds the delivery's row, so the worker's
 * acknowledgement waits). Another worker resumes at the first row not acknowledged: the batch is sent
 * again as an upsert, and no contact exists twice.
 */

const SECRETS_KEYS = `k1:${randomBytes(32).toString('base64')}`;
const TOKEN = 'pat-na1-99999999-8888-7777-6666-555555555555';
const ROWS = 1_000;

let fake: FakeHubspot;
let t: TestApp;
let key: string;
let accountId: string;

beforeAll(async () => {
  fake = await startFakeHubspot({
    privateApps: [{ token: TOKEN, appId: 9, scopes: ['crm.objects.contacts.write'] }],
    // Two calls a second: the delivery takes seconds, time enough to catch it between batches.
    rateLimit: { intervalMs: 1_000, privateAppMax: 2 },
  });
  t = await startTestApp({
    worker: false,
    config: { destinations: destinations({ SECRETS_KEYS, HUBSPOT_BASE_URL: fake.url }) },
  });
  ({ apiKey: key, accountId } = await t.account({ creditsMicros: 20_000_000n }));
});
afterEach(() => killServices());
afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

const workerEnv = () => ({
  DATABASE_URL: t.database.url,
  WORKER_LIVENESS_SECS: '2',
  WORKER_CONCURRENCY: '1',
  SECRETS_KEYS,
  HUBSPOT_BASE_URL: fake.url,
});

const deliveryRow = async (id: string) =>
  (await t.app.core.sql`select status, next_offset, sent, created, updated from delivery where id = ${id}`)[0] as {
    status: string;
    next_offset: number;
    sent: number;
    created: number;
    updated: number;
  };

describe('a worker killed mid-delivery', { timeout: 120_000 }, () => {
  it('resumes at the first row not acknowledged, and HubSpot holds each contact once', async () => {
    const connection = await t.request('POST', '/api/v1/connections/token', {
      key,
      body: { provider: 'hubspot', name: 'Private app', token: TOKEN },
    });
    expect(connection.status, connection.text).toBe(201);
    const destination = await t.request('POST', '/api/v1/destinations', {
      key,
      body: { name: 'Contacts', kind: 'hubspot_contacts', connection: connection.body.connection.id },
    });
    const runId = await writeRun(
      t,
      accountId,
      'lead-scraper',
      Array.from({ length: ROWS }, (_, i) => person('crash', i)),
    );
    await t.app.core.db.transaction((tx) =>
      queueDeliveries(t.app.core, tx, accountId, { runId }, [destination.body.destination.id]),
    );
    const [found] = await t.app.core.sql`select id from delivery where run_id = ${runId}`;
    const id = String(found?.id);

    const first = await spawnWorker(workerEnv());
    await waitFor(
      () => deliveryRow(id),
      (d) => d?.next_offset >= 200,
      { timeoutMs: 30_000, what: 'two batches' },
    );
    // Hold the delivery's row: the worker sends its next batch, then waits to record it.
    const holder = await t.app.core.sql.reserve();
    await holder`begin`;
    const [held] = await holder`select next_offset from delivery where id = ${id} for update`;
    await waitFor(
      async () => fake.records.contacts.size,
      (n) => n > held?.next_offset,
      { timeoutMs: 30_000, what: 'a batch HubSpot took and the worker did not record' },
    );
    expect(fake.records.contacts.size).toBe(held?.next_offset + 100);
    first.kill('SIGKILL');
    await first.exited();
    await holder`rollback`;
    holder.release();
    expect(await deliveryRow(id)).toMatchObject({ status: 'running', next_offset: held?.next_offset });

    const second = await spawnWorker(workerEnv());
    const done = await waitFor(
      () => deliveryRow(id),
      (d) => d?.status === 'succeeded',
      {
        timeoutMs: 60_000,
        what: 'the delivery to end',
      },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${second.output().slice(-3000)}`);
    });
    expect(fake.records.contacts.size).toBe(ROWS);
    // The batch sent twice counted as updated the second time; every row sent once in the log.
    expect(done).toMatchObject({ next_offset: ROWS, sent: ROWS, created: ROWS - 100, updated: 100 });
    second.kill('SIGTERM');
    expect(await second.exited()).toBe(0);
  });
});
