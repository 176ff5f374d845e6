/**
 * The ledger as a statement: one line per run (its hold, release and charge together), one per pipeline
 * (its single hold, what its steps' runs took out of it and were charged, and what came back), and one
 * per purchase, plan grant or refund; each line with the balance after it. Lines stand in the order of
 * their last entry, so a run still holding money moves to the top when it is settled; the balances are
 * the running sum of the lines in that order, so each balance is the one before plus the line's amount,
 * and the newest line's balance is the wallet's (the ledger sums to the balances: billing/wallet.ts).
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

/** The account's entries grouped into lines, each with its running balance (in last-entry order). */
const lines = (accountId: string) => sql`
  with grouped as (
    select
      case when coalesce(e.pipeline_id, r.pipeline_id) is not null then 'pipeline'
        when e.run_id is not null then 'run' else e.kind::text end as kind,
      coalesce(e.pipeline_id, r.pipeline_id) as pipeline_id,
      case when coalesce(e.pipeline_id, r.pipeline_id) is null then e.run_id end as run_id,
      max(e.id) as last_id,
      sum(e.plan_micros + e.purchased_micros) as amount,
      coalesce(-sum(e.plan_micros + e.purchased_micros) filter (where e.kind = 'hold'), 0) as held,
      coalesce(sum(e.plan_micros + e.purchased_micros) filter (where e.kind = 'release'), 0) as released,
      coalesce(-sum(e.plan_micros + e.purchased_micros) filter (where e.kind = 'charge'), 0) as charged,
      count(*)::int as entries,
      (array_agg(e.note order by e.id))[1] as note,
      min(e.created_at) as first_at,
      max(e.created_at) as last_at
    from ledger_entry e
    left join run r on r.id = e.run_id
    where e.account_id = ${accountId}
    group by 1, 2, 3,
      case when e.run_id is null and coalesce(e.pipeline_id, r.pipeline_id) is null then e.id end
  )
  select *, sum(amount) over (order by last_id rows unbounded preceding) as balance from grouped`;

/** One page of lines, newest first: `first` lines before `before` (a line's lastEntryId). */
export async function listStatement(
  db: Executor,
  accountId: string,
  options: { first: number; before?: bigint },
): Promise<{ lines: StatementLine[]; hasNextPage: boolean }> {
  const rows = (await db.execute(sql`
    select kind, last_id::text, amount::text, balance::text, held::text, released::text, charged::text,
      run_id, pipeline_id, entries, note, first_at, last_at
    from (${lines(accountId)}) l
    where ${options.before === undefined ? sql`true` : sql`last_id < ${options.before}`}
    order by last_id desc
    limit ${options.first + 1}`)) as unknown as Row[];
  return { lines: rows.slice(0, options.first).map(lineOf), hasNextPage: rows.length > options.first };
}

/** How many lines the statement has (a connection's `totalCount`). */
export async function countStatement(db: Executor, accountId: string): Promise<number> {
  const [row] = (await db.execute(sql`select count(*)::int as n from (${lines(accountId)}) l`)) as unknown as {
    n: number;
  }[];
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
