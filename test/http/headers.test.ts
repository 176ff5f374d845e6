import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHIQL_ASSETS, GRAPHIQL_CSP } from '../../schema/server/graphiql.ts';
import { API_CSP } from '../../src/http/headers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * Security headers and X-Request-Id on every answer of the HTTP server: REST (answers, refusals,
 * errors), /graphql (answers, refusals, GraphiQL), /mcp, /health, /ready, /metrics, 404s and CORS
 * preflights. JSON answers allow nothing to load or frame them; GraphiQL keeps its own policy.
 */

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false, config: { corsOrigins: ['https://app.example.com'] } });
  ({ apiKey: key } = await t.account());
});
afterAll(() => t?.stop());

const mcpInit = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
};

/** Requests covering every face and kind of answer, with the status each must get. */
const answers: { name: string; status: number; send: () => Promise<Response> }[] = [
  {
    name: 'REST answer',
    status: 200,
    send: () => fetch(`${t.url}/api/v1/wallet`, { headers: { authorization: `Bearer ${key}` } }),
  },
  { name: 'REST 401', status: 401, send: () => fetch(`${t.url}/api/v1/wallet`) },
  {
    name: 'REST 400 (bad JSON)',
    status: 400,
    send: () =>
      fetch(`${t.url}/api/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{',
      }),
  },
  {
    name: 'REST 404 of an unknown run',
    status: 404,
    send: () => fetch(`${t.url}/api/v1/scrape/status/nope`, { headers: { authorization: `Bearer ${key}` } }),
  },
  { name: 'OpenAPI document', status: 200, send: () => fetch(`${t.url}/api/v1/openapi.json`) },
  {
    name: 'GraphQL answer',
    status: 200,
    send: () =>
      fetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ viewer { id } }' }),
      }),
  },
  {
    name: 'GraphQL 401',
    status: 401,
    send: () =>
      fetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ viewer { id } }' }),
      }),
  },
  {
    name: 'MCP answer',
    status: 200,
    send: () =>
      fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(mcpInit),
      }),
  },
  {
    name: 'MCP 401',
    status: 401,
    send: () =>
      fetch(`${t.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(mcpInit),
      }),
  },
  { name: 'health', status: 200, send: () => fetch(`${t.url}/health`) },
  { name: 'ready', status: 200, send: () => fetch(`${t.url}/ready`) },
  { name: 'metrics', status: 200, send: () => fetch(`${t.url}/metrics`) },
  { name: 'unknown path (404)', status: 404, send: () => fetch(`${t.url}/nowhere`) },
  { name: 'unknown API path (404)', status: 404, send: () => fetch(`${t.url}/api/v1/nowhere`, { method: 'POST' }) },
  {
    name: 'path that does not decode (400, before any route)',
    status: 400,
    send: () => fetch(`${t.url}/api/downloads/%ED%A0%80`, { headers: { authorization: `Bearer ${key}` } }),
  },
  {
    name: 'CORS preflight',
    status: 204,
    send: () =>
      fetch(`${t.url}/api/v1/wallet`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
      }),
  },
];

describe('security headers', () => {
  it.each(answers)(
    '$name: nosniff, no referrer, no framing, a policy that allows nothing',
    async ({ status, send }) => {
      const res = await send();
      await res.arrayBuffer();
      expect(res.status).toBe(status);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toBe(API_CSP);
      expect(res.headers.get('x-powered-by')).toBeNull();
      // Served over plain http: no HSTS (browsers ignore it there, and the operator's TLS decides).
      expect(res.headers.get('strict-transport-security')).toBeNull();
    },
  );

  it("the GraphiQL page and its files keep GraphiQL's own policy, with the other headers", async () => {
    const page = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(page.headers.get('content-security-policy')).toBe(GRAPHIQL_CSP);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    // Its scripts start web workers, which run under their own response's policy.
    const worker = /data-workers="([^"]+)"/.exec(html)![1]!.replace(/&quot;/g, '"');
    for (const file of Object.values(JSON.parse(worker) as Record<string, string>)) {
      expect(file.startsWith(GRAPHIQL_ASSETS)).toBe(true);
      const res = await fetch(`${t.url}${file}`);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe(GRAPHIQL_CSP);
    }
  });

  it('a gateway whose public URL is https sends HSTS', async () => {
    const secure = await startTestApp({ worker: false, config: { publicUrl: 'https://api.example.com' } });
    try {
      const res = await fetch(`${secure.url}/health`);
      expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000');
    } finally {
      await secure.stop();
    }
  });
});

describe('X-Request-Id', () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it.each(answers)('$name: answers an id of its own when none was sent', async ({ send }) => {
    const res = await send();
    await res.arrayBuffer();
    expect(res.headers.get('x-request-id')).toMatch(UUID);
  });

  it('is readable by the browser apps of CORS_ORIGINS', async () => {
    const res = await fetch(`${t.url}/api/v1/wallet`, {
      headers: { origin: 'https://app.example.com', authorization: `Bearer ${key}` },
    });
    await res.arrayBuffer();
    expect((res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/,\s*/)).toContain(
      'x-request-id',
    );
  });

  it('every request gets a new id', async () => {
    const ids = await Promise.all(
      [1, 2, 3].map(async () => (await fetch(`${t.url}/health`)).headers.get('x-request-id')),
    );
    expect(new Set(ids).size).toBe(3);
  });

  it('keeps a sane id the caller sent, on answers and refusals alike', async () => {
    for (const id of ['req-123', 'abc.DEF_9:x/y+z=', 'a'.repeat(128), '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0']) {
      for (const path of ['/health', '/api/v1/wallet', '/nowhere']) {
        const res = await fetch(`${t.url}${path}`, { headers: { 'x-request-id': id } });
        await res.arrayBuffer();
        expect(res.headers.get('x-request-id'), `${path} ${id}`).toBe(id);
      }
    }
  });

  it('replaces an id that is too long, empty or carries other characters', async () => {
    for (const id of ['a'.repeat(129), ' ', 'has space', 'quote"', 'semi;colon', 'new\tline', 'ünï', '<script>']) {
      const res = await fetch(`${t.url}/health`, { headers: { 'x-request-id': id } });
      await res.arrayBuffer();
      expect(res.headers.get('x-request-id'), JSON.stringify(id)).toMatch(UUID);
    }
  });
});
