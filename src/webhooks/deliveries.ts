/**
 * Webhook deliveries: the log of each webhook (its pages and counts), and the deliveries queued for a
 * run's end or a test, each with its `deliver_webhook` job.
 */
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { runInTransaction, type Executor, type Transaction } from '../../db/client.ts';
import type { RunStatus } from '../../db/tables/runs.ts';
import { oneRow } from '../../db/rows.ts';
import {
  WEBHOOK_EVENTS,
  webhookDeliveryTable,
  webhookTable,
  type WebhookDelivery,
  type WebhookEvent,
} from '../../db/tables/webhooks.ts';
import type { Principal } from '../accounts/accounts.ts';
import { fromZodError, ValidationError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { cursorTime, unstorable } from '../shared/params.ts';
import { JOBS } from '../workers/jobs.ts';
import { outputUrl, type RunSnapshot } from '../runs/view.ts';
import { ownWebhook } from './subscriptions.ts';

/**
 * Attempts per delivery: graphile-worker retries after exp(attempt) seconds (capped at about six
 * hours between tries), so 13 attempts span about a day.
 */
export const DELIVERY_MAX_ATTEMPTS = 13;

/**
 * The event a caller sends on demand to check a receiver (sendTestWebhook). It is not subscribed to:
 * every webhook takes it, and only when asked.
 */
const TEST_EVENT = 'webhook.test';
/** What a delivery may carry: a run's end or the test event. */
export const DELIVERY_EVENTS = [...WEBHOOK_EVENTS, TEST_EVENT] as const;
export type DeliveryEvent = (typeof DELIVERY_EVENTS)[number];

const EVENT_OF: Partial<Record<RunStatus, WebhookEvent>> = {
  SUCCEEDED: 'run.succeeded',
  FAILED: 'run.failed',
  ABORTED: 'run.aborted',
  'TIMED-OUT': 'run.timed_out',
};

export interface DeliveryView {
  id: string;
  event: string;
  runId: string | null;
  url: string;
  status: WebhookDelivery['status'];
  attempts: number;
  responseStatus: number | null;
  lastError: string | null;
  createdAt: string;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
}

const deliveryView = (d: WebhookDelivery): DeliveryView => ({
  id: d.id,
  event: d.event,
  runId: d.runId,
  url: d.url,
  status: d.status,
  attempts: d.attempts,
  responseStatus: d.responseStatus,
  lastError: d.lastError,
  createdAt: d.createdAt.toISOString(),
  lastAttemptAt: d.lastAttemptAt?.toISOString() ?? null,
  deliveredAt: d.deliveredAt?.toISOString() ?? null,
});

export const deliveriesParams = z
  .object({
    limit: z.coerce
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(100, 'must be at most 100')
      .default(20),
    after: z.string().max(200).optional().describe('The `nextAfter` of the previous page.'),
  })
  .strict();

/** A delivery's place in its webhook's log (newest first), as `after` takes it. */
export const deliveryCursor = (d: Pick<WebhookDelivery, 'createdAt' | 'id'>) =>
  Buffer.from(`${d.createdAt.toISOString()}|${d.id}`).toString('base64url');

function parseDeliveryCursor(after: string): { createdAt: Date; id: string } {
  const [at, id, ...rest] = Buffer.from(after, 'base64url').toString('utf8').split('|');
  const createdAt = cursorTime(at);
  if (!createdAt || !id || rest.length > 0 || unstorable(id))
    throw new ValidationError([{ path: 'after', message: 'not a cursor returned by this API' }]);
  return { createdAt, id };
}

/** A webhook's delivery log, newest first, by keyset (`nextAfter` is null at the end). */
export async function listDeliveries(db: Executor, principal: Principal, webhookId: string, raw: unknown) {
  const parsed = deliveriesParams.safeParse(raw ?? {});
  if (!parsed.success) throw fromZodError(parsed.error);
  const { limit, after } = parsed.data;
  await ownWebhook(db, principal, webhookId);
  const cursor = after ? parseDeliveryCursor(after) : undefined;
  const d = webhookDeliveryTable;
  const rows = await db
    .select()
    .from(d)
    .where(
      and(
        eq(d.webhookId, webhookId),
        // After the cursor's delivery in (created_at, id) order, at the stored precision (see listRuns).
        cursor
          ? sql`(${d.createdAt}, ${d.id}) < (select c.created_at, c.id from webhook_delivery c
              where c.id = ${cursor.id} and c.webhook_id = ${webhookId})`
          : undefined,
      ),
    )
    .orderBy(desc(d.createdAt), desc(d.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    deliveries: page.map(deliveryView),
    nextAfter: rows.length > limit && last ? deliveryCursor(last) : null,
  };
}

export interface DeliveryPage {
  deliveries: (DeliveryView & { cursor: string })[];
  hasMore: boolean;
}

/**
 * The delivery logs of several of the caller's webhooks in one statement (a list of webhooks, each
 * with its latest deliveries): per webhook, up to `limit` deliveries newest first, after `after`
 * when given. Another account's webhook has an empty log.
 */
export async function listDeliveriesOfWebhooks(
  db: Executor,
  principal: Principal,
  requests: readonly { webhookId: string; limit: number; after?: string | null }[],
): Promise<DeliveryPage[]> {
  if (requests.length === 0) return [];
  const d = webhookDeliveryTable;
  // One statement for every request: the requests differ only in webhook, size and cursor.
  const parts = requests.map((r, i) => {
    const cursor = r.after ? parseDeliveryCursor(r.after) : undefined;
    return sql`(select ${i}::int as i, d.* from ${d} d
      where d.webhook_id = ${r.webhookId} and d.account_id = ${principal.accountId}
      ${
        cursor
          ? sql`and (d.created_at, d.id) < (select c.created_at, c.id from webhook_delivery c
              where c.id = ${cursor.id} and c.webhook_id = ${r.webhookId})`
          : sql``
      }
      order by d.created_at desc, d.id desc limit ${r.limit + 1})`;
  });
  const rows = (await db.execute(sql.join(parts, sql` union all `))) as unknown as Record<string, unknown>[];
  const byRequest = requests.map((): WebhookDelivery[] => []);
  for (const row of rows) byRequest[row.i as number]?.push(deliveryOfRow(row));
  return requests.map(({ limit }, i) => {
    const rows = byRequest[i] ?? [];
    return {
      deliveries: rows.slice(0, limit).map((x) => ({ ...deliveryView(x), cursor: deliveryCursor(x) })),
      hasMore: rows.length > limit,
    };
  });
}

/** A row of `select d.*` as the table's type. */
function deliveryOfRow(row: Record<string, unknown>): WebhookDelivery {
  const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    webhookId: row.webhook_id as string | null,
    runId: row.run_id as string | null,
    event: row.event as string,
    url: row.url as string,
    payload: row.payload,
    status: row.status as WebhookDelivery['status'],
    attempts: row.attempts as number,
    responseStatus: row.response_status as number | null,
    lastError: row.last_error as string | null,
    createdAt: new Date(row.created_at as string),
    lastAttemptAt: date(row.last_attempt_at),
    deliveredAt: date(row.delivered_at),
  };
}

/** How many deliveries each of the caller's webhooks has logged, in the order of `webhookIds`. */
export async function countDeliveries(
  db: Executor,
  principal: Principal,
  webhookIds: readonly string[],
): Promise<number[]> {
  const d = webhookDeliveryTable;
  const rows = await db
    .select({ webhookId: d.webhookId, n: sql<number>`count(*)::int` })
    .from(d)
    .where(and(eq(d.accountId, principal.accountId), inArray(d.webhookId, [...webhookIds])))
    .groupBy(d.webhookId);
  const byId = new Map(rows.map((r) => [r.webhookId, r.n]));
  return webhookIds.map((id) => byId.get(id) ?? 0);
}

/** The caller's deliveries among `ids`, in the order of `ids` (null where another account's or none). */
export async function loadDeliveries(
  db: Executor,
  principal: Principal,
  ids: readonly string[],
): Promise<(DeliveryView | null)[]> {
  const d = webhookDeliveryTable;
  const rows = await db
    .select()
    .from(d)
    .where(and(eq(d.accountId, principal.accountId), inArray(d.id, [...ids])));
  const byId = new Map(rows.map((x) => [x.id, deliveryView(x)]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** The body of a run event. */
export function runEventPayload(publicUrl: string, event: WebhookEvent, run: RunSnapshot) {
  return {
    type: event,
    timestamp: run.finishedAt ?? new Date().toISOString(),
    data: {
      runId: run.id,
      tool: run.tool,
      status: run.status,
      statusMessage: run.statusMessage,
      complete: run.complete,
      stoppedReason: run.stoppedReason,
      handled: run.handled,
      requested: run.requested,
      itemCount: run.itemCount,
      cost: run.cost,
      downloadUrl: outputUrl(publicUrl, run),
      finishedAt: run.finishedAt,
    },
  };
}

/**
 * Queues the deliveries of a run's end, in the transaction that ends it: one per account webhook
 * subscribed to the event, and one to the run's own `webhookUrl`. Each is a worker job.
 */
export async function queueRunWebhooks(
  tx: Transaction,
  publicUrl: string,
  run: RunSnapshot & { accountId: string; webhookUrl: string | null },
) {
  const event = EVENT_OF[run.status];
  if (!event) return;
  const hooks = await tx
    .select({ id: webhookTable.id, url: webhookTable.url })
    .from(webhookTable)
    .where(and(eq(webhookTable.accountId, run.accountId), sql`${event} = any(${webhookTable.events})`));
  const targets: { webhookId: string | null; url: string }[] = hooks.map((h) => ({ webhookId: h.id, url: h.url }));
  if (run.webhookUrl) targets.push({ webhookId: null, url: run.webhookUrl });
  if (targets.length === 0) return;
  const payload = runEventPayload(publicUrl, event, run);
  await queueDeliveries(
    tx,
    targets.map((target) => ({
      id: newDeliveryId(),
      accountId: run.accountId,
      webhookId: target.webhookId,
      runId: run.id,
      event,
      url: target.url,
      payload,
    })),
  );
}

const newDeliveryId = () => `msg_${randomBase62(24)}`;

/**
 * Queues the deliveries of an account event that is not a run's end (`schedule.paused`), in the
 * caller's transaction: one per account webhook subscribed to it.
 */
export async function queueAccountEvent(
  tx: Transaction,
  accountId: string,
  event: Exclude<WebhookEvent, `run.${string}`>,
  payload: Record<string, unknown>,
) {
  const hooks = await tx
    .select({ id: webhookTable.id, url: webhookTable.url })
    .from(webhookTable)
    .where(and(eq(webhookTable.accountId, accountId), sql`${event} = any(${webhookTable.events})`));
  if (hooks.length === 0) return;
  await queueDeliveries(
    tx,
    hooks.map((hook) => ({
      id: newDeliveryId(),
      accountId,
      webhookId: hook.id,
      runId: null,
      event,
      url: hook.url,
      payload,
    })),
  );
}

/** Logs deliveries and adds a `deliver_webhook` job for each, in the caller's transaction. */
async function queueDeliveries(
  tx: Transaction,
  rows: (typeof webhookDeliveryTable.$inferInsert)[],
): Promise<WebhookDelivery[]> {
  const queued = await tx.insert(webhookDeliveryTable).values(rows).returning();
  for (const row of queued) {
    await tx.execute(
      sql`select graphile_worker.add_job(${JOBS.deliverWebhook}::text,
        json_build_object('deliveryId', ${row.id}::text),
        max_attempts => ${DELIVERY_MAX_ATTEMPTS}, job_key => ${row.id}::text)`,
    );
  }
  return queued;
}

/** The body of the test event: which webhook, and when it was asked for. */
const testEventPayload = (webhookId: string, sentAt: Date) => ({
  type: TEST_EVENT,
  timestamp: sentAt.toISOString(),
  data: { webhookId, sentAt: sentAt.toISOString() },
});

/**
 * Queues one `webhook.test` delivery to a webhook of the caller's account, whatever events it
 * subscribes to. It goes the way of a run's events (the same job, signature, retries and outbound
 * guard) and into the same log, so a receiver that verifies it will verify them. Another account's
 * webhook is a 404.
 */
export async function sendTestWebhook(db: Executor, principal: Principal, id: string): Promise<DeliveryView> {
  return runInTransaction(db, async (tx) => {
    const hook = await ownWebhook(tx, principal, id);
    const queued = await queueDeliveries(tx, [
      {
        id: newDeliveryId(),
        accountId: hook.accountId,
        webhookId: hook.id,
        runId: null,
        event: TEST_EVENT,
        url: hook.url,
        payload: testEventPayload(hook.id, new Date()),
      },
    ]);
    return deliveryView(oneRow(queued, 'the queued test delivery'));
  });
}
