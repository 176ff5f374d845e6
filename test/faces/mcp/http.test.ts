import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_PAGE_BYTES } from '../../../src/mcp/limits.ts';
import { TOOLS } from '../../../src/tools/index.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';

/** Map listings in several cities: a few hundred rows of about 700 bytes. */
const MANY_PLACES = {
  searchStringsArray: ['dentist', 'plumber', 'restaurant', 'bakery'],
  maxCrawledPlacesPerSearch: 80,
};

let t: TestApp;
let key: string;
let client: Client;
const clients: Client[] = [];

async function connect(apiKey?: string, headers: Record<string, string> = {}, query = ''): Promise<Client> {
  const c = new Client({ name: 'leadgate-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp${query}`), {
    requestInit: { headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...headers } },
  });
  await c.connect(transport);
  clients.push(c);
  return c;
}

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string; uri?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
}

/**
 * Calls a tool and returns its JSON answer: the first text content, which equals structuredContent
 * (an error has none: structured content is for answers), and the resource links after it.
 */
async function call(name: string, args: Record<string, unknown> = {}, c = client) {
  const answer = (await c.callTool({ name, arguments: args })) as ToolAnswer;
  const [text, ...rest] = answer.content;
  const body = JSON.parse(text!.text!);
  if (answer.isError) expect(answer.structuredContent).toBeUndefined();
  else expect(answer.structuredContent).toEqual(body);
  expect(rest.every((c) => c.type === 'resource_link')).toBe(true);
  return { isError: answer.isError === true, body, text: text!.text!, links: rest };
}

/** A browser app the operator lets call the gateway (CORS_ORIGINS). */
const APP_ORIGIN = 'https://app.example.com';

beforeAll(async () => {
  t = await startTestApp({ config: { corsOrigins: [APP_ORIGIN] } });
  ({ apiKey: key } = await t.account());
  client = await connect(key, {}, '?tools=all');
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t?.stop();
});

describe('MCP over Streamable HTTP at /mcp', () => {
  it("lists the spec's five tools, one per registry tool with its price, limits and input schema, and the account tools", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'scrape_maps',
        'check_run_status',
        'download_results',
        'query_lead_database',
        'validate_emails',
      ]),
    );
    expect(names).toEqual(
      expect.arrayContaining([
        'cancel_run',
        'get_wallet',
        'enrich_leads',
        'enrich_local_businesses',
        'scrape_store_leads',
        'find_emails',
      ]),
    );
    expect(new Set(names).size).toBe(names.length);
    for (const tool of TOOLS) {
      const listed = tools.find((l) => l.name === tool.mcp.name);
      if (tool.linkedOnly) {
        expect(listed, tool.name).toBeUndefined();
        continue;
      }
      expect(listed, tool.name).toBeDefined();
      expect(listed!.title).toBe(tool.title);
      expect(listed!.description).toContain(tool.price.text);
      const { $schema: _, ...fromRegistry } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' });
      // The tool's own arguments, and those of every start (the dataset's once, where the tool has its own).
      expect(Object.keys(listed!.inputSchema.properties!)).toEqual([
        ...new Set([...Object.keys((fromRegistry as { properties: object }).properties), 'datasetName', 'onlyNew']),
        'waitSecs',
        'idempotencyKey',
        'fields',
        'maxCostUsd',
      ]);
      expect(listed!.outputSchema).toMatchObject({ type: 'object' });
      expect(listed!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    }
    const leadScraper = tools.find((l) => l.name === 'scrape_leads_from_url')!;
    expect(leadScraper.inputSchema.properties!.count).toMatchObject({ minimum: 500, maximum: 50000 });
    const status = tools.find((l) => l.name === 'check_run_status')!;
    expect(status.inputSchema.properties!.waitSecs).toMatchObject({ type: 'integer', maximum: 45 });
    const download = tools.find((l) => l.name === 'download_results')!;
    expect(download.inputSchema.properties!.limit).toMatchObject({ maximum: 100 });
    expect(download.description).toMatch(/100 rows or 50 KB/);
    expect(download.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('runs scrape_maps to SUCCEEDED and pages through its rows with nextOffset, as the REST download has them', async () => {
    const started = await call('scrape_maps', MANY_PLACES);
    expect(started.isError).toBe(false);
    expect(started.body).toMatchObject({
      runId: expect.any(String),
      status: 'RUNNING',
      estimatedCost: expect.any(Number),
    });
    const runId = started.body.runId as string;

    let status = (await call('check_run_status', { runId, waitSecs: 30 })).body;
    for (let i = 0; status.status !== 'SUCCEEDED' && i < 5; i++)
      status = (await call('check_run_status', { runId, waitSecs: 30 })).body;
    expect(status).toMatchObject({ runId, status: 'SUCCEEDED', nextStep: expect.stringContaining('download_results') });
    // The REST status route's view, without the link that needs the key.
    const restStatus = (await t.request('GET', `/api/v1/scrape/status/${runId}`, { key })).body;
    expect(status).not.toHaveProperty('outputUrl');
    expect(status).toMatchObject({
      handled: restStatus.handled,
      cost: restStatus.cost,
      billedUnits: restStatus.billed_units,
      rows: expect.any(Number),
    });

    const rest = await t.request('GET', `/api/downloads/${runId}?format=json`, { key });
    expect(rest.status).toBe(200);
    // Enough rows that 100 of them are over 50 KB.
    expect(rest.body.length).toBeGreaterThan(150);
    expect(Buffer.byteLength(JSON.stringify(rest.body.slice(0, 100)))).toBeGreaterThan(MAX_PAGE_BYTES);

    const pageThrough = async (limit?: number) => {
      const rows: unknown[] = [];
      const sizes: number[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const page = await call('download_results', { runId, offset, ...(limit ? { limit } : {}) });
        expect(page.isError).toBe(false);
        expect(page.body).toMatchObject({ runId, offset, count: page.body.rows.length });
        expect(page.body.rows.length).toBeGreaterThan(0);
        expect(page.body.rows.length).toBeLessThanOrEqual(limit ?? 100);
        expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(MAX_PAGE_BYTES);
        rows.push(...page.body.rows);
        sizes.push(page.body.rows.length);
        offset = page.body.nextOffset;
        expect(offset === null || offset === rows.length).toBe(true);
      }
      return { rows, sizes };
    };
    const small = await pageThrough(40);
    expect(small.rows).toEqual(rest.body);
    expect(small.sizes.slice(0, -1).every((n) => n === 40)).toBe(true);
    // Pages of the default 100 rows are cut at 50 KB and go on where they stopped.
    const full = await pageThrough();
    expect(full.rows).toEqual(rest.body);
    expect(Math.max(...full.sizes)).toBeLessThan(100);
  });

  it('answers refusals as tool errors with the REST code and message', async () => {
    const bad = await call('scrape_maps', { maxCrawledPlacesPerSearch: 0 });
    const rest = await t.request('POST', '/api/v1/scrape/maps', { key, body: { maxCrawledPlacesPerSearch: 0 } });
    expect(rest.status).toBe(400);
    expect(bad.isError).toBe(true);
    expect(bad.body).toEqual(rest.body);
    expect(bad.body.nextTool).toBeUndefined();
    expect(bad.body.error.code).toBe('validation_failed');

    const wait = await call('check_run_status', { runId: 'run_x', waitSecs: 60 });
    expect(wait).toMatchObject({
      isError: true,
      body: { error: { code: 'validation_failed', details: [{ path: 'waitSecs', message: 'must be at most 45' }] } },
    });

    const missing = await call('download_results', { runId: 'run_missing' });
    expect(missing.isError).toBe(true);
    expect(missing.body).toEqual((await t.request('GET', '/api/downloads/run_missing?format=json', { key })).body);
    expect(missing.body.error.code).toBe('not_found');

    const poor = await t.account({ creditsMicros: 0n });
    const broke = await call('scrape_maps', DENVER_DENTISTS, await connect(poor.apiKey));
    expect(broke).toMatchObject({
      isError: true,
      body: { error: { code: 'insufficient_funds' }, nextTool: 'get_wallet' },
    });
    // In the tools' words: no route, no status number.
    expect(broke.body.error.message).toMatch(/Top up the wallet in the console \(Billing\)/);
    expect(broke.text).not.toMatch(/\/api\/|\b402\b/);
  });

  it('serves the account, database and enrichment tools like their REST routes', async () => {
    expect((await call('get_wallet')).body).toEqual((await t.request('GET', '/api/v1/wallet', { key })).body);

    const query = { hasEmail: true, limit: 3 };
    const leads = await call('query_lead_database', query);
    const restLeads = await t.request('POST', '/api/v1/database/leads', { key, body: query });
    expect(leads.isError).toBe(false);
    expect(leads.body.leads).toEqual(restLeads.body.leads);
    expect(leads.body.pagination).toEqual(restLeads.body.pagination);
    expect(leads.body.leads).toHaveLength(3);

    const enrich = { rows: [{ email: restLeads.body.leads[0].email }, { domain: 'nowhere.invalid' }], preview: true };
    expect((await call('enrich_leads', enrich)).body).toEqual(
      (await t.request('POST', '/api/v1/enrich', { key, body: enrich })).body,
    );
    const places = { rows: [{ phone: '+1 000 000 0000' }], preview: true };
    expect((await call('enrich_local_businesses', places)).body).toEqual(
      (await t.request('POST', '/api/v1/enrich/local-businesses', { key, body: places })).body,
    );

    const started = await call('scrape_maps', DENVER_DENTISTS);
    await t.waitForRun(key, started.body.runId);
    // Cancelling is idempotent: a run that has ended is answered as it ended.
    expect(await call('cancel_run', { runId: started.body.runId })).toMatchObject({
      isError: false,
      body: { runId: started.body.runId, status: 'SUCCEEDED' },
    });

    // A tool the plan does not include is not offered, and calling it anyway names tools/list.
    const starter = await connect((await t.account({ plan: 'starter' })).apiKey, {}, '?tools=all');
    expect((await starter.listTools()).tools.map((tool) => tool.name)).not.toContain('query_lead_database');
    await expect(starter.callTool({ name: 'query_lead_database', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('tools/list'),
    });
  });

  it('refuses a request without a valid key with 401, the REST error body and WWW-Authenticate, and counts keyed ones against the rate limit', async () => {
    await expect(connect()).rejects.toMatchObject({ code: 401, message: expect.stringContaining('unauthenticated') });
    await expect(connect('lg_live_00000000000000000000000000000000')).rejects.toMatchObject({
      code: 401,
      message: expect.stringContaining('Unknown or revoked API key'),
    });

    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const headers = { accept: 'application/json, text/event-stream' };
    const anonymous = await t.request('POST', '/mcp', { body: init, headers });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(anonymous.body).toEqual({ error: { code: 'unauthenticated', message: expect.any(String) } });

    const keyed = await t.request('POST', '/mcp', { key, body: init, headers });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('ratelimit')).toMatch(/remaining=\d+/);
    expect(keyed.body.result.serverInfo.name).toBe('leadgate');

    const get = await t.request('GET', '/mcp', { key });
    expect(get.status).toBe(405);
    expect(get.body.error.code).toBe('method_not_allowed');
  });

  it('validates Origin (DNS rebinding): a foreign one is 403 with a JSON-RPC error before the key is looked at; no Origin, the gateway’s own and CORS_ORIGINS work', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const accept = 'application/json, text/event-stream';
    const foreign = 'https://evil.example';
    for (const request of [
      { method: 'POST', key, body: init },
      { method: 'POST', key: undefined, body: init },
      { method: 'GET', key, body: undefined },
      { method: 'DELETE', key, body: undefined },
    ]) {
      const refused = await t.request(request.method, '/mcp', {
        key: request.key,
        body: request.body,
        headers: { accept, origin: foreign },
      });
      expect(refused.status, `${request.method} ${request.key ? 'with' : 'without'} a key`).toBe(403);
      expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
      expect(refused.body).toEqual({
        jsonrpc: '2.0',
        error: { code: -32000, message: expect.stringContaining(foreign) },
        id: null,
      });
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    }
    // A page whose name was rebound to the gateway's address sends that name as Host too: not believed.
    // (fetch sends its own Host, so this one goes through node:http.)
    const rebound = await new Promise<number>((resolve, reject) => {
      const { hostname, port } = new URL(t.url);
      const headers = {
        host: 'rebound.example:4000',
        origin: 'http://rebound.example:4000',
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept,
      };
      const req = httpRequest({ hostname, port, path: '/mcp', method: 'POST', headers }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end(JSON.stringify(init));
    });
    expect(rebound).toBe(403);

    for (const origin of [undefined, new URL(t.app.core.config.publicUrl).origin, APP_ORIGIN]) {
      const answered = await t.request('POST', '/mcp', {
        key,
        body: init,
        headers: { accept, ...(origin ? { origin } : {}) },
      });
      expect(answered.status, String(origin)).toBe(200);
      expect(answered.body.result.serverInfo.name).toBe('leadgate');
      const c = await connect(key, origin ? { origin } : {});
      expect((await c.listTools()).tools.length).toBeGreaterThan(5);
    }
  });
});
