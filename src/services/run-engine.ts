import { and, eq, notInArray, sql } from 'drizzle-orm';
import type { Transaction } from '../../db/client.ts';
import { runItemTable, runTable, TERMINAL_STATUSES, type Run, type RunStatus } from '../../db/schema/runs.ts';
import type { Core } from '../core.ts';
import { getTool } from '../tools/index.ts';
import type { Row, ToolDefinition } from '../tools/types.ts';
import { AppError, coerceError } from './errors.ts';
import { formatDollars } from './money.ts';
import { isTerminal, snapshotOf } from './run-view.ts';
import { enqueueRun, lockAccount } from './runs.ts';
import { runStore } from './run-store.ts';
import { settleHold } from './wallet.ts';

type EngineDeps = Pick<Core, 'db' | 'events' | 'logger' | 'sources' | 'config'>;

const INTERNAL_FAILURE = 'The run failed because of an internal error. Results produced so far were kept.';

export function plural(count: number, unit: string): string {
  if (count === 1) return `1 ${unit}`;
  if (/(s|x|ch|sh)$/.test(unit)) return `${count} ${unit}es`;
  if (/[^aeiou]y$/.test(unit)) return `${count} ${unit.slice(0, -1)}ies`;
  return `${count} ${unit}s`;
}

interface Billing {
  /** Null when money checks are off: nothing is capped. */
  holdMicros: bigint | null;
  chargedMicros: bigint;
  billedUnits: number;
}

/** Stores a batch of rows, their cost and the new counts, and announces them, in one transaction. */
async function appendBatch(deps: EngineDeps, runId: string, firstSeq: number, rows: Row[], handled: number, message: string | undefined, billing: Billing) {
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
        chargedMicros: billing.chargedMicros,
        billedUnits: billing.billedUnits,
        ...(message === undefined ? {} : { statusMessage: message }),
      })
      .where(eq(runTable.id, runId))
      .returning();
    if (updated) await deps.events.publishInTx(tx, 'runProgress', runId, snapshotOf(updated));
  });
}

/** The next READY run of the account takes the freed slot. */
async function promoteNextRun(deps: EngineDeps, tx: Transaction, accountId: string) {
  const [next] = (await tx.execute(sql`
    update run set status = 'RUNNING', started_at = now(), status_message = 'Starting'
    where id = (select id from run where account_id = ${accountId} and status = 'READY' order by created_at, id limit 1)
    returning id`)) as unknown as { id: string }[];
  if (!next) return;
  await enqueueRun(tx, next.id);
  const [promoted] = await tx.select().from(runTable).where(eq(runTable.id, next.id));
  await deps.events.publishInTx(tx, 'runProgress', next.id, snapshotOf(promoted!));
}

/**
 * Moves a run to a terminal status once (later calls change nothing); in the same transaction it
 * settles the hold (release it, charge the final cost) and starts the account's next waiting run.
 */
export async function finishRun(deps: EngineDeps, run: Run, tool: ToolDefinition, status: RunStatus, message: string, errorDetail?: string) {
  await deps.db.transaction(async (tx) => {
    await lockAccount(tx, run.accountId);
    const [updated] = await tx
      .update(runTable)
      .set({
        status,
        statusMessage: message,
        finishedAt: sql`now()`,
        expiresAt: sql`now() + make_interval(hours => ${deps.config.resultRetentionHours})`,
        errorDetail: errorDetail ?? null,
      })
      .where(and(eq(runTable.id, run.id), notInArray(runTable.status, [...TERMINAL_STATUSES])))
      .returning();
    if (!updated) return;
    const hold = { planMicros: updated.holdPlanMicros, purchasedMicros: updated.holdPurchasedMicros };
    const holdTotal = hold.planMicros + hold.purchasedMicros;
    const input = tool.input.parse(updated.input);
    let charge = tool.price.settle ? tool.price.settle(updated.chargedMicros, updated.itemCount, input) : updated.chargedMicros;
    if (deps.config.enforceLimits && charge > holdTotal) charge = holdTotal;
    await settleHold(tx, updated.accountId, updated.id, hold, charge);
    const [settled] = await tx.update(runTable).set({ chargedMicros: charge, settledAt: sql`now()` }).where(eq(runTable.id, updated.id)).returning();
    await deps.events.publishInTx(tx, 'runProgress', updated.id, snapshotOf(settled!));
    await promoteNextRun(deps, tx, updated.accountId);
  });
}

/**
 * Executes a run to its end. Safe to call again for the same run (jobs run at least once): a
 * finished run is left alone, and rows an earlier attempt stored are neither stored nor billed twice.
 */
export async function executeRun(deps: EngineDeps, runId: string, signal: AbortSignal = new AbortController().signal) {
  const [run] = await deps.db.select().from(runTable).where(eq(runTable.id, runId));
  if (!run || isTerminal(run.status) || run.status === 'READY') return;
  const tool = getTool(run.tool);
  const log = deps.logger.child({ runId, tool: tool.name });
  try {
    const input = tool.input.parse(run.input);
    const startAt = run.itemCount;
    const billing: Billing = {
      holdMicros: deps.config.enforceLimits && tool.price.unitMicros > 0n ? run.holdPlanMicros + run.holdPurchasedMicros : null,
      chargedMicros: run.chargedMicros,
      billedUnits: run.billedUnits,
    };
    let seq = 0;
    let holdUsedUp = false;
    const store = runStore(deps.db, run.accountId, run.id);
    const startedAt = run.startedAt ?? run.createdAt;
    for await (const batch of tool.run({ runId, accountId: run.accountId, input, sources: deps.sources, store, startedAt, startAt, signal })) {
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
      await appendBatch(deps, runId, first + skip, rows, handled, batch.message, billing);
      if (holdUsedUp) {
        seq = first + skip + rows.length;
        break;
      }
    }
    const message = holdUsedUp
      ? `Stopped after ${plural(seq, tool.price.unit)}: the ${formatDollars(billing.holdMicros!)} USD held for this run is used up. Buy credits to get more.`
      : `Finished: ${plural(seq, tool.price.unit)}`;
    await finishRun(deps, run, tool, 'SUCCEEDED', message);
    log.info({ items: seq, holdUsedUp }, 'run succeeded');
  } catch (err) {
    const error = coerceError(err);
    const safe = error instanceof AppError ? error.message : INTERNAL_FAILURE;
    log.error({ err: error }, 'run failed');
    await finishRun(deps, run, tool, 'FAILED', safe, error.stack ?? error.message);
  }
}
