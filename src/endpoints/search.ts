import type { PendingQuery, Row } from 'postgres';
import type { Sql } from '../../db/client.ts';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { takeAllowance } from '../billing/allowances.ts';
import { AppError } from '../shared/errors.ts';

export type Fragment = PendingQuery<Row[]>;

export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function and(sql: Sql, conditions: Fragment[]): Fragment {
  return conditions.length === 0 ? sql`true` : conditions.slice(1).reduce((acc, part) => sql`${acc} and ${part}`, conditions[0]!);
}

export interface Paging {
  page?: number;
  limit?: number;
  after?: string;
}

export interface CatalogQuery {
  /** `select … from <table> x` with the columns to return; rows are ordered by x.id. */
  select: (sql: Sql) => Fragment;
  from: (sql: Sql) => Fragment;
  where: (sql: Sql) => Fragment[];
}

/**
 * One page of a catalog table in id order, by page/limit or by cursor (`after`: 0 first, then
 * `next_after`), with the size of the whole search. Every record returned counts against today's
 * database allowance (the last page of a day may be cut short).
 */
export async function searchCatalogPage<R extends { id: string | number }>(
  core: Pick<Core, 'sql' | 'config' | 'clock'>,
  principal: Principal,
  paging: Paging,
  query: CatalogQuery,
  record: (row: R) => Record<string, unknown>,
) {
  const limit = paging.limit ?? 50;
  const page = paging.after === undefined ? (paging.page ?? 1) : null;
  return core.sql.begin(async (tx) => {
    const sql = tx as unknown as Sql;
    await sql`select set_config('statement_timeout', ${String(core.config.leadQueryTimeoutMs)}, true)`;
    const where = and(sql, query.where(sql));
    const keyset = paging.after !== undefined ? sql`and x.id > ${paging.after}::bigint` : sql``;
    let rows: R[];
    let total: number;
    try {
      rows = (await sql`${query.select(sql)} ${query.from(sql)} where ${where} ${keyset} order by x.id limit ${limit + 1} offset ${page ? (page - 1) * limit : 0}`) as unknown as R[];
      total = ((await sql`select count(*)::int as n ${query.from(sql)} where ${where}`) as unknown as { n: number }[])[0]!.n;
    } catch (err) {
      if ((err as { code?: string }).code === '57014') {
        throw new AppError(503, 'query_timeout', `The search took longer than ${core.config.leadQueryTimeoutMs / 1000} s. Narrow it (add a location, a category or bounds) and retry.`);
      }
      throw err;
    }
    const hasMore = rows.length > limit;
    rows = rows.slice(0, limit);
    const allowance = await takeAllowance(sql, principal.accountId, 'database', rows.length, core.config.dailyDatabaseRecords, core.clock());
    const cut = rows.length - allowance.granted;
    rows = rows.slice(0, allowance.granted);
    const last = rows.at(-1);
    return {
      records: rows.map(record),
      pagination: { page, limit, total, next_after: (hasMore || cut > 0) && last ? String(last.id) : null, has_more: hasMore || cut > 0 },
      daily_allowance: { remaining: allowance.remaining },
    };
  });
}
