import type { Sql } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import { ALLOWANCE_KINDS, type AllowanceKind } from '../../db/tables/limits.ts';
import type { Core } from '../core.ts';
import { AppError } from '../shared/errors.ts';

const DAY_MS = 86_400_000;

/** The UTC day of `now` and the seconds until it ends. */
export function utcDay(now: Date): { day: string; secondsToReset: number } {
  const start = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return {
    day: new Date(start).toISOString().slice(0, 10),
    secondsToReset: Math.ceil((start + DAY_MS - now.getTime()) / 1000),
  };
}

export class DailyLimitError extends AppError {
  constructor(
    kind: AllowanceKind,
    limit: number,
    readonly retryAfterSecs: number,
  ) {
    const what = kind === 'database' ? 'database records' : 'enrichment matches';
    super(
      429,
      'daily_limit_reached',
      `The daily allowance of ${limit.toLocaleString('en-US')} ${what} is used up; ` +
        `it resets at midnight UTC, in ${retryAfterSecs} s.`,
    );
  }
}

/**
 * Takes up to `wanted` from today's allowance of `kind` and returns how many were granted (the last
 * page of a day may be cut short). Refuses with 429 `daily_limit_reached` when nothing is left.
 * Runs in the caller's transaction, so a failed request gives its allowance back.
 */
export async function takeAllowance(
  sql: Sql,
  accountId: string,
  kind: AllowanceKind,
  wanted: number,
  limit: number,
  now: Date,
): Promise<{ granted: number; remaining: number }> {
  const { day, secondsToReset } = utcDay(now);
  if (wanted <= 0) {
    const rows = await sql<
      { used: number }[]
    >`select used from daily_usage where account_id = ${accountId} and day = ${day} and kind = ${kind}`;
    return { granted: 0, remaining: Math.max(0, limit - (rows[0]?.used ?? 0)) };
  }
  // The locked read gives the latest committed count, so concurrent requests never over-grant.
  const take = () => sql<{ used: number; granted: number }[]>`
    update daily_usage u set used = least(u.used + ${wanted}, ${limit})
    from (select used as before from daily_usage where account_id = ${accountId} and day = ${day}
      and kind = ${kind} for update) prev
    where u.account_id = ${accountId} and u.day = ${day} and u.kind = ${kind}
    returning u.used, u.used - prev.before as granted`;
  let rows = await take();
  if (rows.length === 0) {
    // The first request of the day: the day's row is made (or found made by a concurrent first
    // request, which a statement begun after its commit sees), then taken from.
    await sql`insert into daily_usage (account_id, day, kind, used) values (${accountId}, ${day}, ${kind}, 0)
      on conflict do nothing`;
    rows = await take();
  }
  const { used, granted } = oneRow(rows, 'take from the daily allowance');
  if (granted <= 0) throw new DailyLimitError(kind, limit, secondsToReset);
  return { granted, remaining: limit - used };
}

/** Today's use of one daily allowance of an account. */
export interface AllowanceToday {
  kind: AllowanceKind;
  /** How much a day holds (DAILY_DATABASE_RECORDS, DAILY_ENRICHMENT_MATCHES). */
  limit: number;
  remaining: number;
  /** Midnight UTC, when it starts again. */
  resetsAt: Date;
}

/** Today's use of each daily allowance of the account (database records, enrichment matches), taking nothing. */
export function allowancesToday(
  core: Pick<Core, 'sql' | 'config' | 'clock'>,
  accountId: string,
): Promise<AllowanceToday[]> {
  const now = core.clock();
  const resetsAt = new Date(now.getTime() + utcDay(now).secondsToReset * 1000);
  const limits: Record<AllowanceKind, number> = {
    database: core.config.dailyDatabaseRecords,
    enrichment: core.config.dailyEnrichmentMatches,
  };
  return Promise.all(
    ALLOWANCE_KINDS.map(async (kind) => {
      // Taking nothing reads what is left without writing.
      const { remaining } = await takeAllowance(core.sql, accountId, kind, 0, limits[kind], now);
      return { kind, limit: limits[kind], remaining, resetsAt };
    }),
  );
}
