import { TERMINAL_STATUSES } from '../../db/tables/runs.ts';
import { MAX_WAIT_SECS } from './limits.ts';
import { STOP_REASONS, type McpRun } from './schemas.ts';

/**
 * The MCP face's view of a run, from the run view both backends read (the services in-process, or a
 * server's REST API): no link that needs the key (finished runs come with a signed resource link
 * instead), the stop reason, and the next tool to call, in the tools' own names.
 */

type RunView = Record<string, unknown>;

const num = (v: unknown) => (typeof v === 'number' ? v : undefined);

function nextStepOf(run: { runId: string; status: string; rows?: number; stoppedReason?: string | null }): string {
  if (!(TERMINAL_STATUSES as readonly string[]).includes(run.status))
    return `Call check_run_status with runId ${run.runId} and waitSecs up to ${MAX_WAIT_SECS} until it ends.`;
  const rows = run.rows === undefined ? 'its rows' : `its ${run.rows} rows`;
  const read =
    `Read ${rows} with download_results (choose columns with fields), ` +
    'or hand the user the CSV link of this answer (it works without a key for 5 minutes).';
  if (run.stoppedReason === 'budget_exhausted')
    return `${read} The wallet's hold ran out: top up in the console's Billing page (get_wallet shows the balance).`;
  return read;
}

export function mcpRunOf(view: RunView): McpRun {
  const rule = view.price_rule as { text: string; unit: string; unit_price: number } | undefined;
  const stopped = view.stoppedReason as string | null | undefined;
  const run: McpRun = {
    runId: String(view.runId),
    status: view.status as McpRun['status'],
    statusMessage: String(view.statusMessage ?? ''),
    handled: num(view.handled) ?? 0,
    requested: num(view.requested) ?? 0,
    ...(num(view.itemCount) === undefined ? {} : { rows: num(view.itemCount) }),
    runTimeSecs: num(view.runTimeSecs) ?? null,
    expiresAt: typeof view.expiresAt === 'string' ? view.expiresAt : null,
    ...(typeof view.complete === 'boolean' ? { complete: view.complete } : {}),
    ...(stopped === null || (STOP_REASONS as readonly (string | undefined)[]).includes(stopped)
      ? { stoppedReason: stopped as McpRun['stoppedReason'] }
      : {}),
    ...(num(view.cost) === undefined ? {} : { cost: num(view.cost) }),
    ...(num(view.billed_units) === undefined ? {} : { billedUnits: num(view.billed_units) }),
    ...(typeof view.datasetName === 'string'
      ? { datasetName: view.datasetName, skippedDelivered: num(view.skippedDelivered) ?? 0 }
      : {}),
    ...(num(view.suppressed) ? { suppressed: num(view.suppressed) } : {}),
    ...(rule ? { priceRule: { text: rule.text, unit: rule.unit, unitPrice: rule.unit_price } } : {}),
    nextStep: '',
  };
  run.nextStep = nextStepOf(run);
  return run;
}

export const isEnded = (run: { status: string }) => (TERMINAL_STATUSES as readonly string[]).includes(run.status);
