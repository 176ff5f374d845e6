import type { Sql } from '../../db/client.ts';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { takeAllowance } from '../billing/allowances.ts';
import { AppError, ValidationError } from '../shared/errors.ts';
import type { FoundPage, PageWindow } from '../catalog/sql.ts';
import { suppressionCheck, withoutSuppressed } from '../privacy/suppression.ts';

/*
 * What the three database APIs (lead-search.ts, local-business-search.ts, store-search.ts) share:
 * paging by page/limit or by cursor, the statement timeout (503 query_timeout), the rows about
 * suppressed people left out, the daily database allowance and the pagination of the answer. The
 * queries themselves live in src/catalog.
 */

/** The paging parameters of a database API request (pagingParams in shared/params.ts). */
export interface Paging {
  page?: number;
  limit?: number;
  after?: string;
}

/** Which page a request asks for; `page` is null when it pages by cursor. */
export interface PageRequest extends PageWindow {
  page: number | null;
}

/**
 * The page a request asks for: `page` (from 1) of `limit` records (50 unless given), or the records
 * after a cursor (`after`: 0 first, then the answer's `next_after`). 400 `validation_failed` when a
 * request sends both page and after.
 */
export function pageRequest(paging: Paging): PageRequest {
  if (paging.page !== undefined && paging.after !== undefined)
    throw new ValidationError([{ path: 'after', message: 'use page or after, not both' }]);
  const limit = paging.limit ?? 50;
  const page = paging.after === undefined ? (paging.page ?? 1) : null;
  return {
    page,
    limit,
    offset: page ? (page - 1) * limit : 0,
    afterId: paging.after === undefined ? undefined : BigInt(paging.after),
  };
}

/** One page of a database search: the rows the account keeps, where the page is, and the allowance left. */
export interface SearchPage<R> {
  rows: R[];
  /** The page asked for (from 1), or null when paging by cursor. */
  page: number | null;
  limit: number;
  /** Size of the whole search: exact, or an estimate when `totalIsEstimate`. */
  total: number;
  /** More matched than the exact-count limit (SEARCH_EXACT_TOTAL_LIMIT): `total` is an estimate. */
  totalIsEstimate: boolean;
  /** The last row's id when more follow or the allowance cut the page: the next cursor. */
  nextAfter: string | null;
  hasMore: boolean;
  /** Database records the account may still take today. */
  allowanceRemaining: number;
}

/** How to narrow a local-business or store search that took too long (503 query_timeout). */
export const NARROW_CATALOG_SEARCH = 'Narrow it (add a location, a category or bounds) and retry.';

/** What the account is granted of a page: the records it keeps, and the allowance left today. */
export interface Delivery<R> {
  rows: R[];
  remaining: number;
}

/** Takes `count` records from the account's database allowance for today. */
export type TakeAllowance = (count: number) => Promise<{ granted: number; remaining: number }>;

/** Every record of the page counts against the allowance; the last page of a day may be cut short. */
export async function deliverAll<R>(_sql: Sql, rows: R[], take: TakeAllowance): Promise<Delivery<R>> {
  const allowance = await take(rows.length);
  return { rows: rows.slice(0, allowance.granted), remaining: allowance.remaining };
}

/**
 * A database API search in one transaction: `find` runs under the statement timeout (a search that
 * takes longer answers 503 `query_timeout`, its message ending with `narrow`: how to narrow it) and
 * returns one row more than the limit when more follow; `deliver` then decides what the daily database
 * allowance grants of the page (deliverAll unless given). `next_after` is the last record's id when
 * more follow or the allowance cut the page.
 */
export async function databaseSearch<R extends { id: string | number }>(
  core: Pick<Core, 'sql' | 'db' | 'catalogReader' | 'config' | 'clock'>,
  principal: Principal,
  request: PageRequest,
  narrow: string,
  find: (sql: Sql, window: PageRequest) => PromiseLike<FoundPage<R>>,
  deliver: (sql: Sql, rows: R[], take: TakeAllowance) => Promise<Delivery<R>> = deliverAll,
): Promise<SearchPage<R>> {
  const { limit, page } = request;
  const window = { ...request, exactTotalLimit: core.config.searchExactTotalLimit };
  const timedFind = async (sql: Sql): Promise<FoundPage<R>> => {
    // The timeout is sent first and the search right behind it, without waiting for its answer (pipelined).
    // No JIT: a search's statements run for milliseconds, and compiling them took longer (the estimate
    // of a broad search's size: 57 ms of JIT for 40 ms of work), as Postgres judges by planned cost.
    // 32 MB of work_mem keeps the bitmap of a search's matches exact at 10M people (at the default 4 MB
    // it turned lossy and rechecked 763,000 rows: 1.7 s instead of under 0.5 s).
    const timeout = sql`select set_config('statement_timeout', ${String(core.config.leadQueryTimeoutMs)}, true),
        set_config('jit', 'off', true), set_config('work_mem', '32MB', true)`.execute();
    try {
      const [, found] = await Promise.all([timeout, find(sql, window)]);
      return found;
    } catch (err) {
      if ((err as { code?: string }).code === '57014') {
        throw new AppError(
          503,
          'query_timeout',
          `The search took longer than ${core.config.leadQueryTimeoutMs / 1000} s. ${narrow}`,
        );
      }
      throw err;
    }
  };
  const deliverPage = async (sql: Sql, found: FoundPage<R>): Promise<SearchPage<R>> => {
    const hasMore = found.rows.length > limit;
    // People on a suppression list never leave the gateway, and cost no allowance (src/privacy).
    const { rows: candidates } = await withoutSuppressed(
      suppressionCheck(core.db, principal.accountId),
      found.rows.slice(0, limit),
    );
    const take: TakeAllowance = (count) =>
      takeAllowance(sql, principal.accountId, 'database', count, core.config.dailyDatabaseRecords, core.clock());
    const delivered = await deliver(sql, candidates, take);
    const more = hasMore || delivered.rows.length < candidates.length;
    const last = delivered.rows.at(-1);
    return {
      rows: delivered.rows,
      page,
      limit,
      total: found.total,
      totalIsEstimate: found.totalIsEstimate,
      nextAfter: more && last ? String(last.id) : null,
      hasMore: more,
      allowanceRemaining: delivered.remaining,
    };
  };
  if (!core.config.databaseReadUrl)
    return core.sql.begin(async (tx) =>
      deliverPage(tx as unknown as Sql, await timedFind(tx as unknown as Sql)),
    ) as Promise<SearchPage<R>>;
  // With a read replica the search runs there (or on the primary when it is not healthy) and the
  // allowance, which writes, on the primary afterwards.
  const found = (await core.catalogReader.read((sql) =>
    sql.begin((tx) => timedFind(tx as unknown as Sql)),
  )) as FoundPage<R>;
  return core.sql.begin((tx) => deliverPage(tx as unknown as Sql, found)) as Promise<SearchPage<R>>;
}
