/**
 * The engine's finish: a run moved to its terminal status once, with its stop reason, its hold settled,
 * its slot freed for the account's next run, its end announced and its webhooks queued, in one
 * transaction.
 */
import { releaseUndelivered } from '../../datasets/index.ts';
import { queueDeliveries } from '../../destinations/queue.ts';
import { eq, sql } from 'drizzle-orm';
import type { Transaction } from '../../../db/client.ts';
import { runTable, type Run, type RunStatus, type RunStopReason } from '../../../db/tables/runs.ts';
import { oneRow } from '../../../db/rows.ts';
import type { Core } from '../../core.ts';
import type { ToolDefinition } from '../../tools/types.ts';
import { lockAccount } from '../../accounts/accounts.ts';
import { settleHold } from '../../billing/hold.ts';
import { queueRunWebhooks } from '../../webhooks/deliveries.ts';
import { plural } from '../../shared/text.ts';
import { promoteNextRun, queuePipelineAdvance, releaseRunSlot } from '../queue.ts';
import { isTerminal, snapshotOf } from '../view.ts';

export type FinishDeps = Pick<Core, 'db' | 'events' | 'config'>;

/** The end's message of a run cancelled with `items` rows stored. */
export const cancelledMessage = (items: number, tool: ToolDefinition) =>
  `Cancelled: ${plural(items, tool.rowUnit ?? tool.price.unit)} kept`;

/** What ended a run beside its status: its hold used up, or its upstream source. */
export type EndCause = 'hold_used_up' | 'upstream';

/** How a run ends: its terminal status, the message for people, the operator's detail, and its cause. */
export interface RunEnding {
  status: RunStatus;
  message: string;
  /** Internal failure detail, stored for operators only. */
  errorDetail?: string;
  cause?: EndCause;
}

/**
 * The one rule of a run's stop reason (docs/api.md#how-a-run-ends), from its terminal status and cause:
 * ABORTED is a cancel (an upstream run aborted on its side: `upstream_failed`), TIMED-OUT the time limit
 * (an upstream run times out at the limit the run gave it), FAILED through the upstream source
 * `upstream_failed`, and SUCCEEDED with its hold used up `budget_exhausted`. Null otherwise: a run that
 * ran to completion, or FAILED on an error of its own (its `statusMessage` says which).
 */
export function stopReasonOf(status: RunStatus, cause?: EndCause): RunStopReason | null {
  switch (status) {
    case 'ABORTED':
      return cause === 'upstream' ? 'upstream_failed' : 'cancelled';
    case 'TIMED-OUT':
      return 'time_limit';
    case 'FAILED':
      return cause === 'upstream' ? 'upstream_failed' : null;
    case 'SUCCEEDED':
      return cause === 'hold_used_up' ? 'budget_exhausted' : null;
    default:
      return null;
  }
}

/**
 * Moves a run to a terminal status once (a run that had already ended is left alone: false), in the
 * caller's transaction with the account locked: records its stop reason (stopReasonOf), settles the
 * hold (release it, charge the final cost) and starts the account's next waiting run. `locked` is the
 * run as read or updated in this transaction, its row locked since, so it is the run as it is:
 * everything the end needs is known without asking again, and its statements go in two round trips,
 * each a group sent together.
 */
export async function finishRunInTx(
  deps: Omit<FinishDeps, 'db'>,
  tx: Transaction,
  locked: Run,
  tool: ToolDefinition,
  ending: RunEnding,
): Promise<boolean> {
  if (isTerminal(locked.status)) return false;
  let { status, message } = ending;
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
  const [, , , endedRows] = await Promise.all([
    locked.status === 'RUNNING' || locked.status === 'ABORTING' ? releaseRunSlot(tx, locked.accountId) : undefined,
    // Identities claimed for rows the run never stored (its hold used up, a stop) go back to the dataset.
    locked.onlyNew ? releaseUndelivered(tx, locked.id) : undefined,
    settleHold(tx, locked.accountId, locked.id, hold, charge),
    tx
      .update(runTable)
      .set({
        status,
        statusMessage: message,
        stopReason: stopReasonOf(status, ending.cause),
        finishedAt: sql`now()`,
        startedAt: sql`coalesce(${runTable.startedAt}, now())`,
        expiresAt: sql`now() + make_interval(hours => ${deps.config.resultRetentionHours})`,
        errorDetail: ending.errorDetail ?? null,
        chargedMicros: charge,
        settledAt: sql`now()`,
      })
      .where(eq(runTable.id, locked.id))
      .returning(),
  ]);
  const ended = oneRow(endedRows, `run ${locked.id} ended`);
  const snapshot = snapshotOf(ended);
  // Sent together as well; the next run's start counts on the slot released above.
  await Promise.all([
    deps.events.publishRun(tx, locked.accountId, 'finished', snapshot),
    queueRunWebhooks(tx, deps.config.publicUrl, {
      ...snapshot,
      accountId: locked.accountId,
      webhookUrl: ended.webhookUrl,
    }),
    promoteNextRun(deps, tx, locked.accountId),
    // A pipeline's step ended: the pipeline moves on (its next step, or its end) in a job of its own.
    locked.pipelineId ? queuePipelineAdvance(tx, locked.pipelineId) : undefined,
    // Its rows go to the destinations its start named (a pipeline's step: the pipeline's table does).
    !locked.pipelineId && locked.destinationIds?.length
      ? queueDeliveries(deps, tx, locked.accountId, { runId: locked.id }, locked.destinationIds)
      : undefined,
  ]);
  return true;
}

/** `finishRunInTx` in a transaction of its own: the account's lock and the run's go in one round trip. */
export async function finishRun(
  deps: FinishDeps,
  run: Pick<Run, 'id' | 'accountId'>,
  tool: ToolDefinition,
  ending: RunEnding,
) {
  await deps.db.transaction(async (tx) => {
    const [, [locked]] = await Promise.all([
      lockAccount(tx, run.accountId),
      tx.select().from(runTable).where(eq(runTable.id, run.id)).for('update'),
    ]);
    if (locked) await finishRunInTx(deps, tx, locked, tool, ending);
  });
}
