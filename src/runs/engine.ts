import { eq, sql } from 'drizzle-orm';
import type { Transaction } from '../../db/client.ts';
import { runTable, type Run, type RunStatus } from '../../db/tables/runs.ts';
import type { Core } from '../core.ts';
import { getTool } from '../tools/index.ts';
import type { Row, RunBatch, ToolDefinition } from '../tools/types.ts';
import { AppError, coerceError, DatabaseUnavailableError } from '../shared/errors.ts';
import { formatDollars } from '../billing/money.ts';
import { isTerminal, snapshotOf, type RunSnapshot } from './view.ts';
import type { Subscription } from './events.ts';
import { lockAccount } from '../accounts/accounts.ts';
import { enqueueRun, promoteNextRun, releaseRunSlot } from './queue.ts';
import { runStore } from './store.ts';
import { settleHold } from '../billing/wallet.ts';
import { queueRunWebhooks } from './webhooks.ts';
import { observeFirstRow, upstreamErrors } from '../shared/metrics.ts';
import { UpstreamUnavailableError } from '../upstream/engine.ts';
import { openUpstream, UpstreamEndedError, UpstreamRunner, upstreamEnding } from './upstream.ts';
import { plural } from '../shared/text.ts';

type EngineDeps = Pick<Core, 'db' | 'events' | 'logger' | 'sources' | 'config'> & Partial<Pick<Core, 'upstream'>>;

const INTERNAL_FAILURE = 'The run failed because of an internal error. Results produced so far were kept.';

interface Billing {
  /** Null when money checks are off: nothing is capped. */
  holdMicros: bigint | null;
  chargedMicros: bigint;
  billedUnits: number;
}

/** A batch as the engine stores it: its rows from `firstSeq` on, what it handled, its message, the billing so far. */
interface StoredBatch {
  firstSeq: number;
  rows: Row[];
  handled: number;
  message: string | undefined;
  billing: Billing;
  upstreamOffset?: number;
}

/**
 * Stores a batch's rows, their cost and the new counts, in `tx`; returns the run as updated. The
 * rows' insert and the run's update are sent together, one round trip: the update needs nothing the
 * insert returns. An upstream batch also stores the dataset offset it read up to, so a worker that
 * takes the run over reads on from the rows stored.
 */
async function storeBatch(tx: Transaction, run: Run, batch: StoredBatch): Promise<Run | undefined> {
  const { firstSeq, rows, handled, message, billing, upstreamOffset } = batch;
  // The batch travels as one JSON parameter (not three per row); each element is stored as written.
  const insert =
    rows.length > 0
      ? tx.execute(sql`
        insert into run_item (run_id, seq, data)
        select ${run.id}, ${firstSeq}::int + (t.ord - 1)::int, t.value
        from json_array_elements(${JSON.stringify(rows)}::json) with ordinality as t(value, ord)
        on conflict do nothing`)
      : undefined;
  const update = tx
    .update(runTable)
    .set({
      handled: sql`${runTable.handled} + ${handled}`,
      itemCount: sql`greatest(${runTable.itemCount}, ${firstSeq + rows.length})`,
      chargedMicros: billing.chargedMicros,
      billedUnits: billing.billedUnits,
      ...(upstreamOffset === undefined ? {} : { upstreamOffset }),
      // A cancel in progress keeps its message.
      ...(message === undefined
        ? {}
        : {
            statusMessage: sql`case when ${runTable.status} = 'ABORTING' then ${runTable.statusMessage} else ${message} end`,
          }),
    })
    .where(eq(runTable.id, run.id))
    .returning();
  const [, [updated]] = await Promise.all([insert, update]);
  return updated;
}

/** Stores a batch and announces it, in one transaction; returns the run's status. */
function appendBatch(deps: EngineDeps, run: Run, batch: StoredBatch): Promise<RunStatus | undefined> {
  return deps.db.transaction(async (tx) => {
    const updated = await storeBatch(tx, run, batch);
    if (updated) await deps.events.publishRun(tx, run.accountId, 'progress', snapshotOf(updated));
    return updated?.status;
  });
}

/**
 * Stores a runner's last batch and ends the run SUCCEEDED (ABORTED if a cancel came first), in one
 * transaction: one commit, and one announcement (the end's), where a batch and then the end would be
 * two. The account's lock and the batch go in one round trip (Postgres runs them in the order sent),
 * and the run as the batch's update returned it, its row locked by that update, is what the end
 * starts from.
 */
function appendLastBatch(deps: EngineDeps, run: Run, tool: ToolDefinition, batch: StoredBatch, message: string) {
  return deps.db.transaction(async (tx) => {
    const [, stored] = await Promise.all([lockAccount(tx, run.accountId), storeBatch(tx, run, batch)]);
    if (stored) await finishRunInTx(deps, tx, stored, tool, 'SUCCEEDED', message);
  });
}

const cancelledMessage = (items: number, tool: ToolDefinition) =>
  `Cancelled: ${plural(items, tool.rowUnit ?? tool.price.unit)} kept`;

/**
 * Moves a run to a terminal status once (a run that had already ended is left alone: false), in the
 * caller's transaction with the account locked: settles the hold (release it, charge the final cost)
 * and starts the account's next waiting run. `locked` is the run as read or updated in this
 * transaction, its row locked since, so it is the run as it is: everything the end needs is known
 * without asking again, and its statements go in two round trips, each a group sent together.
 */
export async function finishRunInTx(
  deps: EngineDeps,
  tx: Transaction,
  locked: Run,
  tool: ToolDefinition,
  status: RunStatus,
  message: string,
  errorDetail?: string,
): Promise<boolean> {
  if (isTerminal(locked.status)) return false;
  // A cancel accepted after the runner's last batch: the caller was told ABORTING, so the run ends
  // ABORTED, with every row it stored.
  if (locked.status === 'ABORTING' && status === 'SUCCEEDED') {
    status = 'ABORTED';
    message = cancelledMessage(locked.itemCount, tool);
  }
  const hold = { planMicros: locked.holdPlanMicros, purchasedMicros: locked.holdPurchasedMicros };
  const holdTotal = hold.planMicros + hold.purchasedMicros;
  const input = tool.input.parse(locked.input);
  let charge = tool.price.settle
    ? tool.price.settle(locked.chargedMicros, locked.itemCount, input, status)
    : locked.chargedMicros;
  if (deps.config.enforceLimits && charge > holdTotal) charge = holdTotal;
  // Sent together: none needs another's result (the wallet's changes add up in any order).
  const [, , [ended]] = await Promise.all([
    locked.status === 'RUNNING' || locked.status === 'ABORTING' ? releaseRunSlot(tx, locked.accountId) : undefined,
    settleHold(tx, locked.accountId, locked.id, hold, charge),
    tx
      .update(runTable)
      .set({
        status,
        statusMessage: message,
        finishedAt: sql`now()`,
        startedAt: sql`coalesce(${runTable.startedAt}, now())`,
        expiresAt: sql`now() + make_interval(hours => ${deps.config.resultRetentionHours})`,
        errorDetail: errorDetail ?? null,
        chargedMicros: charge,
        settledAt: sql`now()`,
      })
      .where(eq(runTable.id, locked.id))
      .returning(),
  ]);
  const snapshot = snapshotOf(ended!);
  // Sent together as well; the next run's start counts on the slot released above.
  await Promise.all([
    deps.events.publishRun(tx, locked.accountId, 'finished', snapshot),
    queueRunWebhooks(tx, deps.config.publicUrl, {
      ...snapshot,
      accountId: locked.accountId,
      webhookUrl: ended!.webhookUrl,
    }),
    promoteNextRun(deps, tx, locked.accountId),
  ]);
  return true;
}

/** `finishRunInTx` in a transaction of its own: the account's lock and the run's go in one round trip. */
export async function finishRun(
  deps: EngineDeps,
  run: Pick<Run, 'id' | 'accountId'>,
  tool: ToolDefinition,
  status: RunStatus,
  message: string,
  errorDetail?: string,
) {
  await deps.db.transaction(async (tx) => {
    const [, [locked]] = await Promise.all([
      lockAccount(tx, run.accountId),
      tx.select().from(runTable).where(eq(runTable.id, run.id)).for('update'),
    ]);
    if (locked) await finishRunInTx(deps, tx, locked, tool, status, message, errorDetail);
  });
}

/** Why a run stopped before its runner was done. */
type StopReason = 'cancelled' | 'timed-out' | 'shutdown';

/** The longest a run of `tool` may take, seconds. */
export const runTimeLimitSecs = (tool: ToolDefinition, config: Pick<Core['config'], 'runTimeoutSecs'>) =>
  Math.min(tool.maxRunSecs ?? config.runTimeoutSecs, config.runTimeoutSecs);

/**
 * Watches the run's own topic for a cancel (from any process) and calls `onCancel` once. Resolves once
 * the topic is listened on, so a cancel committed after that is heard even while the runner waits on
 * a page; one committed before is in the status every batch returns (as when the bus cannot listen).
 */
async function watchForCancel(deps: EngineDeps, runId: string, onCancel: () => void): Promise<() => void> {
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

/**
 * Executes a run to its end. Safe to call again for the same run (jobs run at least once): a
 * finished run is left alone, and rows an earlier attempt stored are neither stored nor billed twice.
 * The run ends ABORTED when cancelled, TIMED-OUT past its time limit, FAILED on an error; each keeps
 * and bills the rows already stored. When the worker shuts down (`workerSignal`), the run is handed
 * back: its job is queued again and the next worker resumes it where this one stopped.
 */
export async function executeRun(
  deps: EngineDeps,
  runId: string,
  workerSignal: AbortSignal = new AbortController().signal,
) {
  const [run] = await deps.db.select().from(runTable).where(eq(runTable.id, runId));
  if (!run || isTerminal(run.status) || run.status === 'READY') return;
  const tool = getTool(run.tool);
  const log = deps.logger.child({ runId, tool: tool.name });
  const upstream = openUpstream({ ...deps, engine: deps.upstream }, run, tool, runTimeLimitSecs(tool, deps.config));
  if (run.status === 'ABORTING') {
    if (upstream instanceof UpstreamRunner) await upstream.abort();
    await finishRun(deps, run, tool, 'ABORTED', cancelledMessage(run.itemCount, tool));
    return;
  }
  const limitSecs = runTimeLimitSecs(tool, deps.config);
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
  const stopWatching = await watchForCancel(deps, runId, () => stop('cancelled'));

  const startAt = run.itemCount;
  const billing: Billing = {
    holdMicros:
      deps.config.enforceLimits && tool.price.unitMicros > 0n ? run.holdPlanMicros + run.holdPurchasedMicros : null,
    chargedMicros: run.chargedMicros,
    billedUnits: run.billedUnits,
  };
  // A runner replays its output from the first row; an upstream run is read on from the rows stored.
  let seq = upstream ? startAt : 0;
  let holdUsedUp = false;
  let failure: Error | undefined;
  let note: string | undefined;
  /** Set once the run's last batch was stored with its end. */
  let endedWithBatch = false;
  /** The end's message of a run its runner saw through, with `kept` rows. */
  const finishedMessage = (kept: number) => {
    const rows = plural(kept, tool.rowUnit ?? tool.price.unit);
    const found = tool.price.billsFound ? `; ${plural(billing.billedUnits, tool.price.unit)} found and billed` : '';
    const held = tool.overdraftMicros ? ` (the wallet balance plus ${formatDollars(tool.overdraftMicros)} USD)` : '';
    return holdUsedUp
      ? `Stopped after ${rows}${found}: the ${formatDollars(billing.holdMicros!)} USD held for this run${held} is used up. Buy credits to get more.`
      : `Finished: ${rows}${found}${note ? `. ${note}` : ''}`;
  };
  try {
    const input = tool.input.parse(run.input);
    const store = runStore(deps.db, run.accountId, run.id);
    const startedAt = run.startedAt ?? run.createdAt;
    if (Date.now() >= deadline) stop('timed-out');
    if (!reason) {
      if (upstream instanceof UpstreamUnavailableError) throw upstream;
      const batches: AsyncIterator<RunBatch & { offset?: number }> = (
        upstream
          ? upstream.batches(input, control.signal)
          : tool.run({
              runId,
              accountId: run.accountId,
              input,
              sources: deps.sources,
              store,
              startedAt,
              startAt,
              signal: control.signal,
            })
      )[Symbol.asyncIterator]();
      // A stop does not wait for the runner: a source call that hangs cannot hold a run past a cancel or its time limit.
      const stopped = new Promise<null>((resolve) =>
        control.signal.addEventListener('abort', () => resolve(null), { once: true }),
      );
      for (;;) {
        const next = await Promise.race([batches.next(), stopped]);
        if (next === null) {
          void batches.return?.(undefined)?.catch(() => {});
          break;
        }
        if (next.done) break;
        const batch = next.value;
        if (reason) break; // rows produced after a stop are not kept
        if (batch.note) note = batch.note;
        const first = seq;
        seq += batch.rows.length;
        if (seq <= startAt && batch.rows.length > 0) continue; // stored and billed by an earlier attempt
        const skip = Math.max(0, startAt - first);
        const rows: Row[] = [];
        for (const row of batch.rows.slice(skip)) {
          const cost = tool.price.rowCost(row, input);
          if (billing.holdMicros !== null && billing.chargedMicros + cost > billing.holdMicros) {
            holdUsedUp = true;
            break;
          }
          billing.chargedMicros += cost;
          if (cost > 0n) billing.billedUnits += 1;
          rows.push(row);
        }
        const handled = holdUsedUp ? rows.length : (batch.handled ?? rows.length);
        const stored: StoredBatch = {
          firstSeq: first + skip,
          rows,
          handled,
          message: batch.message,
          billing,
          upstreamOffset: batch.offset,
        };
        // Not an upstream run's: its end waits on the upstream run's stop and cost, after the loop.
        endedWithBatch = batch.last === true && !holdUsedUp && !upstream;
        const status = endedWithBatch
          ? await appendLastBatch(deps, run, tool, stored, finishedMessage(Math.max(seq, startAt)))
          : await appendBatch(deps, run, stored);
        if (first + skip === 0 && rows.length > 0) observeFirstRow(tool.name, startedAt);
        if (endedWithBatch) {
          void batches.return?.(undefined)?.catch(() => {});
          break;
        }
        if (status === 'ABORTING') stop('cancelled');
        if (holdUsedUp || reason) {
          seq = first + skip + rows.length;
          break;
        }
      }
    }
  } catch (err) {
    // A runner interrupted by a stop may throw; the stop decides how the run ends.
    if (!reason) failure = coerceError(err);
    // A lost database does not end the run: the error goes to the worker, which runs it again once the
    // database is back (resuming after the rows stored), or hands it back.
    if (failure instanceof DatabaseUnavailableError) throw failure;
  } finally {
    clearTimeout(timer);
    workerSignal.removeEventListener('abort', onShutdown);
    stopWatching();
  }

  const kept = Math.max(seq, startAt);
  if (endedWithBatch) {
    // Ended with its last batch (ABORTED if a cancel was committed first): a stop noticed since comes too late.
    log.info({ items: kept, holdUsedUp }, 'run succeeded');
    return;
  }
  const active = upstream instanceof UpstreamRunner ? upstream : undefined;
  // The upstream run stops with ours (not on a hand-back: the next worker re-attaches), before the end is announced.
  if (active && reason !== 'shutdown') {
    if (!(failure instanceof UpstreamEndedError || failure instanceof UpstreamUnavailableError)) await active.abort();
    await active.recordCost();
  }
  if (failure instanceof UpstreamEndedError) {
    const ending = upstreamEnding(failure, plural(await storedItems(deps, run.id), tool.rowUnit ?? tool.price.unit));
    await finishRun(deps, run, tool, ending.status, ending.message, failure.message);
    log.warn(
      { upstreamRunId: active?.upstreamRunId, upstreamStatus: failure.status },
      'upstream run ended without success',
    );
  } else if (failure instanceof UpstreamUnavailableError) {
    upstreamErrors.inc({ tool: tool.name, reason: failure.reason });
    log.error(
      { upstreamRunId: active?.upstreamRunId, reason: failure.reason, detail: failure.detail },
      'upstream source unavailable',
    );
    await finishRun(deps, run, tool, 'FAILED', failure.message, failure.detail);
    // Best effort, after the caller has the answer: the engine may be the thing that is down.
    void active?.abort();
  } else if (failure) {
    const safe = failure instanceof AppError ? failure.message : INTERNAL_FAILURE;
    log.error({ err: failure }, 'run failed');
    await finishRun(deps, run, tool, 'FAILED', safe, failure.stack ?? failure.message);
  } else if (reason === 'shutdown') {
    await handBack(deps, run.id);
    log.info({ items: kept }, 'worker stopping: run handed back');
  } else if (reason === 'cancelled') {
    await finishRun(deps, run, tool, 'ABORTED', cancelledMessage(await storedItems(deps, run.id), tool));
    log.info('run cancelled');
  } else if (reason === 'timed-out') {
    const items = await storedItems(deps, run.id);
    await finishRun(
      deps,
      run,
      tool,
      'TIMED-OUT',
      `Timed out after ${limitSecs} s (this tool's limit): ${plural(items, tool.rowUnit ?? tool.price.unit)} kept`,
    );
    log.warn({ limitSecs }, 'run timed out');
  } else {
    await finishRun(deps, run, tool, 'SUCCEEDED', finishedMessage(kept));
    log.info({ items: kept, holdUsedUp }, 'run succeeded');
  }
}

const storedItems = async (deps: EngineDeps, runId: string) =>
  (await deps.db.select({ n: runTable.itemCount }).from(runTable).where(eq(runTable.id, runId)))[0]?.n ?? 0;

/** Queues the run's job again (a running job keeps its attempt; graphile-worker gives the key to the new one). */
async function handBack(deps: EngineDeps, runId: string) {
  await deps.db.transaction(async (tx) => {
    const [run] = await tx.select({ status: runTable.status }).from(runTable).where(eq(runTable.id, runId));
    if (run && !isTerminal(run.status)) await enqueueRun(tx, runId);
  });
}
