/**
 * `run-rows`: a page of a large run's rows as the run page's dataset view asks for it
 * (`readRunRowsView`, src/runs/rows-view.ts): sorted by a column, deep in the sort, searched, searched and
 * sorted. Goal: a sorted page of a 50,000-row run at most 200 ms (p50), at least 2× the baseline.
 *
 *   baseline   the view's query as it read before: every row, whole, through a window that counts them
 *              and a sort whose keys each read the column out of the row's JSON again.
 *   ranked     the view now: the column read out once (as jsonb), the rows ranked by their keys alone,
 *              only the page's rows read whole.
 *
 * The run: 50,000 map listings (13 columns, about 500 bytes of JSON each). Both variants must answer the
 * same rows and total for every view, or the suite fails; 20 alternated rounds after 2 warm-ups.
 */
import type { Sql } from '../../db/client.ts';
import { readRunRowsView, type RowsView } from '../../src/runs/rows-view.ts';
import {
  n,
  pad,
  progress,
  spread,
  timeAlternately,
  verdict,
  withScratchDatabase,
  type Spread,
  type Suite,
} from './harness.ts';

const RUN = 'RunRowsBench000001';
const GOAL_MS = 200;
const GOAL_RATIO = 2;

/** The baseline: the view's query before (every row whole, counted by a window, keys read each time). */
async function wholeRows(
  sql: Sql,
  column: string | undefined,
  desc: boolean,
  search: string | undefined,
  offset: number,
) {
  const like = search ? `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
  const matches = like
    ? sql`and i.data::text ilike ${like} and exists (select 1 from json_each_text(i.data) e where e.value ilike ${like})`
    : sql``;
  const value = column ? sql`i.data -> ${column}` : sql`null::json`;
  const dir = desc ? sql`desc` : sql`asc`;
  const rows = await sql<{ data: Record<string, unknown>; total: number }[]>`
    select i.data, count(*) over ()::int as total
    from run_item i cross join lateral (select ${value} as v) s
    where i.run_id = ${RUN} ${matches}
    order by (s.v is null or json_typeof(s.v) = 'null' or s.v::text = '""'),
      case when json_typeof(s.v) = 'number' then (s.v #>> '{}')::numeric end ${dir},
      lower(s.v #>> '{}') ${dir},
      i.seq
    limit 50 offset ${offset}`;
  return { rows: rows.map((r) => r.data), totalCount: rows[0]?.total ?? 0 };
}

async function seed(sql: Sql, rows: number) {
  await sql`insert into account (id, name) values ('acc_run_rows_bench', 'Run rows bench')`;
  await sql`insert into run (id, account_id, tool, status, input, item_count, handled, requested, finished_at, expires_at)
    values (${RUN}, 'acc_run_rows_bench', 'maps', 'SUCCEEDED', '{}', ${rows}, ${rows}, ${rows}, now(), now() + interval '2 days')`;
  await sql`insert into run_item (run_id, seq, data)
    select ${RUN}, g - 1, json_build_object('name', 'Business number ' || g, 'category', 'Dentist',
      'street', g || ' Main St', 'city', 'Denver', 'state', 'CO',
      'phone', '+1 303 555 ' || lpad((g % 10000)::text, 4, '0'), 'website', 'https://b' || g || '.example.com',
      'emails', json_build_array('info@b' || g || '.example.com'), 'rating', (g % 50) / 10.0,
      'review_count', g % 997, 'hours', json_build_array('Mon 9-5', 'Tue 9-5', 'Wed 9-5'),
      'place_id', 'ChIJ' || md5(g::text), 'url', 'https://maps.example.com/place/' || g)
    from generate_series(1, ${rows}::int) g`;
  await sql`analyze run_item`;
}

type ViewName = 'sorted' | 'deep' | 'searched' | 'searchedSorted';
/** The views timed; `deep` starts a tenth of the way into the sort. */
const viewsOf = (rows: number): Record<ViewName, { view: RowsView; offset: number }> => ({
  sorted: { view: { orderBy: { column: 'rating', direction: 'desc' } }, offset: 0 },
  deep: { view: { orderBy: { column: 'name' } }, offset: Math.floor(rows / 10) },
  searched: { view: { search: '555 12' }, offset: 0 },
  searchedSorted: { view: { search: 'Denver', orderBy: { column: 'review_count' } }, offset: 0 },
});
const LABELS: Record<ViewName, string> = {
  sorted: 'sorted by rating, page 1',
  deep: 'sorted by name, a tenth of the way in',
  searched: 'searched ("555 12")',
  searchedSorted: 'searched and sorted',
};

export interface RunRowsResult {
  rows: number;
  ms: Record<ViewName, { baseline: Spread; ranked: Spread; ratio: number }>;
  goals: { sortedMs: number; ratio: number };
  met: boolean;
}

export async function benchRunRows(options: { quick: boolean; rows?: number }): Promise<RunRowsResult> {
  const count = options.rows ?? (options.quick ? 5_000 : 50_000);
  const VIEWS = viewsOf(count);
  return withScratchDatabase(async ({ sql }) => {
    progress(`run-rows: storing a run of ${n(count)} rows`);
    await seed(sql, count);
    const core = { sql, clock: () => new Date() };
    const run = {
      id: RUN,
      tool: 'maps',
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      itemCount: count,
    };
    const ranked = (name: ViewName) =>
      readRunRowsView(core, run, VIEWS[name].view, { offset: VIEWS[name].offset, limit: 50 });
    const baseline = (name: ViewName) => {
      const { view, offset } = VIEWS[name];
      return wholeRows(sql, view.orderBy?.column, view.orderBy?.direction === 'desc', view.search ?? undefined, offset);
    };
    const ms = {} as RunRowsResult['ms'];
    for (const name of Object.keys(VIEWS) as ViewName[]) {
      const [a, b] = [await ranked(name), await baseline(name)];
      if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`run-rows: the variants differ on ${name}`);
      const times = await timeAlternately(
        { baseline: { run: () => baseline(name) }, ranked: { run: () => ranked(name) } },
        options.quick ? 5 : 20,
        2,
      );
      const [base, now] = [spread(times.baseline, 1), spread(times.ranked, 1)];
      ms[name] = { baseline: base, ranked: now, ratio: Math.round((base.p50 / now.p50) * 10) / 10 };
    }
    const met = ms.sorted.ranked.p50 <= GOAL_MS && ms.sorted.ratio >= GOAL_RATIO;
    return { rows: count, ms, goals: { sortedMs: GOAL_MS, ratio: GOAL_RATIO }, met };
  });
}

function formatRunRows(r: RunRowsResult): string {
  const widths = [38, 14, 12, 8];
  return [
    `run-rows: a run of ${n(r.rows)} map listings, pages of 50 as the run page asks (p50 of alternated rounds)`,
    pad(['', 'baseline', 'ranked', 'ratio'], widths),
    ...(Object.keys(LABELS) as ViewName[]).map((name) =>
      pad(
        [LABELS[name], `${r.ms[name].baseline.p50} ms`, `${r.ms[name].ranked.p50} ms`, `${r.ms[name].ratio}×`],
        widths,
      ),
    ),
    `goal: a sorted page ≤ ${r.goals.sortedMs} ms and ≥ ${r.goals.ratio}× the baseline: ${verdict(r.met)}`,
  ].join('\n');
}

export const runRows: Suite<RunRowsResult> = {
  name: 'run-rows',
  key: 'runRows',
  quick: true,
  flags: ['rows'],
  run: (context) =>
    benchRunRows({ quick: context.quick, ...(context.count('rows') ? { rows: context.count('rows')! } : {}) }),
  format: formatRunRows,
  goals: (r) => ({ ...r.goals, met: r.met }),
};
