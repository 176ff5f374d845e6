import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database, type Sql } from '../../db/client.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import { getInstallationSecret } from '../../src/accounts/installation.ts';
import { createCatalogReader } from '../../src/catalog/reader.ts';
import { createLogger } from '../../src/logger.ts';
import { signDownload } from '../../src/runs/download-links.ts';
import { exportRun } from '../../src/runs/exports.ts';
import { getRun } from '../../src/runs/read.ts';
import { newRunId } from '../../src/shared/ids.ts';
import { getTool } from '../../src/tools/index.ts';
import type { Cluster } from '../helpers/postgres-cluster.ts';
import { startReplicatedApp, type LogLine, type ReplicatedApp } from '../helpers/replicated-app.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Downloads of a run's rows with DATABASE_READ_URL, over a real primary and a real streaming replica
 * (docs/operations.md#read-replicas). Where rows were read is told by each server's scans of
 * `run_item`: only downloads read it here (the test stores its runs' rows itself; no worker runs). The
 * lag bound is long, so the replica stays in use while its replay is paused: a run whose end it has
 * not replayed goes to the primary by the per-run check alone.
 */

const ROWS = 1_200;

let r: ReplicatedApp;
let replica: Cluster;
let sql: Sql;
let db: Database;
let onReplica: Sql;
let url: string;
let key: string;
let accountId: string;
let lines: LogLine[];

beforeAll(async () => {
  r = await startReplicatedApp({
    maxLagMs: 30_000,
    worker: false,
    async prepare(primaryUrl) {
      const { sql: preparing, db: accounts } = connect(primaryUrl, { max: 1 });
      try {
        const created = await createAccount(accounts, {
          name: 'replica',
          plan: 'scale',
          subscriptionStatus: 'ACTIVE',
          creditsMicros: 0n,
        });
        ({ apiKey: key } = created);
        accountId = created.account.id;
      } finally {
        await preparing.end();
      }
    },
  });
  ({ replica, sql, db, onReplica, url, lines } = r);
}, 120_000);

afterAll(() => r?.stop());

const row = (seq: number) => ({ name: `Dentist ${seq}`, city: 'Denver' });
const expected = Array.from({ length: ROWS }, (_, seq) => row(seq));

/** Rows `from` to `to` − 1 of `runId`, stored as the worker stores them. */
const storeRows = (on: Sql, runId: string, from: number, to: number) =>
  on`insert into run_item (run_id, seq, data) select ${runId}, g, json_build_object('name', 'Dentist ' || g, 'city', 'Denver') from generate_series(${from}::int, ${to - 1}::int) g`;

/** A finished run of ROWS rows, or one still going with the first `stored` of them. */
async function insertRun(status: 'SUCCEEDED' | 'RUNNING', stored = ROWS): Promise<string> {
  const id = newRunId();
  const ended = status === 'SUCCEEDED';
  await sql`insert into run (id, account_id, tool, status, input, item_count, started_at, finished_at, expires_at)
    values (${id}, ${accountId}, 'maps', ${status}, ${JSON.stringify({ searchStringsArray: ['dentist'] })}::jsonb, ${stored}, now(), ${ended ? sql`now()` : null}, ${ended ? sql`now() + interval '48 hours'` : null})`;
  await storeRows(sql, id, 0, stored);
  return id;
}

/** Waits until the replica shows the run in `status`. */
const replayed = (runId: string, status: string) =>
  waitFor(
    async () => (await onReplica<{ status: string }[]>`select status from run where id = ${runId}`)[0]?.status,
    (s) => s === status,
    { timeoutMs: 10_000, what: `the replica to show ${status}` },
  );

/** Scans of `run_item` counted by one server, and the rows they read (statistics are flushed within a second). */
const counters = async (on: Sql) => {
  const [found] = await on<[{ scans: string; rows: string }]>`
    select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as scans, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) as rows
    from pg_stat_user_tables where relname = 'run_item'`;
  return { scans: Number(found.scans), rows: Number(found.rows) };
};
const scans = async (on: Sql) => (await counters(on)).scans;

/**
 * Waits until the `reads` downloads of `act` (one scan each) show in the scans of `reader`, each
 * session's flushed on its own, and checks `other` counted none.
 */
async function readsGoTo(reader: Sql, other: Sql, reads: number, act: () => Promise<void>) {
  const [before, otherBefore] = [await scans(reader), await scans(other)];
  await act();
  await waitFor(
    () => scans(reader),
    (n) => n >= before + reads,
    { timeoutMs: 5_000, what: 'the reads to show' },
  );
  expect(await scans(other)).toBe(otherBefore);
}

const download = async (
  runId: string,
  query = '',
  headers: Record<string, string> = { authorization: `Bearer ${key}` },
) => {
  const res = await fetch(`${url}/api/downloads/${runId}${query}`, { headers });
  return { status: res.status, text: await res.text() };
};
const results = async (runId: string) => {
  const res = await fetch(`${url}/api/v1/runs/${runId}/results`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as unknown[];
};
const csvLines = (text: string) => text.trimEnd().split('\n');
/** GraphQL `Run.results`: `first` rows from `offset`, with hasNextPage. */
const graphqlRows = async (runId: string, offset: number, first: number) => {
  const after = offset === 0 ? null : Buffer.from(`row:${offset - 1}`).toString('base64url');
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      query:
        'query ($id: ID!, $first: Int, $after: String) { run(id: $id) { results(first: $first, after: $after) { pageInfo { hasNextPage } nodes { ... on MapsResult { name city } } } } }',
      variables: { id: runId, first, after },
    }),
  });
  const body = (await res.json()) as {
    data?: { run: { results: { pageInfo: { hasNextPage: boolean }; nodes: unknown[] } } };
    errors?: unknown;
  };
  expect(body.errors).toBeUndefined();
  return body.data!.run.results;
};

const transitions = (msg: string) => lines.filter((l) => l.msg === msg);
const fallBack = 'catalog reads fall back to the primary';
const toReplica = 'catalog reads go to the read replica';

describe('downloads with DATABASE_READ_URL', () => {
  it('serves a finished run from the replica once the replica shows it finished: CSV, JSON, a range, a signed link, GraphQL', async () => {
    const runId = await insertRun('SUCCEEDED');
    await waitFor(() => transitions(toReplica).length === 1, Boolean, { timeoutMs: 10_000 });
    await replayed(runId, 'SUCCEEDED');
    await readsGoTo(onReplica, sql, 7, async () => {
      expect(await graphqlRows(runId, 600, 3)).toEqual({
        pageInfo: { hasNextPage: true },
        nodes: expected.slice(600, 603),
      });
      expect(await graphqlRows(runId, ROWS - 2, 5)).toEqual({
        pageInfo: { hasNextPage: false },
        nodes: expected.slice(ROWS - 2),
      });
      const mcp = new Client({ name: 'replica-test', version: '1.0.0' });
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`${url}/mcp?tools=all`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      const page = (await mcp.callTool({
        name: 'download_results',
        arguments: { runId, offset: 600, limit: 3 },
      })) as unknown as { structuredContent: { rows: unknown[] } };
      expect(page.structuredContent.rows).toEqual(expected.slice(600, 603));
      await mcp.close();
      const csv = await download(runId);
      expect(csv.status).toBe(200);
      const csvRows = csvLines(csv.text);
      expect(csvRows).toHaveLength(ROWS + 1);
      expect(csvRows[ROWS]).toMatch(new RegExp(`^Dentist ${ROWS - 1},,,,Denver,`));
      expect(await results(runId)).toEqual(expected);
      const range = await download(runId, '?format=ndjson&offset=600&limit=3');
      expect(
        range.text
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ).toEqual(expected.slice(600, 603));
      const link = signDownload(await getInstallationSecret(db), { accountId, runId, format: 'json' }, new Date());
      const signed = await download(runId, `?${link}`, {});
      expect(signed.status).toBe(200);
      expect(JSON.parse(signed.text)).toEqual(expected);
    });
    expect(transitions(fallBack)).toHaveLength(0);
  });

  it('reads a run on the primary, whole, while the replica has not replayed its end, and on the replica once it has', async () => {
    const runId = await insertRun('RUNNING', 700);
    await replayed(runId, 'RUNNING');
    await onReplica`select pg_wal_replay_pause()`;
    await waitFor(
      async () => (await onReplica<[{ state: string }]>`select pg_get_wal_replay_pause_state() as state`)[0].state,
      (s) => s === 'paused',
    );
    // The run's last rows and its end, committed together: the paused replica has neither.
    await sql.begin(async (tx) => {
      await storeRows(tx as unknown as Sql, runId, 700, ROWS);
      await tx`update run set status = 'SUCCEEDED', item_count = ${ROWS}, finished_at = now(), expires_at = now() + interval '48 hours' where id = ${runId}`;
    });
    try {
      await readsGoTo(sql, onReplica, 3, async () => {
        expect(await results(runId)).toEqual(expected);
        expect(csvLines((await download(runId)).text)).toHaveLength(ROWS + 1);
        expect((await graphqlRows(runId, 1_000, 3)).nodes).toEqual(expected.slice(1_000, 1_003));
      });
      // The replica was still in use: the run's own check sent the reads to the primary.
      expect(transitions(fallBack)).toHaveLength(0);
    } finally {
      await onReplica`select pg_wal_replay_resume()`;
    }
    await replayed(runId, 'SUCCEEDED');
    await readsGoTo(onReplica, sql, 2, async () => {
      expect(await results(runId)).toEqual(expected);
      expect((await graphqlRows(runId, 1_000, 3)).nodes).toEqual(expected.slice(1_000, 1_003));
    });
  });

  it('goes on from the primary when the replica stops part-way through a file', async () => {
    const runId = await insertRun('SUCCEEDED');
    await replayed(runId, 'SUCCEEDED');
    const own: typeof lines = [];
    const reader = createCatalogReader(sql, {
      url: replica.url('postgres'),
      maxLagMs: 30_000,
      logger: createLogger('info', { write: (line: string) => own.push(JSON.parse(line)) }),
    });
    try {
      await waitFor(() => own.some((l) => l.msg === toReplica), Boolean, { timeoutMs: 10_000 });
      const before = await counters(sql);
      const file = exportRun(
        { sql, catalogReader: reader },
        await getRun(db, accountId, runId),
        getTool('maps').columns,
        'ndjson',
      );
      const chunks: string[] = [];
      // The cursor reads 500 rows a batch: the first batch comes from the replica, the rest cannot.
      for await (const chunk of file.body) {
        if (chunks.length === 0) {
          await onReplica.end({ timeout: 1 });
          await replica.stop();
        }
        chunks.push(String(chunk));
      }
      expect(
        chunks
          .join('')
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ).toEqual(expected);
      // One read on the primary, of the rows after those the replica gave.
      const after = await waitFor(
        () => counters(sql),
        (c) => c.scans > before.scans,
        { timeoutMs: 5_000 },
      );
      expect(after.scans - before.scans).toBe(1);
      expect(after.rows - before.rows).toBeGreaterThan(0);
      expect(after.rows - before.rows).toBeLessThan(ROWS);
      await waitFor(() => own.find((l) => l.msg === fallBack), Boolean, { timeoutMs: 5_000 });
    } finally {
      await reader.close();
    }
  });

  it('downloads from the primary while the replica is stopped, with one warn line', async () => {
    const runId = await insertRun('SUCCEEDED');
    const before = await scans(sql);
    const csv = await download(runId);
    expect(csv.status).toBe(200);
    expect(csvLines(csv.text)).toHaveLength(ROWS + 1);
    await waitFor(async () => (await scans(sql)) > before, Boolean, { timeoutMs: 5_000 });
    await waitFor(() => transitions(fallBack).length === 1, Boolean, { timeoutMs: 5_000 });
    expect(transitions(fallBack)[0]!.level).toBe(40);
    expect(transitions(fallBack)[0]!.reason).toMatch(/unreachable/);
    for (let i = 0; i < 3; i++) expect(JSON.parse((await download(runId, '?format=json')).text)).toHaveLength(ROWS);
    expect(transitions(fallBack)).toHaveLength(1);
  });
});
