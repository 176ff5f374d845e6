/**
 * `statement`: a page of the billing statement (`Account.statement`, src/billing/statement.ts) on an
 * account with a long history. Goal: the first page at most 20 ms (p50) on 100,000 runs' entries, and
 * at least 10× faster than the baseline.
 *
 *   baseline   the statement as it read before: every entry of the account grouped into lines, with a
 *              running balance over all of them, then the page cut out (the query below, kept as it was).
 *   paged      the statement now: the page's lines found from the cursor back by index, each line's
 *              entries read by index, the balances counted down from the wallet.
 *
 * The ledger: N runs (hold, release, charge each, release and charge a few entries after the hold, so
 * lines straddle pages), every 7th run a pipeline's step (21 runs apart: pipelines of 3 steps with a hold
 * and release of their own), a purchase every 50 runs; the wallet is the ledger's sum. Both variants must
 * answer the same lines on the first pages and on a page in the middle of the history, or the suite fails.
 * Timed alternately (30 rounds after 3 warm-ups): the first page, the middle page, and the line count.
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { countStatement, listStatement } from '../../src/billing/statement.ts';
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

const ACCOUNT = 'acc_statement_bench';
const GOAL_MS = 20;
const GOAL_RATIO = 10;

/** The baseline's lines: every entry of the account grouped (the statement's query before). */
const grouped = sql`
  select
    case when coalesce(e.pipeline_id, r.pipeline_id) is not null then 'pipeline'
      when e.run_id is not null then 'run' else e.kind::text end as kind,
    coalesce(e.pipeline_id, r.pipeline_id) as pipeline_id,
    case when coalesce(e.pipeline_id, r.pipeline_id) is null then e.run_id end as run_id,
    max(e.id) as last_id,
    sum(e.plan_micros + e.purchased_micros) as amount,
    count(*)::int as entries
  from ledger_entry e
  left join run r on r.id = e.run_id
  where e.account_id = ${ACCOUNT}
  group by 1, 2, 3,
    case when e.run_id is null and coalesce(e.pipeline_id, r.pipeline_id) is null then e.id end`;

/** The baseline page: the whole ledger grouped and balanced, then the page cut out. */
function wholeLedgerPage(db: Executor, first: number, before?: bigint) {
  return db.execute(sql`
    with balanced as (
      select *, sum(amount) over (order by last_id rows unbounded preceding) as balance from (${grouped}) g)
    select kind, last_id::text, amount::text, balance::text, run_id, pipeline_id, entries from balanced l
    where ${before === undefined ? sql`true` : sql`last_id < ${before}`}
    order by l.last_id desc
    limit ${first + 1}`) as unknown as Promise<Record<string, unknown>[]>;
}

/** The baseline count: the lines of the whole ledger grouped. */
const wholeLedgerCount = (db: Executor) => db.execute(sql`select count(*)::int as n from (${grouped}) g`);

/** The fields both variants answer, to compare them. */
const sameFields = (lines: { kind: string; lastEntryId: bigint; amountMicros: bigint; balanceMicros: bigint }[]) =>
  lines.map((l) => `${l.kind} ${l.lastEntryId} ${l.amountMicros} ${l.balanceMicros}`);
const baselineFields = (rows: Record<string, unknown>[], first: number) =>
  rows.slice(0, first).map((r) => `${r.kind} ${r.last_id} ${r.amount} ${r.balance}`);

async function seed(db: Executor, runs: number) {
  await db.execute(sql`insert into account (id, name) values (${ACCOUNT}, 'Statement bench')`);
  await db.execute(sql`
    insert into run (id, account_id, tool, status, input, item_count, handled, requested, pipeline_id, pipeline_step)
    select 'srun' || g, ${ACCOUNT}, 'maps', 'SUCCEEDED', '{}', 0, 0, 0,
      case when g % 7 = 0 then 'spip' || (g / 21) end, case when g % 7 = 0 then 0 end
    from generate_series(1, ${runs}::int) g`);
  await db.execute(sql`
    insert into ledger_entry (account_id, kind, run_id, pipeline_id, plan_micros, note)
    select ${ACCOUNT}, kind::ledger_kind, run_id, pipeline_id, amount, kind from (
      select g, 1 as o, 'hold' as kind, 'srun' || g as run_id, null as pipeline_id, -1000000 as amount
        from generate_series(1, ${runs}::int) g where g % 7 <> 0
      union all select g + 2, 2, 'release', 'srun' || g, null, 900000 - (g % 5) * 1000 from generate_series(1, ${runs}::int) g
      union all select g + 3, 3, 'charge', 'srun' || g, null, -100000 + (g % 5) * 1000 from generate_series(1, ${runs}::int) g
      union all select g, 0, 'hold', null, 'spip' || (g / 21), -3000000 from generate_series(21, ${runs}::int, 21) g
      union all select g + 30, 4, 'release', null, 'spip' || (g / 21), 2500000 from generate_series(21, ${runs}::int - 40, 21) g
      union all select g, 5, 'purchase', null, null, 20000000 from generate_series(50, ${runs}::int, 50) g
    ) x order by g, o`);
  await db.execute(sql`
    insert into wallet (account_id, plan_micros, purchased_micros)
    select ${ACCOUNT}, coalesce(sum(plan_micros + purchased_micros), 0), 0 from ledger_entry where account_id = ${ACCOUNT}
    on conflict (account_id) do update set plan_micros = excluded.plan_micros, purchased_micros = 0`);
  await db.execute(sql`analyze`);
  const [row] = (await db.execute(
    sql`select count(*)::int as n from ledger_entry where account_id = ${ACCOUNT}`,
  )) as unknown as { n: number }[];
  return row!.n;
}

export interface StatementResult {
  runs: number;
  entries: number;
  lines: number;
  pagesCompared: number;
  ms: Record<'firstPage' | 'middlePage' | 'count', { baseline: Spread; paged: Spread; ratio: number }>;
  goals: { firstPageMs: number; ratio: number };
  met: boolean;
}

export async function benchStatement(options: { quick: boolean; runs?: number }): Promise<StatementResult> {
  const runs = options.runs ?? (options.quick ? 5_000 : 100_000);
  return withScratchDatabase(async ({ db }) => {
    progress(`statement: seeding ${n(runs)} runs' entries`);
    const entries = await seed(db, runs);
    const first = 20;
    // The same lines: page by page from the top, then a page from the middle of the history.
    let before: bigint | undefined;
    let pagesCompared = 0;
    for (; pagesCompared < 5; pagesCompared++) {
      const paged = await listStatement(db, ACCOUNT, { first, ...(before === undefined ? {} : { before }) });
      const base = await wholeLedgerPage(db, first, before);
      if (JSON.stringify(sameFields(paged.lines)) !== JSON.stringify(baselineFields(base, first)))
        throw new Error(`statement: the variants differ on page ${pagesCompared + 1}`);
      before = paged.lines.at(-1)!.lastEntryId;
    }
    const middle = BigInt(Math.floor(entries / 2));
    const atMiddle = await listStatement(db, ACCOUNT, { first, before: middle });
    if (
      JSON.stringify(sameFields(atMiddle.lines)) !==
      JSON.stringify(baselineFields(await wholeLedgerPage(db, first, middle), first))
    )
      throw new Error('statement: the variants differ on the middle page');
    pagesCompared += 1;
    const lines = await countStatement(db, ACCOUNT);
    const [counted] = (await wholeLedgerCount(db)) as unknown as { n: number }[];
    if (counted!.n !== lines) throw new Error(`statement: ${lines} lines counted, the whole ledger has ${counted!.n}`);
    const rounds = options.quick ? 5 : 30;
    const time = (baseline: () => Promise<unknown>, paged: () => Promise<unknown>) =>
      timeAlternately({ baseline: { run: baseline }, paged: { run: paged } }, rounds, 3);
    const figures = {
      firstPage: await time(
        () => wholeLedgerPage(db, first),
        () => listStatement(db, ACCOUNT, { first }),
      ),
      middlePage: await time(
        () => wholeLedgerPage(db, first, middle),
        () => listStatement(db, ACCOUNT, { first, before: middle }),
      ),
      count: await time(
        () => wholeLedgerCount(db),
        () => countStatement(db, ACCOUNT),
      ),
    };
    const ms = Object.fromEntries(
      Object.entries(figures).map(([k, v]) => {
        const baseline = spread(v.baseline, 2);
        const paged = spread(v.paged, 2);
        return [k, { baseline, paged, ratio: Math.round((baseline.p50 / paged.p50) * 10) / 10 }];
      }),
    ) as StatementResult['ms'];
    const met = ms.firstPage.paged.p50 <= GOAL_MS && ms.firstPage.ratio >= GOAL_RATIO;
    return { runs, entries, lines, pagesCompared, ms, goals: { firstPageMs: GOAL_MS, ratio: GOAL_RATIO }, met };
  });
}

function formatStatement(r: StatementResult): string {
  const widths = [34, 16, 16, 8];
  const row = (label: string, f: StatementResult['ms']['firstPage']) =>
    pad([label, `${f.baseline.p50} ms`, `${f.paged.p50} ms`, `${f.ratio}×`], widths);
  return [
    `statement: ${n(r.runs)} runs, ${n(r.entries)} ledger entries, ${n(r.lines)} lines; ` +
      `${r.pagesCompared} pages answered alike (p50 of alternated rounds)`,
    pad(['', 'whole ledger', 'paged', 'ratio'], widths),
    row('first page (20 lines)', r.ms.firstPage),
    row('a page in the middle', r.ms.middlePage),
    row('line count (totalCount)', r.ms.count),
    `goal: first page ≤ ${r.goals.firstPageMs} ms and ≥ ${r.goals.ratio}× the whole ledger: ${verdict(r.met)}`,
  ].join('\n');
}

export const statement: Suite<StatementResult> = {
  name: 'statement',
  key: 'statement',
  quick: true,
  flags: ['runs'],
  run: (context) =>
    benchStatement({ quick: context.quick, ...(context.count('runs') ? { runs: context.count('runs')! } : {}) }),
  format: formatStatement,
  goals: (r) => ({ ...r.goals, met: r.met }),
};
