import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mapsTool } from '../../src/tools/maps.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { runColumns } from '../helpers/runs.ts';
import { startFakeApify, type FakeApify } from '../helpers/fake-apify.ts';
import { killServices, spawnWorker } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * A worker process killed with SIGKILL while it reads an upstream run: the next worker re-attaches to
 * the same upstream run (its id is stored on the run) and reads on from the rows stored, so there is
 * one upstream run, every item once, and one charge.
 */

let t: TestApp;
let fake: FakeApify;
let key: string;

const ACTOR = 'compass~crawler-google-places';
const PRICE_MICROS = mapsTool.price.unitMicros;

beforeAll(async () => {
  fake = await startFakeApify({ actors: [ACTOR] });
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account({ creditsMicros: 10_000_000n }));
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
  APIFY_TOKEN: fake.token,
  APIFY_BASE_URL: fake.url,
  TOOL_SOURCES: 'maps=apify',
});

const place = (n: number) => ({
  title: `Place ${n}`,
  categoryName: 'Dentist',
  placeId: `ChIJ${n}`,
  url: `https://www.google.com/maps/place/?q=place_id:ChIJ${n}`,
  searchString: 'dentist',
});

const runRow = (id: string) =>
  runColumns(t.app.core.sql, id, ['status', 'item_count', 'charged_micros', 'upstream_run_id', 'upstream_offset']);

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string) =>
  waitFor(read, ok, { timeoutMs: 60_000, intervalMs: 100, what });

describe('re-attach', { timeout: 120_000 }, () => {
  it('a SIGKILLed worker: the next one re-attaches to the same upstream run, reads on from the rows stored, bills once', async () => {
    const next = fake.nextRun();
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 50 },
    });
    expect(started.status).toBe(200);
    const runId = started.body.runId as string;

    const first = await spawnWorker(workerEnv());
    const upstream = await next;
    upstream.push(place(1), place(2), place(3));
    await until(
      () => runRow(runId),
      (r) => r.item_count === 3,
      'three rows from the first worker',
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nworker output: ${first.output()}`);
    });
    first.kill('SIGKILL');
    await first.exited();
    expect(await runRow(runId)).toMatchObject({ status: 'RUNNING', upstream_run_id: upstream.id, upstream_offset: 3 });

    // Items the actor writes while no worker reads.
    upstream.push(place(4), place(5));
    const second = await spawnWorker(workerEnv());
    await until(
      () => runRow(runId),
      (r) => r.item_count === 5,
      'the second worker reading on',
    );
    upstream.push(place(6));
    upstream.set('SUCCEEDED');
    await until(
      () => runRow(runId),
      (r) => r.status !== 'RUNNING',
      'the run to end',
    );

    // One upstream run: the second worker did not start another.
    expect(fake.runs).toHaveLength(1);
    const row = await runRow(runId);
    expect(row).toMatchObject({ status: 'SUCCEEDED', item_count: 6, upstream_offset: 6 });
    expect(BigInt(row.charged_micros)).toBe(6n * PRICE_MICROS);
    const items = await t.app.core
      .sql`select seq, data->>'place_id' as place from run_item where run_id = ${runId} order by seq`;
    expect(items.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(items.map((r) => r.place)).toEqual(['ChIJ1', 'ChIJ2', 'ChIJ3', 'ChIJ4', 'ChIJ5', 'ChIJ6']);
    const charges = await t.app.core
      .sql`select plan_micros + purchased_micros as micros from ledger_entry where run_id = ${runId} and kind = 'charge'`;
    expect(charges).toHaveLength(1);
    expect(BigInt(charges[0]!.micros)).toBe(-6n * PRICE_MICROS);
    second.kill('SIGTERM');
    expect(await second.exited()).toBe(0);
  });
});
