import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sql } from '../../db/client.ts';
import { AppError } from './errors.ts';

const WINDOW_SECS = 60;

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSecs: number;
}

export interface RateLimiter {
  /** Counts one request of `keyId`; throws 429 `rate_limited` (with the state) when over the limit. */
  consume(keyId: string): Promise<RateLimitState>;
}

export class RateLimitedError extends AppError {
  constructor(readonly state: RateLimitState) {
    super(429, 'rate_limited', `Too many requests: the limit is ${state.limit} per minute per API key. Retry in ${state.resetSecs} s.`);
  }
}

/** The draft-7 RateLimit headers, plus Retry-After when refused. */
export function rateLimitHeaders(state: RateLimitState, refused: boolean): Record<string, string> {
  return {
    'RateLimit-Policy': `${state.limit};w=${WINDOW_SECS}`,
    RateLimit: `limit=${state.limit}, remaining=${state.remaining}, reset=${state.resetSecs}`,
    ...(refused ? { 'Retry-After': String(state.resetSecs) } : {}),
  };
}

/**
 * Requests per minute per key, counted in Postgres (rate-limiter-flexible's layout, an UNLOGGED
 * table) so every gateway process shares one budget. Keys over their limit are refused from memory
 * until the window ends, so a flood does not become a flood of writes.
 */
export function createRateLimiter(sql: Sql, perMinute: number): RateLimiter {
  const storeClient = {
    query: async ({ text, values }: { text: string; values?: unknown[] }) => ({ rows: await sql.unsafe(text, (values ?? []) as never[]) }),
  };
  const limiter = new RateLimiterPostgres({
    storeClient,
    storeType: 'pool',
    tableName: 'rate_limit',
    tableCreated: true,
    clearExpiredByTimeout: false,
    keyPrefix: 'api',
    points: perMinute,
    duration: WINDOW_SECS,
    inMemoryBlockOnConsumed: perMinute,
  });
  const state = (res: RateLimiterRes): RateLimitState => ({
    limit: perMinute,
    remaining: res.remainingPoints,
    resetSecs: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  });
  return {
    async consume(keyId) {
      try {
        return state(await limiter.consume(keyId));
      } catch (err) {
        if (err instanceof RateLimiterRes) throw new RateLimitedError(state(err));
        throw err;
      }
    },
  };
}
