import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { runColumns } from '../helpers/runs.ts';
import { killServices, spawnGateway } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { closeCode, disposeClients, wsClient } from '../helpers/ws.ts';

/**
 * SIGTERM to a real gateway process (with its inline worker) that is busy: a CSV download in
 * flight that its client reads slowly, a long poll waiting for a run to end, an open graphql-ws
 * socket, and a run in hand. The run is caught after its first batch: its second batch waits on row
 * 50, which the test holds in an uncommitted insert until the stop has reached it.
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

/** Rows of the finished run downloaded during the stop: some 25 MB of CSV, far more than socket buffers hold. */
const ROWS = 60_000;

const runRow = (id: string) => runColumns(t.app.core.sql, id, ['status', 'item_count']);

/** A finished maps run of ROWS rows, written directly. */
async function bigFinishedRun(accountId: string): Promise<string> {
  const runId = `shutdownbig${Date.now()}`;
  await t.app.core.sql`
    insert into run (id, account_id, tool, status, input, item_count, handled, requested, finished_at, expires_at)
    values (${runId}, ${accountId}, 'maps', 'SUCCEEDED', '{"searchStringsArray":["dentist"]}', ${ROWS}, ${ROWS}, ${ROWS}, now(), now() + interval '1 day')`;
  await t.app.core.sql`
    insert into run_item (run_id, seq, data)
    select ${runId}, i, json_build_object('name', 'Business ' || i, 'address', repeat('x', 400), 'place_id', 'place-' || i)
    from generate_series(0, ${ROWS - 1}) as i`;
  return runId;
}

/** A GET whose body is not read until `read()`: the server is left writing into full buffers. */
function slowDownload(url: string) {
  return new Promise<{ status: number; read(): Promise<string> }>((resolve, reject) => {
    const request = http.get(url, { headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.pause();
      resolve({
        status: res.statusCode!,
        read: () =>
          new Promise((done, fail) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (body += chunk));
            res.on('end', () => done(body));
            res.on('error', fail);
            res.on('aborted', () => fail(new Error(`download aborted after ${body.length} characters`)));
            res.resume();
          }),
      });
    });
    request.on('error', reject);
  });
}

describe('graceful shutdown', { timeout: 120_000 }, () => {
  it('SIGTERM: the download in flight is sent whole, a long poll is answered, the socket closes with 1001, the run in hand is handed back, and the process exits 0', async () => {
    const { accountId, apiKey } = await t.account();
    key = apiKey;
    const bigRun = await bigFinishedRun(accountId);
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 120 },
    });
    expect(started.status).toBe(200);
    const runId = started.body.runId as string;
    const held = await t.app.core.sql.reserve();
    await held`begin`;
    await held`insert into run_item (run_id, seq, data) values (${runId}, 50, '{}')`;

    const gateway = await spawnGateway({
      DATABASE_URL: t.database.url,
      LEADGATE_INLINE_WORKER: 'true',
      WORKER_CONCURRENCY: '1',
      AUTH_CACHE_SECS: '0',
      WORKER_LIVENESS_SECS: '2',
    });
    await waitFor(
      () => runRow(runId),
      (r) => r.item_count === 50,
      { timeoutMs: 60_000, intervalMs: 100, what: 'the first batch' },
    );
    await waitFor(
      async () =>
        (
          (
            await t.app.core
              .sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%insert into%run_item%'`
          )[0] as { n: number }
        ).n,
      (n) => n > 0,
      { timeoutMs: 60_000, intervalMs: 100, what: 'the second batch to wait on the held row' },
    );

    const client = wsClient(gateway.url, key, { lazy: false, onNonLazyError: () => {} });
    const closed = closeCode(client);
    const subscribed = new Promise<void>((resolve) =>
      client.subscribe(
        { query: 'subscription($id: ID!) { runProgress(id: $id) { status } }', variables: { id: runId } },
        { next: () => resolve(), error: () => {}, complete: () => {} },
      ),
    );
    await subscribed;
    const download = await slowDownload(`${gateway.url}/api/downloads/${bigRun}?format=csv`);
    expect(download.status).toBe(200);
    // Waits for a run that cannot end while its row is held: answered when the gateway stops, with the
    // run as it is. Its own wait (60 s) is past the deadline the client gives it once the stop begins.
    const pollDeadline = new AbortController();
    const longPoll = fetch(`${gateway.url}/api/v1/scrape/status/${runId}?waitForFinish=60`, {
      headers: { authorization: `Bearer ${key}` },
      signal: pollDeadline.signal,
    });
    await waitFor(
      async () =>
        (
          (
            await t.app.core
              .sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen%'`
          )[0] as { n: number }
        ).n,
      (n) => n >= 1,
      { what: 'the gateway listening' },
    );

    gateway.kill('SIGTERM');
    const deadline = setTimeout(
      () => pollDeadline.abort(new Error('the long poll was not answered when the gateway began to stop')),
      40_000,
    );
    await gateway.waitFor(/"msg":"shutting down"/);
    expect(await closed, 'graphql-ws sockets close with 1001 (going away)').toBe(1001);
    const polled = await longPoll;
    clearTimeout(deadline);
    expect(polled.status).toBe(200);
    expect(await polled.json()).toMatchObject({ runId, status: 'RUNNING' });

    const csv = await download.read();
    const lines = csv.split('\n');
    expect(lines[0]).toMatch(/^name,category,address/);
    expect(lines.at(-1), 'the file ends with a whole row').toBe('');
    expect(lines).toHaveLength(ROWS + 2);
    expect(lines.at(-2)).toMatch(new RegExp(`^Business ${ROWS - 1},`));

    // The stop reaches the run in hand: the batch it holds is stored, then the run is handed back.
    await gateway.waitFor(/"msg":"worker stopping: handing back runs in flight"/);
    await held`rollback`;
    held.release();
    expect(await gateway.exited(), gateway.output().slice(-3000)).toBe(0);
    expect(await runRow(runId)).toMatchObject({ status: 'RUNNING', item_count: 100 });
    const [job] = await t.app.core.sql`select locked_at from graphile_worker.jobs where key = ${runId}`;
    expect(job, 'the run is handed back: its job is queued again').toBeDefined();
    expect(job!.locked_at).toBeNull();
  });
});
