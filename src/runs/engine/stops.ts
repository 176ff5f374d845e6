/**
 * The engine's stops: how a run ends before its runner is done. A cancel (`cancelRun`) is heard by the
 * worker executing the run; a timer ends it at its time limit; a worker's shutdown hands it back.
 */
import { and, eq } from 'drizzle-orm';
import type { Transaction } from '../../../db/client.ts';
import { runTable, type Run } from '../../../db/tables/runs.ts';
import { oneRow } from '../../../db/rows.ts';
import type { Core } from '../../core.ts';
import { getTool } from '../../tools/index.ts';
import type { ToolDefinition } from '../../tools/types.ts';
import { lockAccount, type Principal } from '../../accounts/accounts.ts';
import { AppError, notFound } from '../../shared/errors.ts';
import { assertStorable } from '../../shared/params.ts';
import type { Subscription } from '../../events/topics.ts';
import { enqueueRun } from '../queue.ts';
import { isTerminal, snapshotOf, type RunSnapshot } from '../view.ts';
import { finishRunInTx } from './finish.ts';

type StopDeps = Pick<Core, 'events'>;

/** Why a run stopped before its runner was done. */
export type StopReason = 'cancelled' | 'timed-out' | 'shutdown';

/** The longest a run of `tool` may take, seconds. */
export const runTimeLimitSecs = (tool: ToolDefinition, config: Pick<Core['config'], 'runTimeoutSecs'>) =>
  Math.min(tool.maxRunSecs ?? config.runTimeoutSecs, config.runTimeoutSecs);

/**
 * Watches the run's own topic for a cancel (from any process) and calls `onCancel` once. Resolves once
 * the topic is listened on, so a cancel committed after that is heard even while the runner waits on
 * a page; one committed before is in the status every batch returns (as when the bus cannot listen).
 */
async function watchForCancel(deps: StopDeps, runId: string, onCancel: () => void): Promise<() => void> {
  let events: Subscription<RunSnapshot>;
  try {
    events = await deps.events.subscribe('runProgress', runId);
  } catch {
    return () => {};
  }
  void (async () => {
    for await (const snapshot of events) {
      if (snapshot.status === 'ABORTING') {
        onCancel();
        return;
      }
    }
  })().catch(() => {});
  return () => void events.return();
}

/** A run's stops while it executes: the first one's reason, and the signal its runner is given. */
export interface RunStops {
  /** Aborted at the first stop, with its reason: the runner's signal. */
  readonly signal: AbortSignal;
  /** Why the run stopped; undefined while it goes on. */
  readonly reason: StopReason | undefined;
  /** Stops the run; the first reason stays. */
  stop(why: StopReason): void;
  /** Stops the run timed-out when its deadline has passed already. */
  checkDeadline(): void;
  /** Settles with null at the first stop after the call, so a stop never waits for the runner. */
  stopped(): Promise<null>;
  /** Stops watching: the timer, the worker's signal, the run's topic. */
  release(): void;
}

/**
 * Watches for the stops of a run about to execute: the worker shutting down (`workerSignal`), the run's
 * time limit of `limitSecs` from its start, and a cancel from any process (watchForCancel).
 */
export async function watchStops(
  deps: StopDeps,
  run: Pick<Run, 'id' | 'startedAt' | 'createdAt'>,
  limitSecs: number,
  workerSignal: AbortSignal,
): Promise<RunStops> {
  const deadline = (run.startedAt ?? run.createdAt).getTime() + limitSecs * 1000;
  const control = new AbortController();
  let reason: StopReason | undefined;
  const stop = (why: StopReason) => {
    if (reason) return;
    reason = why;
    control.abort(why);
  };
  const onShutdown = () => stop('shutdown');
  if (workerSignal.aborted) onShutdown();
  workerSignal.addEventListener('abort', onShutdown, { once: true });
  const timer = setTimeout(() => stop('timed-out'), Math.max(0, deadline - Date.now()));
  const stopWatching = await watchForCancel(deps, run.id, () => stop('cancelled'));
  return {
    signal: control.signal,
    get reason() {
      return reason;
    },
    stop,
    checkDeadline() {
      if (Date.now() >= deadline) stop('timed-out');
    },
    stopped: () =>
      new Promise<null>((resolve) => control.signal.addEventListener('abort', () => resolve(null), { once: true })),
    release() {
      clearTimeout(timer);
      workerSignal.removeEventListener('abort', onShutdown);
      stopWatching();
    },
  };
}

/** Queues the run's job again (a running job keeps its attempt; graphile-worker gives the key to the new one). */
export async function handBack(deps: Pick<Core, 'db'>, runId: string) {
  await deps.db.transaction(async (tx) => {
    const [run] = await tx.select({ status: runTable.status }).from(runTable).where(eq(runTable.id, runId));
    if (run && !isTerminal(run.status)) await enqueueRun(tx, runId);
  });
}

/**
 * Cancels a run of the caller's account. A waiting (READY) run ends ABORTED at once; a RUNNING run
 * becomes ABORTING and its worker, wherever it runs, stops after the batch in hand and ends it
 * ABORTED, keeping and billing the rows already stored. 409 `not_cancellable` for tools outside the
 * spec's cancellable list, 409 `run_finished` once the run has ended; cancelling twice is harmless.
 */
export async function cancelRun(
  core: StopDeps & Pick<Core, 'db' | 'config'>,
  principal: Principal,
  runId: string,
): Promise<RunSnapshot> {
  assertStorable(runId, 'runId');
  return core.db.transaction(async (tx) => {
    // The account's lock, then the run's: sent together, run by Postgres in that order.
    const [, [run]] = await Promise.all([
      lockAccount(tx, principal.accountId),
      tx
        .select()
        .from(runTable)
        .where(and(eq(runTable.id, runId), eq(runTable.accountId, principal.accountId)))
        .for('update'),
    ]);
    if (!run) throw notFound('Run');
    return cancelLockedRun(core, tx, run);
  });
}

/**
 * Cancels a run locked in the caller's transaction with its account (a pipeline's cancel stops its
 * running step this way): a waiting run ends ABORTED at once, a running one goes ABORTING and its worker
 * stops it. 409 for a tool that cannot be cancelled and for a run that has ended.
 */
export async function cancelLockedRun(
  core: StopDeps & Pick<Core, 'config'>,
  tx: Transaction,
  run: Run,
): Promise<RunSnapshot> {
  {
    const tool = getTool(run.tool);
    if (!tool.cancellable) {
      throw new AppError(
        409,
        'not_cancellable',
        `${tool.title} runs cannot be cancelled; this one will finish on its own.`,
      );
    }
    if (isTerminal(run.status)) throw new AppError(409, 'run_finished', `The run has already ended (${run.status}).`);
    if (run.status === 'ABORTING') return snapshotOf(run);
    if (run.status === 'READY') {
      await finishRunInTx(core, tx, run, tool, {
        status: 'ABORTED',
        message: 'Cancelled before it started: nothing was charged',
      });
    } else {
      const aborting = await tx
        .update(runTable)
        .set({ status: 'ABORTING', statusMessage: 'Cancelling: results stored so far are kept' })
        .where(eq(runTable.id, run.id))
        .returning();
      await core.events.publishRun(
        tx,
        run.accountId,
        'progress',
        snapshotOf(oneRow(aborting, `run ${run.id} cancelled`)),
      );
    }
    const now = await tx.select().from(runTable).where(eq(runTable.id, run.id));
    return snapshotOf(oneRow(now, `run ${run.id}`));
  }
}
