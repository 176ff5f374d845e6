import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { writesOf } from '../../helpers/fuzz.ts';

/*
 * What the fuzz suites (test/fuzz.*.test.ts) found beyond the list, each fixed at its root and
 * kept here as a plain example.
 */

let t: TestApp;
let key: string;
let accountId: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key, accountId } = await t.account());
});
afterAll(() => t?.stop());

/** JSON text of an object nested `depth` levels (written directly: JSON.stringify would overflow first). */
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('REST', () => {
  it('a deeply nested body sent with an Idempotency-Key is a 400, not a stack overflow in the request hash', async () => {
    const before = await writesOf(t, accountId);
    const res = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      rawBody: nested(5_000),
      headers: { 'content-type': 'application/json', 'idempotency-key': 'deep-1' },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(await writesOf(t, accountId)).toBe(before);
  });

  it('a path whose escapes do not decode to UTF-8 answers the error body', async () => {
    for (const path of [
      '/api/downloads/%ED%A0%80',
      '/api/v1/scrape/status/end%E0%A4',
      '/api/v1/webhooks/%FF/deliveries',
    ]) {
      const res = await t.request('GET', path, { key });
      expect(res.status, path).toBe(400);
      expect(res.body).toEqual({
        error: {
          code: 'validation_failed',
          message: expect.any(String),
          details: [{ path: '', message: expect.stringMatching(/does not decode/) }],
        },
      });
    }
  });

  it('a path parameter over the router’s length limit answers the error body', async () => {
    const res = await t.request('GET', `/api/downloads/${'a'.repeat(500)}`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'validation_failed',
      details: [{ path: '', message: 'a path parameter is too long' }],
    });
  });

  it('a request line over 64 KB answers 431 with the error body', async () => {
    const res = await t.request('GET', `/api/v1/database/leads?title=${'x'.repeat(70_000)}`, { key });
    expect(res.status).toBe(431);
    expect(res.body).toEqual({ error: { code: 'invalid_request', message: expect.stringMatching(/64 KB/) } });
  });
});

describe('GraphQL', () => {
  it.each([
    ['not JSON', '{"query": "{ viewer { id } }"'],
    ['a __proto__ field', '{"query": "{ viewer { id } }", "variables": {"__proto__": {"x": 1}}}'],
  ])('a body that is %s answers a GraphQL error, not the REST body', async (_, rawBody) => {
    const res = await t.request('POST', '/graphql', { key, rawBody, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      errors: [{ message: expect.stringMatching(/not valid JSON/), extensions: { code: 'INVALID_JSON' } }],
    });
  });
});

describe('GraphQL arguments', () => {
  it('a pipelines cursor naming a time Postgres cannot hold is refused at `after`, not an internal error', async () => {
    const after = Buffer.from('+275760-09-13T00:00:00.000Z|plp_x').toString('base64url');
    const res = await t.graphql(key, 'query ($after: String) { pipelines(after: $after) { totalCount } }', { after });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  });

  it('an enrichment file name Postgres cannot store is refused at `fileName`, nothing counted', async () => {
    const res = await t.graphql(
      key,
      `mutation ($rows: [LocalBusinessEnrichmentInput!]!, $name: String) {
        enrichLocalBusinesses(rows: $rows, fileName: $name) { job { id } userErrors { code field } } }`,
      { rows: [{ name: 'Acme', city: 'Denver' }], name: 'a\u0000b.csv' },
    );
    expect(res.body.data.enrichLocalBusinesses).toEqual({
      job: null,
      userErrors: [{ code: 'VALIDATION_FAILED', field: ['fileName'] }],
    });
  });
});

describe('MCP', () => {
  it.each([
    ['a string', 'dentist'],
    ['a list', ['dentist']],
  ])('tools/call with arguments that are %s is Invalid params (-32602), not an internal error', async (_, args) => {
    const res = await fetch(`${t.url}/mcp?tools=all`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'scrape_maps', arguments: args },
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32602, message: expect.stringMatching(/Invalid tools\/call request/) },
    });
  });
});
