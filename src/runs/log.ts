/**
 * A run's log: its lifecycle as the run's own record tells it (when it was created and by what, when
 * it began working, what it stored, how it ended and was settled, when its rows go). Nothing is
 * invented: an entry stands for a time or a count the run row keeps; a run in flight has one entry
 * without a time, what it is doing now.
 */
import type { Run } from '../../db/tables/runs.ts';
import { formatDollars } from '../billing/money.ts';
import { getTool } from '../tools/index.ts';
import { isTerminal, snapshotOf } from './view.ts';

export const RUN_LOG_KINDS = ['created', 'started', 'progress', 'finished', 'settled', 'rows_deleted'] as const;
export type RunLogKind = (typeof RUN_LOG_KINDS)[number];

export interface RunLogEntry {
  /** When it happened; null for what is still going on (a run in flight's progress). */
  at: Date | null;
  kind: RunLogKind;
  message: string;
}

const plural = (n: number, one: string) =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : one.endsWith('s') ? `${one}es` : `${one}s`}`;

function originOf(run: Run): string {
  if (run.pipelineId) return `as step ${(run.pipelineStep ?? 0) + 1} of pipeline ${run.pipelineId}`;
  if (run.scheduleId) return `by schedule ${run.scheduleId}`;
  if (run.taskId) return `from saved task ${run.taskId}`;
  if (run.parentRunId) return `from the rows of run ${run.parentRunId}`;
  return 'by a start';
}

const STOPS: Record<NonNullable<Run['stopReason']>, string> = {
  budget_exhausted: 'the money held for it was used up',
  cancelled: 'it was cancelled',
  time_limit: 'it reached the tool’s longest run time',
  upstream_failed: 'the external source it ran on failed',
};

const ENDS: Partial<Record<Run['status'], string>> = {
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  ABORTED: 'Cancelled',
  'TIMED-OUT': 'Timed out',
};

/** The entries of `run`'s log, oldest first (its rows' deletion, when still to come, last). */
export function runLog(run: Run, now: Date): RunLogEntry[] {
  const { price } = getTool(run.tool);
  const entries: RunLogEntry[] = [
    {
      at: run.createdAt,
      kind: 'created',
      message:
        `Created ${originOf(run)}: ${plural(run.requested, 'item')} asked for, ` +
        `${formatDollars(run.estimatedMicros)} USD held.`,
    },
  ];
  if (run.startedAt) entries.push({ at: run.startedAt, kind: 'started', message: 'Began working.' });
  const stored =
    `${plural(run.itemCount, 'row')} stored, ${run.handled.toLocaleString('en-US')} of ` +
    `${run.requested.toLocaleString('en-US')} items handled` +
    (run.suppressedCount > 0 ? `; ${plural(run.suppressedCount, 'row')} about suppressed people dropped` : '') +
    (run.skippedDelivered > 0 ? `; ${plural(run.skippedDelivered, 'row')} delivered before skipped` : '') +
    '.';
  if (!isTerminal(run.status)) {
    entries.push({ at: null, kind: 'progress', message: `${run.statusMessage || run.status}: ${stored}` });
    return entries;
  }
  const said = run.statusMessage.replace(/\.$/, '') || 'no message';
  const why = run.stopReason ? ` It stopped early: ${STOPS[run.stopReason]}.` : '';
  entries.push({
    at: run.finishedAt,
    kind: 'finished',
    message: `${ENDS[run.status] ?? run.status}: ${said}. ${stored}${why}`,
  });
  if (run.settledAt)
    entries.push({
      at: run.settledAt,
      kind: 'settled',
      message:
        `Charged ${formatDollars(run.chargedMicros)} USD for ${plural(snapshotOf(run).billedUnits, price.unit)}; ` +
        'the rest of the hold went back to the wallet.',
    });
  const deleted = run.purgedAt ?? (run.expiresAt && run.expiresAt <= now ? run.expiresAt : null);
  if (deleted) entries.push({ at: deleted, kind: 'rows_deleted', message: 'Rows deleted (kept 48 hours).' });
  else if (run.expiresAt)
    entries.push({ at: run.expiresAt, kind: 'rows_deleted', message: 'Rows to be deleted then (kept 48 hours).' });
  return entries;
}
