import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRateLimiter,
  RateLimitedError,
  rateLimitHeaders,
  type RateLimitState,
} from '../../src/accounts/rate-limit.ts';
import { openDirectDb, type DirectDb } from '../helpers/direct-db.ts';

let d: DirectDb;

beforeAll(async () => {
  d = await openDirectDb();
});
afterAll(() => d?.close());

/** A clock the test moves by hand. */
function clock(start = 1_800_000_000_000) {
  const c = { at: start, now: () => c.at };
  return c;
}

let keys = 0;
const newKey = () => `key_${process.pid}_${++keys}`;

async function row(key: string) {
  const [r] = await d.sql`select points, expire::text as expire from rate_limit where key = ${key}`;
  return r ? { points: r.points as number, expire: Number(r.expire) } : undefined;
}

async function refusal(promise: Promise<unknown>): Promise<RateLimitState> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RateLimitedError);
  expect(err).toMatchObject({ status: 429, code: 'rate_limited' });
  return (err as RateLimitedError).state;
}

describe('rateLimitHeaders', () => {
  it('sends the draft RateLimit headers, and Retry-After only with a refusal', () => {
    const state = { limit: 100, remaining: 42, resetSecs: 17 };
    expect(rateLimitHeaders(state, false)).toEqual({
      'RateLimit-Policy': '100;w=60',
      RateLimit: 'limit=100, remaining=42, reset=17',
    });
    expect(rateLimitHeaders({ ...state, remaining: 0 }, true)).toEqual({
      'RateLimit-Policy': '100;w=60',
      RateLimit: 'limit=100, remaining=0, reset=17',
      'Retry-After': '17',
    });
  });

  it('names a window other than a minute in the policy', () => {
    expect(rateLimitHeaders({ limit: 5, remaining: 0, resetSecs: 3000, windowSecs: 3600 }, true)).toEqual({
      'RateLimit-Policy': '5;w=3600',
      RateLimit: 'limit=5, remaining=0, reset=3000',
      'Retry-After': '3000',
    });
  });

  it('says the limit and when to retry in the refusal', () => {
    const err = new RateLimitedError({ limit: 100, remaining: 0, resetSecs: 9 });
    expect(err.message).toBe('Too many requests: the limit is 100 per minute per API key. Retry in 9 s.');
    expect(err.state).toEqual({ limit: 100, remaining: 0, resetSecs: 9 });
  });
});

describe('createRateLimiter: requests per minute per key, counted in Postgres', () => {
  it('serves exactly the limit in a window, then refuses until it ends', async () => {
    const c = clock();
    const limiter = createRateLimiter(d.sql, 10, c.now);
    const key = newKey();
    const remaining: number[] = [];
    for (let i = 0; i < 10; i++) remaining.push((await limiter.consume(key)).remaining);
    expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(await row(key)).toEqual({ points: 10, expire: c.at + 60_000 });
    expect(await refusal(limiter.consume(key))).toEqual({ limit: 10, remaining: 0, resetSecs: 60 });
    c.at += 30_000;
    expect(await refusal(limiter.consume(key))).toEqual({ limit: 10, remaining: 0, resetSecs: 30 });
    c.at += 29_999;
    expect(await refusal(limiter.consume(key))).toEqual({ limit: 10, remaining: 0, resetSecs: 1 });
    // The window ends: a new one starts with the full budget.
    c.at += 1;
    expect(await limiter.consume(key)).toEqual({ limit: 10, remaining: 9, resetSecs: 60 });
    expect(await row(key)).toEqual({ points: 1, expire: c.at + 60_000 });
  });

  it('drops what it reserved in a window once the window ends', async () => {
    const c = clock();
    const limiter = createRateLimiter(d.sql, 80, c.now);
    const key = newKey();
    // 10 reserved, 1 used: 9 left over when the window ends.
    expect((await limiter.consume(key)).remaining).toBe(79);
    c.at += 60_000;
    expect(await limiter.consume(key)).toEqual({ limit: 80, remaining: 79, resetSecs: 60 });
    let served = 1;
    for (;;) {
      try {
        await limiter.consume(key);
        served++;
      } catch (err) {
        expect(err).toBeInstanceOf(RateLimitedError);
        break;
      }
    }
    expect(served).toBe(80);
  });

  it('reserves a share of what is left, at most 25 at a time, so most requests touch no database', async () => {
    const c = clock();
    const limiter = createRateLimiter(d.sql, 100, c.now);
    const key = newKey();
    expect(await limiter.consume(key)).toEqual({ limit: 100, remaining: 99, resetSecs: 60 });
    // 100 / 8 = 12 reserved at first.
    expect((await row(key))!.points).toBe(12);
    for (let i = 0; i < 11; i++) await limiter.consume(key);
    expect((await row(key))!.points).toBe(12);
    // The 13th takes (100 - 12) / 8 = 11 more.
    expect((await limiter.consume(key)).remaining).toBe(87);
    expect((await row(key))!.points).toBe(23);

    const big = createRateLimiter(d.sql, 1_000, c.now);
    const bigKey = newKey();
    expect((await big.consume(bigKey)).remaining).toBe(999);
    expect((await row(bigKey))!.points).toBe(25);
    for (let i = 0; i < 25; i++) await big.consume(bigKey);
    expect((await row(bigKey))!.points).toBe(50);
  });

  it('reserves one at a time near the limit and for small limits', async () => {
    const c = clock();
    const limiter = createRateLimiter(d.sql, 3, c.now);
    const key = newKey();
    expect((await limiter.consume(key)).remaining).toBe(2);
    expect((await row(key))!.points).toBe(1);
    expect((await limiter.consume(key)).remaining).toBe(1);
    expect((await row(key))!.points).toBe(2);
  });

  it('counts the requests of several processes together, never over the limit', async () => {
    const c = clock();
    const key = newKey();
    const processes = [
      createRateLimiter(d.sql, 20, c.now),
      createRateLimiter(d.sql, 20, c.now),
      createRateLimiter(d.sql, 20, c.now),
    ];
    let served = 0;
    let refused = 0;
    for (let round = 0; round < 15; round++) {
      const results = await Promise.allSettled(processes.map((p) => p.consume(key)));
      served += results.filter((r) => r.status === 'fulfilled').length;
      refused += results.filter((r) => r.status === 'rejected').length;
    }
    expect(served).toBeLessThanOrEqual(20);
    expect(served).toBeGreaterThanOrEqual(15);
    expect(served + refused).toBe(45);
    expect((await row(key))!.points).toBeLessThanOrEqual(20);
  });

  it('picks up the window another process opened, and refuses when it has used everything', async () => {
    const c = clock();
    const key = newKey();
    const a = createRateLimiter(d.sql, 5, c.now);
    for (let i = 0; i < 5; i++) await a.consume(key);
    c.at += 10_000;
    const b = createRateLimiter(d.sql, 5, c.now);
    expect(await refusal(b.consume(key))).toEqual({ limit: 5, remaining: 0, resetSecs: 50 });
  });

  it('keeps keys apart', async () => {
    const c = clock();
    const limiter = createRateLimiter(d.sql, 2, c.now);
    const [k1, k2] = [newKey(), newKey()];
    await limiter.consume(k1);
    await limiter.consume(k1);
    await refusal(limiter.consume(k1));
    expect((await limiter.consume(k2)).remaining).toBe(1);
  });

  it('serves requests that arrive together from one reservation', async () => {
    const c = clock();
    const limiter = createRateLimiter(d.sql, 80, c.now);
    const key = newKey();
    const states = await Promise.all(Array.from({ length: 10 }, () => limiter.consume(key)));
    expect(states.map((s) => s.remaining).sort((x, y) => y - x)).toEqual([79, 78, 77, 76, 75, 74, 73, 72, 71, 70]);
    expect((await row(key))!.points).toBe(10);
  });

  it('counts over the window it is given: an hour', async () => {
    const c = clock();
    const limiter = createRateLimiter(d.sql, 2, c.now, 3600_000);
    const key = newKey();
    expect(await limiter.consume(key)).toEqual({ limit: 2, remaining: 1, resetSecs: 3600, windowSecs: 3600 });
    await limiter.consume(key);
    c.at += 59 * 60_000;
    expect(await refusal(limiter.consume(key))).toEqual({ limit: 2, remaining: 0, resetSecs: 60, windowSecs: 3600 });
    expect(await row(key)).toEqual({ points: 2, expire: c.at - 59 * 60_000 + 3600_000 });
    c.at += 60_000;
    expect((await limiter.consume(key)).remaining).toBe(1);
  });

  it('takes back a unit it counted, in this process and the same window only, once', async () => {
    const c = clock();
    const limiter = createRateLimiter(d.sql, 3, c.now);
    const key = newKey();
    const units = [await limiter.consume(key), await limiter.consume(key), await limiter.consume(key)];
    expect(limiter.exhausted(key)).toEqual({ limit: 3, remaining: 0, resetSecs: 60 });
    await refusal(limiter.consume(key));
    limiter.refund(key, units[0]!);
    limiter.refund(key, units[0]!); // given back already: nothing more
    expect(limiter.exhausted(key)).toBeUndefined();
    expect((await limiter.consume(key)).remaining).toBe(0);
    await refusal(limiter.consume(key));
    // The shared counter was not written: another process sees the window full.
    expect((await row(key))!.points).toBe(3);
    await refusal(createRateLimiter(d.sql, 3, c.now).consume(key));
    // A unit of a window that has ended is dropped.
    c.at += 60_000;
    const fresh = await limiter.consume(key);
    limiter.refund(key, units[1]!);
    expect(fresh.remaining).toBe(2);
    expect((await limiter.consume(key)).remaining).toBe(1);
  });

  it('makes the counter row again when housekeeping removed it', async () => {
    const c = clock();
    const limiter = createRateLimiter(d.sql, 2, c.now);
    const key = newKey();
    await limiter.consume(key);
    await d.sql`delete from rate_limit where key = ${key}`;
    expect((await limiter.consume(key)).remaining).toBe(1);
    expect(await row(key)).toEqual({ points: 1, expire: c.at + 60_000 });
  });
});
