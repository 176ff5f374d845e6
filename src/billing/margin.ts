/** Margins: what each tool's runs earned against what their upstream runs cost (the CLI's `report`). */
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';

/** What one tool's runs earned and what their upstream runs cost, micro-dollars. */
export interface ToolMargin {
  tool: string;
  runs: number;
  /** Runs that ran on an upstream engine. */
  upstreamRuns: number;
  /** What the callers were charged (settled runs: their final charge; runs in flight: the rows delivered so far). */
  revenueMicros: bigint;
  /** What the upstream runs cost the operator (the engine's usage). */
  upstreamCostMicros: bigint;
  marginMicros: bigint;
}

/** Revenue, upstream cost and margin per tool of the runs created since `since`, highest revenue first. */
export async function marginReport(db: Database, since: Date): Promise<ToolMargin[]> {
  const rows = await db.execute<{
    tool: string;
    runs: number;
    upstream_runs: number;
    revenue: string;
    cost: string;
  }>(sql`
    select tool,
           count(*)::int as runs,
           count(upstream_run_id)::int as upstream_runs,
           coalesce(sum(charged_micros), 0)::text as revenue,
           coalesce(sum(upstream_cost_micros), 0)::text as cost
    from run
    where created_at >= ${since.toISOString()}::timestamptz
    group by tool
    order by sum(charged_micros) desc, tool`);
  return rows.map((r) => ({
    tool: r.tool,
    runs: r.runs,
    upstreamRuns: r.upstream_runs,
    revenueMicros: BigInt(r.revenue),
    upstreamCostMicros: BigInt(r.cost),
    marginMicros: BigInt(r.revenue) - BigInt(r.cost),
  }));
}
