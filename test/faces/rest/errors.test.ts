import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../../src/accounts/accounts.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account());
});
afterAll(() => t?.stop());

const runCount = async () => (await t.app.core.sql`select count(*)::int as n from run`)[0]!.n as number;
const jobCount = async () =>
  (await t.app.core.sql`select count(*)::int as n from graphile_worker.jobs`)[0]!.n as number;

describe('400 validation_failed names each bad field, and nothing is created', () => {
  const cases: [string, unknown, { path: string; message: RegExp }[]][] = [
    [
      'no search input',
      { locationQuery: 'Denver, CO' },
      [{ path: '', message: /at least one of searchStringsArray, url or startUrls/ }],
    ],
    ['empty body object', {}, [{ path: '', message: /at least one of/ }]],
    [
      'both locationQuery and customGeolocation',
      {
        searchStringsArray: ['dentist'],
        locationQuery: 'Denver',
        customGeolocation: { lat1: 39, lng1: -105, lat2: 40, lng2: -104 },
      },
      [{ path: 'customGeolocation', message: /locationQuery or customGeolocation, not both/ }],
    ],
    [
      'a non-numeric bounding box',
      { searchStringsArray: ['dentist'], customGeolocation: { lat1: '39', lng1: -105, lat2: 40, lng2: -104 } },
      [{ path: 'customGeolocation.lat1', message: /expected number/ }],
    ],
    [
      'a bounding box off the globe',
      { searchStringsArray: ['dentist'], customGeolocation: { lat1: 95, lng1: -105, lat2: 40, lng2: -200 } },
      [
        { path: 'customGeolocation.lat1', message: /90/ },
        { path: 'customGeolocation.lng2', message: /-180/ },
      ],
    ],
    [
      'a zero place count',
      { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 0 },
      [{ path: 'maxCrawledPlacesPerSearch', message: /must be at least 1/ }],
    ],
    [
      'a fractional place count',
      { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 2.5 },
      [{ path: 'maxCrawledPlacesPerSearch', message: /must be a whole number/ }],
    ],
    [
      'search terms that are not a list',
      { searchStringsArray: 'dentist' },
      [{ path: 'searchStringsArray', message: /expected array/ }],
    ],
    [
      'an empty search term',
      { searchStringsArray: ['dentist', '  '] },
      [{ path: 'searchStringsArray.1', message: /must not be empty/ }],
    ],
    [
      'a url that is not a map link',
      { url: 'https://example.com/about' },
      [{ path: 'url', message: /not a map search or place link/ }],
    ],
    ['a url that is not a URL', { url: 'dentists in denver' }, [{ path: 'url', message: /not a URL/ }]],
    [
      'a bad start URL',
      { startUrls: ['https://www.google.com/maps/search/dentist/@39.7,-104.9,12z', 'ftp://x/maps/search/a'] },
      [{ path: 'startUrls.1', message: /http/ }],
    ],
  ];

  it.each(cases)('%s', async (_, body, expected) => {
    const [runsBefore, jobsBefore] = [await runCount(), await jobCount()];
    const res = await t.request('POST', '/api/v1/scrape/maps', { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.message).toEqual(expect.any(String));
    expect(res.body.error.details).toHaveLength(expected.length);
    expected.forEach((e, i) => {
      expect(res.body.error.details[i].path).toBe(e.path);
      expect(res.body.error.details[i].message).toMatch(e.message);
    });
    expect([await runCount(), await jobCount()]).toEqual([runsBefore, jobsBefore]);
  });

  it('refuses a body that is not an object', async () => {
    const res = await t.request('POST', '/api/v1/scrape/maps', { key, body: ['dentist'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'validation_failed',
      details: [{ path: '', message: 'the request body must be a JSON object' }],
    });
  });
});

describe('malformed and oversized bodies', () => {
  it('400 invalid_json for malformed JSON', async () => {
    const res = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      rawBody: '{"searchStringsArray": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_json');
  });

  it('413 payload_too_large over 1 MB, nothing created', async () => {
    const before = await runCount();
    const terms = Array.from({ length: 60_000 }, (_, i) => `term number ${i}`);
    const res = await t.request('POST', '/api/v1/scrape/maps', { key, body: { searchStringsArray: terms } });
    expect(res.status).toBe(413);
    expect(res.body.error).toEqual({ code: 'payload_too_large', message: 'The request body is larger than 1 MB' });
    expect(await runCount()).toBe(before);
  });

  it('415 for a body that is not JSON', async () => {
    const res = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      rawBody: 'searchStringsArray=dentist',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
  });
});

describe('401 unauthenticated', () => {
  const routes: [string, string][] = [
    ['POST', '/api/v1/scrape/maps'],
    ['GET', '/api/v1/scrape/status/abc'],
    ['GET', '/api/downloads/abc'],
    ['POST', '/api/v1/maps/run'],
    ['GET', '/api/v1/runs/abc'],
    ['GET', '/api/v1/runs/abc/results'],
  ];
  const badHeaders: [string, Record<string, string>][] = [
    ['no header', {}],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['an unknown key', { authorization: `Bearer lg_live_${'A'.repeat(32)}` }],
  ];
  it.each(routes.flatMap(([m, p]) => badHeaders.map(([label, h]) => [m, p, label, h] as const)))(
    '%s %s with %s',
    async (method, path, _, headers) => {
      const res = await t.request(method, path, { headers, body: method === 'POST' ? DENVER_DENTISTS : undefined });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthenticated');
      expect(res.body.error.message).toMatch(/API key|Bearer/);
    },
  );

  it('a revoked key stops working', async () => {
    const { apiKey } = await t.account();
    expect((await t.request('GET', '/api/v1/scrape/status/abc', { key: apiKey })).status).toBe(404);
    await revokeApiKey(t.app.core.db, apiKey.slice(0, 14));
    const res = await t.request('GET', '/api/v1/scrape/status/abc', { key: apiKey });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe('Unknown or revoked API key');
  });

  it('GraphQL answers 401 with the code in extensions', async () => {
    const res = await t.request('POST', '/graphql', { body: { query: '{ viewer { id } }' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });
});

describe('404 for unknown runs and for other accounts’ runs', () => {
  let otherRun: string;
  beforeAll(async () => {
    const other = await t.account();
    const res = await t.request('POST', '/api/v1/scrape/maps', { key: other.apiKey, body: DENVER_DENTISTS });
    otherRun = res.body.runId;
  });

  it.each([['/api/v1/scrape/status/'], ['/api/downloads/'], ['/api/v1/runs/']])('GET %s{runId}', async (prefix) => {
    for (const id of ['doesNotExist12345', otherRun]) {
      const res = await t.request('GET', `${prefix}${id}`, { key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: 'Run not found' } });
    }
    const results = await t.request('GET', `/api/v1/runs/${otherRun}/results`, { key });
    expect(results.status).toBe(404);
  });

  it('GraphQL run(id) is null for another account’s run', async () => {
    const res = await t.graphql(key, 'query($id: ID!) { run(id: $id) { id } }', { id: otherRun });
    expect(res.body).toEqual({ data: { run: null } });
    const list = await t.graphql(key, '{ runs(first: 100) { edges { node { id } } } }');
    expect(list.body.data.runs.edges.map((e: { node: { id: string } }) => e.node.id)).not.toContain(otherRun);
  });

  it('unknown routes answer 404 in the same error body', async () => {
    const res = await t.request('GET', '/api/v1/nope', { key });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('GraphQL validation', () => {
  it('a bad mutation input answers VALIDATION_FAILED userErrors with their fields and starts nothing', async () => {
    const before = await runCount();
    const res = await t.graphql(
      key,
      'mutation($input: StartMapsScrapeInput!) { startMapsScrape(input: $input) { run { id } userErrors { code field } } }',
      {
        input: { locationQuery: 'Denver', customGeolocation: { lat1: 1, lng1: 1, lat2: 2, lng2: 2 } },
      },
    );
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.startMapsScrape).toEqual({
      run: null,
      userErrors: [
        { code: 'VALIDATION_FAILED', field: ['input'] },
        { code: 'VALIDATION_FAILED', field: ['input', 'customGeolocation'] },
      ],
    });
    expect(await runCount()).toBe(before);
  });

  it('limits page size and query depth', async () => {
    const big = await t.graphql(key, '{ runs(first: 500) { edges { node { id } } } }');
    expect(big.body.errors[0].extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ path: 'first', message: 'must be between 1 and 100' }],
    });
    const deep = await t.graphql(
      key,
      `{ runs(first: 100) { edges { node { results(first: 100) { nodes { __typename } } } } } }`,
    );
    expect(deep.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
  });
});
