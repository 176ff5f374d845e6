/**
 * The ledger as a statement: one line per run (its hold, release and charge together), one per pipeline
 * (its single hold, what its steps' runs took out of it and were charged, and what came back), and one
 * per purchase, plan grant or refund; each line with the balance after it. Lines stand in the order of
 * their last entry, so a run still holding money moves to the top when it is settled; the balances are
 * the running sum of the lines in that order, so each balance is the one before plus the line's amount,
 * and the newest line's balance is the wallet's (the ledger sums to the balances: billing/wallet.ts).
 * A page costs what it shows, not the account's whole history (ledger_run_idx and ledger_pipeline_idx).
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import type { LedgerEntry } from '../../db/tables/accounts.ts';

export type StatementLineKind = 'run' | 'pipeline' | Exclude<LedgerEntry['kind'], 'hold' | 'release' | 'charge'>;

export interface StatementLine {
  kind: StatementLineKind;
  /** The line's place: its last entry's id (the page cursor). */
  lastEntryId: bigint;
  /** Net change of the total balance, micro-dollars (negative when spent). */
  amountMicros: bigint;
  /** The total balance after this line. */
  balanceMicros: bigint;
  /** What the line's holds took, what came back, what was charged: each ≥ 0. */
  heldMicros: bigint;
  releasedMicros: bigint;
  chargedMicros: bigint;
  /** What the line's holds still keep (a run or pipeline in flight); 0 once settled. */
  stillHeldMicros: bigint;
  runId: string | null;
  pipelineId: string | null;
  entries: number;
  note: string | null;
  firstAt: Date;
  lastAt: Date;
}

interface Row {
  kind: StatementLineKind;
  last_id: string;
  amount: string;
  balance: string;
  held: string;
  released: string;
  charged: string;
  run_id: string | null;
  pipeline_id: string | null;
  entries: number;
  note: string | null;
  first_at: Date;
  last_at: Date;
}

/** Past every entry id: the first page's `before`. */
const NO_CURSOR = 9223372036854775807n;

/** An entry's line: its pipeline (its own, or its run's), else its run, else itself. */
const pipeOf = (e: string, r: string) => sql.raw(`coalesce(${e}.pipeline_id, ${r}.pipeline_id)`);

/**
 * The account's runs that are pipelines' steps, to join entries with (`r`): the only runs that decide an
 * entry's line, found by the account's index instead of every run of every account.
 */
const stepRuns = (accountId: string) =>
  sql`(select id, pipeline_id from run where account_id = ${accountId} and pipeline_id is not null)`;

/**
 * Whether entry `e` (its pipeline `pipe`) is its line's last, found by index (ledger_run_idx,
 * ledger_pipeline_idx, run_pipeline_idx): no later entry of the same pipeline, or of the same run.
 */
const lastOfLine = (accountId: string) => sql`case
  when p.pipe is not null then not exists (
      select 1 from ledger_entry x where x.account_id = ${accountId} and x.pipeline_id = p.pipe and x.id > e.id)
    and not exists (
      select 1 from run xr join ledger_entry x on x.run_id = xr.id
      where xr.pipeline_id = p.pipe and x.pipeline_id is null and x.account_id = ${accountId} and x.id > e.id)
  when e.run_id is not null then not exists (
      select 1 from ledger_entry x
      where x.account_id = ${accountId} and x.run_id = e.run_id and x.pipeline_id is null and x.id > e.id)
  else true end`;

/** The entries of line `l` (its last entry, run and pipeline), each branch by index. */
const entriesOfLine = (accountId: string) => sql`
  select m.id, m.kind, m.plan_micros + m.purchased_micros as amt, m.note, m.created_at from ledger_entry m
    where l.pipe is null and l.run_id is null and m.id = l.last_id
  union all
  select m.id, m.kind, m.plan_micros + m.purchased_micros, m.note, m.created_at from ledger_entry m
    where l.pipe is null and l.run_id is not null
      and m.account_id = ${accountId} and m.run_id = l.run_id and m.pipeline_id is null
  union all
  select m.id, m.kind, m.plan_micros + m.purchased_micros, m.note, m.created_at from ledger_entry m
    where l.pipe is not null and m.account_id = ${accountId} and m.pipeline_id = l.pipe
  union all
  select m.id, m.kind, m.plan_micros + m.purchased_micros, m.note, m.created_at
    from run mr join ledger_entry m on m.run_id = mr.id
    where l.pipe is not null and mr.pipeline_id = l.pipe and m.account_id = ${accountId} and m.pipeline_id is null`;

/**
 * One page of lines, newest first: `first` lines before `before` (a line's lastEntryId). In one statement,
 * so one snapshot, and without grouping the whole ledger: the page's lines are the entries that are their
 * line's last, among the newest entries before `before` (by the account's index); each line's entries are
 * read by index.
 * The balances start from the wallet's total (which the ledger sums to): less every line after the page
 * (the entries from `before` on, and the earlier entries of the lines those belong to), then less each line
 * above on the page. A deep page reads the entries after it; the first reads none.
 */
export async function listStatement(
  db: Executor,
  accountId: string,
  options: { first: number; before?: bigint },
): Promise<{ lines: StatementLine[]; hasNextPage: boolean }> {
  // The page's lines are among the newest entries before the cursor: a few per line, more when
  // pipelines hold many; too few found among them when more are left, the statement is read again
  // over four times as many.
  for (let entries = 8 * (options.first + 1); ; entries *= 4) {
    const { rows, scanned } = await readPage(db, accountId, options.first, options.before ?? NO_CURSOR, entries);
    if (rows.length > options.first || scanned < entries) {
      let balance = rows[0] ? BigInt(rows[0].top_balance) : 0n;
      const lines = rows.slice(0, options.first).map((row) => {
        const line = lineOf({ ...row, balance: balance.toString() });
        balance -= line.amountMicros;
        return line;
      });
      return { lines, hasNextPage: rows.length > options.first };
    }
  }
}

/** One read of a page in one statement, its lines found among the `entries` newest entries before `before`. */
async function readPage(db: Executor, accountId: string, first: number, before: bigint, entries: number) {
  const rows = (await db.execute(sql`
    with walked as materialized (
      select id, kind, run_id, pipeline_id from ledger_entry
      where account_id = ${accountId} and id < ${before}
      order by id desc
      limit ${entries}
    ),
    lines as materialized (
      select e.id as last_id, e.kind::text as entry_kind, e.run_id, p.pipe
      from walked e
      cross join lateral (
        select coalesce(e.pipeline_id, (select r.pipeline_id from run r where r.id = e.run_id)) as pipe) p
      where ${lastOfLine(accountId)}
      order by e.id desc
      limit ${first + 1}
    ),
    newer as materialized (
      select e.run_id, ${pipeOf('e', 'r')} as pipe, e.plan_micros + e.purchased_micros as amt
      from ledger_entry e left join ${stepRuns(accountId)} r on r.id = e.run_id
      where e.account_id = ${accountId} and e.id >= ${before}
    ),
    -- The lines after the page also hold entries before the cursor: those of the runs and pipelines
    -- the newer entries name, each set walked by index.
    pipes as (select distinct pipe from newer where pipe is not null),
    straddling as (
      select m.plan_micros + m.purchased_micros as amt from pipes k join ledger_entry m on m.pipeline_id = k.pipe
        where m.account_id = ${accountId} and m.id < ${before}
      union all
      select m.plan_micros + m.purchased_micros from pipes k join run kr on kr.pipeline_id = k.pipe
        join ledger_entry m on m.run_id = kr.id
        where m.pipeline_id is null and m.account_id = ${accountId} and m.id < ${before}
      union all
      select m.plan_micros + m.purchased_micros
        from (select distinct run_id from newer where pipe is null and run_id is not null) k
        join ledger_entry m on m.run_id = k.run_id
        where m.pipeline_id is null and m.account_id = ${accountId} and m.id < ${before}
    ),
    anchor as (
      select (select plan_micros + purchased_micros from wallet where account_id = ${accountId})
        - (select coalesce(sum(amt), 0) from newer) - (select coalesce(sum(amt), 0) from straddling) as balance
    )
    select (select count(*)::int from walked) as scanned, x.* from (select 1) one left join lateral (
      select
        case when l.pipe is not null then 'pipeline' when l.run_id is not null then 'run' else l.entry_kind end
          as kind,
        l.last_id as last_id_number, l.last_id::text, l.pipe as pipeline_id,
        case when l.pipe is null then l.run_id end as run_id,
        a.balance::text as top_balance, g.amount::text, g.held::text, g.released::text, g.charged::text,
        g.entries, g.note, g.first_at, g.last_at
      from lines l cross join anchor a cross join lateral (
        select count(*)::int as entries, sum(amt) as amount,
          coalesce(-sum(amt) filter (where kind = 'hold'), 0) as held,
          coalesce(sum(amt) filter (where kind = 'release'), 0) as released,
          coalesce(-sum(amt) filter (where kind = 'charge'), 0) as charged,
          (array_agg(note order by id))[1] as note, min(created_at) as first_at, max(created_at) as last_at
        from (${entriesOfLine(accountId)}) m
      ) g
    ) x on true
    order by x.last_id_number desc`)) as unknown as (Omit<Row, 'balance'> & { top_balance: string; scanned: number })[];
  return { rows: rows.filter((r) => r.last_id !== null), scanned: rows[0]?.scanned ?? 0 };
}

/** How many lines the statement has (a connection's `totalCount`): entries alone, runs and pipelines, counted. */
export async function countStatement(db: Executor, accountId: string): Promise<number> {
  const [row] = (await db.execute(sql`
    select (count(*) filter (where pipe is null and run_id is null)
      + count(distinct run_id) filter (where pipe is null and run_id is not null)
      + count(distinct pipe))::int as n
    from (select e.run_id, ${pipeOf('e', 'r')} as pipe
          from ledger_entry e left join ${stepRuns(accountId)} r on r.id = e.run_id
          where e.account_id = ${accountId}) x`)) as unknown as { n: number }[];
  return row?.n ?? 0;
}

function lineOf(row: Row): StatementLine {
  const held = BigInt(row.held);
  const released = BigInt(row.released);
  return {
    kind: row.kind,
    lastEntryId: BigInt(row.last_id),
    amountMicros: BigInt(row.amount),
    balanceMicros: BigInt(row.balance),
    heldMicros: held,
    releasedMicros: released,
    chargedMicros: BigInt(row.charged),
    stillHeldMicros: held > released ? held - released : 0n,
    runId: row.run_id,
    pipelineId: row.pipeline_id,
    entries: row.entries,
    note: row.note,
    firstAt: new Date(row.first_at),
    lastAt: new Date(row.last_at),
  };
}

/** The first instant of the calendar month (UTC) that `now` falls in. */
export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** What the account's runs were charged from `since` on, micro-dollars (≥ 0): the sum of its charge entries. */
export async function chargedSince(db: Executor, accountId: string, since: Date): Promise<bigint> {
  const [row] = (await db.execute(sql`
    select coalesce(-sum(plan_micros + purchased_micros), 0)::text as charged
    from ledger_entry
    where account_id = ${accountId} and kind = 'charge' and created_at >= ${since.toISOString()}`)) as unknown as {
    charged: string;
  }[];
  return BigInt(row?.charged ?? '0');
}
