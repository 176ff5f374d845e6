import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ResultOf } from '@graphql-typed-document-node/core';
import { loopbackConfig } from '../../src/config.ts';
import type { PlaceQuery } from '../../src/sources/types.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { runColumns } from '../helpers/runs.ts';
import { ROOT } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';
import { collect, disposeClients, wsClient, type Collected } from '../helpers/ws.ts';
import { graphql } from '../helpers/gql/index.ts';

/**
 * Another account's id is answered like an unknown one on every face: GraphQL (queries, mutations,
 * graphql-ws subscriptions), MCP over HTTP and over stdio. Account A owns the runs and webhooks,
 * account B asks; A's things stay as they were.
 */

interface Account {
  accountId: string;
  apiKey: string;
}

const RunLookups = graphql(`
  query IsolationRunLookups($id: ID!) {
    run(id: $id) { id status results(first: 5) { nodes { __typename } } }
    node(id: $id) { id }
    nodes(ids: [$id]) { id }
    runs(first: 100) { edges { node { id } } }
  }
`);
const CancelRun = graphql(`
  mutation IsolationCancelRun($id: ID!) { cancelRun(id: $id) { run { id status statusMessage } userErrors { code field message } } }
`);
const CreateWebhook = graphql(
  `mutation IsolationCreateWebhook($url: String!) { createWebhook(input: { url: $url }) { webhook { id } } }`,
);
const CreateSucceededWebhook = graphql(`
  mutation IsolationCreateSucceededWebhook($url: String!) { createWebhook(input: { url: $url, events: [RUN_SUCCEEDED] }) { webhook { id } } }
`);
const DeleteWebhook = graphql(`
  mutation IsolationDeleteWebhook($id: ID!) { deleteWebhook(id: $id) { deletedWebhookId userErrors { code field message } } }
`);
const WebhookNode = graphql(`query IsolationWebhookNode($id: ID!) { node(id: $id) { id ... on Webhook { url } } }`);
const NodeId = graphql(`query IsolationNodeId($id: ID!) { node(id: $id) { id } }`);
const Webhooks = graphql(`query IsolationWebhooks { webhooks { nodes { id url } } }`);
const Deliveries = graphql(
  `query IsolationDeliveries { webhooks { nodes { id deliveries { nodes { id runId event status responseStatus } } } } }`,
);
const RunItems = graphql(`
  subscription IsolationRunItems($id: ID!) { runItems(id: $id) { offset results { ... on MapsResult { placeId } } run { id } } }
`);
const RunEvents = graphql(`subscription IsolationRunEvents { runEvents { kind run { id status } } }`);

let receiver: Receiver;
let t: TestApp;
let a: Account;
let b: Account;
/** A finished run of A with result rows. */
let aFinished: { runId: string; rows: Record<string, unknown>[] };
const mcpClients: McpClient[] = [];
const releases: Array<() => void> = [];

beforeAll(async () => {
  receiver = await startReceiver();
  const network = {
    ...loopbackConfig('postgres://unused', 0).network,
    webPorts: { http: receiver.port, https: receiver.port },
    outboundAllow: [`127.0.0.1:${receiver.port}`],
  };
  t = await startTestApp({ config: { network } });
  a = await t.account({ name: 'owner A' });
  b = await t.account({ name: 'other B' });
  const run = await t.runTool(a.apiKey, '/api/v1/scrape/maps', DENVER_DENTISTS);
  expect(run.status.status).toBe('SUCCEEDED');
  expect(run.rows.length).toBeGreaterThan(0);
  aFinished = { runId: run.start.runId, rows: run.rows };
});
afterEach(async () => {
  for (const release of releases.splice(0)) release();
  await disposeClients();
});
afterAll(async () => {
  for (const release of releases.splice(0)) release();
  for (const c of mcpClients.splice(0)) await c.close().catch(() => {});
  await disposeClients();
  await t?.stop();
  await receiver?.close();
});

/** Input that takes several reads of the place source on the small seed. */
const HELD_INPUT = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 120 };

/**
 * Starts a maps run of `key` whose worker (the app's own) stores the first page and then waits on
 * the second read of the place source until `release()`: a run that is surely RUNNING, with rows.
 */
async function heldRun(key: string): Promise<{ runId: string; release: () => void }> {
  const core = t.app.core;
  const original = core.sources;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  releases.push(release);
  let reads = 0;
  let held = false;
  core.sources = {
    ...original,
    localBusinesses: {
      ...original.localBusinesses,
      searchPlaces: async (query: PlaceQuery) => {
        if (reads++ > 0) {
          held = true;
          await released;
        }
        return original.localBusinesses.searchPlaces(query);
      },
    },
  };
  let runId: string;
  try {
    const start = await t.request('POST', '/api/v1/scrape/maps', { key, body: HELD_INPUT });
    expect(start.status, start.text).toBe(200);
    runId = start.body.runId;
    await waitFor(() => held, Boolean, { what: 'the run to store a page and ask for the next one' });
  } finally {
    // The run in hand keeps the held sources; runs started later get the real ones.
    core.sources = original;
  }
  const row = await runRow(runId);
  expect(row).toMatchObject({ status: 'RUNNING' });
  expect(row.item_count).toBeGreaterThan(0);
  return { runId, release };
}

const runRow = (id: string) => runColumns(t.app.core.sql, id, ['status', 'status_message', 'item_count']);

/** A's held run is untouched by B: still RUNNING, then, released, it ends SUCCEEDED with every row downloadable. */
async function expectUntouchedAndFinishes(run: { runId: string; release: () => void }) {
  const now = await t.request('GET', `/api/v1/scrape/status/${run.runId}`, { key: a.apiKey });
  expect(now.body.status).toBe('RUNNING');
  expect((await runRow(run.runId)).status_message).not.toMatch(/cancel/i);
  run.release();
  const final = await t.waitForRun(a.apiKey, run.runId, 60_000);
  expect(final.status).toBe('SUCCEEDED');
  const rows = await t.request('GET', `/api/downloads/${run.runId}?format=json`, { key: a.apiKey });
  expect(rows.status).toBe(200);
  expect(rows.body.length).toBe((await runRow(run.runId)).item_count);
}

/** The codes of a mutation payload's userErrors. */
const codes = (payload: { userErrors: { code: string }[] }) => payload.userErrors.map((e) => e.code);

async function connectMcp(key: string): Promise<McpClient> {
  const client = new McpClient({ name: 'isolation-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp?tools=all`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  mcpClients.push(client);
  return client;
}

async function spawnStdioMcp(key: string): Promise<{ client: McpClient; stderr: () => string }> {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['src/cli/leadgate.mjs', 'mcp', '--url', t.url, '--key', key, '--tools', 'all'],
    cwd: ROOT,
    env: {
      ...(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)) as Record<string, string>),
      LOG_LEVEL: 'warn',
    },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new McpClient({ name: 'isolation-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  mcpClients.push(client);
  return { client, stderr: () => stderr };
}

async function callTool(client: McpClient, name: string, args: Record<string, unknown>) {
  const answer = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { text: string }[];
    structuredContent?: unknown;
  };
  const body = JSON.parse(answer.content[0]!.text);
  // An error carries its body as text only; an answer as structured content too.
  if (answer.isError) expect(answer.structuredContent).toBeUndefined();
  else expect(answer.structuredContent).toEqual(body);
  return { isError: answer.isError === true, body, text: answer.content[0]!.text };
}

/**
 * A run id that would be SQL if it reached a statement as written (a run's event channel is named
 * after its id): answered as an unknown id on every face, and the table it names never appears.
 */
const HOSTILE_RUN_ID = '"; create table injected (); --';
async function expectNothingInjected() {
  const [row] = await t.app.core.sql<{ injected: string | null }[]>`select to_regclass('injected')::text as injected`;
  expect(row?.injected).toBeNull();
}

/** B's MCP calls on A's runs: each a tool error `not_found`, exactly as for an id that exists nowhere, and none carries A's data. */
async function expectMcpNotFound(client: McpClient, held: string) {
  const unknown = await callTool(client, 'check_run_status', { runId: 'run_that_does_not_exist' });
  expect(unknown).toMatchObject({ isError: true, body: { error: { code: 'not_found' } } });
  const calls: [string, Record<string, unknown>][] = [
    ['check_run_status', { runId: aFinished.runId }],
    ['check_run_status', { runId: held }],
    ['check_run_status', { runId: held, waitSecs: 1 }],
    ['check_run_status', { runId: HOSTILE_RUN_ID, waitSecs: 1 }],
    ['download_results', { runId: aFinished.runId }],
    ['download_results', { runId: aFinished.runId, offset: 0, limit: 5 }],
    ['download_results', { runId: held }],
    ['cancel_run', { runId: held }],
    ['cancel_run', { runId: aFinished.runId }],
  ];
  for (const [name, args] of calls) {
    const answer = await callTool(client, name, args);
    expect(answer.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
    expect(answer.body, `${name} ${JSON.stringify(args)}`).toEqual(unknown.body);
    expect(answer.text).not.toContain(aFinished.rows[0]!.place_id);
  }
  await expectNothingInjected();
}

describe('GraphQL: another account’s run or webhook', () => {
  it('run(id) and node(id) are null and runs never lists it, as for an unknown id', async () => {
    const mine = await t.graphql(a.apiKey, RunLookups, { id: aFinished.runId });
    expect(mine.body.data!.run).toMatchObject({ id: aFinished.runId, status: 'SUCCEEDED' });
    expect(mine.body.data!.run!.results!.nodes.length).toBeGreaterThan(0);
    expect(mine.body.data!.node).toEqual({ id: aFinished.runId });

    for (const id of [aFinished.runId, 'run_that_does_not_exist']) {
      const theirs = await t.graphql(b.apiKey, RunLookups, { id });
      expect(theirs.status).toBe(200);
      expect(theirs.body.errors).toBeUndefined();
      expect(theirs.body.data!.run).toBeNull();
      expect(theirs.body.data!.node).toBeNull();
      expect(theirs.body.data!.nodes).toEqual([null]);
      expect(theirs.body.data!.runs.edges.map((e) => e.node.id)).not.toContain(aFinished.runId);
    }
  });

  it('cancelRun of A’s running run by B is NOT_FOUND, and A’s run goes on to SUCCEEDED, never ABORTING', async () => {
    const held = await heldRun(a.apiKey);
    const unknown = await t.graphql(b.apiKey, CancelRun, { id: 'run_that_does_not_exist' });
    expect(codes(unknown.body.data!.cancelRun)).toEqual(['NOT_FOUND']);
    for (const id of [held.runId, aFinished.runId]) {
      const res = await t.graphql(b.apiKey, CancelRun, { id });
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data!.cancelRun.run).toBeNull();
      // The same answer as for an id that exists nowhere: nothing tells B the run exists.
      expect(res.body.data!.cancelRun).toEqual(unknown.body.data!.cancelRun);
    }
    await expectUntouchedAndFinishes(held);
    expect((await runRow(aFinished.runId)).status).toBe('SUCCEEDED');
  });

  it('deleteWebhook of A’s webhook by B is NOT_FOUND, and node(id) is null for B; A still has it', async () => {
    const created = await t.graphql(a.apiKey, CreateWebhook, { url: receiver.url('/hooks/a-kept') });
    expect(created.body.errors).toBeUndefined();
    const hookId = created.body.data!.createWebhook.webhook!.id;

    const unknown = await t.graphql(b.apiKey, DeleteWebhook, { id: 'wh_that_does_not_exist' });
    expect(codes(unknown.body.data!.deleteWebhook)).toEqual(['NOT_FOUND']);
    const res = await t.graphql(b.apiKey, DeleteWebhook, { id: hookId });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!.deleteWebhook).toEqual(unknown.body.data!.deleteWebhook);
    expect((await t.graphql(b.apiKey, WebhookNode, { id: hookId })).body).toEqual({ data: { node: null } });
    expect((await t.graphql(a.apiKey, WebhookNode, { id: hookId })).body).toEqual({
      data: { node: { id: hookId, url: receiver.url('/hooks/a-kept') } },
    });

    const listed = await t.graphql(a.apiKey, Webhooks);
    expect(listed.body.data!.webhooks.nodes).toContainEqual({ id: hookId, url: receiver.url('/hooks/a-kept') });
    expect(
      (await t.request('GET', '/api/v1/webhooks', { key: a.apiKey })).body.webhooks.map((w: { id: string }) => w.id),
    ).toContain(hookId);

    expect((await t.graphql(a.apiKey, DeleteWebhook, { id: hookId })).body.data!.deleteWebhook).toEqual({
      deletedWebhookId: hookId,
      userErrors: [],
    });
  });

  it('webhook deliveries: A sees its real delivery, B never sees A’s webhook nor its deliveries', async () => {
    const aHook = (await t.graphql(a.apiKey, CreateSucceededWebhook, { url: receiver.url('/hooks/a-deliveries') })).body
      .data!.createWebhook.webhook!.id;
    const bHook = (await t.graphql(b.apiKey, CreateSucceededWebhook, { url: receiver.url('/hooks/b-deliveries') })).body
      .data!.createWebhook.webhook!.id;
    try {
      const run = await t.runTool(a.apiKey, '/api/v1/scrape/maps', DENVER_DENTISTS);
      const runId = run.start.runId as string;
      // A: the delivery reached the receiver and is logged as succeeded.
      const aHooks = await waitFor(
        async () => (await t.graphql(a.apiKey, Deliveries)).body.data!.webhooks.nodes,
        (hooks) =>
          hooks
            .find((h) => h.id === aHook)
            ?.deliveries.nodes.some((d) => d.runId === runId && d.status === 'SUCCEEDED') ?? false,
        { what: 'A’s delivery to succeed' },
      );
      const delivered = aHooks.find((h) => h.id === aHook)!.deliveries.nodes;
      expect(delivered).toContainEqual({
        id: expect.any(String),
        runId,
        event: 'RUN_SUCCEEDED',
        status: 'SUCCEEDED',
        responseStatus: 200,
      });
      const deliveryId = delivered.find((d) => d.runId === runId)!.id;
      expect((await t.graphql(a.apiKey, NodeId, { id: deliveryId })).body.data!.node).toEqual({ id: deliveryId });
      expect((await t.graphql(b.apiKey, NodeId, { id: deliveryId })).body.data!.node).toBeNull();
      expect(receiver.received.some((r) => r.path === '/hooks/a-deliveries' && r.body.includes(runId))).toBe(true);

      // B: only its own webhook, with nothing of A's.
      const bView = await t.graphql(b.apiKey, Deliveries);
      expect(bView.body.errors).toBeUndefined();
      const bHooks = bView.body.data!.webhooks.nodes;
      expect(bHooks.map((h) => h.id)).toEqual([bHook]);
      expect(bHooks[0]!.deliveries.nodes).toEqual([]);
      expect(JSON.stringify(bView.body)).not.toContain(runId);
      expect(JSON.stringify(bView.body)).not.toContain(aHook);
      expect(receiver.received.some((r) => r.path === '/hooks/b-deliveries')).toBe(false);
      // The REST face of the same log.
      expect((await t.request('GET', `/api/v1/webhooks/${aHook}/deliveries`, { key: b.apiKey })).body).toEqual({
        error: { code: 'not_found', message: 'Webhook not found' },
      });
    } finally {
      await t.graphql(a.apiKey, DeleteWebhook, { id: aHook });
      await t.graphql(b.apiKey, DeleteWebhook, { id: bHook });
    }
  });
});

type RunEvent = ResultOf<typeof RunEvents>['runEvents'];
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED-OUT'];

/**
 * Starts small runs of `key`, one after the other, until `sub` has seen one of them: from then on the
 * subscription is surely listening. Returns the probe runs (all ended).
 */
async function untilListening(sub: Collected<RunEvent>, key: string): Promise<string[]> {
  const probes: string[] = [];
  await waitFor(
    async () => {
      if (sub.items.some((e) => probes.includes(e.run.id))) return true;
      const last = probes.at(-1);
      if (!last || TERMINAL.includes((await t.request('GET', `/api/v1/scrape/status/${last}`, { key })).body.status)) {
        const started = await t.request('POST', '/api/v1/scrape/maps', { key, body: DENVER_DENTISTS });
        expect(started.status, started.text).toBe(200);
        probes.push(started.body.runId);
      }
      return false;
    },
    Boolean,
    { intervalMs: 50, what: 'the subscription to see a probe run' },
  );
  for (const id of probes) await t.waitForRun(key, id);
  return probes;
}

describe('graphql-ws: another account’s runs', () => {
  it('runItems of A’s run by B is a NOT_FOUND error with none of A’s rows', async () => {
    // A itself gets the rows: the subscription works for the owner.
    const own = collect(wsClient(t.url, a.apiKey), RunItems, { id: aFinished.runId }, 'runItems');
    expect((await own.done).flatMap((batch) => batch.results)).toEqual(
      aFinished.rows.map((row) => ({ placeId: row.place_id })),
    );

    for (const id of [aFinished.runId, 'run_that_does_not_exist', HOSTILE_RUN_ID]) {
      const sub = collect(wsClient(t.url, b.apiKey), RunItems, { id }, 'runItems');
      const error = await sub.done.then(
        () => undefined,
        (err: Error) => err,
      );
      expect(error, `runItems(${id}) ended without an error`).toBeInstanceOf(Error);
      expect(error!.message).toContain('"code":"NOT_FOUND"');
      expect(error!.message).not.toContain(aFinished.rows[0]!.place_id);
      expect(sub.items).toEqual([]);
    }
    await expectNothingInjected();
  });

  it('runEvents of B carries B’s runs only, never A’s', async () => {
    const bEvents = collect(wsClient(t.url, b.apiKey), RunEvents, {}, 'runEvents');
    const aEvents = collect(wsClient(t.url, a.apiKey), RunEvents, {}, 'runEvents');
    // Neither stream may fail; a rejection would fail the assertions below.
    const failures: unknown[] = [];
    bEvents.done.catch((err) => failures.push(err));
    aEvents.done.catch((err) => failures.push(err));
    try {
      const bProbes = await untilListening(bEvents, b.apiKey);
      const aProbes = await untilListening(aEvents, a.apiKey);

      // A's runs end before B's run starts: notifications arrive in commit order, so any of A's events
      // that leaked to B would reach B before the end of B's run.
      const aRuns: string[] = [];
      for (let i = 0; i < 3; i++) {
        const started = await t.request('POST', '/api/v1/scrape/maps', {
          key: a.apiKey,
          body: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 20 + i },
        });
        expect(started.status).toBe(200);
        aRuns.push(started.body.runId);
      }
      for (const id of aRuns) expect((await t.waitForRun(a.apiKey, id)).status).toBe('SUCCEEDED');
      const bRun = (await t.request('POST', '/api/v1/scrape/maps', { key: b.apiKey, body: DENVER_DENTISTS })).body
        .runId as string;
      await waitFor(() => bEvents.items.some((e) => e.kind === 'FINISHED' && e.run.id === bRun), Boolean, {
        what: 'B’s run to finish on B’s stream',
      });
      // A's stream did carry A's runs to their end.
      await waitFor(
        () => aRuns.every((id) => aEvents.items.some((e) => e.kind === 'FINISHED' && e.run.id === id)),
        Boolean,
        { what: 'A’s runs to finish on A’s stream' },
      );

      expect(failures).toEqual([]);
      const bSeen = new Set(bEvents.items.map((e) => e.run.id));
      const bOwn = new Set([...bProbes, bRun]);
      expect([...bSeen].filter((id) => !bOwn.has(id))).toEqual([]);
      for (const id of [...aRuns, ...aProbes, aFinished.runId])
        expect(bSeen.has(id), `B saw A's run ${id}`).toBe(false);
      expect(bEvents.items.filter((e) => e.run.id === bRun).map((e) => e.kind)).toEqual(
        expect.arrayContaining(['CREATED', 'FINISHED']),
      );
      const aSeen = new Set(aEvents.items.map((e) => e.run.id));
      for (const id of [...bProbes, bRun]) expect(aSeen.has(id), `A saw B's run ${id}`).toBe(false);
      expect((await t.waitForRun(b.apiKey, bRun)).status).toBe('SUCCEEDED');
    } finally {
      bEvents.stop();
      aEvents.stop();
    }
  });
});

describe('MCP: another account’s run', () => {
  it('over HTTP (/mcp with B’s key): check_run_status, download_results and cancel_run are tool errors not_found; A’s run is unaffected', async () => {
    const held = await heldRun(a.apiKey);
    const client = await connectMcp(b.apiKey);
    await expectMcpNotFound(client, held.runId);
    await expectUntouchedAndFinishes(held);
    // A's own key on the same face reads the run.
    const mine = await callTool(await connectMcp(a.apiKey), 'download_results', { runId: aFinished.runId, limit: 5 });
    expect(mine.isError).toBe(false);
    expect(mine.body.rows).toEqual(aFinished.rows.slice(0, 5));
  });

  it('over stdio (`leadgate mcp` with B’s key): the same tool errors not_found; A’s run is unaffected', async () => {
    const held = await heldRun(a.apiKey);
    const { client, stderr } = await spawnStdioMcp(b.apiKey);
    await expectMcpNotFound(client, held.runId);
    await expectUntouchedAndFinishes(held);
    expect(stderr()).toBe('');
  });
});
