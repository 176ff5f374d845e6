import { TERMINAL_STATUSES, type Run, type RunStatus, type RunStopReason } from '../../db/tables/runs.ts';
import { getTool } from '../tools/index.ts';

/** What every face shows of a run; also the payload of progress events. */
export interface RunSnapshot {
  id: string;
  tool: string;
  status: RunStatus;
  statusMessage: string;
  /**
   * Why the run ended before it ran to completion (docs/api.md#how-a-run-ends): `budget_exhausted`,
   * `cancelled`, `time_limit` or `upstream_failed`; null while it runs, when it ran to completion, and
   * when it FAILED on an error of its own.
   */
  stoppedReason: RunStopReason | null;
  /**
   * True when the run ended SUCCEEDED with no stop reason: it did all it was asked. False for any other
   * end (SUCCEEDED with its budget used up included); null while it runs.
   */
  complete: boolean | null;
  handled: number;
  requested: number;
  itemCount: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  expiresAt: string | null;
  /** USD estimated (and held) at start. */
  estimatedCost: number;
  /** USD charged for the results so far; final once the run has ended. */
  cost: number;
  /** Units of the tool's price rule in `cost`: cost = billedUnits × the unit price. */
  billedUnits: number;
  /** The account's named dataset the run adds its rows to, or null; with `onlyNew`, only new rows. */
  datasetName: string | null;
  onlyNew: boolean;
  /** Rows the dataset had delivered before, skipped: neither returned nor billed. */
  skippedDelivered: number;
  /** Rows about suppressed people the run dropped: neither returned nor billed. */
  suppressed: number;
  /** The pipeline the run is a step of (plp_…), or null. */
  pipelineId: string | null;
}

/** Whether a run did all it was asked: null until it ends, then true only for SUCCEEDED without a stop reason. */
export const completeOf = (status: RunStatus, stopReason: RunStopReason | null): boolean | null =>
  isTerminal(status) ? status === 'SUCCEEDED' && stopReason === null : null;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function snapshotOf(run: Run): RunSnapshot {
  return {
    id: run.id,
    tool: run.tool,
    status: run.status,
    statusMessage: run.statusMessage,
    stoppedReason: run.stopReason,
    complete: completeOf(run.status, run.stopReason),
    handled: run.handled,
    requested: run.requested,
    itemCount: run.itemCount,
    createdAt: run.createdAt.toISOString(),
    startedAt: iso(run.startedAt),
    finishedAt: iso(run.finishedAt),
    expiresAt: iso(run.expiresAt),
    estimatedCost: Number(run.estimatedMicros) / 1_000_000,
    cost: Number(run.chargedMicros) / 1_000_000,
    billedUnits: billedUnitsOf(run),
    datasetName: run.datasetName,
    onlyNew: run.onlyNew,
    skippedDelivered: run.skippedDelivered,
    suppressed: run.suppressedCount,
    pipelineId: run.pipelineId,
  };
}

/**
 * The units a run's charge stands for. The engine counts rows billed as it stores them, but a rule
 * that settles at the end (a flat price, a search billed when it finds something, a search that bills
 * one result when it finds nobody) charges units no row carries; the charge divided by the unit price
 * is the count for every rule, so a client checks cost = billed units × unit price.
 */
function billedUnitsOf(run: Run): number {
  const { unitMicros } = getTool(run.tool).price;
  return unitMicros > 0n ? Number(run.chargedMicros / unitMicros) : run.billedUnits;
}

/** The price rule a run is billed by, as the run views show it. */
export function priceRuleOf(tool: string) {
  const { text, unit, unitMicros } = getTool(tool).price;
  return { text, unit, unit_price: Number(unitMicros) / 1_000_000 };
}

export const isTerminal = (status: RunStatus) => TERMINAL_STATUSES.includes(status);

/** Seconds from start to finish, millisecond precision; null until the run ends. */
export function runTimeSecs(run: RunSnapshot): number | null {
  if (!run.finishedAt || !run.startedAt) return null;
  return Math.max(0, Date.parse(run.finishedAt) - Date.parse(run.startedAt)) / 1000;
}

export function outputUrl(publicUrl: string, run: RunSnapshot): string | null {
  return isTerminal(run.status) ? `${publicUrl}/api/downloads/${run.id}` : null;
}
