import { sql as drizzleSql, type SQL } from 'drizzle-orm';
import type { MaybeRow, PendingQuery, Row } from 'postgres';
import { UNNAMED_IN_ONE_TRIP, type Sql } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';

/** A piece of a postgres.js query (a condition, a column list). */
export type Fragment = PendingQuery<Row[]>;

/**
 * A tagged template that builds SQL (postgres.js `sql` or drizzle's `sql`), and how it passes a list
 * as one array parameter. Conditions written once against it serve the database APIs (postgres.js)
 * and the catalog sources (drizzle) alike.
 */
export interface SqlTemplate<F> {
  (strings: TemplateStringsArray, ...values: unknown[]): F;
  array(values: readonly string[]): unknown;
}

/** postgres.js's `sql` as a SqlTemplate (lists are sent as arrays). */
export const postgresTemplate = (sql: Sql): SqlTemplate<Fragment> =>
  Object.assign(
    (strings: TemplateStringsArray, ...values: unknown[]) => sql(strings, ...(values as never[])) as Fragment,
    { array: (values: readonly string[]) => values },
  );

/** drizzle's `sql` as a SqlTemplate: lists go as one array parameter. */
export const drizzleTemplate: SqlTemplate<SQL> = Object.assign(
  (strings: TemplateStringsArray, ...values: unknown[]) => drizzleSql(strings, ...values),
  {
    array: (values: readonly string[]) => drizzleSql.param([...values]),
  },
);

/** `%text%` for ILIKE, with the pattern characters of `text` escaped. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The conditions joined with AND (`true` for none). */
export function and(sql: Sql, conditions: Fragment[]): Fragment {
  const [first, ...rest] = conditions;
  return first ? rest.reduce((acc, part) => sql`${acc} and ${part}`, first) : sql`true`;
}

/**
 * Sends a search as an unnamed statement, so Postgres plans it for its own values every time.
 * postgres.js makes every tagged query a named prepared statement, and after five runs Postgres
 * switches such a statement to a generic plan whenever that plan looks cheaper. For the lead search
 * it nearly always does: with the values unknown every filter looks selective, so the generic page
 * plan gathers and sorts all matches where the right plan walks the primary key (a keywords search
 * with 24,787 matches: 100 ms instead of 5), and the generic count may start from the wrong index.
 * Replanning costs about a millisecond. postgres.js has no per-query switch for tagged templates;
 * `options.prepare` is the flag sql.unsafe sets, read when the query is sent (if a later version
 * ignores it, the query is simply prepared again). The statement goes in one round trip where its
 * values allow (`UNNAMED_IN_ONE_TRIP`, db/client.ts).
 */
export function plannedPerCall<T extends readonly MaybeRow[]>(query: PendingQuery<T>): PendingQuery<T> {
  Object.assign((query as unknown as { options: object }).options, UNNAMED_IN_ONE_TRIP);
  return query;
}

/**
 * Searches count their matches exactly up to this many (SEARCH_EXACT_TOTAL_LIMIT); past it, counting
 * would cost more than the rest of the search (about a microsecond a match), so the total is
 * estimated and the answer says so (`totalIsEstimate`). The lead search's broad filters are counted
 * exactly at any size (person_facet_count).
 */
export const EXACT_TOTAL_LIMIT = 50_000;

/** Rows of the table read to estimate a search's size: a block sample, the same blocks every time. */
const SAMPLE_ROWS = 10_000;

/**
 * How many rows of `table` match `where`, estimated from a repeatable block sample of about
 * SAMPLE_ROWS rows (`from` puts the TABLESAMPLE clause after the table): the sample's share of
 * matches times the table's size as of its last ANALYZE (autovacuum keeps it). The same search gets
 * the same estimate until the table changes. A table of at most SAMPLE_ROWS rows, or never analyzed,
 * is read whole: its matches are counted.
 */
export function estimateMatches(sql: Sql, table: string, from: (sample: Fragment) => Fragment, where: Fragment) {
  const rows = sql`(select reltuples from pg_class where oid = ${table}::regclass)`;
  const percent = sql`(select least(100, 100.0 * ${SAMPLE_ROWS} / greatest(reltuples, 1))
    from pg_class where oid = ${table}::regclass)`;
  return plannedPerCall(sql<{ estimate: number }[]>`
    select (case when ${percent} >= 100 then count(*) filter (where ${where})
      else count(*) filter (where ${where}) * ${rows} / greatest(count(*), 1) end)::float8 as estimate
    ${from(sql`tablesample system (${percent}) repeatable (0)`)}`);
}

/**
 * An estimate past the exact limit, as answered: two significant digits, and more than the limit (which was counted).
 */
export function estimatedTotal(estimate: number, exactTotalLimit: number): number {
  const magnitude = 10 ** Math.max(0, Math.floor(Math.log10(Math.max(estimate, 1))) - 1);
  return Math.max(exactTotalLimit + 1, Math.round(estimate / magnitude) * magnitude);
}

/** Which page of a search in id order: at an offset, or after an id (keyset). */
export interface PageWindow {
  limit: number;
  offset: number;
  afterId?: bigint;
  /** Count the matches exactly up to this many (EXACT_TOTAL_LIMIT unless given), estimate past it. */
  exactTotalLimit?: number;
}

/** One page of a search (one row more than the limit when more follow) and the size of the whole search. */
export interface FoundPage<R> {
  rows: R[];
  total: number;
  /** `total` is an estimate: more than the exact-count limit matched. */
  totalIsEstimate: boolean;
}

export interface CatalogQuery {
  /** `select …` with the columns to return, over the table aliased `x`; rows are ordered by x.id. */
  select: (sql: Sql) => Fragment;
  /** The table searched, aliased `x`. */
  table: string;
  where: (sql: Sql) => Fragment[];
}

/**
 * A page of a catalog table in id order, one row more than `window.limit` when more follow, and the
 * number of rows the whole search matches, exact up to `window.exactTotalLimit`, estimated past it:
 * the page and the capped count go out together, the estimate only when the count reached the cap.
 */
export async function selectCatalogPage<R>(sql: Sql, query: CatalogQuery, window: PageWindow): Promise<FoundPage<R>> {
  const exactTotalLimit = window.exactTotalLimit ?? EXACT_TOTAL_LIMIT;
  const where = () => and(sql, query.where(sql));
  const keyset = window.afterId !== undefined ? sql`and x.id > ${window.afterId.toString()}::bigint` : sql``;
  const [rows, counts] = await Promise.all([
    sql`${query.select(sql)} from ${sql(query.table)} x where ${where()} ${keyset} order by x.id
      limit ${window.limit + 1} offset ${window.offset}` as unknown as Promise<R[]>,
    sql<{ n: number }[]>`select count(*)::int as n from (select from ${sql(query.table)} x where ${where()}
      limit ${exactTotalLimit + 1}) m`,
  ]);
  const counted = oneRow(counts, `count of ${query.table}`).n;
  if (counted <= exactTotalLimit) return { rows, total: counted, totalIsEstimate: false };
  const estimated = await estimateMatches(
    sql,
    query.table,
    (sample) => sql`from ${sql(query.table)} x ${sample}`,
    where(),
  );
  const { estimate } = oneRow(estimated, `estimate of ${query.table}`);
  return { rows, total: estimatedTotal(estimate, exactTotalLimit), totalIsEstimate: true };
}
