import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { OPENAPI_PATH } from '../../../src/rest/openapi.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';
import { runCount } from '../../helpers/runs.ts';
import { getWithBody } from '../../helpers/get-with-body.ts';
import { graphql } from '../../helpers/gql/index.ts';

/**
 * A legacy client written against the spec, route by route: GET enrichment, case-folded email
 * repeats, the truth about overridden link parameters, one `details` shape, what a start holds,
 * money it can reconcile (wallet, ledger, run charges), unknown fields refused on every face, and
 * the deprecation headers.
 */

let t: TestApp;
let key: string;
let accountId: string;
let mcp: Client;

const LINK = 'https://app.apollo.io/#/people?personTitles[]=engineer&personLocations[]=United%20States';

const CappedLeadScrape = graphql(`
  mutation ConformanceCappedLeadScrape($url: String!, $count: Int!, $dryRun: Boolean) {
    startLeadScrape(input: { url: $url, count: $count }, dryRun: $dryRun) { estimatedCost uncappedCost userErrors { code } }
  }
`);
const BoundedMapsScrape = graphql(`
  mutation ConformanceBoundedMaps($input: StartMapsScrapeInput!, $maxCostUsd: Float, $dryRun: Boolean) {
    startMapsScrape(input: $input, maxCostUsd: $maxCostUsd, dryRun: $dryRun) {
      run { id }
      estimatedCost
      userErrors { code field message }
    }
  }
`);
const RunCharges = graphql(
  `query ConformanceRunCharges($id: ID!) { run(id: $id) { cost billedUnits priceRule { text unit unitPrice } } }`,
);
const WalletHeld = graphql(`query ConformanceWalletHeld { viewer { wallet { held } } }`);

beforeAll(async () => {
  // The email tools reach nothing but a closed local port: every check ends quickly, unknown.
  const network = {
    ...loadConfig({}).network,
    dnsServers: ['127.0.0.1:9'],
    dnsTimeoutMs: 200,
    smtpTimeoutMs: 200,
    webTimeoutMs: 200,
    outboundAllow: ['127.0.0.1:9'],
  };
  t = await startTestApp({ config: { network } });
  ({ apiKey: key, accountId } = await t.account());
  mcp = new Client({ name: 'legacy-client', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp?tools=all`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
});
afterAll(async () => {
  await mcp?.close();
  await t?.stop();
});

const runsOf = (account: string) => runCount(t.app.core.sql, account);

/** Runs a start while the account may run none, so the run waits READY with its hold taken. */
async function startWaiting(apiKey: string, path: string, body: unknown) {
  const { maxRunningRuns } = t.app.core.config;
  t.app.core.config.maxRunningRuns = 0;
  try {
    return await t.request('POST', path, { key: apiKey, body });
  } finally {
    t.app.core.config.maxRunningRuns = maxRunningRuns;
  }
}

describe('enrichment by GET, as the spec headings say', () => {
  it('answers a GET with a JSON body as the POST does, on both routes', async () => {
    const [lead] = (await t.request('GET', '/api/v1/database/leads?hasEmail=true&limit=1', { key })).body.leads;
    const rows = [{ email: lead.email, note: 'kept' }, { mobile: '+1 000 000 0000' }];
    const post = await t.request('POST', '/api/v1/enrich', { key, body: { rows, preview: true } });
    const get = await getWithBody(t.url, '/api/v1/enrich', { key, body: { rows, preview: true } });
    expect(get.status, get.text).toBe(200);
    expect(get.body).toEqual(post.body);

    const places = [{ phone: '(303) 555-0100' }];
    const placesGet = await getWithBody(t.url, '/api/v1/enrich/local-businesses', {
      key,
      body: { rows: places, preview: true },
    });
    expect(placesGet.status, placesGet.text).toBe(200);
    expect(placesGet.body).toEqual(
      (await t.request('POST', '/api/v1/enrich/local-businesses', { key, body: { rows: places, preview: true } })).body,
    );
  });

  it('refuses a GET body as it refuses a POST body', async () => {
    const none = await getWithBody(t.url, '/api/v1/enrich', { key });
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('validation_failed');
    const notJson = await getWithBody(t.url, '/api/v1/enrich', {
      key,
      rawBody: 'rows=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(notJson.status).toBe(415);
    const broken = await getWithBody(t.url, '/api/v1/enrich', {
      key,
      rawBody: '{"rows": [',
      headers: { 'content-type': 'application/json' },
    });
    expect([broken.status, broken.body.error.code]).toEqual([400, 'invalid_json']);
    const big = await getWithBody(t.url, '/api/v1/enrich', {
      key,
      rawBody: JSON.stringify({ rows: [{ email: 'x'.repeat(1_100_000) }] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(big.status).toBe(413);
  });
});

describe('the email validator folds case when it removes repeats', () => {
  it('counts, bills and answers jane.doe@acme.com and Jane.Doe@ACME.com once', async () => {
    const { start, status, rows } = await t.runTool(key, '/api/v1/scrape/email-validator', {
      emails: ['jane.doe@acme.test', 'Jane.Doe@ACME.test', 'JANE.DOE@acme.test'],
    });
    expect(start).toMatchObject({
      emailCount: 1,
      estimatedCost: 0.0072,
      message: 'Validating 1 email (2 duplicates removed)',
    });
    expect(rows.map((r) => r.email)).toEqual(['jane.doe@acme.test']);
    expect(status).toMatchObject({ status: 'SUCCEEDED', cost: 0.0072, billed_units: 1 });
  });
});

describe('search_translation', () => {
  it('reports a link parameter replaced by an explicit one as overridden, naming it, not as applied', async () => {
    const res = await t.request('GET', `/api/v1/database/leads?url=${encodeURIComponent(LINK)}&title=ceo&limit=1`, {
      key,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.search_translation).toEqual({
      applied: [{ parameter: 'personLocations[]', value: 'United States', filter: 'countries=United States' }],
      broadened: [],
      unsupported: [],
      ignored: [],
      overridden: [{ parameter: 'personTitles[]', value: 'engineer', filter: 'title', overriddenBy: ['title'] }],
    });
    // And it tells the truth: the search ran with the explicit title.
    const explicit = await t.request('GET', '/api/v1/database/leads?title=ceo&country=United%20States&limit=1', {
      key,
    });
    expect(res.body.pagination.total).toBe(explicit.body.pagination.total);
  });
});

describe('one details shape', () => {
  const isDetails = (details: unknown) =>
    expect(details).toEqual(expect.arrayContaining([{ path: expect.any(String), message: expect.any(String) }]));

  it('no_usable_filters names each parameter in details and carries the search_translation it points to', async () => {
    const res = await t.request('POST', '/api/v1/database/leads', {
      key,
      body: { url: 'https://app.apollo.io/#/people?sortByField=name&foo[]=bar' },
    });
    expect(res.body.error.code).toBe('no_usable_filters');
    expect(res.body.error.details).toEqual([
      { path: 'url', message: expect.stringMatching(/^foo\[\]=bar: /) },
      { path: 'url', message: 'sortByField: ignored (paging, sorting or view)' },
    ]);
    expect(res.body.search_translation.unsupported).toEqual([
      { parameter: 'foo[]', value: 'bar', note: expect.any(String) },
    ]);
  });

  it('filters_not_applied_yet and validation_failed use it too', async () => {
    await t.app.core.sql`update dataset_state set ready = false where dataset = 'companies'`;
    try {
      const refused = await t.request('POST', '/api/v1/database/leads', { key, body: { keywords: ['saas'] } });
      expect(refused.status).toBe(409);
      expect(refused.body.error.details).toEqual([
        { path: 'keywords', message: 'cannot be applied while company data is being prepared' },
      ]);
      expect(refused.body.filters_not_applied_yet).toEqual(['keywords']);
    } finally {
      await t.app.core.sql`update dataset_state set ready = true where dataset = 'companies'`;
    }
    isDetails(
      (await t.request('POST', '/api/v1/scrape/maps', { key, body: { maxCrawledPlacesPerSearch: 0 } })).body.error
        .details,
    );
  });
});

describe('money a client can reconcile', () => {
  it('a capped start says what it holds (estimatedCost) and what everything requested would cost', async () => {
    const poor = await t.account({ creditsMicros: 1_000_000n }); // 1.00 USD: the cap is 2.00 USD
    const start = await startWaiting(poor.apiKey, '/api/v1/scrape/leadplatform', { url: LINK, count: 1000 });
    expect(start.status, start.text).toBe(200);
    expect(start.body).toMatchObject({ status: 'READY', estimatedCost: 2, uncappedCost: 3.9 });
    const wallet = (await t.request('GET', '/api/v1/wallet', { key: poor.apiKey })).body.wallet;
    // The balances are net of the hold; held_dollars says where the 2.00 USD went.
    expect(wallet).toMatchObject({ total_balance_dollars: '-1.00', held_dollars: '2.00' });
    const { entries } = (await t.request('GET', '/api/v1/wallet/ledger', { key: poor.apiKey })).body;
    expect(entries[0]).toMatchObject({ kind: 'hold', run_id: start.body.runId, amount_dollars: '-2.00' });

    // GraphQL says the same of the same start (a dry run: nothing held).
    const other = await t.account({ creditsMicros: 1_000_000n });
    const gql = await t.graphql(other.apiKey, CappedLeadScrape, { url: LINK, count: 1000, dryRun: true });
    expect(gql.body.data!.startLeadScrape).toEqual({ estimatedCost: '2.00', uncappedCost: '3.90', userErrors: [] });
    const plain = await t.graphql(key, CappedLeadScrape, { url: LINK, count: 500, dryRun: true });
    expect(plain.body.data!.startLeadScrape).toEqual({ estimatedCost: '1.95', uncappedCost: null, userErrors: [] });

    const uncapped = await t.request('POST', '/api/v1/scrape/leadplatform', { key, body: { url: LINK, count: 500 } });
    expect(uncapped.body.estimatedCost).toBe(1.95);
    expect(uncapped.body).not.toHaveProperty('uncappedCost');
  });

  it('a start quoted first (dryRun) and bounded by maxCostUsd: nothing started or held past the bound', async () => {
    const { apiKey, accountId: id } = await t.account();
    const quote = await t.request('POST', '/api/v1/scrape/maps?dryRun=true', { key: apiKey, body: DENVER_DENTISTS });
    expect(quote.status, quote.text).toBe(200);
    expect(quote.body).toEqual({
      estimatedCost: 0.99,
      walletCovers: true,
      message: 'A start would hold 0.99 USD, the most it can cost; the wallet covers it.',
    });
    const poorQuote = await t.request('POST', '/api/v1/scrape/leadplatform?dryRun=1', {
      key: (await t.account({ creditsMicros: 1_000_000n })).apiKey,
      body: { url: LINK, count: 1000 },
    });
    expect(poorQuote.body).toMatchObject({ estimatedCost: 2, uncappedCost: 3.9, walletCovers: false });
    expect(await runsOf(id)).toBe(0);
    expect((await t.request('GET', '/api/v1/wallet', { key: apiKey })).body.wallet.held_dollars).toBe('0.00');

    const over = await t.request('POST', '/api/v1/scrape/maps?maxCostUsd=0.5', { key: apiKey, body: DENVER_DENTISTS });
    expect(over.status).toBe(400);
    expect(over.body.error).toEqual({
      code: 'cost_limit_exceeded',
      message:
        'This start is quoted at 0.99 USD, over the limit of 0.50 USD it was given: nothing was started or held. ' +
        'Ask for fewer results, or raise the limit.',
      details: [{ path: 'maxCostUsd', message: 'the quote is 0.99 USD' }],
    });
    const outOfRange = await t.request('POST', '/api/v1/scrape/maps?maxCostUsd=0', {
      key: apiKey,
      body: DENVER_DENTISTS,
    });
    expect(outOfRange.body.error).toMatchObject({
      code: 'validation_failed',
      details: [{ path: 'maxCostUsd', message: 'must be at least 0.01' }],
    });
    expect(await runsOf(id)).toBe(0);

    const gqlOver = await t.graphql(apiKey, BoundedMapsScrape, { input: DENVER_DENTISTS, maxCostUsd: 0.5 });
    expect(gqlOver.body.data!.startMapsScrape).toEqual({
      run: null,
      estimatedCost: null,
      userErrors: [
        { code: 'COST_LIMIT_EXCEEDED', field: ['maxCostUsd'], message: expect.stringContaining('0.99 USD') },
      ],
    });
    const gqlRange = await t.graphql(apiKey, BoundedMapsScrape, { input: DENVER_DENTISTS, maxCostUsd: 2e6 });
    expect(gqlRange.body.data!.startMapsScrape.userErrors).toEqual([
      { code: 'VALIDATION_FAILED', field: ['maxCostUsd'], message: expect.stringContaining('must be at most 1000000') },
    ]);
    expect(await runsOf(id)).toBe(0);

    const within = await t.request('POST', '/api/v1/scrape/maps?maxCostUsd=0.99', {
      key: apiKey,
      body: DENVER_DENTISTS,
    });
    expect(within.body).toMatchObject({ runId: expect.any(String), estimatedCost: 0.99 });
    const gqlWithin = await t.graphql(apiKey, BoundedMapsScrape, { input: DENVER_DENTISTS, maxCostUsd: 1 });
    expect(gqlWithin.body.data!.startMapsScrape).toMatchObject({ run: { id: expect.any(String) }, userErrors: [] });
    expect(await runsOf(id)).toBe(2);
  });

  it('the wallet shows what runs hold, and the ledger each hold and release with its run', async () => {
    const { apiKey, accountId: id } = await t.account();
    const before = (await t.request('GET', '/api/v1/wallet', { key: apiKey })).body.wallet;
    expect(before).toEqual({
      balance_dollars: '100.00',
      purchased_credits_dollars: '0.00',
      total_balance_dollars: '100.00',
      held_dollars: '0.00',
    });
    const waiting = (await startWaiting(apiKey, '/api/v1/scrape/maps', DENVER_DENTISTS)).body;
    expect(waiting).toMatchObject({ status: 'READY', estimatedCost: 0.99 });
    expect((await t.request('GET', '/api/v1/wallet', { key: apiKey })).body.wallet).toMatchObject({
      total_balance_dollars: '99.01',
      held_dollars: '0.99',
    });

    const cancelled = await t.request('POST', `/api/v1/scrape/cancel/${waiting.runId}`, { key: apiKey });
    expect(cancelled.body).toMatchObject({
      status: 'ABORTED',
      cost: 0,
      billed_units: 0,
      price_rule: { unit: 'business', unit_price: 0.0099 },
    });
    expect((await t.request('GET', '/api/v1/wallet', { key: apiKey })).body.wallet).toMatchObject({
      total_balance_dollars: '100.00',
      held_dollars: '0.00',
    });
    const ledger = (await t.request('GET', '/api/v1/wallet/ledger?limit=2', { key: apiKey })).body;
    expect(
      ledger.entries.map((e: { kind: string; run_id: string | null; amount_dollars: string }) => [
        e.kind,
        e.run_id,
        e.amount_dollars,
      ]),
    ).toEqual([
      ['release', waiting.runId, '0.99'],
      ['hold', waiting.runId, '-0.99'],
    ]);
    // Paged newest first; the last page ends the cursor.
    const rest = (await t.request('GET', `/api/v1/wallet/ledger?after=${ledger.next_after}`, { key: apiKey })).body;
    expect(rest.entries.map((e: { kind: string }) => e.kind)).toEqual(['plan_grant']);
    expect(rest.next_after).toBeNull();
    expect(await runsOf(id)).toBe(1);
  });

  it('a finished run states its charge, the units billed and the price rule, on REST, GraphQL and MCP', async () => {
    const { start, status } = await t.runTool(key, '/api/v1/scrape/maps', {
      ...DENVER_DENTISTS,
      maxCrawledPlacesPerSearch: 5,
    });
    expect(status.status).toBe('SUCCEEDED');
    expect(status).toMatchObject({
      cost: 0.0495,
      billed_units: 5,
      price_rule: { text: '0.0099 USD per business', unit: 'business', unit_price: 0.0099 },
    });
    const [run] = await t.app.core.sql`select charged_micros::bigint as charged from run where id = ${start.runId}`;
    expect(BigInt(run!.charged)).toBe(49_500n);
    // The ledger agrees: the hold released and the charge, both with the run id.
    const { entries } = (await t.request('GET', '/api/v1/wallet/ledger?limit=100', { key })).body;
    const ofRun = entries
      .filter((e: { run_id: string | null }) => e.run_id === start.runId)
      .map((e: { kind: string; amount_dollars: string }) => [e.kind, e.amount_dollars]);
    expect(ofRun).toEqual([
      ['charge', '-0.0495'],
      ['release', '0.0495'],
      ['hold', '-0.0495'],
    ]);

    const gql = await t.graphql(key, RunCharges, { id: start.runId });
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data!.run).toEqual({
      cost: '0.0495',
      billedUnits: 5,
      priceRule: { text: '0.0099 USD per business', unit: 'business', unitPrice: '0.0099' },
    });
    const viewer = await t.graphql(key, WalletHeld);
    expect(viewer.body.data?.viewer?.wallet?.held ?? viewer.body.errors).toBe('0.00');

    const answer = (await mcp.callTool({ name: 'check_run_status', arguments: { runId: start.runId } })) as {
      content: { text: string }[];
    };
    expect(JSON.parse(answer.content[0]!.text)).toMatchObject({
      cost: 0.0495,
      billedUnits: 5,
      priceRule: { unit: 'business', unitPrice: 0.0099 },
    });
  });

  it('a run still going shows no charge yet', async () => {
    const waiting = (await startWaiting(key, '/api/v1/scrape/techstack', { technology: 'Klaviyo' })).body;
    const status = (await t.request('GET', `/api/v1/scrape/status/${waiting.runId}`, { key })).body;
    expect(status.status).toBe('READY');
    expect(status).not.toHaveProperty('cost');
    expect(status).not.toHaveProperty('billed_units');
    await t.request('POST', `/api/v1/scrape/cancel/${waiting.runId}`, { key });
  });
});

describe('unknown fields: one rule on every route and face', () => {
  it('a tool start refuses a misspelt field, naming the closest, and starts nothing', async () => {
    const before = await runsOf(accountId);
    const res = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSerch: 5 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'validation_failed',
      message: 'unknown field maxCrawledPlacesPerSerch; did you mean maxCrawledPlacesPerSearch?',
      details: [
        {
          path: 'maxCrawledPlacesPerSerch',
          message: 'unknown field maxCrawledPlacesPerSerch; did you mean maxCrawledPlacesPerSearch?',
        },
      ],
    });
    // Nested fields too, and a name nothing resembles gets no suggestion.
    const nested = await t.request('POST', '/api/v1/scrape/email-finder', {
      key,
      body: { contacts: [{ first_name: 'Jane', last_name: 'Doe', domain: 'acme.test', middle: 'Q' }] },
    });
    expect(nested.body.error.details).toEqual([
      { path: 'contacts.0.middle', message: 'unknown field contacts.0.middle' },
    ]);
    expect(await runsOf(accountId)).toBe(before);
  });

  it('query strings and bodies of the other routes', async () => {
    const cases: [string, string, unknown, string][] = [
      ['GET', '/api/v1/database/leads?titel=ceo', undefined, 'unknown field titel; did you mean title?'],
      [
        'POST',
        '/api/v1/database/local-businesses',
        { limit: 5, cty: 'Denver' },
        'unknown field cty; did you mean city?',
      ],
      [
        'GET',
        '/api/v1/scrape/status/run_unknown?waitForFinsh=5',
        undefined,
        'unknown field waitForFinsh; did you mean waitForFinish?',
      ],
      ['GET', '/api/downloads/run_unknown?fromat=json', undefined, 'unknown field fromat; did you mean format?'],
      ['POST', '/api/v1/buy-credits', { amount: 100, ammount: 100 }, 'unknown field ammount; did you mean amount?'],
      [
        'POST',
        '/api/v1/enrich',
        { rows: [{ email: 'a@b.test' }], preveiw: true },
        'unknown field preveiw; did you mean preview?',
      ],
      [
        'POST',
        '/api/v1/webhooks',
        { url: 'https://hooks.example.invalid/x', event: ['run.succeeded'] },
        'unknown field event; did you mean events?',
      ],
      ['GET', '/api/v1/wallet?currency=usd', undefined, 'unknown field currency'],
      ['GET', '/api/v1/wallet/ledger?limt=5', undefined, 'unknown field limt; did you mean limit?'],
      [
        'POST',
        '/api/v1/maps/run',
        { query: 'dentists in Denver, CO', limt: 5 },
        'unknown field limt; did you mean limit?',
      ],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await t.request(method, path, { key, body });
      expect([res.status, res.body.error?.code, res.body.error?.message], `${method} ${path}`).toEqual([
        400,
        'validation_failed',
        message,
      ]);
    }
    // A list parameter's "[]" form is its own name.
    expect((await t.request('GET', '/api/v1/database/leads?title[]=ceo&limit=1', { key })).status).toBe(200);
  });

  it('MCP tool arguments, for tools and endpoints alike', async () => {
    for (const [name, args, message] of [
      [
        'scrape_maps',
        { searchStringsArray: ['dentist'], maxCrawledPlacesPerSerch: 5 },
        'unknown field maxCrawledPlacesPerSerch; did you mean maxCrawledPlacesPerSearch?',
      ],
      ['check_run_status', { runId: 'run_unknown', waitSec: 1 }, 'unknown field waitSec; did you mean waitSecs?'],
      ['query_lead_database', { titel: 'ceo' }, 'unknown field titel; did you mean title?'],
      ['get_wallet', { currency: 'usd' }, 'unknown field currency'],
    ] as const) {
      const answer = (await mcp.callTool({ name, arguments: args })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      expect(answer.isError, name).toBe(true);
      expect(JSON.parse(answer.content[0]!.text).error, name).toMatchObject({ code: 'validation_failed', message });
    }
  });

  it('GraphQL refuses unknown input fields by its types', async () => {
    // A misspelt input field: the document fails validation, so it stays a string.
    const res = await t.graphql(
      key,
      'mutation { startMapsScrape(input: {searchStringsArray: ["dentist"], maxCrawledPlacesPerSerch: 5}) { run { id } } }',
    );
    expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(res.body.errors[0].message).toMatch(/maxCrawledPlacesPerSerch/);
  });
});

describe('deprecation headers from the declarations', () => {
  const deprecated = '/api/scrape/property-lookup';
  const body = { addresses: ['1600 Pennsylvania Ave NW, Washington, DC 20500'] };

  it('a route declared deprecated answers Deprecation, Sunset and Link, refusals included', async () => {
    const res = await t.request('POST', deprecated, { key, body });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('deprecation')).toBe(`@${Date.parse('2026-11-26T00:00:00Z') / 1000}`);
    expect(res.headers.get('sunset')).toBe('Tue, 30 Nov 2027 00:00:00 GMT');
    expect(res.headers.get('link')).toBe('</api/v1/openapi.json>; rel="deprecation"');
    const refused = await t.request('POST', deprecated, { body });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('deprecation')).toMatch(/^@\d+$/);
    // The route it points to is not deprecated.
    const current = await t.request('POST', '/api/v1/scrape/property-lookup', { key, body });
    expect(current.status).toBe(200);
    expect(current.headers.get('deprecation')).toBeNull();
    expect(current.headers.get('sunset')).toBeNull();
  });

  it('the OpenAPI document marks it deprecated, and nothing else', async () => {
    const doc = (await t.request('GET', OPENAPI_PATH)).body as {
      paths: Record<string, Record<string, { deprecated?: boolean; description?: string }>>;
    };
    expect(doc.paths[deprecated]!.post!.deprecated).toBe(true);
    expect(doc.paths[deprecated]!.post!.description).toMatch(/^\*\*Deprecated\*\* since 2026-11-26/);
    const marked = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.deprecated)
        .map(([method]) => `${method} ${path}`),
    );
    expect(marked).toEqual([`post ${deprecated}`]);
  });
});
