import { and, desc, eq, inArray } from 'drizzle-orm';
import { runTable, type RunStatus } from '../../db/tables/runs.ts';
import type { Core } from '../core.ts';
import { getTool } from '../tools/index.ts';
import { lockAccount, type Principal } from '../accounts/accounts.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { assertNotExpired } from './exports.ts';
import { assertStorable } from '../shared/params.ts';
import type { RunEvent } from './events.ts';
import { finishRunInTx } from './engine.ts';
import { isTerminal, snapshotOf, type RunSnapshot } from './view.ts';
import { getRun, listRunItems } from './runs.ts';

type ControlDeps = Pick<Core, 'db' | 'events' | 'config' | 'logger' | 'sources'>;

/** The longest a status request may wait for a run to end (`waitForFinish`), seconds. */
export const MAX_WAIT_FOR_FINISH_SECS = 60;

/**
 * Cancels a run of the caller's account. A waiting (READY) run ends ABORTED at once; a RUNNING run
 * becomes ABORTING and its worker, wherever it runs, stops after the batch in hand and ends it
 * ABORTED, keeping and billing the rows already stored. 409 `not_cancellable` for tools outside the
 * spec's cancellable list, 409 `run_finished` once the run has ended; cancelling twice is harmless.
 */
export async function cancelRun(core: ControlDeps, principal: Principal, runId: string): Promise<RunSnapshot> {
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
      await finishRunInTx(core, tx, run, tool, 'ABORTED', 'Cancelled before it started: nothing was charged');
    } else {
      const [aborting] = await tx
        .update(runTable)
        .set({ status: 'ABORTING', statusMessage: 'Cancelling: results stored so far are kept' })
        .where(eq(runTable.id, run.id))
        .returning();
      await core.events.publishRun(tx, run.accountId, 'progress', snapshotOf(aborting!));
    }
    const [now] = await tx.select().from(runTable).where(eq(runTable.id, run.id));
    return snapshotOf(now!);
  });
}

/**
 * The run now or, when it is still going, once it ends or `waitSecs` pass, whichever is first
 * (`waitForFinish` on the status route, `waitSecs` of MCP's check_run_status).
 */
export async function waitForRun(
  core: Pick<Core, 'db' | 'events'> & Partial<Pick<Core, 'shutdown'>>,
  principal: Principal,
  runId: string,
  waitSecs: number,
  signal?: AbortSignal,
): Promise<RunSnapshot> {
  const events = await core.events.subscribe('runProgress', runId);
  // This process stopping ends the wait too: the run is answered as it is rather than hold the stop.
  let stopWaiting = () => {};
  const onShutdown = () => stopWaiting();
  core.shutdown?.addEventListener('abort', onShutdown);
  try {
    // Listen first, then read: an end between the two cannot be missed.
    const current = snapshotOf(await getRun(core.db, principal.accountId, runId));
    if (isTerminal(current.status) || waitSecs <= 0 || core.shutdown?.aborted) return current;
    // Settles with no run: the wait passed, was cancelled or the process stops.
    const timeout = new Promise<undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), waitSecs * 1000);
      stopWaiting = () => {
        clearTimeout(timer);
        resolve(undefined);
      };
      signal?.addEventListener('abort', stopWaiting);
    });
    // The end's event carries the run as its end committed it (a run does not change once ended): it
    // is the answer, with no second read. A wait that passes, or a stream that stops, reads it again.
    const ended = (async () => {
      for await (const snapshot of events) if (isTerminal(snapshot.status)) return snapshot;
      return undefined;
    })();
    return (await Promise.race([ended, timeout])) ?? snapshotOf(await getRun(core.db, principal.accountId, runId));
  } finally {
    core.shutdown?.removeEventListener('abort', onShutdown);
    await events.return();
  }
}

/** The run now, or once it ends within `waitSecs` (status polling: no subscription unless it waits). */
export async function runStatus(
  core: Pick<Core, 'db' | 'events'> & Partial<Pick<Core, 'shutdown'>>,
  principal: Principal,
  runId: string,
  waitSecs = 0,
  signal?: AbortSignal,
): Promise<RunSnapshot> {
  if (waitSecs > 0) return waitForRun(core, principal, runId, waitSecs, signal);
  return snapshotOf(await getRun(core.db, principal.accountId, runId));
}

/** Rows a run has produced, from `fromSeq` on, as they are stored. */
export interface RunItemsBatch {
  /** seq of the first row of `items`. */
  offset: number;
  items: Record<string, unknown>[];
  run: RunSnapshot;
}

const ITEMS_PAGE = 500;

/**
 * The rows of a run already stored, then each batch as the worker stores it, in order and without
 * gaps; ends after the last row of a finished run; 410 `results_expired` past the run's `expiresAt`.
 * Rows never travel through notifications (they can be large): each progress event says how many
 * exist, and the new ones are read from the table.
 */
export async function* followRunItems(
  core: Pick<Core, 'db' | 'events' | 'clock'>,
  principal: Principal,
  runId: string,
  fromSeq = 0,
): AsyncGenerator<RunItemsBatch> {
  const events = await core.events.subscribe('runProgress', runId);
  try {
    let run = snapshotOf(await getRun(core.db, principal.accountId, runId));
    assertNotExpired(run, core.clock());
    let next = fromSeq;
    const drain = async function* () {
      while (next < run.itemCount) {
        const items = await listRunItems(core.db, runId, {
          offset: next,
          limit: Math.min(ITEMS_PAGE, run.itemCount - next),
        });
        if (items.length === 0) return;
        yield { offset: next, items, run };
        next += items.length;
      }
    };
    yield* drain();
    if (isTerminal(run.status)) return;
    for await (const snapshot of events) {
      if (snapshot.itemCount > run.itemCount || snapshot.status !== run.status) run = snapshot;
      yield* drain();
      if (isTerminal(snapshot.status)) {
        // The final event may report rows a late progress event did not: read once more.
        run = snapshotOf(await getRun(core.db, principal.accountId, runId));
        yield* drain();
        return;
      }
    }
  } finally {
    await events.return();
  }
}

/** Most runs in flight `followAccountRuns` reports on subscribing (newest kept). */
const IN_FLIGHT_LIMIT = 100;
const IN_FLIGHT: RunStatus[] = ['READY', 'RUNNING', 'ABORTING'];
const stage = (status: RunStatus) => (isTerminal(status) ? 3 : IN_FLIGHT.indexOf(status));

/**
 * Every run event of the caller's account from now on, starting with the account's runs still in
 * flight (READY, RUNNING, ABORTING), oldest first, each as a `progress` event with its state now: a
 * dashboard that connects mid-run shows it at once. Listens first, then reads, so nothing falls in
 * between; an event no newer than the state already sent for its run (committed before the read) is
 * skipped.
 */
export async function* followAccountRuns(
  core: Pick<Core, 'db' | 'events'>,
  principal: Principal,
): AsyncGenerator<RunEvent> {
  const events = await core.events.subscribe('runEvents', principal.accountId);
  try {
    const rows = await core.db
      .select()
      .from(runTable)
      .where(and(eq(runTable.accountId, principal.accountId), inArray(runTable.status, IN_FLIGHT)))
      .orderBy(desc(runTable.createdAt), desc(runTable.id))
      .limit(IN_FLIGHT_LIMIT);
    const sent = new Map<string, RunSnapshot>();
    for (const run of rows.reverse().map(snapshotOf)) {
      sent.set(run.id, run);
      yield { kind: 'progress', run };
    }
    for await (const event of events) {
      const before = sent.get(event.run.id);
      if (before) {
        const [was, now] = [stage(before.status), stage(event.run.status)];
        const newer =
          now > was || (now === was && (event.run.handled > before.handled || event.run.itemCount > before.itemCount));
        if (!newer) continue;
        // Events arrive in commit order: from the first one newer than the read, none is older.
        sent.delete(event.run.id);
      }
      yield event;
    }
  } finally {
    await events.return();
  }
}
