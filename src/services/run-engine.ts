import { and, eq, notInArray, sql } from 'drizzle-orm';
import { runItemTable, runTable, TERMINAL_STATUSES, type RunStatus } from '../../db/schema/runs.ts';
import type { Core } from '../core.ts';
import { getTool } from '../tools/index.ts';
import type { Row } from '../tools/types.ts';
import { AppError, coerceError } from './errors.ts';
import { isTerminal, snapshotOf } from './run-view.ts';

type EngineDeps = Pick<Core, 'db' | 'events' | 'logger' | 'sources' | 'config'>;

const INTERNAL_FAILURE = 'The run failed because of an internal error. Results produced so far were kept.';

export function plural(count: number, unit: string): string {
  if (count === 1) return `1 ${unit}`;
  if (/(s|x|ch|sh)$/.test(unit)) return `${count} ${unit}es`;
  if (/[^aeiou]y$/.test(unit)) return `${count} ${unit.slice(0, -1)}ies`;
  return `${count} ${unit}s`;
}

/** Stores a batch of rows and the new counts, and announces them, in one transaction. */
async function appendBatch(deps: EngineDeps, runId: string, firstSeq: number, rows: Row[], handled: number, message: string | undefined) {
  await deps.db.transaction(async (tx) => {
    if (rows.length > 0) {
      await tx
        .insert(runItemTable)
        .values(rows.map((data, i) => ({ runId, seq: firstSeq + i, data })))
        .onConflictDoNothing();
    }
    const [updated] = await tx
      .update(runTable)
      .set({
        handled: sql`${runTable.handled} + ${handled}`,
        itemCount: sql`greatest(${runTable.itemCount}, ${firstSeq + rows.length})`,
        ...(message === undefined ? {} : { statusMessage: message }),
      })
      .where(eq(runTable.id, runId))
      .returning();
    if (updated) await deps.events.publishInTx(tx, 'runProgress', runId, snapshotOf(updated));
  });
}

/** Moves a run to a terminal status once; later calls change nothing. */
async function finishRun(deps: EngineDeps, runId: string, status: RunStatus, message: string, errorDetail?: string) {
  await deps.db.transaction(async (tx) => {
    const [updated] = await tx
      .update(runTable)
      .set({
        status,
        statusMessage: message,
        finishedAt: sql`now()`,
        expiresAt: sql`now() + make_interval(hours => ${deps.config.resultRetentionHours})`,
        errorDetail: errorDetail ?? null,
      })
      .where(and(eq(runTable.id, runId), notInArray(runTable.status, [...TERMINAL_STATUSES])))
      .returning();
    if (updated) await deps.events.publishInTx(tx, 'runProgress', runId, snapshotOf(updated));
  });
}

/**
 * Executes a run to its end. Safe to call again for the same run (jobs run at least once): a
 * finished run is left alone, and rows an earlier attempt stored are not stored twice.
 */
export async function executeRun(deps: EngineDeps, runId: string, signal: AbortSignal = new AbortController().signal) {
  const [run] = await deps.db.select().from(runTable).where(eq(runTable.id, runId));
  if (!run || isTerminal(run.status)) return;
  const tool = getTool(run.tool);
  const log = deps.logger.child({ runId, tool: tool.name });
  try {
    const input = tool.input.parse(run.input);
    const startAt = run.itemCount;
    if (run.status === 'READY') {
      await deps.db.update(runTable).set({ status: 'RUNNING', startedAt: new Date() }).where(eq(runTable.id, runId));
    }
    let seq = 0;
    for await (const batch of tool.run({ runId, accountId: run.accountId, input, sources: deps.sources, startAt, signal })) {
      const first = seq;
      seq += batch.rows.length;
      if (seq <= startAt && batch.rows.length > 0) continue; // replayed by a retried attempt
      const skip = Math.max(0, startAt - first);
      const rows = batch.rows.slice(skip);
      const handled = batch.handled ?? rows.length;
      await appendBatch(deps, runId, first + skip, rows, handled, batch.message);
    }
    await finishRun(deps, runId, 'SUCCEEDED', `Finished: ${plural(seq, tool.price.unit)}`);
    log.info({ items: seq }, 'run succeeded');
  } catch (err) {
    const error = coerceError(err);
    const safe = error instanceof AppError ? error.message : INTERNAL_FAILURE;
    log.error({ err: error }, 'run failed');
    await finishRun(deps, runId, 'FAILED', safe, error.stack ?? error.message);
  }
}
