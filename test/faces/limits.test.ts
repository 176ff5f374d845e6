import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeAllowance, utcDay } from '../../src/billing/allowances.ts';
import { housekeeping } from '../../src/runs/retention.ts';
import { CRONTAB } from '../../workers/tasks.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { sourceOf } from '../helpers/documents.ts';
import { spawnGateway, type Gateway } from '../helpers/process.ts';
import { graphql } from '../helpers/gql/index.ts';

const Viewer = graphql(`query LimitsViewer { viewer { id } }`);
const StartIdempotent = graphql(`
  mutation LimitsStartIdempotent($input: StartMapsScrapeInput!, $key: String) {
    startMapsScrape(input: $input, idempotencyKey: $key) { run { id } userErrors { code field } }
  }
`);

describe('rate limit: 100 requests per minute per key, shared by gateway processes', () => {
  let a: TestApp;
  let b: Gateway;
  let bUrl: string;

  beforeAll(async () => {
    a = await startTestApp({ worker: false, config: { rateLimitPerMinute: 100 } });
    b = await spawnGateway({ DATABASE_URL: a.database.url, LOG_LEVEL: 'warn', LEADGATE_INLINE_WORKER: 'false' });
    bUrl = b.url;
  });
  afterAll(async () => {
    if (b) {
      b.kill('SIGTERM');
      await b.exited();
    }
    await a?.stop();
  });

  it('counts requests through both processes together; the 101st gets 429 with Retry-After', async () => {
    const { apiKey } = await a.account();
    const auth = { authorization: `Bearer ${apiKey}` };
    const seen = { a: [] as number[], b: [] as number[] };
    for (let i = 0; i < 100; i++) {
      const which = i % 2 === 0 ? 'a' : 'b';
      const res = await fetch(`${which === 'a' ? a.url : bUrl}/api/v1/wallet`, { headers: auth });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('100;w=60');
      seen[which].push(Number(/remaining=(\d+)/.exec(res.headers.get('ratelimit') ?? '')![1]));
    }
    // Each process's figure falls with every request and never exceeds what it has not used itself.
    for (const list of [seen.a, seen.b]) {
      for (const [n, remaining] of list.entries()) expect(remaining).toBeLessThanOrEqual(99 - n);
      for (let n = 1; n < list.length; n++) expect(list[n]!).toBeLessThan(list[n - 1]!);
    }
    expect(Math.min(...seen.a, ...seen.b)).toBe(0);
    for (const url of [bUrl, a.url]) {
      const refused = await fetch(`${url}/api/v1/wallet`, { headers: auth });
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.headers.get('ratelimit')).toMatch(/^limit=100, remaining=0, reset=\d+$/);
      expect((await refused.json()).error.code).toBe('rate_limited');
    }
    // GraphQL shares the budget and answers in GraphQL's shape.
    const gql = await fetch(`${a.url}/graphql`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ query: sourceOf(Viewer) }),
    });
    expect(gql.status).toBe(429);
    expect((await gql.json()).errors[0].extensions.code).toBe('RATE_LIMITED');
    // Another key has its own budget.
    const other = await a.account();
    expect(
      (await fetch(`${bUrl}/api/v1/wallet`, { headers: { authorization: `Bearer ${other.apiKey}` } })).status,
    ).toBe(200);
  });

  it('shows the budget on GraphQL responses too', async () => {
    const { apiKey } = await a.account();
    const res = await a.graphql(apiKey, Viewer);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toMatch(/^limit=100, remaining=99, reset=(60|59)$/);
  });

  it('never lets concurrent processes exceed the limit, whatever the interleaving', async () => {
    const { apiKey } = await a.account();
    const auth = { authorization: `Bearer ${apiKey}` };
    const burst = await Promise.all(
      Array.from({ length: 160 }, (_, i) =>
        fetch(`${i % 3 === 0 ? bUrl : a.url}/api/v1/wallet`, { headers: auth }).then((r) => r.status),
      ),
    );
    const ok = burst.filter((s) => s === 200).length;
    expect(ok).toBeLessThanOrEqual(100);
    expect(ok).toBeGreaterThanOrEqual(95);
    expect(burst.filter((s) => s === 429).length).toBe(160 - ok);
  });
});

describe('retention: results kept 48 hours', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.stop());

  it('downloads until expiresAt, then 410; housekeeping deletes the rows and keeps the run', async () => {
    const { apiKey } = await t.account();
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key: apiKey,
      body: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 4 },
    });
    const runId = started.body.runId;
    const done = await t.waitForRun(apiKey, runId);
    const expiresAt = Date.parse(done.expiresAt as string);
    const realClock = t.app.core.clock;
    try {
      t.app.core.clock = () => new Date(expiresAt - 60_000);
      expect((await t.request('GET', `/api/downloads/${runId}`, { key: apiKey })).status).toBe(200);
      expect(await housekeeping(t.app.core.db, t.app.core.clock())).toMatchObject({ runs: 0, rows: 0 });

      t.app.core.clock = () => new Date(expiresAt + 1_000);
      const gone = await t.request('GET', `/api/downloads/${runId}`, { key: apiKey });
      expect(gone.status).toBe(410);
      expect(gone.body.error.code).toBe('results_expired');
      expect((await t.request('GET', `/api/v1/runs/${runId}/results`, { key: apiKey })).status).toBe(410);

      const purged = await housekeeping(t.app.core.db, t.app.core.clock());
      expect(purged).toMatchObject({ runs: 1, rows: 4 });
      const [items] = await t.app.core.sql`select count(*)::int as n from run_item where run_id = ${runId}`;
      expect(items!.n).toBe(0);
      const status = await t.request('GET', `/api/v1/scrape/status/${runId}`, { key: apiKey });
      expect(status.body).toMatchObject({ status: 'SUCCEEDED', handled: 4, expiresAt: done.expiresAt });
    } finally {
      t.app.core.clock = realClock;
    }
  });

  it('runs housekeeping from the worker every hour', () => {
    expect(CRONTAB).toMatch(/^7 \* \* \* \* housekeeping$/m);
  });
});

describe('Idempotency-Key', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ worker: false });
  });
  afterAll(() => t?.stop());
  const runCount = async (accountId: string) =>
    (await t.app.core.sql`select count(*)::int as n from run where account_id = ${accountId}`)[0]!.n as number;

  it('replays the first response for the same key and body; 422 for another body', async () => {
    const { accountId, apiKey } = await t.account();
    const post = (body: unknown, key: string) =>
      t.request('POST', '/api/v1/scrape/maps', { key: apiKey, body, headers: { 'idempotency-key': key } });
    const first = await post(DENVER_DENTISTS, 'order-1');
    const replay = await post(DENVER_DENTISTS, 'order-1');
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await runCount(accountId)).toBe(1);

    const reused = await post({ ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 5 }, 'order-1');
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    expect(await runCount(accountId)).toBe(1);

    expect((await post(DENVER_DENTISTS, 'order-2')).body.runId).not.toBe(first.body.runId);
    expect(await runCount(accountId)).toBe(2);
  });

  it('lets concurrent requests with one key start one run', async () => {
    const { accountId, apiKey } = await t.account();
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.request('POST', '/api/v1/scrape/maps', {
          key: apiKey,
          body: DENVER_DENTISTS,
          headers: { 'idempotency-key': 'burst' },
        }),
      ),
    );
    expect(new Set(results.map((r) => r.body.runId)).size).toBe(1);
    expect(await runCount(accountId)).toBe(1);
  });

  it('keeps keys per account, does not store refusals, and guards buy-credits too', async () => {
    const one = await t.account();
    const two = await t.account();
    const headers = { 'idempotency-key': 'shared' };
    const a = await t.request('POST', '/api/v1/scrape/maps', { key: one.apiKey, body: DENVER_DENTISTS, headers });
    const b = await t.request('POST', '/api/v1/scrape/maps', { key: two.apiKey, body: DENVER_DENTISTS, headers });
    expect(a.body.runId).not.toBe(b.body.runId);

    // A refusal is not kept: the corrected request with the same key is answered afresh.
    const bad = await t.request('POST', '/api/v1/scrape/maps', {
      key: one.apiKey,
      body: {},
      headers: { 'idempotency-key': 'bad-first' },
    });
    expect(bad.status).toBe(400);
    const fixed = await t.request('POST', '/api/v1/scrape/maps', {
      key: one.apiKey,
      body: DENVER_DENTISTS,
      headers: { 'idempotency-key': 'bad-first' },
    });
    expect(fixed.status).toBe(200);
    expect(fixed.body.runId).toEqual(expect.any(String));
    // …and that answer is the one kept from then on.
    const replay = await t.request('POST', '/api/v1/scrape/maps', {
      key: one.apiKey,
      body: DENVER_DENTISTS,
      headers: { 'idempotency-key': 'bad-first' },
    });
    expect(replay.body.runId).toBe(fixed.body.runId);

    const buy = () =>
      t.request('POST', '/api/v1/buy-credits', {
        key: one.apiKey,
        body: { amount: 20 },
        headers: { 'idempotency-key': 'buy-20' },
      });
    await buy();
    await buy();
    const wallet = await t.request('GET', '/api/v1/wallet', { key: one.apiKey });
    expect(wallet.body.wallet.purchased_credits_dollars).toBe('26.00'); // one purchase of 20 + 30 % scale bonus
  });

  it('refuses a malformed key', async () => {
    const { apiKey } = await t.account();
    const res = await t.request('POST', '/api/v1/scrape/maps', {
      key: apiKey,
      body: DENVER_DENTISTS,
      headers: { 'idempotency-key': 'x'.repeat(256) },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe('Idempotency-Key');
  });

  it('works the same in GraphQL through idempotencyKey', async () => {
    const { accountId, apiKey } = await t.account();
    const first = await t.graphql(apiKey, StartIdempotent, { input: DENVER_DENTISTS, key: 'g-1' });
    const again = await t.graphql(apiKey, StartIdempotent, { input: DENVER_DENTISTS, key: 'g-1' });
    expect(again.body.data!.startMapsScrape.run!.id).toBe(first.body.data!.startMapsScrape.run!.id);
    const other = await t.graphql(apiKey, StartIdempotent, {
      input: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 2 },
      key: 'g-1',
    });
    expect(other.body.data!.startMapsScrape).toEqual({
      run: null,
      userErrors: [{ code: 'IDEMPOTENCY_KEY_REUSED', field: null }],
    });
    expect(await runCount(accountId)).toBe(1);
  });
});

describe('daily allowances', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ worker: false });
  });
  afterAll(() => t?.stop());

  it('grants up to the limit per UTC day, then 429 with the seconds to midnight; a new day starts fresh', async () => {
    const { accountId } = await t.account();
    const db = t.app.core.sql;
    const noon = new Date('2026-11-21T12:00:00Z');
    expect(await takeAllowance(db, accountId, 'database', 60, 100, noon)).toEqual({ granted: 60, remaining: 40 });
    expect(await takeAllowance(db, accountId, 'database', 60, 100, noon)).toEqual({ granted: 40, remaining: 0 });
    const refused = await takeAllowance(db, accountId, 'database', 1, 100, noon).catch((e) => e);
    expect(refused).toMatchObject({ status: 429, code: 'daily_limit_reached', retryAfterSecs: 12 * 3600 });
    expect(refused.message).toMatch(/resets at midnight UTC/);
    // Enrichment has its own allowance, and the next day starts from zero.
    expect((await takeAllowance(db, accountId, 'enrichment', 5, 100, noon)).granted).toBe(5);
    expect(await takeAllowance(db, accountId, 'database', 10, 100, new Date('2026-11-22T00:00:01Z'))).toEqual({
      granted: 10,
      remaining: 90,
    });
  });

  it('never grants more than the limit to concurrent requests', async () => {
    const { accountId } = await t.account();
    const now = new Date('2026-11-21T08:00:00Z');
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, () =>
        t.app.core.sql.begin((tx) => takeAllowance(tx as never, accountId, 'enrichment', 7, 100, now)),
      ),
    );
    const granted = results
      .filter((r) => r.status === 'fulfilled')
      .reduce((sum, r) => sum + (r as PromiseFulfilledResult<{ granted: number }>).value.granted, 0);
    expect(granted).toBe(100);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(30 - 15);
  });

  it('computes the UTC day and the time to its end', () => {
    expect(utcDay(new Date('2026-11-21T23:59:30Z'))).toEqual({ day: '2026-11-21', secondsToReset: 30 });
    expect(utcDay(new Date('2026-11-22T00:00:00Z'))).toEqual({ day: '2026-11-22', secondsToReset: 86_400 });
  });
});
