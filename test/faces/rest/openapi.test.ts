import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it, type RunnerTask } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { buildOpenApiDocument, OPENAPI_PATH, restRouteDocs, type OpenApiDocument } from '../../../src/rest/openapi.ts';
import { TOOLS } from '../../../src/tools/index.ts';
import { tokenDigest } from '../../../src/config/operator.ts';
import { DENVER_DENTISTS, startTestApp, type ApiResponse, type TestApp } from '../../helpers/app.ts';
import { getWithBody } from '../../helpers/get-with-body.ts';

let t: TestApp;
let key: string;
let doc: OpenApiDocument;

/** The parts of an operation of the document that the tests read. */
interface OperationDoc {
  description: string;
  'x-price': { text: string };
  requestBody: { content: Record<string, { example?: unknown; schema?: unknown }> };
  responses: Record<string, { content: Record<string, { example?: unknown }> }>;
}
let ajv: Ajv2020;
const OPERATOR_TOKEN = 'operator-token-of-the-openapi-suite-0123456789';

/** Routes of the server that are not REST: GraphQL (and its GraphiQL page's files), MCP and the operators' routes (docs/operations.md) have contracts of their own. */
// /hooks/stripe is Stripe's to call (signed events, docs/payments.md), not part of the API.
/**
 * The REST face is everything under /api, with the operator API under /operator; the other routes are other faces (GraphQL, MCP, the
 * console's pages and its sign-in routes, Stripe's events, the operator's probes), each documented on
 * its own (docs/graphql.md, docs/console.md, docs/payments.md, docs/operations.md).
 */
const isRest = (path: string) => path.startsWith('/api/') || path.startsWith('/operator/');

/** Every METHOD path the server registered, read from Fastify's route tree. */
function registeredRoutes(): Set<string> {
  const routes = new Set<string>();
  const stack: string[] = [];
  for (const line of t.app.http.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([^)]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    const path = `${stack.at(-1) ?? ''}${match[2]}`;
    stack.push(path);
    for (const method of match[3]?.split(', ') ?? []) {
      if (method !== 'HEAD' && method !== 'OPTIONS' && method !== '-' && isRest(path)) routes.add(`${method} ${path}`);
    }
  }
  return routes;
}

const pointer = (...parts: string[]) =>
  parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
const validators = new Map<string, ValidateFunction>();
/** What each (operation, status) check has covered, for the coverage assertions below. */
const checked = new Set<string>();

/** A validator of the schema the document declares for a response. */
function schemaOf(method: string, path: string, status: number, type: string): ValidateFunction {
  const ref = `openapi#/${pointer('paths', path, method, 'responses', String(status), 'content', type, 'schema')}`;
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  return validate;
}

/**
 * Checks a real response against the document: the status is declared for the operation, and the
 * body validates against the schema declared for its content type.
 */
function expectDocumented(method: string, path: string, res: ApiResponse) {
  const operation = doc.paths[path]?.[method] as
    | { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }
    | undefined;
  expect(operation, `${method} ${path} is documented`).toBeDefined();
  const declared = operation!.responses[String(res.status)];
  expect(
    declared,
    `${method.toUpperCase()} ${path} answered ${res.status}, which is not documented: ${res.text.slice(0, 300)}`,
  ).toBeDefined();
  checked.add(`${method} ${path} ${res.status}`);
  if (res.status === 204) return;
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  expect(declared!.content?.[type], `${method} ${path} ${res.status} declares ${type}`).toBeDefined();
  if (!type.includes('json')) return;
  const validate = schemaOf(method, path, res.status, type);
  const valid = validate(res.body);
  expect(
    valid,
    `${method.toUpperCase()} ${path} ${res.status}: ${ajv.errorsText(validate.errors)}\n${res.text.slice(0, 500)}`,
  ).toBe(true);
}

/** Calls the API and checks the answer against the document; `path` is the document's path of the route. */
async function api(
  method: 'get' | 'post' | 'delete',
  path: string,
  options: Parameters<TestApp['request']>[2] & { url?: string } = {},
) {
  const res = await t.request(method.toUpperCase(), options.url ?? path, options);
  expectDocumented(method, path, res);
  return res;
}

beforeAll(async () => {
  // Tool runs stay on this machine: the email and web tools reach nothing but a closed local port.
  const network = {
    ...loadConfig({}).network,
    dnsServers: ['127.0.0.1:9'],
    dnsTimeoutMs: 200,
    smtpTimeoutMs: 200,
    webTimeoutMs: 200,
    outboundAllow: ['127.0.0.1:9'],
  };
  t = await startTestApp({ config: { network, operatorTokenSha256: tokenDigest(OPERATOR_TOKEN) } });
  ({ apiKey: key } = await t.account());
  doc = (await t.request('GET', OPENAPI_PATH)).body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(doc, 'openapi');
});
afterAll(() => t?.stop());

const testsOf = (task: RunnerTask): RunnerTask[] => (task.type === 'suite' ? task.tasks.flatMap(testsOf) : [task]);

/**
 * Coverage of the file as a whole: every route family answered a success and an error somewhere in
 * its tests. Checked once all of them have run and passed, in whatever order; a filtered run, or one
 * where a test failed (reported by that test), checks nothing more.
 */
// biome-ignore lint/correctness/noEmptyPattern: vitest reads a hook's fixtures from an object pattern; this one takes none
afterAll(({}, file) => {
  if (!file.tasks.flatMap(testsOf).every((task) => task.result?.state === 'pass')) return;
  const families = new Map<string, { ok: boolean; error: boolean }>();
  for (const route of restRouteDocs()) families.set(route.tag, { ok: false, error: false });
  for (const entry of checked) {
    const [method, path, status] = entry.split(' ');
    const route = restRouteDocs().find(
      (r) => r.method === method && r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}') === path,
    )!;
    const family = families.get(route.tag)!;
    if (Number(status) < 300) family.ok = true;
    else family.error = true;
  }
  expect(Object.fromEntries(families), 'a success and an error of every route family were checked').toEqual(
    Object.fromEntries([...families.keys()].map((k) => [k, { ok: true, error: k !== 'Meta' }])),
  );
});

describe('the OpenAPI document', () => {
  it('is served without a key and is a valid OpenAPI 3.1 document', async () => {
    const res = await api('get', OPENAPI_PATH);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      buildOpenApiDocument({ serverUrl: t.app.core.config.publicUrl, limits: t.app.core.config }),
    );
    expect(res.body.openapi).toBe('3.1.0');
    const result = await new Validator().validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(res.body.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(res.body.components.schemas.Error.properties.error.required).toEqual(['code', 'message']);
  });

  it('states the limits its gateway is configured with', async () => {
    const other = await startTestApp({ worker: false, config: { rateLimitPerMinute: 7, maxRunningRuns: 3 } });
    try {
      const served: OpenApiDocument = (await other.request('GET', OPENAPI_PATH)).body;
      const info = served.info as { description: string };
      expect(info.description).toContain('Limits: 7 requests per minute per API key');
      expect(info.description).toContain('3 running runs per account');
      expect(info.description).not.toContain('100 requests per minute');
      const limited = (served.paths['/api/v1/wallet']!.get as OperationDoc).responses['429']!;
      const example = limited.content['application/json']!.example as { error: { message: string } };
      expect(example.error.message).toBe('Too many requests: the limit is 7 per minute per API key. Retry in 12 s.');
    } finally {
      await other.stop();
    }
  });

  it('gives schemas that refuse what the routes do not answer', () => {
    const wallet = schemaOf('get', '/api/v1/wallet', 200, 'application/json');
    const balances = {
      balance_dollars: '48.00',
      purchased_credits_dollars: '0.00',
      total_balance_dollars: '48.00',
      held_dollars: '0.99',
    };
    expect(wallet({ wallet: balances, payments: { mode: 'demo' } })).toBe(true);
    expect(wallet({ wallet: { ...balances, balance_dollars: 48 }, payments: { mode: 'demo' } })).toBe(false);
    expect(wallet({ wallet: { ...balances, held_dollars: undefined }, payments: { mode: 'demo' } })).toBe(false);
    const error = schemaOf('get', '/api/v1/wallet', 401, 'application/json');
    expect(error({ error: { code: 'unauthenticated', message: 'Send your API key' } })).toBe(true);
    expect(error({ error: { code: 'unauthenticated' } })).toBe(false);
    // details has one shape: an array of {path, message}.
    expect(
      error({
        error: { code: 'no_usable_filters', message: 'm', details: [{ path: 'url', message: 'foo[]=bar: …' }] },
      }),
    ).toBe(true);
    expect(error({ error: { code: 'no_usable_filters', message: 'm', details: { applied: [] } } })).toBe(false);
    expect(error({ message: 'unauthenticated' })).toBe(false);
  });

  it('documents every REST route the server registers, and no other', () => {
    const documented = new Set(restRouteDocs().map((r) => `${r.method.toUpperCase()} ${r.path}`));
    const registered = registeredRoutes();
    expect(registered.size).toBeGreaterThan(30);
    expect(
      [...registered].filter((r) => !documented.has(r)),
      'registered but not documented',
    ).toEqual([]);
    expect(
      [...documented].filter((r) => !registered.has(r)),
      'documented but not registered',
    ).toEqual([]);
  });

  it('describes each tool route with its price, an example body that starts a run, and its input schema', () => {
    for (const tool of TOOLS.filter((x) => !x.linkedOnly)) {
      const operation = doc.paths[tool.rest.path]!.post as OperationDoc;
      expect(operation.description, tool.name).toContain(`**Price:** ${tool.price.text}`);
      expect(operation['x-price'].text).toBe(tool.price.text);
      const example = operation.requestBody.content['application/json']!.example;
      expect(example, `${tool.name} declares an example`).toBeDefined();
      expect(example).toEqual(tool.example);
      const parsed = tool.input.safeParse(example);
      expect(parsed.error, `${tool.name} example`).toBeUndefined();
      expect(() => tool.describeStart(parsed.data, { plan: 'scale', subscriptionStatus: 'ACTIVE' })).not.toThrow();
      const components = doc.components as { schemas: Record<string, { properties: Record<string, unknown> }> };
      expect(operation.requestBody.content['application/json']!.schema).toEqual({
        $ref: `#/components/schemas/${tool.graphql.inputType}`,
      });
      expect(Object.keys(components.schemas[tool.graphql.inputType]!.properties)).toContain('webhookUrl');
    }
  });
});

describe('real responses match the declared schemas', () => {
  /** A finished run, read (never changed) by the run routes' checks. */
  let runId: string;
  beforeAll(async () => {
    runId = (await api('post', '/api/v1/scrape/maps', { key, body: DENVER_DENTISTS })).body.runId;
    await t.waitForRun(key, runId);
  });

  it("tool starts: every tool's example, and its refusals", async () => {
    for (const tool of TOOLS.filter((x) => !x.linkedOnly)) {
      for (const path of [tool.rest.path, ...(tool.rest.aliases ?? []).map((a) => a.path)]) {
        const res = await api('post', path, { key, body: tool.example });
        expect(res.status, `${path}: ${res.text}`).toBe(200);
      }
      expect(
        (await api('post', tool.rest.path, { key, body: { unknownParameter: 1, webhookUrl: 'ftp://x' } })).status,
      ).toBe(400);
    }
    const withHook = await api('post', '/api/v1/scrape/techstack', {
      key,
      body: { technology: 'Klaviyo', webhookUrl: 'https://hooks.example.invalid/run' },
    });
    expect(withHook.body.webhookSecret).toMatch(/^whsec_/);
    expect((await api('post', '/api/v1/scrape/maps', { body: DENVER_DENTISTS })).status).toBe(401);
    expect(
      (
        await api('post', '/api/v1/scrape/maps', {
          key,
          rawBody: '{"searchStringsArray": [',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await api('post', '/api/v1/scrape/maps', {
          key,
          rawBody: '<maps/>',
          headers: { 'content-type': 'application/xml' },
        })
      ).status,
    ).toBe(415);
    const poor = await t.account({ creditsMicros: 0n });
    expect((await api('post', '/api/v1/scrape/maps', { key: poor.apiKey, body: DENVER_DENTISTS })).status).toBe(402);
    const headers = { 'idempotency-key': 'openapi-test-1' };
    expect((await api('post', '/api/v1/scrape/maps', { key, body: DENVER_DENTISTS, headers })).status).toBe(200);
    const replay = await api('post', '/api/v1/scrape/maps', { key, body: DENVER_DENTISTS, headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(
      (
        await api('post', '/api/v1/scrape/maps', {
          key,
          body: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 5 },
          headers,
        })
      ).status,
    ).toBe(422);
  });

  it('run status, cancel, downloads and the overview routes', async () => {
    // A run that stays READY: started while the account may run none, by an account with no other run to end.
    const waiting = await t.account();
    const { maxRunningRuns } = t.app.core.config;
    t.app.core.config.maxRunningRuns = 0;
    let running: string;
    try {
      running = (await t.request('POST', '/api/v1/scrape/maps', { key: waiting.apiKey, body: DENVER_DENTISTS })).body
        .runId;
    } finally {
      t.app.core.config.maxRunningRuns = maxRunningRuns;
    }
    const status = '/api/v1/scrape/status/{runId}';
    expect((await api('get', status, { key, url: `/api/v1/scrape/status/${runId}` })).body.status).toBe('SUCCEEDED');
    expect((await api('get', status, { key, url: `/api/v1/scrape/status/${runId}?waitForFinish=1` })).status).toBe(200);
    expect((await api('get', status, { key, url: `/api/v1/scrape/status/${runId}?waitForFinish=61` })).status).toBe(
      400,
    );
    expect((await api('get', status, { key, url: '/api/v1/scrape/status/run_unknown' })).status).toBe(404);

    const download = '/api/downloads/{runId}';
    for (const format of ['json', 'csv', 'ndjson']) {
      expect((await api('get', download, { key, url: `/api/downloads/${runId}?format=${format}` })).status).toBe(200);
    }
    expect((await api('get', download, { key, url: `/api/downloads/${runId}?format=xml` })).status).toBe(400);
    expect((await api('get', download, { key: waiting.apiKey, url: `/api/downloads/${running}` })).status).toBe(409);
    expect((await api('get', download, { key, url: '/api/downloads/run_unknown' })).status).toBe(404);
    const clock = t.app.core.clock;
    t.app.core.clock = () => new Date(Date.now() + 49 * 3_600_000);
    try {
      expect((await api('get', download, { key, url: `/api/downloads/${runId}` })).status).toBe(410);
      expect(
        (await api('get', '/api/v1/runs/{runId}/results', { key, url: `/api/v1/runs/${runId}/results` })).status,
      ).toBe(410);
    } finally {
      t.app.core.clock = clock;
    }

    expect(
      (await api('post', '/api/v1/maps/run', { key, body: { query: 'dentists in Denver, CO', limit: 5 } })).status,
    ).toBe(200);
    expect((await api('post', '/api/v1/maps/run', { key, body: { limit: 5 } })).status).toBe(400);
    expect((await api('get', '/api/v1/runs/{runId}', { key, url: `/api/v1/runs/${runId}` })).status).toBe(200);
    expect((await api('get', '/api/v1/runs/{runId}', { key, url: '/api/v1/runs/run_unknown' })).status).toBe(404);
    expect(
      (await api('get', '/api/v1/runs/{runId}/results', { key, url: `/api/v1/runs/${runId}/results` })).body.length,
    ).toBeGreaterThan(0);
    expect(
      (await api('get', '/api/v1/runs/{runId}', { key: waiting.apiKey, url: `/api/v1/runs/${running}` })).body.status,
    ).toBe('READY');
    expect(
      (
        await api('get', '/api/v1/runs/{runId}/results', {
          key: waiting.apiKey,
          url: `/api/v1/runs/${running}/results`,
        })
      ).status,
    ).toBe(409);

    const cancel = '/api/v1/scrape/cancel/{runId}';
    expect(
      (await api('post', cancel, { key: waiting.apiKey, url: `/api/v1/scrape/cancel/${running}` })).body.status,
    ).toBe('ABORTED');
    expect((await api('post', cancel, { key, url: `/api/v1/scrape/cancel/${runId}` })).status).toBe(409);
    expect((await api('post', cancel, { key, url: '/api/v1/scrape/cancel/run_unknown' })).status).toBe(404);
  });

  it('wallet, credits and the lead scraper status', async () => {
    expect((await api('get', '/api/v1/wallet', { key })).status).toBe(200);
    expect((await api('get', '/api/v1/wallet', { key: 'lg_live_nope' })).status).toBe(401);
    expect((await api('post', '/api/v1/buy-credits', { key, body: { amount: 49 } })).body.was_adjusted).toBe(true);
    expect((await api('post', '/api/v1/buy-credits', { key, body: { amount: 5 } })).status).toBe(400);
    const trial = await t.account({ subscriptionStatus: 'TRIAL' });
    expect((await api('post', '/api/v1/buy-credits', { key: trial.apiKey, body: { amount: 100 } })).status).toBe(403);
    expect((await api('get', '/api/v1/apollo-status', { key })).status).toBe(200);
    const ledger = await api('get', '/api/v1/wallet/ledger', { key, url: '/api/v1/wallet/ledger?limit=2' });
    expect(ledger.body.entries.length).toBe(2);
    expect(
      (await api('get', '/api/v1/wallet/ledger', { key, url: `/api/v1/wallet/ledger?after=${ledger.body.next_after}` }))
        .status,
    ).toBe(200);
    expect((await api('get', '/api/v1/wallet/ledger', { key, url: '/api/v1/wallet/ledger?limit=500' })).status).toBe(
      400,
    );
  });

  it('the database APIs, GET and POST', async () => {
    const leads = '/api/v1/database/leads';
    const page = await api('get', leads, {
      key,
      url: `${leads}?hasEmail=true&limit=5&seniority=vp&seniority=director`,
    });
    expect(page.body.leads.length).toBeGreaterThan(0);
    const link = 'https://app.apollo.io/#/people?personTitles[]=ceo&personLocations[]=United%20States';
    expect(
      (await api('post', leads, { key, body: { url: link, limit: 3, after: '0' } })).body.search_translation.applied
        .length,
    ).toBeGreaterThan(0);
    expect(
      (await api('post', leads, { key, body: { url: 'https://app.apollo.io/#/people?personTitles=ceo' } })).body.error
        .code,
    ).toBe('unsupported_url_format');
    expect((await api('get', leads, { key, url: `${leads}?nope=1` })).status).toBe(400);
    const unusable = await api('post', leads, {
      key,
      body: { url: 'https://app.apollo.io/#/people?sortByField=name' },
    });
    expect(unusable.body.search_translation.ignored).toEqual(['sortByField']);
    expect((await api('get', leads, { key, url: `${leads}?title=${'x'.repeat(17_000)}` })).status).toBe(414);
    const starter = await t.account({ plan: 'starter' });
    expect((await api('get', leads, { key: starter.apiKey })).status).toBe(403);
    await t.app.core.sql`update dataset_state set ready = false where dataset = 'companies'`;
    try {
      const refused = await api('post', leads, { key, body: { keywords: ['saas'] } });
      expect(refused.status).toBe(409);
      expect(refused.body.filters_not_applied_yet).toEqual(['keywords']);
    } finally {
      await t.app.core.sql`update dataset_state set ready = true where dataset = 'companies'`;
    }

    for (const path of ['/api/v1/database/local-businesses', '/api/v1/database/stores']) {
      expect((await api('get', path, { key, url: `${path}?limit=5` })).status).toBe(200);
      expect((await api('post', path, { key, body: { limit: 5, after: 0 } })).status).toBe(200);
      expect((await api('post', path, { key, body: { limit: 500 } })).status).toBe(400);
      expect((await api('get', path, { key: starter.apiKey })).status).toBe(403);
    }
  });

  it('the enrichment tools', async () => {
    const [lead] = (await t.request('GET', '/api/v1/database/leads?hasEmail=true&limit=1', { key })).body.leads;
    const rows = [{ email: lead.email, note: 'kept' }, { domain: lead.company_domain }, { mobile: '+1 000 000 0000' }];
    expect((await api('post', '/api/v1/enrich', { key, body: { rows } })).body.summary.total).toBe(3);
    expect((await api('post', '/api/v1/enrich', { key, body: { rows, preview: true } })).body.preview).toBe(true);
    expect((await api('post', '/api/v1/enrich', { key, body: { rows: [] } })).status).toBe(400);
    // The spec's heading says GET: the same body is served by GET.
    const byGet = await getWithBody(t.url, '/api/v1/enrich', { key, body: { rows } });
    expectDocumented('get', '/api/v1/enrich', byGet);
    expect(byGet.body.summary.total).toBe(3);

    const [place] = (await t.request('GET', '/api/v1/database/local-businesses?hasPhone=true&limit=1', { key })).body
      .businesses;
    const places = [{ phone: place.phone }, { name: place.name, city: place.city }, { website: 'nowhere.invalid' }];
    expect(
      (await api('post', '/api/v1/enrich/local-businesses', { key, body: { rows: places } })).body.summary.matched,
    ).toBeGreaterThan(0);
    expect(
      (await api('post', '/api/v1/enrich/local-businesses', { key, body: { rows: places, preview: true } })).status,
    ).toBe(200);
    const growth = await t.account({ plan: 'growth' });
    expect(
      (await api('post', '/api/v1/enrich/local-businesses', { key: growth.apiKey, body: { rows: places } })).status,
    ).toBe(403);
    const placesByGet = await getWithBody(t.url, '/api/v1/enrich/local-businesses', {
      key,
      body: { rows: places, preview: true },
    });
    expectDocumented('get', '/api/v1/enrich/local-businesses', placesByGet);
    expect(placesByGet.body.preview).toBe(true);
    const typo = await getWithBody(t.url, '/api/v1/enrich/local-businesses', {
      key,
      body: { rows: places, preveiw: true },
    });
    expectDocumented('get', '/api/v1/enrich/local-businesses', typo);
    expect(typo.body.error.details).toEqual([
      { path: 'preveiw', message: 'unknown field preveiw; did you mean preview?' },
    ]);
  });

  it('the webhook routes', async () => {
    const created = await api('post', '/api/v1/webhooks', {
      key,
      body: { url: 'https://hooks.example.invalid/leadgate', events: ['run.succeeded'], description: 'test' },
    });
    expect(created.status).toBe(201);
    expect((await api('post', '/api/v1/webhooks', { key, body: { url: 'ftp://example.com' } })).status).toBe(400);
    expect((await api('get', '/api/v1/webhooks', { key })).body.webhooks).toHaveLength(1);
    const id = created.body.webhook.id as string;
    expect(
      (await api('get', '/api/v1/webhooks/{id}/deliveries', { key, url: `/api/v1/webhooks/${id}/deliveries?limit=5` }))
        .status,
    ).toBe(200);
    expect(
      (
        await api('get', '/api/v1/webhooks/{id}/deliveries', {
          key,
          url: `/api/v1/webhooks/${id}/deliveries?limit=500`,
        })
      ).status,
    ).toBe(400);
    expect((await api('delete', '/api/v1/webhooks/{id}', { key, url: `/api/v1/webhooks/${id}` })).status).toBe(204);
    expect((await api('delete', '/api/v1/webhooks/{id}', { key, url: `/api/v1/webhooks/${id}` })).status).toBe(404);
  });

  it('the dataset routes', async () => {
    const started = await api('post', '/api/v1/scrape/email-validator', {
      key,
      body: { emails: ['ann@example.com'], datasetName: 'checked', onlyNew: true },
    });
    expect(started.status).toBe(200);
    await t.waitForRun(key, started.body.runId);
    expect((await api('get', '/api/v1/datasets', { key })).body.datasets).toHaveLength(1);
    const one = (url: string) => ({ key, url });
    expect((await api('get', '/api/v1/datasets/{id}', one('/api/v1/datasets/checked'))).status).toBe(200);
    expect((await api('get', '/api/v1/datasets/{id}', one('/api/v1/datasets/nope'))).status).toBe(404);
    const rows = await api('get', '/api/v1/datasets/{id}/rows', one('/api/v1/datasets/checked/rows?limit=10'));
    expect(rows.body.rows).toHaveLength(1);
    const badRows = await api('get', '/api/v1/datasets/{id}/rows', one('/api/v1/datasets/checked/rows?limit=5000'));
    expect(badRows.status).toBe(400);
    const file = await api('get', '/api/v1/datasets/{id}/export', one('/api/v1/datasets/checked/export?format=json'));
    expect(file.body).toEqual(rows.body.rows);
    const badFile = await api('get', '/api/v1/datasets/{id}/export', one('/api/v1/datasets/checked/export?format=xml'));
    expect(badFile.status).toBe(400);
    expect((await api('post', '/api/v1/datasets/{id}/clear', one('/api/v1/datasets/checked/clear'))).body).toEqual({
      forgotten: 1,
    });
    expect((await api('delete', '/api/v1/datasets/{id}', one('/api/v1/datasets/checked'))).status).toBe(204);
    expect((await api('post', '/api/v1/datasets/{id}/clear', one('/api/v1/datasets/checked/clear'))).status).toBe(404);
  });

  it('the task and schedule routes', async () => {
    const input = { emails: ['ann@example.com'] };
    const task = await api('post', '/api/v1/tasks', { key, body: { name: 'check', tool: 'email-validator', input } });
    expect(task.status).toBe(201);
    const bad = await api('post', '/api/v1/tasks', { key, body: { name: 'x', tool: 'email-validator', input: {} } });
    expect(bad.status).toBe(400);
    expect((await api('get', '/api/v1/tasks', { key })).body.tasks).toHaveLength(1);
    const one = (url: string, body?: unknown) => ({ key, url, ...(body ? { body } : {}) });
    expect((await api('get', '/api/v1/tasks/{id}', one('/api/v1/tasks/check'))).status).toBe(200);
    expect((await api('get', '/api/v1/tasks/{id}', one('/api/v1/tasks/nope'))).status).toBe(404);
    const run = await api('post', '/api/v1/tasks/{id}/runs', one('/api/v1/tasks/check/runs', { input }));
    expect(run.status).toBe(200);
    await t.waitForRun(key, run.body.runId);
    const made = await api('post', '/api/v1/schedules', { key, body: { task: 'check', cron: '0 9 * * 1' } });
    expect(made.status).toBe(201);
    expect((await api('post', '/api/v1/schedules', { key, body: { task: 'check', cron: 'x' } })).status).toBe(400);
    const id = made.body.schedule.id as string;
    expect((await api('get', '/api/v1/schedules', { key })).body.schedules).toHaveLength(1);
    expect((await api('get', '/api/v1/schedules/{id}', one(`/api/v1/schedules/${id}`))).body.fires).toEqual([]);
    expect((await api('post', '/api/v1/schedules/{id}/pause', one(`/api/v1/schedules/${id}/pause`))).status).toBe(200);
    expect((await api('post', '/api/v1/schedules/{id}/resume', one(`/api/v1/schedules/${id}/resume`))).status).toBe(
      200,
    );
    expect((await api('delete', '/api/v1/schedules/{id}', one(`/api/v1/schedules/${id}`))).status).toBe(204);
    expect((await api('post', '/api/v1/schedules/{id}/pause', one(`/api/v1/schedules/${id}/pause`))).status).toBe(404);
    expect((await api('delete', '/api/v1/tasks/{id}', one('/api/v1/tasks/check'))).status).toBe(204);
  });

  it('the pipeline, connection, destination and delivery routes', async () => {
    const one = (url: string, body?: unknown) => ({ key, url, ...(body ? { body } : {}) });
    const steps = [
      {
        tool: 'maps',
        input: { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 2 },
      },
      { tool: 'email-validator' },
    ];
    expect((await api('post', '/api/v1/pipelines/quote', { key, body: { steps } })).status).toBe(200);
    const started = await api('post', '/api/v1/pipelines', { key, body: { steps } });
    expect(started.status).toBe(201);
    const bad = await api('post', '/api/v1/pipelines', { key, body: { steps: [steps[0]] } });
    expect(bad.status).toBe(400);
    const id = started.body.pipeline.id as string;
    expect((await api('get', '/api/v1/pipelines', { key })).status).toBe(200);
    expect((await api('get', '/api/v1/pipelines/{id}', one(`/api/v1/pipelines/${id}`))).status).toBe(200);
    expect((await api('get', '/api/v1/pipelines/{id}', one('/api/v1/pipelines/plp_nope'))).status).toBe(404);
    expect((await api('get', '/api/v1/connections', { key })).body.connections).toEqual([]);
    const refused = await api('post', '/api/v1/destinations', {
      key,
      body: { name: 'x', kind: 'hubspot_contacts', connection: 'con_nope' },
    });
    expect(refused.status).toBe(400);
    expect((await api('get', '/api/v1/destinations', { key })).body.destinations).toEqual([]);
    expect((await api('get', '/api/v1/destinations/{id}', one('/api/v1/destinations/dest_nope'))).status).toBe(404);
    expect((await api('get', '/api/v1/deliveries', { key })).body.deliveries).toEqual([]);
    expect((await api('get', '/api/v1/deliveries/{id}', one('/api/v1/deliveries/dlv_nope'))).status).toBe(404);
    const listed = await api('post', '/api/v1/suppressions', {
      key,
      body: { entries: [{ kind: 'email', value: 'jane@acme.com' }] },
    });
    expect(listed.body).toEqual({ added: 1, alreadyListed: 0 });
    expect((await api('post', '/api/v1/suppressions', { key, body: { entries: [] } })).status).toBe(400);
    expect((await api('get', '/api/v1/suppressions', { key })).body.entries).toHaveLength(1);
    expect((await api('delete', '/api/v1/suppressions/{id}', one('/api/v1/suppressions/sup_nope'))).status).toBe(404);
  });

  it('the audit log’s list and export', async () => {
    const listed = await api('get', '/api/v1/audit-events', { key, url: '/api/v1/audit-events?limit=5' });
    expect(listed.status).toBe(200);
    expect(listed.body.events.length).toBeLessThanOrEqual(5);
    const bad = await api('get', '/api/v1/audit-events', { key, url: '/api/v1/audit-events?since=yesterday' });
    expect(bad.status).toBe(400);
    const file = await api('get', '/api/v1/audit-events/export', {
      key,
      url: '/api/v1/audit-events/export?format=json&action=api_key.created',
    });
    expect(file.status).toBe(200);
    expect(Array.isArray(file.body)).toBe(true);
    const refused = await api('get', '/api/v1/audit-events/export', {
      key,
      url: '/api/v1/audit-events/export?format=xml',
    });
    expect(refused.status).toBe(400);
  });

  it('the operator API, with its token', async () => {
    const as = (body?: unknown) => ({ body, headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    const person = { identifiers: [{ kind: 'email', value: 'nobody-held@openapi.example' }] };
    const erased = await api('post', '/operator/v1/privacy/erasures', as(person));
    expect(erased.status).toBe(201);
    expect((await api('post', '/operator/v1/privacy/erasures', { body: person, key })).status).toBe(401);
    expect((await api('post', '/operator/v1/privacy/access-requests', as(person))).status).toBe(201);
    const bad = await api('post', '/operator/v1/privacy/access-requests', as({ identifiers: [] }));
    expect(bad.status).toBe(400);
    expect((await api('get', '/operator/v1/privacy/receipts', as())).body.receipts).toHaveLength(2);
    const one = { ...as(), url: `/operator/v1/privacy/receipts/${erased.body.id}` };
    expect((await api('get', '/operator/v1/privacy/receipts/{id}', one)).status).toBe(200);
    const none = { ...as(), url: '/operator/v1/privacy/receipts/prq_nope' };
    expect((await api('get', '/operator/v1/privacy/receipts/{id}', none)).status).toBe(404);
  });
});
