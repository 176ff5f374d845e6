import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'htmlparser2';
import { findAll, getAttributeValue, textContent } from 'domutils';
import WebSocket from 'ws';
import { print } from 'graphql';
import { loadConfig } from '../../../src/config.ts';
import { GRAPHIQL_CSP } from '../../../schema/server/graphiql.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { graphql } from '../../helpers/gql/index.ts';

/**
 * Browser apps: CORS for the origins of CORS_ORIGINS on every answer of the HTTP server (REST,
 * /graphql, /mcp; 401, 429 and 404 included), preflights, the same origins for graphql-ws sockets;
 * and GraphiQL served by the gateway itself under a strict Content-Security-Policy.
 */

const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.net';
const EXPOSED = ['RateLimit', 'RateLimit-Policy', 'Retry-After'];
const TYPENAME = print(graphql(`query BrowserTypename { __typename }`));

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({
    worker: false,
    config: { corsOrigins: [APP, 'http://localhost:5173'], rateLimitPerMinute: 5 },
  });
  ({ apiKey: key } = await t.account());
});
afterAll(() => t?.stop());

const fetchFrom = (origin: string, path: string, init: RequestInit = {}) =>
  fetch(`${t.url}${path}`, { ...init, headers: { origin, ...(init.headers as Record<string, string>) } });

/** The CORS headers of an answer to an allowed origin: that origin, no credentials, the rate-limit headers readable. */
function expectCors(res: Response, origin = APP) {
  expect(res.headers.get('access-control-allow-origin')).toBe(origin);
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(/,\s*/).map((h) => h.toLowerCase());
  for (const header of EXPOSED) expect(exposed).toContain(header.toLowerCase());
  expect(res.headers.get('vary')).toMatch(/origin/i);
}

describe('CORS', () => {
  it('reads CORS_ORIGINS: none by default, origins only', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: `${APP}, http://localhost:5173` }).corsOrigins).toEqual([
      APP,
      'http://localhost:5173',
    ]);
    for (const bad of ['*', 'app.example.com', `${APP}/`, `${APP}/path`, 'ftp://files.example.com']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(/CORS_ORIGINS/);
    }
  });

  it('answers preflights of REST, /graphql and /mcp for an allowed origin, before any key is asked for', async () => {
    for (const [path, method] of [
      ['/graphql', 'POST'],
      ['/api/v1/scrape/maps', 'POST'],
      ['/api/v1/wallet', 'GET'],
      ['/api/v1/webhooks/wh_1', 'DELETE'],
      ['/mcp', 'POST'],
    ] as const) {
      const res = await fetchFrom(APP, path, {
        method: 'OPTIONS',
        headers: {
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization, content-type, idempotency-key',
        },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(APP);
      expect(res.headers.get('access-control-allow-methods')).toContain(method);
      expect(res.headers.get('access-control-allow-headers')).toMatch(/authorization.*content-type.*idempotency-key/);
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('access-control-max-age')).toBe('600');
    }
    const other = await fetchFrom(OTHER, '/graphql', {
      method: 'OPTIONS',
      headers: { 'access-control-request-method': 'POST' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('puts the CORS headers on every answer to an allowed origin: 200, 401, 404 and on every face', async () => {
    const gql = (k?: string) =>
      fetchFrom(APP, '/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(k ? { authorization: `Bearer ${k}` } : {}) },
        body: JSON.stringify({ query: TYPENAME }),
      });
    const ok = await gql(key);
    expect(ok.status).toBe(200);
    expectCors(ok);
    const answers = [
      await gql(),
      await fetchFrom(APP, '/api/v1/wallet'),
      await fetchFrom(APP, '/mcp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(401);
      expectCors(res);
    }
    const missing = await fetchFrom(APP, '/api/v1/nope', { headers: { authorization: `Bearer ${key}` } });
    expect(missing.status).toBe(404);
    expectCors(missing);
    const second = await fetchFrom('http://localhost:5173', '/health');
    expectCors(second, 'http://localhost:5173');
  });

  it('puts them on 429 answers too, so a browser app can read Retry-After', async () => {
    const { apiKey } = await t.account();
    const auth = { authorization: `Bearer ${apiKey}` };
    for (let i = 0; i < 5; i++) expect((await fetchFrom(APP, '/api/v1/wallet', { headers: auth })).status).toBe(200);
    const rest = await fetchFrom(APP, '/api/v1/wallet', { headers: auth });
    const gql = await fetchFrom(APP, '/graphql', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ query: TYPENAME }),
    });
    for (const res of [rest, gql]) {
      expect(res.status).toBe(429);
      expectCors(res);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect((await gql.json()).errors[0].extensions.code).toBe('RATE_LIMITED');
  });

  it('gives other origins no CORS headers, on /graphql as everywhere', async () => {
    const gql = await fetchFrom(OTHER, '/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: TYPENAME }),
    });
    expect(gql.status).toBe(200);
    expect(gql.headers.get('access-control-allow-origin')).toBeNull();
    expect(gql.headers.get('access-control-allow-credentials')).toBeNull();
    const rest = await fetchFrom(OTHER, '/api/v1/wallet', { headers: { authorization: `Bearer ${key}` } });
    expect(rest.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('lets graphql-ws sockets be opened from allowed origins, the gateway’s own and non-browser clients only', async () => {
    const open = (origin?: string) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(
          `${t.url.replace(/^http/, 'ws')}/graphql`,
          'graphql-transport-ws',
          origin ? { origin } : {},
        );
        socket.once('open', () => {
          socket.close();
          resolve(101);
        });
        socket.once('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          socket.terminate();
        });
        socket.once('error', () => {});
      });
    expect(await open(APP)).toBe(101);
    expect(await open(t.url)).toBe(101);
    expect(await open()).toBe(101);
    expect(await open(OTHER)).toBe(403);
  });
});

describe('GraphiQL served by the gateway', () => {
  async function page() {
    const res = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    return { res, html: await res.text() };
  }

  it('sends a strict Content-Security-Policy: everything from the gateway, no inline or evaluated script', async () => {
    const { res } = await page();
    const csp = res.headers.get('content-security-policy');
    expect(csp).toBe(GRAPHIQL_CSP);
    const directives = new Map(csp!.split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1)] as const));
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    // No source anywhere names another host.
    expect(csp).not.toMatch(/https?:|\*/);
  });

  it('references only files the gateway serves itself, each of which answers without a key', async () => {
    const { html } = await page();
    const dom = parseDocument(html);
    const scripts = findAll((el) => el.name === 'script', dom.children);
    const links = findAll((el) => el.name === 'link', dom.children);
    expect(scripts.length).toBeGreaterThanOrEqual(2);
    // No inline script (the CSP would block it): each script has a src and no body.
    for (const script of scripts) {
      expect(getAttributeValue(script, 'src')).toBeTruthy();
      expect(textContent(script).trim()).toBe('');
    }
    expect(findAll((el) => el.name === 'style', dom.children)).toEqual([]);
    const root = findAll((el) => getAttributeValue(el, 'id') === 'root', dom.children)[0]!;
    const workers = Object.values(JSON.parse(getAttributeValue(root, 'data-workers')!)) as string[];
    expect(workers.length).toBe(3);
    const refs = [
      ...scripts.map((s) => getAttributeValue(s, 'src')!),
      ...links.map((l) => getAttributeValue(l, 'href')!),
      ...workers,
    ];
    for (const ref of refs) {
      const url = new URL(ref, `${t.url}/graphql`);
      expect(url.origin, ref).toBe(new URL(t.url).origin);
      expect(ref, 'a path on the gateway, not a URL of another host').toMatch(/^\/[^/]/);
      const asset = await fetch(url);
      expect(asset.status, ref).toBe(200);
      const type = asset.headers.get('content-type') ?? '';
      expect(type, ref).toMatch(/^(text\/javascript|text\/css|image\/x-icon)/);
      expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
      const body = await asset.text();
      expect(body.length, ref).toBeGreaterThan(100);
      if (type.startsWith('text/css')) expect(body).not.toMatch(/url\(\s*['"]?(https?:)?\/\//);
      if (ref.endsWith('graphiql.js')) expect(body).not.toMatch(/unpkg\.com|jsdelivr|cdnjs/);
    }
    expect(refs.some((r) => r.endsWith('.css'))).toBe(true);
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
    const missing = await fetch(new URL(refs[0]!.replace(/[^/]+$/, 'nope.js'), t.url));
    expect(missing.status).toBe(404);
  });

  it('carries the title, the Authorization header template and the graphql-ws protocol in the page', async () => {
    const { html } = await page();
    const root = findAll((el) => getAttributeValue(el, 'id') === 'root', parseDocument(html).children)[0]!;
    const options = JSON.parse(getAttributeValue(root, 'data-options')!);
    expect(options).toMatchObject({ title: 'leadgate GraphQL', subscriptionsProtocol: 'WS' });
    expect(JSON.parse(options.headers)).toEqual({ Authorization: 'Bearer <API_KEY>' });
  });
});
