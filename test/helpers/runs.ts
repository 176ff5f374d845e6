import type { Sql } from '../../db/client.ts';
import type { RunStatus } from '../../db/tables/runs.ts';

/** What a run was charged, in micro-dollars, read from its row. */
export async function chargedMicros(sql: Sql, runId: string): Promise<bigint> {
  const [run] = await sql`select charged_micros::text as charged from run where id = ${runId}`;
  return BigInt(run!.charged);
}

/** A run's row as postgres.js reads it: columns by their names in the table, bigint columns as text. */
export interface RunRow {
  tool: string;
  status: RunStatus;
  status_message: string;
  input: Record<string, unknown>;
  handled: number;
  requested: number;
  item_count: number;
  charged_micros: string;
  billed_units: number;
  error_detail: string | null;
  upstream_run_id: string | null;
  upstream_actor_id: string | null;
  upstream_offset: number;
  upstream_cost_micros: string;
}

/** The columns `columns` of a run's row, as stored. */
export async function runColumns<C extends keyof RunRow>(
  sql: Sql,
  runId: string,
  columns: readonly C[],
): Promise<Pick<RunRow, C>> {
  const [run] = await sql`select ${sql([...columns] as string[])} from run where id = ${runId}`;
  return run as unknown as Pick<RunRow, C>;
}

/** How many runs an account has, whatever their status. */
export async function runCount(sql: Sql, accountId: string): Promise<number> {
  const [row] = await sql`select count(*)::int as n from run where account_id = ${accountId}`;
  return row!.n as number;
}
