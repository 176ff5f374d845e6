/**
 * Following a run from a face: its status now or once it ends (long polls), its changes and its rows
 * as they are stored (subscriptions, streams), and every run of an account (dashboards).
 */
import { and, desc, eq, inArray } from 'drizzle-orm';
import { runTable, type RunStatus } from '../../db/tables/runs.ts';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { assertNotExpired } from './exports.ts';
import type { RunEvent } from '../events/topics.ts';
import { isTerminal, snapshotOf, type RunSnapshot } from './view.ts';
import { getRun, listRunItems } from './read.ts';

/** The longest a status request may wait for a run to end (`waitForFinish`), seconds. */
export const MAX_WAIT_FOR_FINISH_SECS = 60;

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
  onProgress?: (run: RunSnapshot) => void,
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
      for await (const snapshot of events) {
        if (isTerminal(snapshot.status)) return snapshot;
        onProgress?.(snapshot);
      }
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
  onProgress?: (run: RunSnapshot) => void,
): Promise<RunSnapshot> {
  if (waitSecs > 0) return waitForRun(core, principal, runId, waitSecs, signal, onProgress);
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

/**
 * A run of the caller's account now, then each change of it, until it ends (GraphQL's `runProgress`).
 * Listens first, then reads, so nothing falls in between; a progress event that handled fewer items
 * than the state already sent (committed before the read) is stale and skipped.
 */
export async function* followRun(
  core: Pick<Core, 'db' | 'events'>,
  principal: Principal,
  runId: string,
): AsyncGenerator<RunSnapshot> {
  const events = await core.events.subscribe('runProgress', runId);
  try {
    let current = snapshotOf(await getRun(core.db, principal.accountId, runId));
    yield current;
    if (isTerminal(current.status)) return;
    for await (const next of events) {
      const stale = !isTerminal(next.status) && next.handled < current.handled;
      if (stale) continue;
      current = next;
      yield current;
      if (isTerminal(current.status)) return;
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
