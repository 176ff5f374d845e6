/**
 * The engine's execution: a run's runner (or its upstream run) iterated to the run's end, each batch
 * stored and billed within the hold, and the end decided by how the iteration stopped.
 */
import { eq } from 'drizzle-orm';
import { runTable } from '../../../db/tables/runs.ts';
import type { Core } from '../../core.ts';
import { getTool } from '../../tools/index.ts';
import type { Row, RunBatch, RunStore } from '../../tools/types.ts';
import { identityOf } from '../../datasets/index.ts';
import { AppError, coerceError, DatabaseUnavailableError } from '../../shared/errors.ts';
import { formatDollars } from '../../billing/money.ts';
import { observeFirstRow, upstreamErrors } from '../../shared/metrics.ts';
import { plural } from '../../shared/text.ts';
import { UpstreamUnavailableError } from '../../upstream/engine.ts';
import { isTerminal } from '../view.ts';
import { runStore } from '../store.ts';
import { openUpstream, UpstreamEndedError, UpstreamRunner, upstreamEnding } from '../upstream.ts';
import { type SuppressionCheck, suppressionCheck, withoutSuppressed } from '../../privacy/suppression.ts';
import { appendBatch, appendLastBatch, type Billing, type StoredBatch } from './batches.ts';
import { cancelledMessage, finishRun } from './finish.ts';
import { handBack, runTimeLimitSecs, watchStops } from './stops.ts';

/** What the engine needs of the core: each of its systems takes the part it uses. */
export type EngineDeps = Pick<Core, 'db' | 'events' | 'logger' | 'sources' | 'config'> &
  Partial<Pick<Core, 'upstream'>>;

/**
 * A runner's batches without the rows the run's dataset delivered before (their identities claimed for
 * this run first, src/datasets): each batch says how many were skipped so far, from `before`.
 */
async function* newRowsOnly<B extends RunBatch>(
  batches: AsyncIterable<B>,
  store: RunStore,
  dataset: string,
  before: number,
): AsyncGenerator<B & { skippedDelivered: number }> {
  let skipped = before;
  for await (const batch of batches) {
    const fresh = batch.rows.length > 0 ? await store.claimNew(dataset, batch.rows) : [];
    const rows = batch.rows.filter((_, i) => fresh[i]);
    skipped += batch.rows.length - rows.length;
    yield { ...batch, rows, skippedDelivered: skipped };
  }
}

/**
 * A runner's batches without the rows about suppressed people (src/privacy): each batch says how many
 * were dropped so far, from `before`. Dropped before anything else sees them: not stored, not billed,
 * not claimed by a dataset.
 */
async function* unsuppressedOnly<B extends RunBatch>(
  batches: AsyncIterable<B>,
  check: SuppressionCheck,
  before: number,
): AsyncGenerator<B & { suppressed: number }> {
  let suppressed = before;
  for await (const batch of batches) {
    const kept = await withoutSuppressed(check, batch.rows);
    suppressed += kept.suppressed;
    yield { ...batch, rows: kept.rows, suppressed };
  }
}

const INTERNAL_FAILURE = 'The run failed because of an internal error. Results produced so far were kept.';

/**
 * Executes a run to its end. Safe to call again for the same run (jobs run at least once): a
 * finished run is left alone, and rows an earlier attempt stored are neither stored nor billed twice.
 * The run ends ABORTED when cancelled, TIMED-OUT past its time limit, FAILED on an error, SUCCEEDED
 * when its runner is done or its hold is used up (its stop reason tells the two apart: finish.ts
 * `stopReasonOf`); each keeps and bills the rows already stored. When the worker shuts down
 * (`workerSignal`), the run is handed back: its job is queued again and the next worker resumes it
 * where this one stopped.
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
    await finishRun(deps, run, tool, { status: 'ABORTED', message: cancelledMessage(run.itemCount, tool) });
    return;
  }
  const limitSecs = runTimeLimitSecs(tool, deps.config);
  const stops = await watchStops(deps, run, limitSecs, workerSignal);

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
    if (!holdUsedUp) return `Finished: ${rows}${found}${note ? `. ${note}` : ''}`;
    const heldUsd = formatDollars(billing.holdMicros ?? 0n);
    return (
      `Stopped after ${rows}${found}: the ${heldUsd} USD held for this run${held} is used up. ` +
      `Buy credits to get more.`
    );
  };
  try {
    const input = tool.input.parse(run.input);
    const store = runStore(deps.db, run.accountId, run.id, tool);
    const startedAt = run.startedAt ?? run.createdAt;
    stops.checkDeadline();
    if (!stops.reason) {
      if (upstream instanceof UpstreamUnavailableError) throw upstream;
      const produced: AsyncIterable<RunBatch & { offset?: number }> = upstream
        ? upstream.batches(input, stops.signal)
        : tool.run({
            runId,
            accountId: run.accountId,
            input,
            sources: deps.sources,
            store,
            startedAt,
            startAt,
            signal: stops.signal,
          });
      // A runner replays from its first row, so its skipped rows are counted again from none; an upstream run
      // reads on, so from those counted before.
      const unsuppressed = unsuppressedOnly(
        produced,
        suppressionCheck(deps.db, run.accountId),
        upstream ? run.suppressedCount : 0,
      );
      const batches: AsyncIterator<RunBatch & { offset?: number; skippedDelivered?: number; suppressed?: number }> = (
        run.datasetName && run.onlyNew
          ? newRowsOnly(unsuppressed, store, run.datasetName, upstream ? run.skippedDelivered : 0)
          : unsuppressed
      )[Symbol.asyncIterator]();
      // A stop does not wait for the runner: a source call that hangs cannot hold a run past a cancel or its time
      // limit.
      const stopped = stops.stopped();
      for (;;) {
        const next = await Promise.race([batches.next(), stopped]);
        if (next === null) {
          void batches.return?.(undefined)?.catch(() => {});
          break;
        }
        if (next.done) break;
        const batch = next.value;
        if (stops.reason) break; // rows produced after a stop are not kept
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
          skippedDelivered: batch.skippedDelivered,
          suppressed: batch.suppressed,
          ...(run.datasetName ? { identities: rows.map((row) => identityOf(tool, row)) } : {}),
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
        if (status === 'ABORTING') stops.stop('cancelled');
        if (holdUsedUp || stops.reason) {
          seq = first + skip + rows.length;
          break;
        }
      }
    }
  } catch (err) {
    // A runner interrupted by a stop may throw; the stop decides how the run ends.
    if (!stops.reason) failure = coerceError(err);
    // A lost database does not end the run: the error goes to the worker, which runs it again once the
    // database is back (resuming after the rows stored), or hands it back.
    if (failure instanceof DatabaseUnavailableError) throw failure;
  } finally {
    stops.release();
  }
  // An upstream run bounded by a hold short of the estimate, read to that bound, or one the platform ended at
  // the charge the hold allows: the hold ended it, not the search.
  if (upstream instanceof UpstreamRunner && (upstream.readToCappedBound || upstream.chargeLimitReached))
    holdUsedUp = true;

  const reason = stops.reason;
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
    await finishRun(deps, run, tool, { ...ending, errorDetail: failure.message, cause: 'upstream' });
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
    await finishRun(deps, run, tool, {
      status: 'FAILED',
      message: failure.message,
      errorDetail: failure.detail,
      cause: 'upstream',
    });
    // Best effort, after the caller has the answer: the engine may be the thing that is down.
    void active?.abort();
  } else if (failure) {
    const safe = failure instanceof AppError ? failure.message : INTERNAL_FAILURE;
    log.error({ err: failure }, 'run failed');
    await finishRun(deps, run, tool, {
      status: 'FAILED',
      message: safe,
      errorDetail: failure.stack ?? failure.message,
    });
  } else if (reason === 'shutdown') {
    await handBack(deps, run.id);
    log.info({ items: kept }, 'worker stopping: run handed back');
  } else if (reason === 'cancelled') {
    await finishRun(deps, run, tool, {
      status: 'ABORTED',
      message: cancelledMessage(await storedItems(deps, run.id), tool),
    });
    log.info('run cancelled');
  } else if (reason === 'timed-out') {
    const items = await storedItems(deps, run.id);
    const unit = tool.rowUnit ?? tool.price.unit;
    await finishRun(deps, run, tool, {
      status: 'TIMED-OUT',
      message: `Timed out after ${limitSecs} s (this tool's limit): ${plural(items, unit)} kept`,
    });
    log.warn({ limitSecs }, 'run timed out');
  } else {
    await finishRun(deps, run, tool, {
      status: 'SUCCEEDED',
      message: finishedMessage(kept),
      ...(holdUsedUp ? { cause: 'hold_used_up' } : {}),
    });
    log.info({ items: kept, holdUsedUp }, 'run succeeded');
  }
}

const storedItems = async (deps: Pick<Core, 'db'>, runId: string) =>
  (await deps.db.select({ n: runTable.itemCount }).from(runTable).where(eq(runTable.id, runId)))[0]?.n ?? 0;
