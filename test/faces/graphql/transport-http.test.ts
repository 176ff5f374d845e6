import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import { loadConfig } from '../../../src/config.ts';
import { loadPersistedOperations } from '../../../schema/server/persisted-operations.ts';
import { MAX_TOKENS } from '../../../schema/server/token-limit.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { disposeClients, wsClient } from '../../helpers/ws.ts';

/**
 * GraphQL over HTTP: the key is admitted before the document is looked at; documents are parsed
 * with a token limit and their depth, breadth and complexity checked when the operation starts;
 * automatic persisted queries and the persisted-only mode. The same rules over graphql-ws where the
 * transport matters (APQ, persisted-only) are here too; the socket's own rules are in
 * transport-ws.test.ts. Documents stay strings here: they are documents the gateway refuses,
 * built to a size, or texts hashed as written.
 */

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const JSON_ACCEPT = 'application/json';
const GRAPHQL_RESPONSE = 'application/graphql-response+json';

/** A selection `depth` levels deep. */
const nested = (depth: number) => `${'{ a '.repeat(depth)}${'}'.repeat(depth)}`;
/** `{ a0: __typename a1: __typename … }`: `count` selections (breadth `count`), 3 × count + 2 tokens. */
const aliased = (count: number, more = '') =>
  `{ ${Array.from({ length: count }, (_, i) => `a${i}: __typename`).join(' ')} ${more}}`;

interface WsResult {
  via: 'next' | 'error';
  data?: unknown;
  errors?: readonly { message: string; extensions?: Record<string, unknown> }[];
}

/** One operation over the socket: its first result, or the errors it was refused with. */
function overSocket(
  client: Client,
  payload: { query?: string; variables?: Record<string, unknown>; extensions?: Record<string, unknown> },
): Promise<WsResult> {
  return new Promise((resolve, reject) => {
    let first: WsResult | undefined;
    client.subscribe(payload as never, {
      next: (r) => {
        first ??= { via: 'next', ...(r as object) };
      },
      error: (e) =>
        Array.isArray(e)
          ? resolve({ via: 'error', errors: e })
          : reject(new Error(`socket closed: ${JSON.stringify(e)}`)),
      complete: () => resolve(first ?? { via: 'next' }),
    });
  });
}

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account());
});
afterEach(() => disposeClients());
afterAll(() => t?.stop());

const post = (body: unknown, options: { key?: string; accept?: string } = {}) =>
  t.request('POST', '/graphql', { key: options.key, body, headers: { accept: options.accept ?? JSON_ACCEPT } });

describe('an unauthenticated request is answered 401 before its document is parsed', () => {
  it('answers 401 UNAUTHENTICATED with WWW-Authenticate for documents that do not parse, do not validate or are huge', async () => {
    const documents = ['{ viewer ', '{ nope }', nested(5000), `{ viewer { id } } # ${'x'.repeat(1024 * 1024 - 100)}`];
    for (const query of documents) {
      for (const accept of [JSON_ACCEPT, GRAPHQL_RESPONSE]) {
        const res = await post({ query }, { accept });
        expect(res.status, query.slice(0, 20)).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
        expect(res.headers.get('content-type')).toMatch(
          accept === GRAPHQL_RESPONSE ? /^application\/graphql-response\+json/ : /^application\/json/,
        );
        expect(res.body.errors).toHaveLength(1);
        expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
        expect(res.body.errors[0].extensions).not.toHaveProperty('http');
        expect(res.body.data).toBeUndefined();
      }
    }
    // With a key the same unparsable document is a syntax error: the key was checked first.
    const keyed = await post({ query: '{ viewer ' }, { key, accept: GRAPHQL_RESPONSE });
    expect(keyed.status).toBe(400);
    expect(keyed.body.errors[0].message).toMatch(/Syntax Error/);
  });

  it('refuses malformed, unknown and revoked-looking keys the same way, and GET requests for JSON too', async () => {
    for (const authorization of ['Bearer nope', `Bearer lg_live_${'Z'.repeat(32)}`]) {
      const res = await t.request('POST', '/graphql', {
        body: { query: '{ nope' },
        headers: { authorization, accept: JSON_ACCEPT },
      });
      expect(res.status).toBe(401);
      expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
    const get = await t.request('GET', `/graphql?query=${encodeURIComponent('{ viewer ')}`, {
      headers: { accept: JSON_ACCEPT },
    });
    expect(get.status).toBe(401);
    expect(get.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('serves the GraphiQL page without a key, and does not count it', async () => {
    const res = await t.request('GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('ratelimit')).toBeNull();
    const keyed = await t.request('GET', '/graphql', { key, headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('ratelimit')).toBeNull();
  });
});

describe('document limits', () => {
  it('answers a selection nested 5,000 deep with 400 QUERY_TOO_COMPLEX (tokens), never a 500, whatever the Accept', async () => {
    for (const accept of [JSON_ACCEPT, GRAPHQL_RESPONSE]) {
      const res = await post({ query: nested(5000) }, { key, accept });
      expect(res.status).toBe(400);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0].extensions).toEqual({
        code: 'QUERY_TOO_COMPLEX',
        details: { measure: 'tokens', limit: MAX_TOKENS },
      });
      expect(res.body.errors[0].message).toContain(`more than ${MAX_TOKENS} tokens`);
    }
    // GET parses the same way.
    const get = await t.request('GET', `/graphql?query=${encodeURIComponent(nested(3000))}`, {
      key,
      headers: { accept: JSON_ACCEPT },
    });
    expect(get.status).toBe(400);
    expect(get.body.errors[0].extensions.details.measure).toBe('tokens');
  });

  it('counts tokens exactly: MAX_TOKENS parse, one more does not', async () => {
    // MAX_TOKENS tokens: it parses, then the breadth check refuses it.
    const count = (MAX_TOKENS - 2) / 3;
    expect(Number.isInteger(count)).toBe(true);
    const atLimit = await post({ query: aliased(count) }, { key });
    expect(atLimit.status).toBe(400);
    expect(atLimit.body.errors[0].extensions.details).toEqual({ measure: 'breadth', value: count, limit: 200 });
    const over = await post({ query: aliased(count, '__typename ') }, { key });
    expect(over.status).toBe(400);
    expect(over.body.errors[0].extensions.details).toEqual({ measure: 'tokens', limit: MAX_TOKENS });
  });

  it('answers the deepest nesting the token limit lets through without a 500', async () => {
    // Lists are the cheapest nesting (two tokens a level): about a thousand levels in an argument.
    const depth = Math.floor((MAX_TOKENS - 13) / 2);
    const query = `{ viewer @include(if: ${'['.repeat(depth)}true${']'.repeat(depth)}) { id } }`;
    const res = await post({ query }, { key, accept: GRAPHQL_RESPONSE });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/Boolean/);
  });

  it('checks breadth when the operation starts, naming the measure, its value and the limit', async () => {
    for (const accept of [JSON_ACCEPT, GRAPHQL_RESPONSE]) {
      const res = await post({ query: aliased(201, 'viewer { id } ') }, { key, accept });
      expect(res.status).toBe(400);
      expect(res.body.data).toBeUndefined();
      const [error] = res.body.errors;
      expect(error.extensions.code).toBe('QUERY_TOO_COMPLEX');
      expect(error.extensions.details).toEqual({ measure: 'breadth', value: 203, limit: 200 });
      expect(error.message).toBe('Query breadth 203 exceeds the limit of 200; ask for fewer fields or smaller pages');
    }
    // Within the limits the same kind of query runs.
    const fine = await post({ query: aliased(190, 'viewer { id } ') }, { key });
    expect(fine.status).toBe(200);
    expect(fine.body.errors).toBeUndefined();
  });

  it('checks complexity with each request’s variables, though the document’s validation is cached', async () => {
    const query =
      'query ($runs: Int, $rows: Int) { runs(first: $runs) { nodes { id results(first: $rows) { nodes { __typename } } } } }';
    const small = await post({ query, variables: { runs: 2, rows: 2 } }, { key });
    expect(small.status).toBe(200);
    expect(small.body.errors).toBeUndefined();
    const large = await post({ query, variables: { runs: 100, rows: 100 } }, { key });
    expect(large.status).toBe(400);
    expect(large.body.errors[0].extensions).toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
      details: { measure: 'complexity', limit: 5000 },
    });
    // And the small one again: the refusal was not cached for the document either.
    expect((await post({ query, variables: { runs: 2, rows: 2 } }, { key })).status).toBe(200);
  });

  it('refuses a too broad subscription over HTTP (server-sent events) before it subscribes', async () => {
    const res = await post(
      { query: `subscription { runEvents ${aliased(201)} }` },
      { key, accept: 'text/event-stream' },
    );
    expect(res.status).toBe(400);
    expect(res.text).toContain('QUERY_TOO_COMPLEX');
    expect(res.text).toContain('Query breadth 202 exceeds the limit of 200');
  });
});

describe('automatic persisted queries (Apollo protocol)', () => {
  const apq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

  it('hashes as Apollo does: {__typename} is Apollo’s example hash', async () => {
    const query = '{__typename}';
    expect(sha256(query)).toBe('ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38');
    const first = await post({ query, extensions: apq(sha256(query)) }, { key });
    expect(first.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('answers PersistedQueryNotFound to an unknown hash, runs it once registered, over POST, GET and graphql-ws', async () => {
    const query = `query Mine { viewer { id } } # ${Math.random()}`;
    const hash = sha256(query);
    const unknown = await post({ extensions: apq(hash) }, { key });
    expect(unknown.status).toBe(200);
    expect(unknown.body.errors).toEqual([
      { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
    ]);
    // graphql-ws requires a `query` string: an empty one with the hash is a hash-only request.
    const overWs = await overSocket(wsClient(t.url, key), { query: '', extensions: apq(hash) });
    expect(overWs.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');

    const registered = await post({ query, extensions: apq(hash) }, { key });
    expect(registered.body.data.viewer.id).toEqual(expect.any(String));
    const byHash = await post({ extensions: apq(hash) }, { key });
    expect(byHash.body).toEqual(registered.body);
    const byGet = await t.request('GET', `/graphql?extensions=${encodeURIComponent(JSON.stringify(apq(hash)))}`, {
      key,
      headers: { accept: JSON_ACCEPT },
    });
    expect(byGet.status).toBe(200);
    expect(byGet.body).toEqual(registered.body);
    const socket = await overSocket(wsClient(t.url, key), { query: '', extensions: apq(hash) });
    expect(socket.data).toEqual(registered.body.data);
  });

  it('refuses a document whose hash does not match it, and registers nothing', async () => {
    const hash = sha256('{ viewer { plan } }');
    const res = await post({ query: '{ viewer { id } }', extensions: apq(hash) }, { key, accept: GRAPHQL_RESPONSE });
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_MISMATCH');
    expect((await post({ extensions: apq(hash) }, { key })).body.errors[0].extensions.code).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    );
  });

  it('runs the operations of GRAPHQL_PERSISTED_OPERATIONS by hash without registration', async () => {
    // The default app has no file; the persisted-only suite below has one.
    const res = await post({ extensions: apq(sha256('query Listed { viewer { id } }')) }, { key });
    expect(res.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});

describe('persisted-only mode (GRAPHQL_PERSISTED_ONLY)', () => {
  const LISTED = 'query Listed { viewer { id } }';
  let only: TestApp;
  let onlyKey: string;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-persisted-'));
    const file = path.join(dir, 'operations.json');
    writeFileSync(file, JSON.stringify({ [sha256(LISTED)]: LISTED }));
    only = await startTestApp({
      worker: false,
      config: { graphqlPersistedOperations: file, graphqlPersistedOnly: true },
    });
    ({ apiKey: onlyKey } = await only.account());
  });
  afterAll(() => only?.stop());

  const send = (body: unknown) =>
    only.request('POST', '/graphql', { key: onlyKey, body, headers: { accept: JSON_ACCEPT } });
  const apq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

  it('runs a listed operation by its hash, over HTTP and graphql-ws', async () => {
    const res = await send({ extensions: apq(sha256(LISTED)) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { viewer: { id: expect.any(String) } } });
    const socket = await overSocket(wsClient(only.url, onlyKey), { query: '', extensions: apq(sha256(LISTED)) });
    expect(socket.data).toEqual(res.body.data);
  });

  it('refuses documents, even with a hash (no APQ registration), over HTTP and graphql-ws', async () => {
    for (const body of [
      { query: '{ viewer { id } }' },
      { query: '{ viewer { id } }', extensions: apq(sha256('{ viewer { id } }')) },
      { query: LISTED },
    ]) {
      const res = await send(body);
      expect(res.status).toBe(400);
      expect(res.body.data).toBeUndefined();
      expect(res.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
    }
    expect((await send({ extensions: apq(sha256('{ viewer { id } }')) })).body.errors[0].extensions.code).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    );
    const socket = await overSocket(wsClient(only.url, onlyKey), { query: '{ viewer { id } }' });
    expect(socket.via).toBe('error');
    expect(socket.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
  });

  it('answers an unknown hash with PERSISTED_QUERY_NOT_FOUND and a request with neither with PERSISTED_QUERY_ID_REQUIRED', async () => {
    const unknown = await send({ extensions: apq('0'.repeat(64)) });
    expect(unknown.body.errors).toEqual([
      { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
    ]);
    const neither = await send({ variables: {} });
    expect(neither.status).toBe(400);
    expect(neither.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
  });
});

describe('persisted operations configuration', () => {
  it('needs a file for the persisted-only mode', () => {
    expect(() => loadConfig({ GRAPHQL_PERSISTED_ONLY: 'true' })).toThrow(/GRAPHQL_PERSISTED_OPERATIONS/);
    const config = loadConfig({ GRAPHQL_PERSISTED_OPERATIONS: 'ops.json', GRAPHQL_PERSISTED_ONLY: 'true' });
    expect(config.graphqlPersistedOperations).toBe(path.resolve('ops.json'));
    expect(config.graphqlPersistedOnly).toBe(true);
    expect(loadConfig({}).graphqlPersistedOnly).toBe(false);
  });

  it('refuses at start a file that is not a map of valid documents', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-persisted-'));
    const write = (name: string, content: string) => {
      const file = path.join(dir, name);
      writeFileSync(file, content);
      return file;
    };
    expect(() => loadPersistedOperations(write('list.json', '["{ viewer { id } }"]'))).toThrow(/JSON object/);
    expect(() => loadPersistedOperations(write('bad.json', '{"a": "{ viewer { nope } }"}'))).toThrow(
      /operation a is not valid: .*nope/,
    );
    expect(() => loadPersistedOperations(write('deep.json', JSON.stringify({ b: nested(3000) })))).toThrow(
      /operation b is not valid: .*tokens/,
    );
    expect(() => loadPersistedOperations(path.join(dir, 'missing.json'))).toThrow(/cannot read/);
    const good = loadPersistedOperations(write('good.json', JSON.stringify({ h: '{ viewer { id } }' })));
    expect([...good]).toEqual([['h', '{ viewer { id } }']]);
  });
});
