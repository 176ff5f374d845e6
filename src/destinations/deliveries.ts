/**
 * Deliveries: a run's (or a pipeline's) rows sent to a destination by a worker job (`deliver_rows`),
 * queued when the run or pipeline ends, in the transaction of its end. Rows go in batches the provider
 * takes; after each batch the provider acknowledged, the counts and the next row are committed, so a
 * worker that dies resumes at the first row not acknowledged (and an upsert sent twice updates, never
 * duplicates). A 429 waits what the provider asks and sends the same batch again; a provider that
 * cannot be reached is asked again with growing pauses, then the job fails and graphile-worker retries
 * it later. A grant the provider refuses breaks the connection and pauses the delivery with the reason.
 * Each row the provider refuses, or that cannot be sent (no email for a contact), is kept in the
 * delivery's log with its reason; it never fails the batch.
 */
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import {
  type Delivery,
  type Destination,
  deliveryProblemTable,
  deliveryTable,
  destinationTable,
} from '../../db/tables/destinations.ts';
import { runTable } from '../../db/tables/runs.ts';
import { pipelineTable } from '../../db/tables/workflows.ts';
import type { Core } from '../core.ts';
import { signDownloadUntil } from '../runs/download-links.ts';
import { getInstallationSecret } from '../accounts/installation.ts';
import { AppError } from '../shared/errors.ts';
import { unstorable } from '../shared/params.ts';
import { plural } from '../shared/text.ts';
import { getTool } from '../tools/index.ts';
import type { Row } from '../tools/types.ts';
import { JOBS } from '../workers/jobs.ts';
import { queueAccountEvent } from '../webhooks/deliveries.ts';
import { joinedRows, pipelineColumns } from '../workflows/pipeline-output.ts';
import { runRows } from '../workflows/pipeline-run.ts';
import type { PipelineStep } from '../workflows/pipelines.ts';
import { accessTokenOf, markBroken } from './connections.ts';
import { deliveryView, publishDelivery } from './delivery-events.ts';
import { effectiveMapping } from './destinations.ts';
import { type Cursor, type Driver, driverOf } from './drivers.ts';
import { postSlackMessage } from './providers/slack.ts';
import {
  type BatchOutcome,
  GrantRefused,
  type MappedRow,
  ProviderUnavailable,
  Refused,
  RetryLater,
} from './providers/types.ts';

export type DeliveryDeps = Pick<Core, 'db' | 'config' | 'clock' | 'events' | 'logger'>;

/** The rows a delivery sends, from row `from` on, with the columns they have (a pipeline's are prefixed). */
async function sourceOf(db: Database, delivery: Delivery) {
  if (delivery.pipelineId) {
    const [pipeline] = await db.select().from(pipelineTable).where(eq(pipelineTable.id, delivery.pipelineId));
    if (!pipeline) throw new Error(`delivery ${delivery.id}: its pipeline is gone`);
    const steps = pipeline.steps as PipelineStep[];
    const runs = await db.select().from(runTable).where(eq(runTable.pipelineId, pipeline.id));
    const columns = pipelineColumns(steps).map((column) => ({
      column: { ...column, key: column.key.slice(column.key.indexOf('.') + 1) },
      tool: column.key.slice(0, column.key.indexOf('.')).replace(/#\d+$/, ''),
      key: column.key,
    }));
    let total = 0;
    for await (const _ of joinedRows(db, pipeline, runs)) total++;
    return {
      what: `pipeline ${pipeline.id}`,
      total,
      columns,
      expiresAt: pipeline.expiresAt,
      fileId: pipeline.id,
      rows: async function* (from: number) {
        let i = 0;
        for await (const row of joinedRows(db, pipeline, runs)) if (i++ >= from) yield row;
      },
    };
  }
  const [run] = await db
    .select()
    .from(runTable)
    .where(eq(runTable.id, delivery.runId ?? ''));
  if (!run) throw new Error(`delivery ${delivery.id}: its run is gone`);
  const tool = getTool(run.tool);
  return {
    what: `${tool.title} run ${run.id}`,
    total: run.itemCount,
    columns: tool.columns.map((column) => ({ column, tool: tool.name, key: column.key })),
    expiresAt: run.expiresAt,
    fileId: run.id,
    // From row `from` on: a resumed delivery starts at the first row not acknowledged.
    rows: (from: number) => runRows(db, run.id, from),
  };
}

/** A cell as a provider field takes it: text, lists joined, nothing for empty. */
function fieldValue(value: unknown): string | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (Array.isArray(value)) return value.length > 0 ? value.map(String).join('; ') : undefined;
  return String(value);
}

/** Pauses between attempts at a provider that could not be reached, then the job fails (to be retried). */
const UNAVAILABLE_PAUSES_MS = [1_000, 4_000, 15_000];
/** The longest wait a 429 may ask before the job hands the batch back to the queue. */
const LONGEST_WAIT_MS = 120_000;

/** Runs one delivery to its end (the `deliver_rows` job); safe to run again: it resumes at its next row. */
export async function runDelivery(
  core: DeliveryDeps,
  deliveryId: string,
  signal?: AbortSignal,
  attempt: { last: boolean } = { last: false },
): Promise<void> {
  const [delivery] = await core.db.select().from(deliveryTable).where(eq(deliveryTable.id, deliveryId));
  if (!delivery || ['succeeded', 'failed', 'paused'].includes(delivery.status)) return;
  if (delivery.status === 'waiting' && delivery.resumeAt && delivery.resumeAt > core.clock()) return;
  const [destination] = await core.db
    .select()
    .from(destinationTable)
    .where(eq(destinationTable.id, delivery.destinationId));
  if (!destination) return;
  if (destination.pausedAt)
    return pauseDelivery(core, delivery, destination.pausedReason ?? 'The destination is paused.');
  const source = await sourceOf(core.db, delivery);
  await core.db
    .update(deliveryTable)
    .set({ status: 'running', total: source.total, startedAt: delivery.startedAt ?? core.clock(), message: 'Sending' })
    .where(eq(deliveryTable.id, delivery.id));
  await publishDelivery(core, core.db, delivery.id);
  const mapping = effectiveMapping(destination, source.columns);
  try {
    if (destination.kind === 'slack_summary') {
      await withRetries(core, signal, () => postSummary(core, destination, source, delivery));
      await acknowledge(core, delivery.id, source.total, { created: 0, updated: 0, problems: [] }, source.total);
    } else
      await sendRows(core, delivery, driverOf(core, destination, source.total, fieldsOf(mapping)), signal, {
        mapping,
        rows: source.rows,
      });
  } catch (err) {
    if (err instanceof GrantRefused) {
      await markBroken(core, destination.connectionId, err.message);
      return pauseDelivery(core, delivery, `The provider refused the connection: ${err.message}. Connect again.`);
    }
    if (err instanceof RetryLater) return waitForAllowance(core, delivery, err);
    // The provider refused what cannot pass if asked again (a channel that is not there): failed, with why.
    if (err instanceof Refused) return finishDelivery(core, delivery.id, err.message);
    if (err instanceof ProviderUnavailable && attempt.last)
      return finishDelivery(core, delivery.id, `${err.message}; the delivery gave up after its last attempt`);
    throw err;
  }
  await finishDelivery(core, delivery.id);
}

/** The provider fields a mapping gives, each once, in order. */
const fieldsOf = (mapping: readonly { field: string }[]) => [...new Set(mapping.map((m) => m.field))];

/**
 * Sends the rows from the first not acknowledged, in the driver's batches; a batch is committed (the
 * next row, the counts, its problems, the driver's cursor) once the provider has it.
 */
async function sendRows(
  core: DeliveryDeps,
  delivery: Delivery,
  driver: Driver,
  signal: AbortSignal | undefined,
  source: { mapping: readonly { key: string; field: string }[]; rows: (from: number) => AsyncIterable<Row> },
) {
  let offset = delivery.nextOffset;
  const begun = await withRetries(core, signal, () => driver.begin(offset, delivery.cursor as Cursor));
  let cursor = begun.cursor;
  let batch: MappedRow[] = [];
  // Rows an attempt cut short had sent but not recorded: counted as sent, not sent again.
  let alreadySent = begun.alreadySent;
  const flush = async () => {
    if (batch.length === 0) return;
    const rows = batch;
    batch = [];
    if (alreadySent >= rows.length) {
      alreadySent -= rows.length;
      offset += rows.length;
      return acknowledge(
        core,
        delivery.id,
        offset,
        { created: rows.length, updated: 0, problems: [] },
        rows.length,
        cursor,
      );
    }
    const outcome = await withRetries(core, signal, () => driver.send(rows, cursor, signal));
    cursor = outcome.cursor;
    offset += rows.length;
    await acknowledge(core, delivery.id, offset, outcome, rows.length, cursor);
  };
  let index = offset;
  for await (const row of source.rows(offset)) {
    const fields: Record<string, string> = {};
    for (const { key, field } of source.mapping) {
      const cell = row[key];
      // A list of addresses gives the key field its first one (a place's emails: its contact's email).
      const value = field.toLowerCase() === 'email' && Array.isArray(cell) ? fieldValue(cell[0]) : fieldValue(cell);
      if (value !== undefined && fields[field] === undefined) fields[field] = value;
    }
    batch.push({ row: index++, fields });
    if (batch.length >= driver.batchSize) await flush();
  }
  await flush();
}

/**
 * The provider's allowance is spent for longer than a job waits (HubSpot's daily limit, Salesforce's
 * daily API requests): the delivery waits, said so, and its job is queued again for when the wait ends.
 */
async function waitForAllowance(core: DeliveryDeps, delivery: Delivery, err: RetryLater) {
  const resumeAt = new Date(core.clock().getTime() + Math.max(err.ms, 60_000));
  await core.db.transaction(async (tx) => {
    await tx
      .update(deliveryTable)
      .set({ status: 'waiting', resumeAt, message: `${err.message}; sending goes on at ${resumeAt.toISOString()}` })
      .where(eq(deliveryTable.id, delivery.id));
    await tx.execute(sql`select graphile_worker.add_job(${JOBS.deliverRows}::text,
      json_build_object('deliveryId', ${delivery.id}::text), run_at => ${resumeAt.toISOString()}::timestamptz,
      max_attempts => 8, job_key => ${delivery.id}::text)`);
    await publishDelivery(core, tx, delivery.id);
  });
}

/** Google's truncated exponential backoff for a 429 that names no wait: 2^n s plus up to 1 s, at most 64 s. */
const backoffMs = (attempt: number) => Math.min(2 ** attempt * 1_000 + Math.random() * 1_000, 64_000);

/** A batch sent until the provider takes it: a 429 waits what it asks; an unreachable provider, growing pauses. */
async function withRetries<T>(
  core: DeliveryDeps,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  let unavailable = 0;
  let throttled = 0;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (err instanceof RetryLater && err.ms <= LONGEST_WAIT_MS) {
        const waitMs = err.ms < 0 ? backoffMs(throttled++) : err.ms;
        core.logger.info({ waitMs }, 'destination asked to wait; the batch is sent again after it');
        await sleep(waitMs, signal);
        continue;
      }
      if (err instanceof ProviderUnavailable && unavailable < UNAVAILABLE_PAUSES_MS.length) {
        await sleep(UNAVAILABLE_PAUSES_MS[unavailable++] ?? 1_000, signal);
        continue;
      }
      throw err;
    }
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** Commits what the provider acknowledged: the next row, the counts and each problem, together. */
async function acknowledge(
  core: Pick<Core, 'db' | 'events'>,
  id: string,
  nextOffset: number,
  outcome: BatchOutcome,
  sent: number,
  cursor?: Cursor,
) {
  await core.db.transaction(async (tx) => {
    const skipped = outcome.problems.filter((p) => p.outcome === 'skipped').length;
    const failed = outcome.problems.length - skipped;
    await tx
      .update(deliveryTable)
      .set({
        nextOffset,
        sent: sql`${deliveryTable.sent} + ${sent - skipped}`,
        created: sql`${deliveryTable.created} + ${outcome.created}`,
        updated: sql`${deliveryTable.updated} + ${outcome.updated}`,
        skipped: sql`${deliveryTable.skipped} + ${skipped}`,
        failed: sql`${deliveryTable.failed} + ${failed}`,
        ...(cursor ? { cursor } : {}),
      })
      .where(eq(deliveryTable.id, id));
    if (outcome.problems.length > 0)
      await tx
        .insert(deliveryProblemTable)
        .values(outcome.problems.map((p) => ({ deliveryId: id, row: p.row, outcome: p.outcome, reason: p.reason })))
        .onConflictDoNothing();
    await publishDelivery(core, tx, id);
  });
}

/** Ends a delivery: succeeded with its counts, or failed with why (`failure`); its webhook told either way. */
async function finishDelivery(core: DeliveryDeps, id: string, failure?: string) {
  await core.db.transaction(async (tx) => {
    const [done] = await tx.select().from(deliveryTable).where(eq(deliveryTable.id, id));
    if (!done) return;
    const status = failure ? 'failed' : 'succeeded';
    const message =
      failure ??
      `${plural(done.sent, 'row')} sent: ${done.created} created, ${done.updated} updated` +
        (done.skipped ? `, ${done.skipped} skipped` : '') +
        (done.failed ? `, ${done.failed} refused by the provider` : '');
    await tx.update(deliveryTable).set({ status, message, finishedAt: core.clock() }).where(eq(deliveryTable.id, id));
    await publishDelivery(core, tx, id);
    await queueAccountEvent(tx, done.accountId, 'delivery.finished', {
      type: 'delivery.finished',
      timestamp: core.clock().toISOString(),
      data: { ...deliveryView(done), status, message },
    });
  });
}

async function pauseDelivery(core: DeliveryDeps, delivery: Delivery, reason: string) {
  await core.db
    .update(deliveryTable)
    .set({ status: 'paused', message: reason })
    .where(eq(deliveryTable.id, delivery.id));
  await publishDelivery(core, core.db, delivery.id);
}

/** The Slack summary: what ended, its counts, and a link to its rows that works until they expire. */
async function postSummary(
  core: DeliveryDeps,
  destination: Destination,
  source: Awaited<ReturnType<typeof sourceOf>>,
  delivery: Delivery,
) {
  const token = await accessTokenOf(core, destination.connectionId);
  const channel = (destination.settings as { channel?: string }).channel ?? '';
  const until = source.expiresAt ?? new Date(core.clock().getTime() + 48 * 3_600_000);
  const query = signDownloadUntil(
    await getInstallationSecret(core.db),
    { accountId: delivery.accountId, runId: source.fileId, format: 'csv' },
    until,
  );
  const link = `${core.config.publicUrl}/api/downloads/${encodeURIComponent(source.fileId)}?${query}`;
  // Slack's mrkdwn: the link as <url|label>, the time in UTC to the minute.
  const text =
    `${source.what} ended with ${plural(source.total, 'row')}. ` +
    `<${link}|Download the CSV> (until ${until.toISOString().slice(0, 16).replace('T', ' ')} UTC)`;
  await postSlackMessage(core.config.destinations.slack, token, channel, text);
}

export async function findDelivery(db: Database, accountId: string, id: string): Promise<Delivery> {
  if (unstorable(id)) throw deliveryNotFound();
  const [found] = await db
    .select()
    .from(deliveryTable)
    .where(and(eq(deliveryTable.id, id), eq(deliveryTable.accountId, accountId)));
  if (!found) throw deliveryNotFound();
  return found;
}

const deliveryNotFound = () => new AppError(404, 'delivery_not_found', 'The account has no such delivery.');

export async function listDeliveries(
  db: Database,
  accountId: string,
  filter: { runId?: string; destinationId?: string } = {},
) {
  return db
    .select()
    .from(deliveryTable)
    .where(
      and(
        eq(deliveryTable.accountId, accountId),
        filter.runId ? eq(deliveryTable.runId, filter.runId) : undefined,
        filter.destinationId ? eq(deliveryTable.destinationId, filter.destinationId) : undefined,
      ),
    )
    .orderBy(desc(deliveryTable.createdAt), desc(deliveryTable.id))
    .limit(100);
}

/** A delivery's refused and skipped rows, in row order (at most `limit`). */
export async function deliveryProblems(db: Database, deliveryId: string, limit = 100) {
  return db
    .select()
    .from(deliveryProblemTable)
    .where(eq(deliveryProblemTable.deliveryId, deliveryId))
    .orderBy(asc(deliveryProblemTable.row))
    .limit(limit);
}

export { deliveryView };
