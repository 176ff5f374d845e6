import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackConfig } from '../../src/config.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { has, parseMetrics, sum, type Sample } from '../helpers/metrics.ts';
import { killServices, spawnService } from '../helpers/process.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { collect, closeCode, disposeClients, wsClient } from '../helpers/ws.ts';
import { graphql } from '../helpers/gql/index.ts';

/**
 * GET /metrics: every face measured by route pattern and status, refusals, runs started and
 * finished, job and run latencies, queue depth read from the database, webhook deliveries by outcome,
 * the event fan-out; protected by METRICS_TOKEN; a standalone worker's own registry on METRICS_PORT.
 * Counters are compared before and after (the registry is the test process's, shared by its apps).
 */

const TOKEN = 'metrics-token-of-the-test';

// A request is named after its root fields, not the operation's name (src/http/metrics.ts).
const Viewer = graphql(`query MetricsViewer { viewer { id } }`);
const ViewerAndRuns = graphql(`query MetricsViewerAndRuns { viewer { id } runs(first: 1) { totalCount } }`);
const RunProgress = graphql(`subscription MetricsRunProgress($id: ID!) { runProgress(id: $id) { status } }`);

let receiver: Receiver;
let t: TestApp;
let key: string;

beforeAll(async () => {
  // A webhook receiver: 200 on /ok, 500 on /fail.
  receiver = await startReceiver({ status: (path) => (path === '/ok' ? 200 : 500) });
  const network = {
    ...loopbackConfig('postgres://unused', 0).network,
    webPorts: { http: receiver.port, https: receiver.port },
    outboundAllow: [`127.0.0.1:${receiver.port}`],
  };
  t = await startTestApp({ config: { metricsToken: TOKEN, rateLimitPerMinute: 40, network } });
  ({ apiKey: key } = await t.account());
});
afterAll(async () => {
  await disposeClients();
  await killServices();
  await t?.stop();
  await receiver?.close();
});

async function scrape(url = t.url, token: string | undefined = TOKEN): Promise<{ samples: Sample[]; text: string }> {
  const res = await fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return { samples: parseMetrics(text), text };
}

/** Polls /metrics until `done` accepts the samples (metrics of events arrive after the commit). */
const scrapeUntil = (done: (samples: Sample[]) => boolean, url = t.url) =>
  waitFor(async () => (await scrape(url)).samples, done, { what: 'the metrics to show it', intervalMs: 50 });

/** Starts a maps run over REST and waits (reading the database, not the rate-limited API) for its end. */
async function runMaps(apiKey: string, body: unknown = DENVER_DENTISTS) {
  const res = await t.request('POST', '/api/v1/scrape/maps', { key: apiKey, body });
  expect(res.status, res.text).toBe(200);
  const runId = res.body.runId as string;
  await waitFor(
    async () => (await t.app.core.sql`select finished_at from run where id = ${runId}`)[0]?.finished_at,
    Boolean,
    { what: `run ${runId} to end` },
  );
  return runId;
}

describe('GET /metrics', () => {
  it('asks for METRICS_TOKEN as a Bearer token when it is set', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const res = await fetch(`${t.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(res.status, authorization).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect((await res.json()).error.code).toBe('unauthenticated');
    }
    const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('# TYPE leadgate_requests_total counter');
    // Node's own metrics come with it.
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it('samples the event loop every 100 ms, not 100 times a second', async () => {
    const scrape = async () =>
      await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    // Each scrape restarts the delay histogram; the next one shows the intervals between samples since.
    await scrape();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const min = Number(/^nodejs_eventloop_lag_min_seconds (\S+)$/m.exec(await scrape())?.[1]);
    expect(min).toBeGreaterThanOrEqual(0.09);
    expect(min).toBeLessThan(1);
  });

  it('is open when METRICS_TOKEN is not set', async () => {
    const open = await startTestApp({ worker: false });
    try {
      const res = await fetch(`${open.url}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('leadgate_requests_total');
    } finally {
      await open.stop();
    }
  });
});

describe('requests by face, route pattern and status', () => {
  it('counts REST answers under their route pattern, never the URL, with a latency histogram', async () => {
    const runId = await runMaps(key);
    const route = { face: 'rest', route: '/api/v1/scrape/status/:runId', method: 'GET' };
    const before = (await scrape()).samples;
    for (let i = 0; i < 3; i++)
      expect((await t.request('GET', `/api/v1/scrape/status/${runId}`, { key })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/scrape/status/no-such-run', { key })).status).toBe(404);
    const { samples, text } = await scrape();
    expect(
      sum(samples, 'leadgate_requests_total', { ...route, status: '200' }) -
        sum(before, 'leadgate_requests_total', { ...route, status: '200' }),
    ).toBe(3);
    expect(
      sum(samples, 'leadgate_requests_total', { ...route, status: '404' }) -
        sum(before, 'leadgate_requests_total', { ...route, status: '404' }),
    ).toBe(1);
    expect(
      sum(samples, 'leadgate_request_duration_seconds_count', { ...route, status: '200' }) -
        sum(before, 'leadgate_request_duration_seconds_count', { ...route, status: '200' }),
    ).toBe(3);
    expect(has(samples, 'leadgate_request_duration_seconds_bucket', { ...route, status: '200', le: '+Inf' })).toBe(
      true,
    );
    expect(text).not.toContain(runId);
    expect(text).not.toContain('no-such-run');
  });

  it('counts a path no route serves as `unmatched`, by the face its prefix names', async () => {
    const before = (await scrape()).samples;
    const secretish = `probe-${Date.now()}`;
    expect((await fetch(`${t.url}/api/v1/${secretish}`)).status).toBe(404);
    expect((await fetch(`${t.url}/${secretish}`)).status).toBe(404);
    const { samples, text } = await scrape();
    const delta = (labels: Record<string, string>) =>
      sum(samples, 'leadgate_requests_total', labels) - sum(before, 'leadgate_requests_total', labels);
    expect(delta({ face: 'rest', route: 'unmatched', status: '404' })).toBe(1);
    expect(delta({ face: 'other', route: 'unmatched', status: '404' })).toBe(1);
    expect(text).not.toContain(secretish);
  });

  it('names a GraphQL request over HTTP after its operation', async () => {
    const before = (await scrape()).samples;
    expect((await t.graphql(key, Viewer)).status).toBe(200);
    expect((await t.graphql(key, ViewerAndRuns)).status).toBe(200);
    // A document that does not validate answers 200 with errors to a client asking for application/json.
    const invalid = await t.graphql(key, '{ nope }');
    expect(invalid.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const { samples } = await scrape();
    const delta = (labels: Record<string, string>) =>
      sum(samples, 'leadgate_requests_total', labels) - sum(before, 'leadgate_requests_total', labels);
    expect(delta({ face: 'graphql', route: 'query viewer', method: 'POST', status: '200' })).toBe(1);
    expect(delta({ face: 'graphql', route: 'query viewer+…', method: 'POST', status: '200' })).toBe(1);
    // It never names an operation: the path is its route.
    expect(delta({ face: 'graphql', route: '/graphql', method: 'POST', status: String(invalid.status) })).toBe(1);
  });

  it('counts graphql-ws operations from the subscribe message to their first answer, and MCP requests', async () => {
    const runId = await runMaps(key);
    const before = (await scrape()).samples;
    // Not lazy: the socket stays open after the subscription, until disposed.
    const client = wsClient(t.url, key, { lazy: false });
    const progress = collect(client, RunProgress, { id: runId }, 'runProgress');
    expect((await progress.done).at(-1)!.status).toBe('SUCCEEDED');
    const mcp = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    await mcp.text();
    const { samples } = await scrape();
    const delta = (labels: Record<string, string>) =>
      sum(samples, 'leadgate_requests_total', labels) - sum(before, 'leadgate_requests_total', labels);
    expect(delta({ face: 'graphql-ws', route: 'subscription runProgress', method: 'SUBSCRIBE', status: '200' })).toBe(
      1,
    );
    expect(
      sum(samples, 'leadgate_request_duration_seconds_count', {
        face: 'graphql-ws',
        route: 'subscription runProgress',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(delta({ face: 'mcp', route: '/mcp', method: 'POST', status: '200' })).toBe(1);
    expect(sum(samples, 'leadgate_graphql_ws_connections')).toBe(1);
    await client.dispose();
    await scrapeUntil((s) => sum(s, 'leadgate_graphql_ws_connections') === 0);
  });
});

describe('refusals', () => {
  it('counts authentication refusals on every face, and rate-limit refusals', async () => {
    const before = (await scrape()).samples;
    const bad = 'lg_live_NotAKeyOfAnyAccount000000000';
    expect((await t.request('GET', '/api/v1/wallet', { key: bad })).status).toBe(401);
    expect((await t.graphql(bad, Viewer)).status).toBe(401);
    expect(
      (await fetch(`${t.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
        .status,
    ).toBe(401);
    const refused = wsClient(t.url, bad);
    const code = closeCode(refused);
    collect(refused, Viewer, {}, 'viewer').done.catch(() => {});
    expect(await code).toBe(4401);
    // A key of its own, over its budget of 40 a minute.
    const { apiKey: limited } = await t.account();
    let status = 0;
    for (let i = 0; i < 41 && status !== 429; i++)
      status = (await t.request('GET', '/api/v1/wallet', { key: limited })).status;
    expect(status).toBe(429);

    const samples = await scrapeUntil(
      (s) =>
        sum(s, 'leadgate_refusals_total', { face: 'graphql-ws' }) >
        sum(before, 'leadgate_refusals_total', { face: 'graphql-ws' }),
    );
    const delta = (labels: Record<string, string>) =>
      sum(samples, 'leadgate_refusals_total', labels) - sum(before, 'leadgate_refusals_total', labels);
    expect(delta({ face: 'rest', code: 'unauthenticated' })).toBe(1);
    expect(delta({ face: 'graphql', code: 'unauthenticated' })).toBe(1);
    expect(delta({ face: 'mcp', code: 'unauthenticated' })).toBe(1);
    expect(delta({ face: 'graphql-ws', code: 'unauthenticated' })).toBe(1);
    expect(delta({ face: 'rest', code: 'rate_limited' })).toBe(1);
  });
});

describe('runs, jobs, webhooks and events', () => {
  it('counts a run once when it starts and once when it ends, with its duration, first row and job', async () => {
    const { apiKey: own } = await t.account();
    // A start the wallet cannot pay for is rolled back: it never counts.
    const { apiKey: broke } = await t.account({ creditsMicros: 0n });
    const before = (await scrape()).samples;
    expect((await t.request('POST', '/api/v1/scrape/maps', { key: broke, body: DENVER_DENTISTS })).status).toBe(402);
    const runId = await runMaps(own);
    const samples = await scrapeUntil(
      (s) =>
        sum(s, 'leadgate_runs_finished_total', { tool: 'maps' }) >
        sum(before, 'leadgate_runs_finished_total', { tool: 'maps' }),
    );
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sum(samples, name, labels) - sum(before, name, labels);
    expect(delta('leadgate_runs_started_total', { tool: 'maps', status: 'RUNNING' })).toBe(1);
    expect(delta('leadgate_runs_started_total', { tool: 'maps' })).toBe(1);
    expect(delta('leadgate_runs_finished_total', { tool: 'maps', status: 'SUCCEEDED' })).toBe(1);
    expect(delta('leadgate_runs_finished_total')).toBe(1);
    expect(delta('leadgate_run_duration_seconds_count', { tool: 'maps', status: 'SUCCEEDED' })).toBe(1);
    expect(delta('leadgate_run_first_row_seconds_count', { tool: 'maps' })).toBe(1);
    expect(
      delta('leadgate_job_duration_seconds_count', { task: 'run_tool', outcome: 'success' }),
    ).toBeGreaterThanOrEqual(1);
    expect(delta('leadgate_job_wait_seconds_count', { task: 'run_tool' })).toBeGreaterThanOrEqual(1);
    // Every change of the run reached this process's subscribers through NOTIFY: at least its start and end.
    expect(delta('leadgate_event_fanout_seconds_count')).toBeGreaterThanOrEqual(2);
    const [run] = await t.app.core.sql`select item_count from run where id = ${runId}`;
    expect(run!.item_count).toBeGreaterThan(0);
  });

  it('counts webhook deliveries by outcome', async () => {
    const { apiKey: own } = await t.account();
    for (const path of ['/ok', '/fail']) {
      const created = await t.request('POST', '/api/v1/webhooks', {
        key: own,
        body: { url: receiver.url(path), events: ['run.succeeded'] },
      });
      expect(created.status, created.text).toBe(201);
    }
    const before = (await scrape()).samples;
    await runMaps(own);
    const delta = (s: Sample[], outcome: string) =>
      sum(s, 'leadgate_webhook_deliveries_total', { outcome }) -
      sum(before, 'leadgate_webhook_deliveries_total', { outcome });
    const samples = await scrapeUntil((s) => delta(s, 'delivered') >= 1 && delta(s, 'retrying') >= 1);
    expect(delta(samples, 'delivered')).toBe(1);
    expect(delta(samples, 'retrying')).toBe(1);
    expect(delta(samples, 'failed')).toBe(0);
  });
});

describe('queue depth, read from the database on scrape', () => {
  it('shows READY runs, active runs and jobs by task and state', async () => {
    // No worker, one running run per account: the first run holds its slot with its job waiting, the second waits READY.
    const q = await startTestApp({ worker: false, config: { maxRunningRuns: 1 } });
    try {
      const { apiKey: own } = await q.account();
      const before = (await scrape(q.url, undefined)).samples;
      for (let i = 0; i < 2; i++)
        expect((await q.request('POST', '/api/v1/scrape/maps', { key: own, body: DENVER_DENTISTS })).status).toBe(200);
      await q.app.core
        .sql`select graphile_worker.add_job('deliver_webhook', json_build_object('deliveryId', 'msg_later'), run_at => now() + interval '1 hour')`;
      const samples = await scrapeUntil(
        (s) =>
          sum(s, 'leadgate_runs_started_total', { tool: 'maps', status: 'READY' }) >
          sum(before, 'leadgate_runs_started_total', { tool: 'maps', status: 'READY' }),
        q.url,
      );
      expect(sum(samples, 'leadgate_database_up')).toBe(1);
      expect(sum(samples, 'leadgate_runs_waiting')).toBe(1);
      expect(sum(samples, 'leadgate_runs_active')).toBe(1);
      expect(sum(samples, 'leadgate_jobs', { task: 'run_tool', state: 'waiting' })).toBe(1);
      expect(sum(samples, 'leadgate_jobs', { task: 'run_tool', state: 'running' })).toBe(0);
      expect(sum(samples, 'leadgate_jobs', { task: 'deliver_webhook', state: 'scheduled' })).toBe(1);
      expect(
        sum(samples, 'leadgate_runs_started_total', { tool: 'maps', status: 'RUNNING' }) -
          sum(before, 'leadgate_runs_started_total', { tool: 'maps', status: 'RUNNING' }),
      ).toBe(1);
    } finally {
      await q.stop();
    }
  });
});

describe('a standalone worker', () => {
  it('serves its own registry on METRICS_PORT, with the jobs it ran and the runs it ended', async () => {
    const gateway = await startTestApp({ worker: false });
    try {
      const worker = spawnService(['src/cli/leadgate.mjs', 'worker'], {
        DATABASE_URL: gateway.database.url,
        METRICS_PORT: '0',
        HOST: '127.0.0.1',
        METRICS_TOKEN: TOKEN,
        LOG_LEVEL: 'info',
      });
      const url = /"url":"(http:\/\/[^"]+)","msg":"worker metrics and readiness served"/.exec(
        await worker.waitFor(/worker metrics and readiness served/),
      )![1]!;
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      // Readiness answers within its deadline, so on a loaded machine a first answer may be 503: it must become 200.
      const ready = await waitFor(
        async () => {
          const res = await fetch(`${url}/ready`);
          return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
        },
        (r) => r.status === 200,
        { timeoutMs: 20_000, intervalMs: 200, what: 'the worker to be ready' },
      );
      expect(ready.body.checks).toEqual({ database: 'ok', migrations: 'ok', worker: 'ok' });

      const { apiKey: own } = await gateway.account();
      const res = await gateway.request('POST', '/api/v1/scrape/maps', { key: own, body: DENVER_DENTISTS });
      expect(res.status).toBe(200);
      const samples = await scrapeUntil(
        (s) => sum(s, 'leadgate_runs_finished_total', { tool: 'maps', status: 'SUCCEEDED' }) === 1,
        url,
      );
      expect(sum(samples, 'leadgate_job_duration_seconds_count', { task: 'run_tool', outcome: 'success' })).toBe(1);
      expect(sum(samples, 'leadgate_run_first_row_seconds_count', { tool: 'maps' })).toBe(1);
      // The start was the gateway's: the worker's registry counts only what it did itself.
      expect(sum(samples, 'leadgate_runs_started_total')).toBe(0);
      worker.kill('SIGTERM');
      expect(await worker.exited()).toBe(0);
    } finally {
      await gateway.stop();
    }
  });
});
