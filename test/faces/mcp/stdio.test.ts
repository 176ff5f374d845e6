import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';
import { ROOT } from '../../helpers/process.ts';
import { waitFor } from '../../helpers/wait.ts';

let t: TestApp;
let key: string;
const clients: Client[] = [];
let stderr = '';

/** `npx leadgate mcp` as a local MCP client starts it: a child process speaking MCP on stdio. */
async function spawnClient(args: string[], env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['src/cli/leadgate.mjs', 'mcp', ...args],
    cwd: ROOT,
    env: {
      ...(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)) as Record<string, string>),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'leadgate-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const answer = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { type: string; text?: string; uri?: string }[];
    structuredContent?: unknown;
  };
  const body = JSON.parse(answer.content[0]!.text!);
  if (answer.isError) expect(answer.structuredContent).toBeUndefined();
  else expect(answer.structuredContent).toEqual(body);
  return { isError: answer.isError === true, body, links: answer.content.slice(1) };
}

beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key } = await t.account());
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t?.stop();
});

describe('npx leadgate mcp (stdio, a client of the REST API)', () => {
  it('lists the tools, runs scrape_maps to SUCCEEDED and pages through the rows the REST download has', async () => {
    const client = await spawnClient(['--url', t.url, '--key', key, '--tools', 'all']);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining([
        'scrape_maps',
        'check_run_status',
        'download_results',
        'query_lead_database',
        'validate_emails',
      ]),
    );

    const started = await call(client, 'scrape_maps', DENVER_DENTISTS);
    expect(started).toMatchObject({ isError: false, body: { runId: expect.any(String), status: 'RUNNING' } });
    const runId = started.body.runId as string;
    let status = (await call(client, 'check_run_status', { runId, waitSecs: 30 })).body;
    for (let i = 0; status.status !== 'SUCCEEDED' && i < 5; i++)
      status = (await call(client, 'check_run_status', { runId, waitSecs: 30 })).body;
    expect(status.status).toBe('SUCCEEDED');
    const restStatus = (await t.request('GET', `/api/v1/scrape/status/${runId}`, { key })).body;
    expect(status).toMatchObject({
      runId,
      handled: restStatus.handled,
      cost: restStatus.cost,
      rows: expect.any(Number),
    });
    // The finished run's file, as a signed link the user can open without the key.
    const ended = await call(client, 'check_run_status', { runId });
    expect(ended.links).toEqual([expect.objectContaining({ type: 'resource_link', mimeType: 'text/csv' })]);
    const csv = await fetch(ended.links[0]!.uri!);
    expect(csv.status).toBe(200);
    expect(await csv.text()).toBe((await t.request('GET', `/api/downloads/${runId}?format=csv`, { key })).text);

    const rest = await t.request('GET', `/api/downloads/${runId}?format=json`, { key });
    const rows: unknown[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page = await call(client, 'download_results', { runId, offset, limit: 5 });
      expect(page.isError).toBe(false);
      rows.push(...page.body.rows);
      offset = page.body.nextOffset;
    }
    expect(rows.length).toBeGreaterThan(5);
    expect(rows).toEqual(rest.body);

    expect((await call(client, 'get_wallet')).body).toEqual((await t.request('GET', '/api/v1/wallet', { key })).body);
    // Nothing but protocol messages went to stdout (the client would have failed to parse them), and no errors were logged.
    expect(stderr).toBe('');
  });

  it('quotes a start and refuses one over maxCostUsd, as the remote server does', async () => {
    const client = await spawnClient(['--url', t.url, '--key', key, '--tools', 'maps']);
    const quote = await call(client, 'quote', { tool: 'scrape_maps', arguments: DENVER_DENTISTS });
    expect(quote).toEqual({
      isError: false,
      links: [],
      body: {
        tool: 'scrape_maps',
        estimatedCost: 0.99,
        walletCovers: true,
        message: 'A start would hold 0.99 USD, the most it can cost; the wallet covers it.',
      },
    });
    const capped = await call(client, 'scrape_maps', { ...DENVER_DENTISTS, maxCostUsd: 0.5 });
    expect(capped).toMatchObject({
      isError: true,
      body: { error: { code: 'cost_limit_exceeded', details: [{ path: 'maxCostUsd' }] }, nextTool: 'quote' },
    });
    const started = await call(client, 'scrape_maps', { ...DENVER_DENTISTS, maxCostUsd: 0.99 });
    expect(started.body).toMatchObject({ runId: expect.any(String), estimatedCost: 0.99 });
    await call(client, 'cancel_run', { runId: started.body.runId });
  });

  it('stops waiting for a run as soon as the client cancels the call', async () => {
    // A gateway without a worker: its runs stay RUNNING, so a wait for one lasts the wait.
    const idle = await startTestApp({ worker: false });
    try {
      const own = await idle.account();
      const runId = (await idle.request('POST', '/api/v1/scrape/maps', { key: own.apiKey, body: DENVER_DENTISTS })).body
        .runId as string;
      // The run's waits open on the gateway, counted as they open and close.
      const events = idle.app.core.events;
      const subscribe = events.subscribe.bind(events);
      let waiting = 0;
      events.subscribe = (async (topic: 'runProgress', id: string) => {
        const subscription = await subscribe(topic, id);
        if (id !== runId) return subscription;
        waiting++;
        const close = subscription.return.bind(subscription);
        subscription.return = (value) => {
          waiting--;
          return close(value);
        };
        return subscription;
      }) as typeof events.subscribe;
      const client = await spawnClient(['--url', idle.url, '--key', own.apiKey]);
      const controller = new AbortController();
      const call = client.callTool({ name: 'check_run_status', arguments: { runId, waitSecs: 45 } }, undefined, {
        signal: controller.signal,
      });
      await waitFor(
        () => waiting,
        (n) => n === 1,
        { what: 'the wait to reach the gateway' },
      );
      controller.abort();
      await expect(call).rejects.toThrow();
      // The stdio server heard notifications/cancelled and hung up on the gateway, which stopped waiting.
      await waitFor(
        () => waiting,
        (n) => n === 0,
        { what: 'the gateway to stop waiting', timeoutMs: 15_000 },
      );
    } finally {
      await idle.stop();
    }
  });

  it('surfaces REST errors as tool errors with the same code and message', async () => {
    const client = await spawnClient([], { LEADGATE_URL: t.url, LEADGATE_API_KEY: key });
    const invalid = await call(client, 'scrape_maps', { maxCrawledPlacesPerSearch: 0 });
    expect(invalid.isError).toBe(true);
    expect(invalid.body).toEqual(
      (await t.request('POST', '/api/v1/scrape/maps', { key, body: { maxCrawledPlacesPerSearch: 0 } })).body,
    );
    expect(invalid.body.error.code).toBe('validation_failed');

    const missing = await call(client, 'check_run_status', { runId: 'run_nope' });
    expect(missing).toMatchObject({ isError: true, body: { error: { code: 'not_found', message: 'Run not found' } } });
    const waitTooLong = await call(client, 'check_run_status', { runId: 'run_nope', waitSecs: 46 });
    expect(waitTooLong).toMatchObject({ isError: true, body: { error: { code: 'validation_failed' } } });

    const revoked = await spawnClient(['--url', t.url, '--key', 'lg_live_00000000000000000000000000000000']);
    const refused = await call(revoked, 'get_wallet');
    expect(refused).toMatchObject({ isError: true, links: [] });
    expect(refused.body).toEqual({ error: { code: 'unauthenticated', message: 'Unknown or revoked API key' } });
  });
});
