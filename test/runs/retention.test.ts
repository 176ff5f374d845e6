import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { collect, disposeClients, wsClient } from '../helpers/ws.ts';
import { graphql } from '../helpers/gql/index.ts';

/**
 * Results are kept 48 hours after a run ends: past `expiresAt` every face refuses them with
 * `results_expired` (REST 410, GraphQL `extensions.code`, MCP tool error), and the hourly
 * housekeeping task, run by the worker, deletes the rows of expired runs and keeps the others.
 */

let t: TestApp;
let key: string;
const mcpClients: McpClient[] = [];

beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key } = await t.account());
});
afterEach(async () => {
  await disposeClients();
});
afterAll(async () => {
  for (const c of mcpClients.splice(0)) await c.close().catch(() => {});
  await disposeClients();
  await t?.stop();
});

const HOUR = 3_600_000;

/** A finished maps run of the test account with its rows. */
async function finishedRun() {
  const run = await t.runTool(key, '/api/v1/scrape/maps', DENVER_DENTISTS);
  expect(run.status.status).toBe('SUCCEEDED');
  expect(run.rows.length).toBeGreaterThan(0);
  return { runId: run.start.runId as string, rows: run.rows, expiresAt: new Date(run.status.expiresAt as string) };
}

/** Runs `body` with the app's clock set to `at`, then puts the real clock back. */
async function at<T>(when: Date, body: () => Promise<T>): Promise<T> {
  const clock = t.app.core.clock;
  t.app.core.clock = () => when;
  try {
    return await body();
  } finally {
    t.app.core.clock = clock;
  }
}

const Items = graphql(
  `query RetentionItems($id: ID!) { run(id: $id) { id expiresAt results(first: 5) { nodes { ... on MapsResult { placeId } } } } }`,
);
const RunStatus = graphql(`query RetentionRunStatus($id: ID!) { run(id: $id) { id status } }`);
const RunItems = graphql(
  `subscription RetentionRunItems($id: ID!) { runItems(id: $id) { offset results { ... on MapsResult { placeId } } } }`,
);
const placeIds = (rows: { place_id: string }[]) => rows.map((row) => ({ placeId: row.place_id }));

describe('results past expiresAt', () => {
  it('GraphQL: Run.results answers RESULTS_EXPIRED in extensions.code once the results expired, like REST’s 410', async () => {
    const run = await finishedRun();
    const before = await t.graphql(key, Items, { id: run.runId });
    expect(before.body.errors).toBeUndefined();
    expect(before.body.data!.run!.results!.nodes).toEqual(placeIds(run.rows.slice(0, 5)));
    expect(Date.parse(before.body.data!.run!.expiresAt!)).toBe(run.expiresAt.getTime());

    // A minute before the end of retention the rows are still served; from expiresAt on they are not.
    const stillKept = await at(new Date(run.expiresAt.getTime() - 60_000), () =>
      t.graphql(key, Items, { id: run.runId }),
    );
    expect(stillKept.body.data!.run!.results!.nodes).toEqual(placeIds(run.rows.slice(0, 5)));

    await at(new Date(run.expiresAt.getTime() + HOUR), async () => {
      const rest = await t.request('GET', `/api/downloads/${run.runId}?format=json`, { key });
      expect(rest.status).toBe(410);
      expect(rest.body.error.code).toBe('results_expired');

      const expired = await t.graphql(key, Items, { id: run.runId });
      expect(expired.status).toBe(200);
      expect(expired.body.errors).toHaveLength(1);
      expect(expired.body.errors![0]).toMatchObject({
        message: rest.body.error.message,
        path: ['run', 'results'],
        extensions: { code: 'RESULTS_EXPIRED' },
      });
      expect(expired.body.data!.run).toMatchObject({ id: run.runId, results: null });
      expect(JSON.stringify(expired.body)).not.toContain(run.rows[0].place_id);
      // The run itself stays readable.
      const status = await t.graphql(key, RunStatus, { id: run.runId });
      expect(status.body.data!.run).toEqual({ id: run.runId, status: 'SUCCEEDED' });
    });
  });

  it('graphql-ws: runItems of an expired run is a RESULTS_EXPIRED error without rows', async () => {
    const run = await finishedRun();
    const fresh = collect(wsClient(t.url, key), RunItems, { id: run.runId }, 'runItems');
    expect((await fresh.done).flatMap((batch) => batch.results)).toEqual(placeIds(run.rows));

    await at(new Date(run.expiresAt.getTime() + HOUR), async () => {
      const sub = collect(wsClient(t.url, key), RunItems, { id: run.runId }, 'runItems');
      const error = await sub.done.then(
        () => undefined,
        (err: Error) => err,
      );
      expect(error, 'runItems of an expired run ended without an error').toBeInstanceOf(Error);
      expect(error!.message).toContain('"code":"RESULTS_EXPIRED"');
      expect(sub.items).toEqual([]);
    });
  });

  it('MCP over HTTP: download_results answers the tool error results_expired, as the REST download does', async () => {
    const run = await finishedRun();
    const client = new McpClient({ name: 'retention-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp?tools=all`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    mcpClients.push(client);
    const download = async () => {
      const answer = (await client.callTool({
        name: 'download_results',
        arguments: { runId: run.runId, limit: 5 },
      })) as { isError?: boolean; content: { text: string }[] };
      return {
        isError: answer.isError === true,
        body: JSON.parse(answer.content[0]!.text),
        text: answer.content[0]!.text,
      };
    };
    const kept = await download();
    expect(kept.isError).toBe(false);
    expect(kept.body.rows).toEqual(run.rows.slice(0, 5));

    await at(new Date(run.expiresAt.getTime() + HOUR), async () => {
      const rest = await t.request('GET', `/api/downloads/${run.runId}?format=json`, { key });
      expect(rest.status).toBe(410);
      const expired = await download();
      expect(expired.isError).toBe(true);
      expect(expired.body).toEqual(rest.body);
      expect(expired.body.error.code).toBe('results_expired');
      expect(expired.text).not.toContain(run.rows[0].place_id);
      // The status stays available.
      const status = (await client.callTool({ name: 'check_run_status', arguments: { runId: run.runId } })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      expect(status.isError).not.toBe(true);
      expect(JSON.parse(status.content[0]!.text)).toMatchObject({ runId: run.runId, status: 'SUCCEEDED' });
    });
  });
});

describe('the hourly housekeeping task', () => {
  const rowsOf = async (runId: string) =>
    (await t.app.core.sql`select count(*)::int as n from run_item where run_id = ${runId}`)[0]!.n as number;
  const runOf = async (runId: string) =>
    (await t.app.core.sql`select status, purged_at, expires_at, item_count from run where id = ${runId}`)[0] as {
      status: string;
      purged_at: Date | null;
      expires_at: Date;
      item_count: number;
    };

  it('is the crontab’s housekeeping task: run by the worker, it deletes the rows of expired runs and keeps the others', async () => {
    const { CRONTAB } = await import('../../workers/tasks.ts');
    const { parseCrontab } = await import('graphile-worker');
    const identifiers = parseCrontab(CRONTAB).map((item) => item.task);
    expect(identifiers).toContain('housekeeping');

    const expired = [await finishedRun(), await finishedRun()];
    const kept = await finishedRun();
    // Two runs ended more than 48 hours ago; one just now.
    for (const run of expired)
      await t.app.core
        .sql`update run set finished_at = now() - interval '49 hours', expires_at = now() - interval '1 hour' where id = ${run.runId}`;
    for (const run of [...expired, kept]) expect(await rowsOf(run.runId)).toBe(run.rows.length);

    // The cron item's task, queued as the cron would and run by the app's own worker.
    const [job] = await t.app.core
      .sql`select (graphile_worker.add_job('housekeeping', '{}'::json, max_attempts => 1)).id::text as id`;
    const left = await waitFor(
      async () =>
        (await t.app.core.sql`select last_error from graphile_worker.jobs where id = ${job!.id}::bigint`)[0] as
          | { last_error: string | null }
          | undefined,
      (row) => row === undefined || row.last_error !== null,
      { what: 'the housekeeping job to be done' },
    );
    expect(left, 'the housekeeping job failed').toBeUndefined();

    for (const run of expired) {
      expect(await rowsOf(run.runId)).toBe(0);
      const row = await runOf(run.runId);
      expect(row.purged_at).not.toBeNull();
      // The run stays, with its status; only its results are gone, and the download says why.
      expect(row.status).toBe('SUCCEEDED');
      const rest = await t.request('GET', `/api/downloads/${run.runId}?format=json`, { key });
      expect(rest.status).toBe(410);
      expect(rest.body.error.code).toBe('results_expired');
      expect((await t.request('GET', `/api/v1/scrape/status/${run.runId}`, { key })).body.status).toBe('SUCCEEDED');
    }
    expect(await rowsOf(kept.runId)).toBe(kept.rows.length);
    expect((await runOf(kept.runId)).purged_at).toBeNull();
    const download = await t.request('GET', `/api/downloads/${kept.runId}?format=json`, { key });
    expect(download.status).toBe(200);
    expect(download.body).toEqual(kept.rows);
  });
});
