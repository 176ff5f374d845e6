import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { loopbackConfig } from '../../../src/config.ts';
import { createLogger } from '../../../src/logger.ts';
import { executeRun } from '../../../src/runs/engine/index.ts';
import { advancePipeline } from '../../../src/workflows/pipeline-run.ts';
import { TOOLS } from '../../../src/tools/index.ts';
import { ENDPOINTS } from '../../../src/endpoints/index.ts';
import { TOOLSETS } from '../../../src/tools/toolsets.ts';
import { mapsTool } from '../../../src/tools/maps.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';
import { runCount } from '../../helpers/runs.ts';
import { gatedSources } from '../../helpers/sources.ts';

/**
 * The MCP server as an agent meets it, through the official SDK client only: a short default tool
 * list, toolsets and read-only, answers checked against their output schemas (the client validates
 * every structuredContent), waiting with progress, cancellation, retries and cost limits.
 * The worker is off: the test runs each run itself, page by page where it needs a run in flight.
 */

let t: TestApp;
let key: string;
let accountId: string;
const clients: Client[] = [];

/** Every byte the client read from the server, summed over the connections of a test. */
let bytesRead = 0;
const countingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const copy = response.clone();
  void copy
    .arrayBuffer()
    .then((body) => {
      bytesRead += body.byteLength;
    })
    .catch(() => {});
  return response;
};

async function connect(query = '', headers: Record<string, string> = {}, apiKey = key): Promise<Client> {
  const client = new Client({ name: 'agent-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp${query}`), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}`, ...headers } },
      fetch: countingFetch,
    }),
  );
  clients.push(client);
  return client;
}

type Answer = {
  isError?: boolean;
  content: { type: string; text?: string; uri?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
};

const bodyOf = (answer: Answer) => JSON.parse(answer.content[0]!.text!) as Record<string, unknown>;

/** Runs the account's run in this process (no worker): its pages pass as `gate` lets them, or at once. */
const execute = (runId: string, gate?: ReturnType<typeof gatedSources>) =>
  executeRun(gate ? { ...t.app.core, sources: gate.sources } : t.app.core, runId);

/** Two columns of the map scraper's rows. */
const TWO_COLUMNS = mapsTool.columns.slice(0, 2).map((c) => c.key);

/** Text that speaks REST, the internal specification or HTTP rather than the tools. */
const NOT_AN_AGENTS_WORDS = /\/api\/|\bspec\b|\b(?:HTTP|status|with|answers) [1-5]\d\d\b|\b[45]\d\d [a-z]+_[a-z_]+/i;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key, accountId } = await t.account({ plan: 'scale' }));
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t?.stop();
});

describe('every tool', () => {
  it('answers its example with structured content the SDK client validates against its output schema', async () => {
    // An account of its own: the runs started here stay RUNNING, taking no other test's slots.
    const own = await t.account({ plan: 'scale' });
    const client = await connect('?tools=all', {}, own.apiKey);
    // The tools about individuals run once the account has acknowledged their permissible use.
    expect((await client.callTool({ name: 'acknowledge_permissible_use', arguments: {} })).isError).toBeFalsy();
    const { tools } = await client.listTools();
    const examples = new Map<string, Record<string, unknown>>([
      ...TOOLS.filter((tool) => !tool.linkedOnly).map(
        (tool) => [tool.mcp.name, tool.example as Record<string, unknown>] as const,
      ),
      // The map scraper's run names the dataset the dataset tools' examples read, clear and delete.
      ['scrape_maps', { ...(mapsTool.example as Record<string, unknown>), datasetName: 'dentists' }],
      ...ENDPOINTS.flatMap((e) =>
        e.mcp ? [[e.mcp.tool, (e.mcp.example ?? e.rest.example ?? {}) as Record<string, unknown>] as const] : [],
      ),
    ]);
    const called: string[] = [];
    const callAs = async (name: string, args: Record<string, unknown>) => {
      // The client throws when structuredContent does not fit the tool's outputSchema.
      const answer = (await client.callTool({ name, arguments: args })) as Answer;
      expect(answer.isError, `${name}: ${answer.content[0]?.text}`).toBeFalsy();
      expect(answer.structuredContent, name).toEqual(bodyOf(answer));
      called.push(name);
      return answer.structuredContent!;
    };
    let runId = '';
    let pipelineId = '';
    // These take the pipeline start_pipeline starts, called below once it has.
    const ofThePipeline = ['get_pipeline', 'cancel_pipeline', 'download_pipeline'];
    // These need a provider connection (a local provider's), which test/destinations makes and calls them with.
    const ofAConnection = ['create_destination', 'disconnect', 'get_delivery'];
    for (const tool of tools) {
      const example = examples.get(tool.name);
      if (!example || ofThePipeline.includes(tool.name) || ofAConnection.includes(tool.name)) continue;
      const answer = await callAs(tool.name, example);
      if (tool.name === 'scrape_maps') runId = String(answer.runId);
      if (tool.name === 'start_pipeline') pipelineId = (answer.pipeline as { id: string }).id;
    }
    await callAs('get_pipeline', { pipeline: pipelineId });
    await callAs('cancel_pipeline', { pipeline: pipelineId });
    // With no worker here, the cancelled step is run to its end and the pipeline moved on by hand.
    const [step] = await t.app.core.sql`select id from run where pipeline_id = ${pipelineId}`;
    await execute(String(step?.id));
    await advancePipeline(t.app.core, pipelineId);
    await callAs('download_pipeline', { pipeline: pipelineId, format: 'csv' });
    await execute(runId);
    await callAs('quote', { tool: 'scrape_maps', arguments: DENVER_DENTISTS });
    await callAs('check_run_status', { runId });
    await callAs('download_results', { runId, limit: 2, fields: TWO_COLUMNS });
    await callAs('cancel_run', { runId });
    expect(called.sort()).toEqual(
      tools
        .map((tool) => tool.name)
        .filter((name) => !ofAConnection.includes(name))
        .sort(),
    );
  });
});

describe('the tool list', () => {
  it('is at most 32 KB by default; toolsets and read-only choose from it, and every tool has an output schema', async () => {
    const all = (await (await connect('?tools=all')).listTools()).tools;
    expect(all.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(TOOLS.filter((tool) => !tool.linkedOnly).map((tool) => tool.mcp.name)),
    );
    for (const tool of all) {
      expect(tool.outputSchema, tool.name).toMatchObject({ type: 'object' });
      for (const text of [tool.description ?? '', ...JSON.stringify(tool.inputSchema).split('"description":')])
        expect(text, tool.name).not.toMatch(NOT_AN_AGENTS_WORDS);
    }

    const byDefault = await (await connect()).listTools();
    expect(Buffer.byteLength(JSON.stringify(byDefault))).toBeLessThanOrEqual(32 * 1024);
    expect(byDefault.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['scrape_maps', 'find_emails', 'validate_emails', 'check_run_status', 'get_wallet']),
    );
    expect(byDefault.tools.length).toBeLessThan(all.length);

    const database = (await (await connect('?tools=database')).listTools()).tools.map((tool) => tool.name);
    expect(database).toEqual(expect.arrayContaining(['query_lead_database', 'find_people', 'check_run_status']));
    expect(database).not.toContain('scrape_maps');

    const headers = await (
      await connect('', { 'X-MCP-Toolsets': 'maps,account', 'X-MCP-Tools': 'validate_emails' })
    ).listTools();
    expect(headers.tools.map((tool) => tool.name).sort()).toEqual(
      [
        'cancel_run',
        'check_run_status',
        'download_results',
        'get_wallet',
        'quote',
        'scrape_local_reviews',
        'scrape_maps',
        'validate_emails',
      ].sort(),
    );

    const readOnly = (await (await connect('?tools=all&readonly=1')).listTools()).tools;
    expect(readOnly.length).toBeGreaterThan(0);
    expect(readOnly.every((tool) => tool.annotations?.readOnlyHint === true)).toBe(true);
    expect(readOnly.map((tool) => tool.name)).toEqual(expect.arrayContaining(['check_run_status', 'quote']));

    // A toolset name it does not know is ignored; a tool name it does not know is refused.
    expect((await (await connect('?tools=maps,someday')).listTools()).tools.length).toBeGreaterThan(0);
    await expect(connect('?tools=scrape_everything')).rejects.toThrow(/scrape_everything/);
    expect(Object.keys(TOOLSETS)).toContain('maps');
  });
});

describe('the dentists task', () => {
  it('waits for the run with progress, answers its first rows, and links a CSV the user can open without a key', async () => {
    bytesRead = 0;
    const client = await connect();
    const gate = gatedSources(t.app.core.sources);
    const progress: Progress[] = [];
    const call = client.callTool(
      { name: 'scrape_maps', arguments: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 120, waitSecs: 45 } },
      undefined,
      { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
    );
    // The start is answered only when the run ends: find it, then let its pages through one by one.
    let runId: string | undefined;
    while (!runId) {
      const [row] = await t.app.core.sql<{ id: string }[]>`select id from run where account_id = ${accountId}
        and status = 'RUNNING' order by created_at desc limit 1`;
      runId = row?.id;
      if (!runId) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    gate.release(0);
    const execution = execute(runId, gate);
    await gate.reachedPage(1);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    gate.releaseAll();
    await execution;
    const answer = (await call) as Answer;

    expect(answer.isError).toBeFalsy();
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]!.message).toMatch(/^RUNNING: /);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress);
    const body = bodyOf(answer);
    expect(body).toMatchObject({
      runId,
      status: 'SUCCEEDED',
      run: { complete: true, stoppedReason: null, rows: expect.any(Number) },
      results: { offset: 0, total: expect.any(Number) },
    });
    const { count, total } = body.results as { count: number; total: number };
    expect(count).toBe(Math.min(20, total));
    const link = answer.content.find((c) => c.type === 'resource_link')!;
    expect(link).toMatchObject({ mimeType: 'text/csv', uri: expect.stringContaining(runId) });
    const csv = await fetch(link.uri!);
    expect(csv.status).toBe(200);
    expect(await csv.text()).toBe((await t.request('GET', `/api/downloads/${runId}?format=csv`, { key })).text);

    // The columns asked for, and how many rows there are.
    const page = (await client.callTool({
      name: 'download_results',
      arguments: { runId, limit: 5, fields: [...TWO_COLUMNS] },
    })) as Answer;
    expect(page.structuredContent).toMatchObject({ count: 5, total: (body.run as { rows: number }).rows });
    for (const row of page.structuredContent!.rows as Record<string, unknown>[])
      expect(Object.keys(row).sort()).toEqual([...TWO_COLUMNS].sort());
    expect(bytesRead).toBeGreaterThan(0);
  });
});

describe('long work and money', () => {
  it('stops a waiting call within a second of the client cancelling it, over HTTP', async () => {
    const client = await connect();
    const started = bodyOf((await client.callTool({ name: 'scrape_maps', arguments: DENVER_DENTISTS })) as Answer);
    const controller = new AbortController();
    let ended = 0;
    let answered: Promise<unknown> | undefined;
    const watching = new Client({ name: 'cancel-test', version: '1.0.0' });
    await watching.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
        // Records when the server has ended its answer to the waiting call (the original POST).
        fetch: (input, init) => {
          const response = fetch(input, init);
          if (typeof init?.body === 'string' && init.body.includes('"waitSecs":45'))
            answered = response
              .then((r) => r.clone().arrayBuffer())
              .then(() => {
                ended = Date.now();
              });
          return response;
        },
      }),
    );
    clients.push(watching);
    const waiting = watching.callTool(
      { name: 'check_run_status', arguments: { runId: started.runId, waitSecs: 45 } },
      undefined,
      { signal: controller.signal },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cancelledAt = Date.now();
    controller.abort('the user changed their mind');
    await expect(waiting).rejects.toThrow();
    await answered;
    expect(ended).toBeGreaterThan(0);
    expect(ended - cancelledAt).toBeLessThan(1000);
    await execute(String(started.runId));
  });

  it('a cancellation that reaches another gateway process than the waiting call still stops it', async () => {
    const databaseUrl = t.app.core.config.databaseUrl!;
    const other = await buildApp({
      config: loopbackConfig(databaseUrl, 0, { authCacheSecs: 0, rateLimitPerMinute: 100_000 }),
      databaseUrl,
      logger: createLogger('silent'),
      worker: false,
    });
    const otherUrl = await other.start(0, '127.0.0.1');
    try {
      const client = await connect();
      const started = bodyOf((await client.callTool({ name: 'scrape_maps', arguments: DENVER_DENTISTS })) as Answer);
      // The session starts on this gateway; the waiting call goes to it, the cancellation to the other.
      let sessionId = '';
      const split = new Client({ name: 'split-test', version: '1.0.0' });
      let waitEnded = 0;
      let answered: Promise<void> | undefined;
      await split.connect(
        new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
          fetch: (input, init) => {
            const body = typeof init?.body === 'string' ? init.body : '';
            const target = body.includes('notifications/cancelled') ? String(input).replace(t.url, otherUrl) : input;
            const response = fetch(target, init);
            if (body.includes('"waitSecs":45'))
              answered = response
                .then((r) => r.clone().arrayBuffer())
                .then(() => {
                  waitEnded = Date.now();
                });
            void response.then((r) => {
              sessionId ||= r.headers.get('mcp-session-id') ?? '';
            });
            return response;
          },
        }),
      );
      clients.push(split);
      const controller = new AbortController();
      const waiting = split.callTool(
        { name: 'check_run_status', arguments: { runId: started.runId, waitSecs: 45 } },
        undefined,
        { signal: controller.signal },
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const cancelledAt = Date.now();
      controller.abort('stop');
      await expect(waiting).rejects.toThrow();
      await answered;
      expect(sessionId).toMatch(/^mcs_/);
      expect(waitEnded - cancelledAt).toBeLessThan(1000);
      await execute(String(started.runId));
    } finally {
      await other.stop();
    }
  });

  it('starts one run for a retried start with the same idempotencyKey, and refuses a start over maxCostUsd', async () => {
    const client = await connect();
    const before = await runCount(t.app.core.sql, accountId);
    const args = { ...DENVER_DENTISTS, idempotencyKey: 'dentists-denver-1' };
    const first = bodyOf((await client.callTool({ name: 'scrape_maps', arguments: args })) as Answer);
    const retry = bodyOf((await client.callTool({ name: 'scrape_maps', arguments: args })) as Answer);
    expect(retry.runId).toBe(first.runId);
    expect(await runCount(t.app.core.sql, accountId)).toBe(before + 1);

    const quote = (await client.callTool({
      name: 'quote',
      arguments: { tool: 'scrape_maps', arguments: DENVER_DENTISTS },
    })) as Answer;
    expect(quote.structuredContent).toMatchObject({ tool: 'scrape_maps', estimatedCost: 0.99, walletCovers: true });
    const capped = (await client.callTool({
      name: 'scrape_maps',
      arguments: { ...DENVER_DENTISTS, maxCostUsd: 0.5 },
    })) as Answer;
    expect(capped.isError).toBe(true);
    expect(bodyOf(capped)).toMatchObject({ error: { code: 'cost_limit_exceeded' }, nextTool: 'quote' });
    expect(capped.content[0]!.text).not.toMatch(NOT_AN_AGENTS_WORDS);
    expect(await runCount(t.app.core.sql, accountId)).toBe(before + 1);
    await execute(String(first.runId));
  });

  it('says why a run cut short by the wallet stopped: budget_exhausted, not complete', async () => {
    const poor = await t.account({ creditsMicros: 100_000n });
    const client = await connect('', {}, poor.apiKey);
    const started = bodyOf((await client.callTool({ name: 'scrape_maps', arguments: DENVER_DENTISTS })) as Answer);
    expect(started.uncappedCost).toBeGreaterThan(started.estimatedCost as number);
    await execute(String(started.runId));
    const ended = (await client.callTool({ name: 'check_run_status', arguments: { runId: started.runId } })) as Answer;
    expect(ended.structuredContent).toMatchObject({
      status: 'SUCCEEDED',
      complete: false,
      stoppedReason: 'budget_exhausted',
      nextStep: expect.stringContaining('top up'),
    });
  });
});
