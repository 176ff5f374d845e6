import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printSchema } from 'graphql';
import { serverAudits } from 'graphql-http';
import { schema } from '../../../schema/index.ts';
import { TOOLS } from '../../../src/tools/index.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

describe('schema/schema.graphql', () => {
  it('is the printed schema (run `npm run schema:print` after changing the schema)', () => {
    const committed = readFileSync(new URL('../../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(`${printSchema(schema)}\n`);
  });

  it('has a start mutation for every tool of the registry, and none for linked-only tools', () => {
    const mutations = schema.getMutationType()!.getFields();
    for (const tool of TOOLS) {
      const faces = [mutations[tool.graphql.mutation], schema.getType(tool.graphql.inputType)];
      if (tool.linkedOnly) expect(faces, tool.name).toEqual([undefined, undefined]);
      else for (const face of faces) expect(face, tool.name).toBeDefined();
    }
  });
});

describe('GraphQL over HTTP', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ worker: false });
    ({ apiKey: key } = await t.account());
  });
  afterAll(() => t?.stop());

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    t.request('POST', '/graphql', { key, body, headers });

  it('passes every MUST audit of the GraphQL-over-HTTP spec (graphql-http audit suite)', async () => {
    const fetchFn = (input: RequestInfo | URL, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${key}`);
      return fetch(input, { ...init, headers });
    };
    const audits = serverAudits({ url: `${t.url}/graphql`, fetchFn }).filter((audit) => audit.name.startsWith('MUST'));
    expect(audits.length).toBeGreaterThan(10);
    const failures: string[] = [];
    for (const audit of audits) {
      const result = await audit.fn();
      if (result.status !== 'ok') failures.push(`${audit.name}: ${result.reason}`);
    }
    expect(failures).toEqual([]);
  });

  it('accepts POST application/json and answers application/json by default', async () => {
    const res = await post({ query: '{ viewer { plan } }' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
    expect(res.body).toEqual({ data: { viewer: { plan: 'SCALE' } } });
  });

  it('answers application/graphql-response+json when asked, with 400 for an invalid document', async () => {
    const ok = await post({ query: '{ viewer { plan } }' }, { accept: 'application/graphql-response+json' });
    expect(ok.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    const invalid = await post({ query: '{ viewer { nope } }' }, { accept: 'application/graphql-response+json' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0].message).toMatch(/nope/);
    const unparsable = await post({ query: '{ viewer ' }, { accept: 'application/graphql-response+json' });
    expect(unparsable.status).toBe(400);
  });

  it('accepts queries with GET and refuses mutations with GET (405)', async () => {
    const q = encodeURIComponent('{ viewer { plan } }');
    const get = await t.request('GET', `/graphql?query=${q}`, { key, headers: { accept: 'application/json' } });
    expect(get.status).toBe(200);
    expect(get.body.data.viewer.plan).toBe('SCALE');
    const m = encodeURIComponent('mutation { startMapsScrape(input: {searchStringsArray: ["x"]}) { run { id } } }');
    const mutation = await t.request('GET', `/graphql?query=${m}`, { key, headers: { accept: 'application/json' } });
    expect(mutation.status).toBe(405);
  });

  it('refuses a request without a query', async () => {
    const res = await post({ variables: {} }, { accept: 'application/graphql-response+json' });
    expect(res.status).toBe(400);
  });

  it('serves GraphiQL to a browser without a key', async () => {
    const res = await t.request('GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/GraphiQL|graphiql/);
  });

  it('starts a run through a mutation, returning the same runId REST uses', async () => {
    const res = await post({
      query:
        'mutation($input: StartMapsScrapeInput!) { startMapsScrape(input: $input) { message searchTranslation { keywords location locationFrom } run { id status requested } } }',
      variables: {
        input: {
          url: 'https://www.google.com/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z',
          maxCrawledPlacesPerSearch: 7,
        },
      },
    });
    expect(res.body.errors).toBeUndefined();
    const started = res.body.data.startMapsScrape;
    expect(started.run).toMatchObject({ status: 'RUNNING', requested: 7 });
    expect(started.searchTranslation).toMatchObject({
      keywords: ['dentists'],
      location: 'Denver, CO',
      locationFrom: 'link',
    });
    const rest = await t.request('GET', `/api/v1/scrape/status/${started.run.id}`, { key });
    expect(rest.body.runId).toBe(started.run.id);
  });
});
