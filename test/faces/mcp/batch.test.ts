import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMITED_RPC_CODE } from '../../../src/mcp/http.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';
import { runCount } from '../../helpers/runs.ts';

/**
 * A JSON-RPC batch at /mcp costs one request of the key's budget per message: the messages past the
 * budget are answered with a rate_limited JSON-RPC error and never run.
 */

const LIMIT = 10;
let t: TestApp;

beforeAll(async () => {
  // No worker: the runs a batch starts stay as they were written.
  t = await startTestApp({ worker: false, config: { rateLimitPerMinute: LIMIT } });
});
afterAll(() => t?.stop());

const HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' };
const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const post = (key: string, body: unknown) => t.request('POST', '/mcp', { key, headers: HEADERS, body });
const runsOf = (accountId: string) => runCount(t.app.core.sql, accountId);

describe('an MCP JSON-RPC batch', () => {
  it('counts each message against the key’s rate limit', async () => {
    const { apiKey } = await t.account();
    const res = await post(apiKey, [
      call(1, 'get_wallet'),
      call(2, 'get_wallet'),
      call(3, 'get_wallet'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.map((m: { id: number }) => m.id).sort()).toEqual([1, 2, 3]);
    expect(res.headers.get('ratelimit')).toBe(
      `limit=${LIMIT}, remaining=${LIMIT - 4}, reset=${res.headers.get('ratelimit')!.split('reset=')[1]}`,
    );
    expect(res.headers.get('retry-after')).toBeNull();
  });

  it('answers the messages past the budget with a rate_limited JSON-RPC error, without running them', async () => {
    const { apiKey, accountId } = await t.account();
    const batch = Array.from({ length: LIMIT + 3 }, (_, i) => call(i + 1, 'scrape_maps', DENVER_DENTISTS));
    const res = await post(apiKey, batch);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(LIMIT + 3);
    const byId = new Map(res.body.map((m: { id: number }) => [m.id, m]));
    for (let id = 1; id <= LIMIT; id++)
      expect(byId.get(id), `message ${id}`).toMatchObject({
        result: { structuredContent: { status: expect.any(String) } },
      });
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    for (let id = LIMIT + 1; id <= LIMIT + 3; id++) {
      expect(byId.get(id), `message ${id}`).toEqual({
        jsonrpc: '2.0',
        id,
        error: {
          code: RATE_LIMITED_RPC_CODE,
          message: expect.stringMatching(/^Too many requests: the limit is 10 per minute per API key/),
          data: { error: { code: 'rate_limited', message: expect.any(String) }, retryAfter },
        },
      });
    }
    // Only the messages within the budget started a run.
    expect(await runsOf(accountId)).toBe(LIMIT);
    expect(res.headers.get('ratelimit')).toMatch(/remaining=0,/);

    // The key's window is used up: the next POST is refused before its body is read, as on REST.
    const next = await post(apiKey, call(99, 'get_wallet'));
    expect(next.status).toBe(429);
    expect(next.body.error.code).toBe('rate_limited');
    expect(next.headers.get('retry-after')).not.toBeNull();
    const rest = await t.request('GET', '/api/v1/wallet', { key: apiKey });
    expect(rest.status).toBe(429);
  });

  it('answers a refused request alone, and leaves the notifications past the budget unanswered', async () => {
    const { apiKey, accountId } = await t.account();
    const first = await post(
      apiKey,
      Array.from({ length: LIMIT - 1 }, (_, i) => call(i + 1, 'get_wallet')),
    );
    expect(first.body).toHaveLength(LIMIT - 1);
    // One message left in the budget: the notification takes it, the start and the other notification are refused.
    const res = await post(apiKey, [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      call(50, 'scrape_maps', DENVER_DENTISTS),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        jsonrpc: '2.0',
        id: 50,
        error: expect.objectContaining({
          code: RATE_LIMITED_RPC_CODE,
          data: expect.objectContaining({ error: expect.objectContaining({ code: 'rate_limited' }) }),
        }),
      },
    ]);
    expect(await runsOf(accountId)).toBe(0);
  });

  it('costs one request for a single message, as before', async () => {
    const { apiKey } = await t.account();
    const res = await post(apiKey, call(1, 'get_wallet'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { structuredContent: { wallet: expect.any(Object) } },
    });
    expect(res.headers.get('ratelimit')).toMatch(new RegExp(`remaining=${LIMIT - 1},`));
  });
});
