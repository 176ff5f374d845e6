/**
 * The engine's batches: a runner's rows stored with their cost and the run's new counts, and announced,
 * in one transaction; a last batch stored with the run's end.
 */
import { recordDelivered } from '../../datasets/index.ts';
import { indexRunRows } from '../../privacy/identifier-index.ts';
import { eq, sql } from 'drizzle-orm';
import type { Transaction } from '../../../db/client.ts';
import { runTable, type Run, type RunStatus } from '../../../db/tables/runs.ts';
import type { Core } from '../../core.ts';
import type { Row, ToolDefinition } from '../../tools/types.ts';
import { lockAccount } from '../../accounts/accounts.ts';
import { snapshotOf } from '../view.ts';
import { finishRunInTx, type FinishDeps } from './finish.ts';

type BatchDeps = FinishDeps & Pick<Core, 'db'>;

/** What a run has been charged so far, against what it holds. */
export interface Billing {
  /** Null when money checks are off: nothing is capped. */
  holdMicros: bigint | null;
  chargedMicros: bigint;
  billedUnits: number;
}

/** A batch as the engine stores it: its rows from `firstSeq` on, what it handled, its message, the billing so far. */
export interface StoredBatch {
  firstSeq: number;
  rows: Row[];
  handled: number;
  message: string | undefined;
  billing: Billing;
  upstreamOffset?: number;
  /** Rows the run's dataset delivered before, skipped since the runner's first row (cumulative). */
  skippedDelivered?: number;
  /** Rows about suppressed people dropped since the runner's first row (cumulative). */
  suppressed?: number;
  /** The identities of `rows`, in order, when the run adds its rows to a named dataset. */
  identities?: (string | null)[];
}

/**
 * Stores a batch's rows, their cost and the new counts, in `tx`; returns the run as updated. The
 * rows' insert and the run's update are sent together, one round trip: the update needs nothing the
 * insert returns. An upstream batch also stores the dataset offset it read up to, so a worker that
 * takes the run over reads on from the rows stored.
 */
async function storeBatch(tx: Transaction, run: Run, batch: StoredBatch): Promise<Run | undefined> {
  const { firstSeq, rows, handled, message, billing, upstreamOffset, skippedDelivered, suppressed, identities } = batch;
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
      ...(skippedDelivered === undefined
        ? {}
        : { skippedDelivered: sql`greatest(${runTable.skippedDelivered}, ${skippedDelivered})` }),
      ...(suppressed ? { suppressedCount: sql`greatest(${runTable.suppressedCount}, ${suppressed})` } : {}),
      // A cancel in progress keeps its message.
      ...(message === undefined
        ? {}
        : {
            statusMessage: sql`case when ${runTable.status} = 'ABORTING' then ${runTable.statusMessage}
              else ${message} end`,
          }),
    })
    .where(eq(runTable.id, run.id))
    .returning();
  const delivered =
    run.datasetName && identities && rows.length > 0
      ? recordDelivered(tx, run.accountId, run.datasetName, run.id, firstSeq, identities)
      : undefined;
  // Where the rows' people are held (src/privacy/identifier-index.ts), for erasures and DROP lists.
  const indexed = rows.length > 0 ? indexRunRows(tx, run.id, firstSeq, rows, run.itemCount) : undefined;
  const [, [updated]] = await Promise.all([insert, update, delivered, indexed]);
  return updated;
}

/** Stores a batch and announces it, in one transaction; returns the run's status. */
export function appendBatch(deps: BatchDeps, run: Run, batch: StoredBatch): Promise<RunStatus | undefined> {
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
export function appendLastBatch(deps: BatchDeps, run: Run, tool: ToolDefinition, batch: StoredBatch, message: string) {
  return deps.db.transaction(async (tx) => {
    const [, stored] = await Promise.all([lockAccount(tx, run.accountId), storeBatch(tx, run, batch)]);
    if (stored) await finishRunInTx(deps, tx, stored, tool, { status: 'SUCCEEDED', message });
  });
}
