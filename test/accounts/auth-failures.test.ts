import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.ts';
import { closeCode, disposeClients, wsClient } from '../helpers/ws.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { sourceOf } from '../helpers/documents.ts';
import { graphql } from '../helpers/gql/index.ts';

/**
 * Requests without a valid key cost nothing: every face authenticates before reading a body, and
 * failed authentications are limited per client address (AUTH_FAILURES_PER_MINUTE); past the limit
 * the address is refused 429 rate_limited, whatever key it sends, on REST, GraphQL over HTTP,
 * graphql-ws (close 4429) and MCP alike.
 *
 * Every request of the test comes from 127.0.0.1; the gateway trusts it as a proxy (TRUST_PROXY),
 * so X-Forwarded-For gives each test client an address, and a budget, of its own.
 */

const LIMIT = 4;
const BAD_KEY = 'Bearer lg_live_00000000000000000000000000000000';
let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false, config: { authFailuresPerMinute: LIMIT, trustProxy: ['loopback'] } });
  ({ apiKey: key } = await t.account());
});
afterEach(() => disposeClients());
afterAll(() => t?.stop());

const from = (address: string, authorization?: string) => ({
  'x-forwarded-for': address,
  ...(authorization ? { authorization } : {}),
});
const rest = (
  address: string,
  authorization?: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
) =>
  fetch(`${t.url}/api/v1/wallet`, {
    method: init.method ?? 'GET',
    headers: { ...from(address, authorization), ...init.headers },
    body: init.body,
  });
const Viewer = graphql(`query AuthFailuresViewer { viewer { id } }`);
// Sent with fetch, not t.graphql: the test sets X-Forwarded-For and reads the HTTP status and headers.
const graphqlPost = (address: string, authorization?: string) =>
  fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { ...from(address, authorization), 'content-type': 'application/json' },
    body: JSON.stringify({ query: sourceOf(Viewer) }),
  });
const mcp = (address: string, authorization?: string) =>
  fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: {
      ...from(address, authorization),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

/** A graphql-ws client whose upgrade request carries X-Forwarded-For: `address`. */
function socketFrom(address: string, authorization?: string) {
  class ForwardedWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers: { 'x-forwarded-for': address } });
    }
  }
  return wsClient(t.url, undefined, {
    webSocketImpl: ForwardedWebSocket,
    connectionParams: authorization ? { authorization } : {},
    lazy: false,
    onNonLazyError: () => {},
  });
}

/** The 429 refusal of `res`, with its Retry-After and its body, read as `B` (REST's and MCP's error by default). */
async function expectTooMany<B = { error: { code: string } }>(res: Response) {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(res.headers.get('ratelimit-policy')).toBe(`${LIMIT};w=60`);
  return { retryAfter, body: (await res.json()) as B };
}

describe('failed authentications are limited per client address', () => {
  it('REST: answers 401 up to the limit, then 429 rate_limited with Retry-After, even for a valid key', async () => {
    const address = '198.51.100.1';
    for (let i = 0; i < LIMIT; i++) expect((await rest(address, i % 2 ? BAD_KEY : undefined)).status).toBe(401);
    const { body } = await expectTooMany(await rest(address, BAD_KEY));
    expect(body).toEqual({
      error: {
        code: 'rate_limited',
        message: expect.stringMatching(
          /^Too many failed authentications from your address: the limit is 4 per minute\. Retry in \d+ s/,
        ),
      },
    });
    // A blocked address is not let try keys: a valid one is refused too, until the window ends.
    await expectTooMany(await rest(address, `Bearer ${key}`));
    // Another address is not affected, and a valid key costs nothing of an address's budget.
    for (let i = 0; i < LIMIT + 2; i++) expect((await rest('198.51.100.2', `Bearer ${key}`)).status).toBe(200);
    expect((await rest('198.51.100.2', BAD_KEY)).status).toBe(401);
  });

  it('authenticates before the body is read: a bad JSON or an oversized body without a valid key is a 401, not a 400 or 413', async () => {
    const address = '198.51.100.3';
    const post = (body: string) =>
      fetch(`${t.url}/api/v1/enrich`, {
        method: 'POST',
        headers: { ...from(address, BAD_KEY), 'content-type': 'application/json' },
        body,
      });
    const broken = await post('{"rows": [');
    expect(broken.status).toBe(401);
    expect(((await broken.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
    const huge = await post(JSON.stringify({ rows: [{ email: 'x'.repeat(1_100_000) }] }));
    expect(huge.status).toBe(401);
    await huge.text();
    // The same bodies with a valid key are read, and refused for what they are.
    const keyed = (body: string) =>
      fetch(`${t.url}/api/v1/enrich`, {
        method: 'POST',
        headers: { ...from(address, `Bearer ${key}`), 'content-type': 'application/json' },
        body,
      });
    expect((await keyed('{"rows": [')).status).toBe(400);
    expect((await keyed(JSON.stringify({ rows: [{ email: 'x'.repeat(1_100_000) }] }))).status).toBe(413);
  });

  it('counts the failures of every face together: GraphQL over HTTP refuses past it with RATE_LIMITED and retryAfter', async () => {
    const address = '198.51.100.4';
    expect((await rest(address)).status).toBe(401);
    expect((await mcp(address, BAD_KEY)).status).toBe(401);
    for (let i = 2; i < LIMIT; i++) expect((await graphqlPost(address, BAD_KEY)).status).toBe(401);
    const { body, retryAfter } = await expectTooMany<{ errors: unknown }>(await graphqlPost(address, `Bearer ${key}`));
    expect(body.errors).toEqual([
      {
        message: expect.stringMatching(/^Too many failed authentications/),
        extensions: { code: 'RATE_LIMITED', retryAfter },
      },
    ]);
    const { body: mcpBody } = await expectTooMany(await mcp(address, `Bearer ${key}`));
    expect(mcpBody.error.code).toBe('rate_limited');
  });

  it('MCP: a POST without a valid key is refused 401 before its JSON-RPC body is read; past the limit 429', async () => {
    const address = '198.51.100.5';
    for (let i = 0; i < LIMIT; i++) {
      const res = await fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: {
          ...from(address, BAD_KEY),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: '[{"jsonrpc": ',
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    await expectTooMany(await mcp(address, `Bearer ${key}`));
    expect((await fetch(`${t.url}/mcp`, { method: 'GET', headers: from(address, `Bearer ${key}`) })).status).toBe(429);
  });

  it('graphql-ws: a bad key at connection_init closes 4401 and counts; past the limit the socket closes 4429, whatever the key', async () => {
    const address = '198.51.100.6';
    for (let i = 0; i < LIMIT; i++) expect(await closeCode(socketFrom(address, BAD_KEY))).toBe(4401);
    expect(await closeCode(socketFrom(address, `Bearer ${key}`))).toBe(4429);
    // HTTP from that address is refused too; a socket from another address with the key connects.
    await expectTooMany(await rest(address, `Bearer ${key}`));
    const ok = socketFrom('198.51.100.7', `Bearer ${key}`);
    await new Promise<void>((resolve, reject) => {
      ok.on('connected', () => resolve());
      ok.on('closed', (event) => reject(new Error(`closed ${(event as { code: number }).code}`)));
    });
  });

  it('takes an IPv6 client as its /64 network', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await rest(`2001:db8:5:6::${i + 1}`, BAD_KEY)).status).toBe(401);
    await expectTooMany(await rest('2001:db8:5:6:ffff:ffff:ffff:ffff', `Bearer ${key}`));
    expect((await rest('2001:db8:5:7::1', `Bearer ${key}`)).status).toBe(200);
  });
});

describe('without TRUST_PROXY', () => {
  it('counts the connection’s address, whatever X-Forwarded-For says', async () => {
    const direct = await startTestApp({ worker: false, config: { authFailuresPerMinute: 2 } });
    try {
      const { apiKey } = await direct.account();
      const get = (address: string, authorization: string) =>
        fetch(`${direct.url}/api/v1/wallet`, { headers: from(address, authorization) });
      expect((await get('203.0.113.1', BAD_KEY)).status).toBe(401);
      expect((await get('203.0.113.2', BAD_KEY)).status).toBe(401);
      const refused = await get('203.0.113.3', `Bearer ${apiKey}`);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).not.toBeNull();
    } finally {
      await direct.stop();
    }
  });
});

describe('configuration', () => {
  it('reads AUTH_FAILURES_PER_MINUTE (default 60, 0 turns it off) and TRUST_PROXY (hops or addresses)', () => {
    expect(loadConfig({})).toMatchObject({ authFailuresPerMinute: 60, trustProxy: undefined });
    expect(loadConfig({ AUTH_FAILURES_PER_MINUTE: '7', TRUST_PROXY: '2' })).toMatchObject({
      authFailuresPerMinute: 7,
      trustProxy: 2,
    });
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback' }).trustProxy).toEqual(['10.0.0.0/8', 'loopback']);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBeUndefined();
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY takes the number of proxies/);
    expect(() => loadConfig({ TRUST_PROXY: 'proxy.internal' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ AUTH_FAILURES_PER_MINUTE: '-1' })).toThrow();
  });

  it('counts nothing with AUTH_FAILURES_PER_MINUTE=0', async () => {
    const open = await startTestApp({ worker: false, config: { authFailuresPerMinute: 0 } });
    try {
      for (let i = 0; i < 5; i++)
        expect((await fetch(`${open.url}/api/v1/wallet`, { headers: { authorization: BAD_KEY } })).status).toBe(401);
    } finally {
      await open.stop();
    }
  });
});
