import { sql as drizzleSql, type SQL } from 'drizzle-orm';
import type { PendingQuery, Row } from 'postgres';
import type { Sql } from '../../db/client.ts';

/** A piece of a postgres.js query (a condition, a column list). */
export type Fragment = PendingQuery<Row[]>;

/**
 * A tagged template that builds SQL (postgres.js `sql` or drizzle's `sql`), and how it passes a list
 * as one array parameter. Conditions written once against it serve the database APIs (postgres.js)
 * and the catalog sources (drizzle) alike.
 */
export interface SqlTemplate<F> {
  (strings: TemplateStringsArray, ...values: any[]): F;
  array(values: readonly string[]): unknown;
}

/** postgres.js's `sql` as a SqlTemplate (lists are sent as arrays). */
export const postgresTemplate = (sql: Sql): SqlTemplate<Fragment> =>
  Object.assign((strings: TemplateStringsArray, ...values: unknown[]) => sql(strings, ...(values as never[])) as Fragment, { array: (values: readonly string[]) => values });

/** drizzle's `sql` as a SqlTemplate: lists go as one array parameter. */
export const drizzleTemplate: SqlTemplate<SQL> = Object.assign((strings: TemplateStringsArray, ...values: unknown[]) => drizzleSql(strings, ...values), {
  array: (values: readonly string[]) => drizzleSql.param([...values]),
});

/** `%text%` for ILIKE, with the pattern characters of `text` escaped. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The conditions joined with AND (`true` for none). */
export function and(sql: Sql, conditions: Fragment[]): Fragment {
  return conditions.length === 0 ? sql`true` : conditions.slice(1).reduce((acc, part) => sql`${acc} and ${part}`, conditions[0]!);
}

/** Which page of a search in id order: at an offset, or after an id (keyset). */
export interface PageWindow {
  limit: number;
  offset: number;
  afterId?: bigint;
}

/** One page of a search (one row more than the limit when more follow) and the size of the whole search. */
export interface FoundPage<R> {
  rows: R[];
  total: number;
}

export interface CatalogQuery {
  /** `select …` with the columns to return, over the table aliased `x`; rows are ordered by x.id. */
  select: (sql: Sql) => Fragment;
  from: (sql: Sql) => Fragment;
  where: (sql: Sql) => Fragment[];
}

/**
 * A page of a catalog table in id order, one row more than `window.limit` when more follow, and the
 * number of rows the whole search matches: two statements, the page then the count.
 */
export async function selectCatalogPage<R>(sql: Sql, query: CatalogQuery, window: PageWindow): Promise<FoundPage<R>> {
  const where = and(sql, query.where(sql));
  const keyset = window.afterId !== undefined ? sql`and x.id > ${window.afterId.toString()}::bigint` : sql``;
  const rows = (await sql`${query.select(sql)} ${query.from(sql)} where ${where} ${keyset} order by x.id limit ${window.limit + 1} offset ${window.offset}`) as unknown as R[];
  const total = ((await sql`select count(*)::int as n ${query.from(sql)} where ${where}`) as unknown as { n: number }[])[0]!.n;
  return { rows, total };
}
