import type { Sql } from '../../db/client.ts';
import { AppError } from '../shared/errors.ts';

/** The window of a limiter made without one: the per-minute limits. */
const MINUTE_MS = 60_000;
/** A process reserves at most this many requests at once… */
const MAX_LEASE = 25;
/** …and at most 1/8 of what is left, so reservations shrink to single requests near the limit. */
const LEASE_SHARE = 8;

export interface RateLimitState {
  limit: number;
  /** Requests left in the window as this process last saw it (other processes' use shows at its next reservation). */
  remaining: number;
  /** Seconds until the window resets. */
  resetSecs: number;
  /** The window's length in seconds, when it is not a minute (the hourly sign-up limit). */
  windowSecs?: number;
}

export interface RateLimiter {
  /** Counts one request of `keyId`; throws 429 `rate_limited` (with the state) when over the limit. */
  consume(keyId: string): Promise<RateLimitState>;
  /**
   * The state of `keyId` when this process knows it has nothing left in its window (it was refused
   * here, or its last reservation took the rest), else undefined. Reads memory only: another process's
   * use shows at this process's next `consume`.
   */
  exhausted(keyId: string): RateLimitState | undefined;
  /**
   * Gives back the request `consume` counted when it answered `consumed`, once what it guarded turned
   * out not to be what the limit counts (a sign-in with the right password, a valid key). The unit goes
   * back to this process's reservation when that reservation is still of the same window, so this
   * process may serve one more request in it; nothing is written to the shared counter, so other
   * processes do not get it back. A unit of a window that has ended, or given back already, is dropped.
   */
  refund(keyId: string, consumed: RateLimitState): void;
}

export class RateLimitedError extends AppError {
  constructor(
    readonly state: RateLimitState,
    message = `Too many requests: the limit is ${state.limit} per minute per API key. Retry in ${state.resetSecs} s.`,
  ) {
    super(429, 'rate_limited', message);
  }
}

/** The draft-7 RateLimit headers, plus Retry-After when refused. */
export function rateLimitHeaders(state: RateLimitState, refused: boolean): Record<string, string> {
  return {
    'RateLimit-Policy': `${state.limit};w=${state.windowSecs ?? MINUTE_MS / 1000}`,
    RateLimit: `limit=${state.limit}, remaining=${state.remaining}, reset=${state.resetSecs}`,
    ...(refused ? { 'Retry-After': String(state.resetSecs) } : {}),
  };
}

interface Lease {
  /** Epoch ms when the key's shared window ends. */
  expire: number;
  /** Requests reserved by this process and not yet used. */
  left: number;
  /** What the shared counter had left when this process last reserved. */
  unreserved: number;
}

/**
 * Requests per window (a minute unless `windowMs` says otherwise) per key, shared by every gateway
 * process through one counter row per key in Postgres (an UNLOGGED table). A process reserves a few
 * requests at a time with one statement and serves them from memory, so most requests touch no
 * database; reservations shrink as the window fills, so together the processes never exceed the limit. Near the limit,
 * requests another process reserved but did not use may make this one refuse a little early. A refused key is refused
 * from memory until its window ends.
 */
export function createRateLimiter(
  sql: Sql,
  perWindow: number,
  now: () => number = Date.now,
  windowMs = MINUTE_MS,
): RateLimiter {
  const leases = new Map<string, Lease>();
  const knownRows = new Set<string>();
  /** The window (its end) each state `consume` answered was counted in, for `refund`. */
  const countedIn = new WeakMap<RateLimitState, number>();

  const state = (lease: Lease, at: number): RateLimitState => ({
    limit: perWindow,
    remaining: lease.unreserved + lease.left,
    resetSecs: Math.max(1, Math.ceil((lease.expire - at) / 1000)),
    ...(windowMs === MINUTE_MS ? {} : { windowSecs: windowMs / 1000 }),
  });

  async function reserve(keyId: string, at: number): Promise<Lease> {
    if (!knownRows.has(keyId)) {
      await sql`insert into rate_limit (key, points, expire) values (${keyId}, 0, ${at}::bigint)
        on conflict do nothing`;
      // Bounded like the leases: keys may be client addresses (failed authentications), which are many.
      if (knownRows.size >= 50_000) knownRows.clear();
      knownRows.add(keyId);
    }
    const first = Math.max(1, Math.min(MAX_LEASE, Math.floor(perWindow / LEASE_SHARE)));
    const [row] = await sql<{ points: number; expire: string; granted: number }[]>`
      update rate_limit r set
        points = case when prev.expire <= ${at}::bigint then least(${perWindow}::int, ${first}::int)
                      else least(${perWindow}::int, r.points + greatest(1, least(${MAX_LEASE}::int,
                        (${perWindow}::int - r.points) / ${LEASE_SHARE}::int))) end,
        expire = case when prev.expire <= ${at}::bigint then ${at + windowMs}::bigint else r.expire end
      from (select points, expire from rate_limit where key = ${keyId} for update) prev
      where r.key = ${keyId}
      returning r.points, r.expire,
        r.points - case when prev.expire <= ${at}::bigint then 0 else prev.points end as granted`;
    if (!row) {
      knownRows.delete(keyId); // removed by housekeeping meanwhile
      return reserve(keyId, at);
    }
    return { expire: Number(row.expire), left: row.granted, unreserved: perWindow - row.points };
  }

  /** One reservation at a time per key; requests that find the pool empty wait for it. */
  const inflight = new Map<string, Promise<void>>();
  const refill = (keyId: string, at: number) => {
    let pending = inflight.get(keyId);
    if (!pending) {
      pending = reserve(keyId, at)
        .then((fresh) => {
          const current = leases.get(keyId);
          leases.set(
            keyId,
            current && current.expire === fresh.expire ? { ...fresh, left: current.left + fresh.left } : fresh,
          );
          if (leases.size > 50_000) for (const [k, l] of leases) if (l.expire <= at) leases.delete(k);
        })
        .finally(() => inflight.delete(keyId));
      inflight.set(keyId, pending);
    }
    return pending;
  };

  return {
    async consume(keyId) {
      for (;;) {
        const at = now();
        const lease = leases.get(keyId);
        if (lease && lease.expire > at) {
          if (lease.left > 0) {
            lease.left -= 1;
            const counted = state(lease, at);
            countedIn.set(counted, lease.expire);
            return counted;
          }
          if (lease.unreserved === 0) throw new RateLimitedError(state(lease, at));
        }
        await refill(keyId, at);
      }
    },
    exhausted(keyId) {
      const at = now();
      const lease = leases.get(keyId);
      return lease && lease.expire > at && lease.left === 0 && lease.unreserved === 0 ? state(lease, at) : undefined;
    },
    refund(keyId, consumed) {
      const window = countedIn.get(consumed);
      countedIn.delete(consumed);
      const lease = leases.get(keyId);
      if (lease && window === lease.expire && lease.expire > now()) lease.left += 1;
    },
  };
}
