/**
 * A run's rows as a dataset view reads them: a page of them sorted by one of the tool's columns and/or
 * narrowed by a search, with how many match. Plain pages (neither) stay with read.ts's batched reader.
 */
import type { Core } from '../core.ts';
import { getTool } from '../tools/index.ts';
import type { Row } from '../tools/types.ts';
import { ValidationError } from '../shared/errors.ts';
import { assertStorable } from '../shared/params.ts';
import { assertNotExpired } from './exports.ts';
import type { RunSnapshot } from './view.ts';

export type SortDirection = 'asc' | 'desc';

/** A view of a run's rows: the column to sort by (a key of the tool's columns) and text to look for. */
export interface RowsView {
  orderBy?: { column: string; direction?: SortDirection | null } | null;
  search?: string | null;
}

/** The longest search text taken. */
export const MAX_SEARCH_CHARS = 200;

/** The search text a view looks for, trimmed; undefined when it looks for nothing. */
const searchOf = (view: RowsView) => {
  const text = view.search?.trim();
  return text ? text : undefined;
};

/** Whether a view asks for nothing beyond a plain page (no sort, no search). */
export const isPlainView = (view: RowsView) => !view.orderBy && searchOf(view) === undefined;

/**
 * Checks a view against the run's tool: only its declared columns sort (400 `validation_failed` at
 * `orderBy.column` naming them), a search at most MAX_SEARCH_CHARS long.
 */
export function checkRowsView(tool: string, view: RowsView) {
  const search = searchOf(view);
  if (search !== undefined) {
    assertStorable(search, 'search');
    if (search.length > MAX_SEARCH_CHARS)
      throw new ValidationError([{ path: 'search', message: `must be at most ${MAX_SEARCH_CHARS} characters` }]);
  }
  const column = view.orderBy?.column;
  if (column === undefined) return { search };
  const { title, columns } = getTool(tool);
  if (!columns.some((c) => c.key === column))
    throw new ValidationError([
      {
        path: 'orderBy.column',
        message: `${title} rows have no column “${column}”; sort by one of ${columns.map((c) => c.key).join(', ')}`,
      },
    ]);
  return { search, orderBy: { column, direction: view.orderBy?.direction ?? 'asc' } };
}

/** `text` as a LIKE pattern matching it anywhere (its own %, _ and \ taken literally). */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Up to `limit` of the run's rows from position `offset` of the view: sorted by the column's value
 * (numbers as numbers, text case-insensitively, empty values last in either direction, then in stored
 * order) and narrowed to rows where some value contains the search text, case-insensitively. Answers
 * the rows and how many rows the view holds. 410 `results_expired` past the run's `expiresAt`.
 */
export async function readRunRowsView(
  core: Pick<Core, 'sql' | 'clock'>,
  run: Pick<RunSnapshot, 'id' | 'tool' | 'expiresAt' | 'itemCount'>,
  view: RowsView,
  page: { offset: number; limit: number },
): Promise<{ rows: Row[]; totalCount: number }> {
  const { search, orderBy } = checkRowsView(run.tool, view);
  assertNotExpired(run, core.clock());
  const { sql } = core;
  // The stored JSON text is read first, cheaply: only its rows with the text somewhere (a key's name
  // included) are parsed to look at their values; text with characters JSON escapes (" and \) skips this.
  const matches = search
    ? sql`${/["\\]/.test(search) ? sql`` : sql`and i.data::text ilike ${containing(search)}`}
      and exists (select 1 from json_each_text(i.data) e where e.value ilike ${containing(search)})`
    : sql``;
  // The column's value, read out of the row's JSON once (a fence keeps it from being read again for
  // each sort key) as jsonb, whose keys then cost nothing to compare; JSON null and "" are no value.
  const value = orderBy ? sql`(i.data -> ${orderBy.column})::jsonb` : sql`null::jsonb`;
  const dir = orderBy?.direction === 'desc' ? sql`desc` : sql`asc`;
  // The rows are ranked by their keys alone and only the page's rows are read whole: a sort that
  // carried every row's JSON would spill to disk on a large run.
  const rows = await sql<{ data: Row; total: number }[]>`
    with ranked as (
      select i.seq, count(*) over ()::int as total,
        (s.v is null or jsonb_typeof(s.v) = 'null' or s.v = '""'::jsonb) as empty,
        case when jsonb_typeof(s.v) = 'number' then (s.v #>> '{}')::numeric end as number,
        lower(s.v #>> '{}') as text
      from run_item i cross join lateral (select ${value} as v offset 0) s
      where i.run_id = ${run.id} ${matches}
      order by empty, number ${dir}, text ${dir}, i.seq
      limit ${page.limit} offset ${page.offset}
    )
    select i.data, r.total from ranked r join run_item i on i.run_id = ${run.id} and i.seq = r.seq
    order by r.empty, r.number ${dir}, r.text ${dir}, r.seq`;
  const first = rows[0];
  if (first) return { rows: rows.map((r) => r.data), totalCount: first.total };
  if (!search) return { rows: [], totalCount: run.itemCount };
  // A page past the end: the count alone.
  const [counted] = await sql<{ n: number }[]>`
    select count(*)::int as n from run_item i where i.run_id = ${run.id} ${matches}`;
  return { rows: [], totalCount: counted?.n ?? 0 };
}
