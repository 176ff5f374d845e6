import { randomBytes } from 'node:crypto';
import { and, desc, eq, inArray, lt, or, sql } from 'drizzle-orm';
import { Webhook as Signer } from 'standardwebhooks';
import { z } from 'zod';
import { runInTransaction, type Executor, type Transaction } from '../../db/client.ts';
import type { RunStatus } from '../../db/tables/runs.ts';
import {
  WEBHOOK_EVENTS,
  webhookDeliveryTable,
  webhookTable,
  type Webhook,
  type WebhookDelivery,
  type WebhookEvent,
} from '../../db/tables/webhooks.ts';
import type { Core } from '../core.ts';
import { lockAccount, type Principal } from '../accounts/accounts.ts';
import { AppError, fromZodError, notFound, ValidationError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { cursorTime, unstorable } from '../shared/params.ts';
import type { OutboundGuard } from '../net/guard.ts';
import { NetError } from '../sources/contacts.ts';
import { JOBS } from './jobs.ts';
import { observeWebhookDelivery } from '../shared/metrics.ts';
import { outputUrl, type RunSnapshot } from './view.ts';

/** The most webhooks one account may register. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 20;
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

/**
 * A webhook URL: http or https, no credentials. Where it may connect is the outbound guard's to say,
 * when it is registered (checkWebhookUrl) and again at every delivery.
 */
export const webhookUrl = z
  .string()
  .trim()
  .max(2_000, 'must be at most 2000 characters')
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute http or https URL' });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      ctx.addIssue({ code: 'custom', message: 'must be an http or https URL' });
    if (url.username || url.password)
      ctx.addIssue({ code: 'custom', message: 'must not carry a user name or password' });
  })
  .describe('Where events are POSTed, signed per the Standard Webhooks spec.');

export const createWebhookInput = z
  .object({
    url: webhookUrl,
    events: z
      .array(z.enum(WEBHOOK_EVENTS, { message: `must be one of ${WEBHOOK_EVENTS.join(', ')}` }))
      .min(1, 'give at least one event, or leave events out for all of them')
      .optional()
      .describe(`Events to receive; default all: ${WEBHOOK_EVENTS.join(', ')}.`),
    description: z.string().trim().max(200, 'must be at most 200 characters').optional(),
  })
  .strict();

/**
 * 400 `validation_failed` at `path` when the outbound guard refuses `url` (a private, loopback,
 * link-local or metadata address, a name resolving to one, a port other than the web's): such a webhook
 * could never be delivered. A name that does not resolve (yet) passes: DNS may be set up later, and a
 * delivery to it is retried.
 */
export async function checkWebhookUrl(guard: OutboundGuard, url: string, path: string): Promise<void> {
  try {
    await guard.checkUrl(new URL(url));
  } catch (err) {
    if (err instanceof NetError && err.kind === 'refused')
      throw new ValidationError([{ path, message: `refused by the outbound guard: ${err.message}` }]);
    if (err instanceof NetError) return;
    throw err;
  }
}

/** What every face shows of a webhook; the secret only at creation. */
export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  createdAt: string;
}

const viewOf = (w: Webhook): WebhookView => ({
  id: w.id,
  url: w.url,
  events: w.events as WebhookEvent[],
  description: w.description,
  createdAt: w.createdAt.toISOString(),
});

export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Registers an account webhook; the answer carries its signing secret, shown this once. A URL the
 * outbound guard refuses is refused here (checkWebhookUrl).
 */
export async function createWebhook(
  core: Pick<Core, 'db' | 'network'>,
  principal: Principal,
  raw: unknown,
): Promise<WebhookView & { secret: string }> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new ValidationError([{ path: '', message: 'the request body must be a JSON object' }]);
  const parsed = createWebhookInput.safeParse(raw);
  if (!parsed.success) throw fromZodError(parsed.error);
  const input = parsed.data;
  await checkWebhookUrl(core.network.guard, input.url, 'url');
  return core.db.transaction(async (tx) => {
    await lockAccount(tx, principal.accountId);
    const [count] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(webhookTable)
      .where(eq(webhookTable.accountId, principal.accountId));
    if (count!.n >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw new ValidationError([
        { path: 'url', message: `an account may have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first` },
      ]);
    }
    const secret = newSigningSecret();
    const [created] = await tx
      .insert(webhookTable)
      .values({
        id: `wh_${randomBase62(16)}`,
        accountId: principal.accountId,
        url: input.url,
        events: [...new Set(input.events ?? WEBHOOK_EVENTS)],
        description: input.description ?? null,
        secret,
      })
      .returning();
    return { ...viewOf(created!), secret };
  });
}

export async function listWebhooks(db: Executor, principal: Principal): Promise<WebhookView[]> {
  const rows = await db
    .select()
    .from(webhookTable)
    .where(eq(webhookTable.accountId, principal.accountId))
    .orderBy(webhookTable.createdAt, webhookTable.id);
  return rows.map(viewOf);
}

async function ownWebhook(db: Executor, principal: Principal, id: string): Promise<Webhook> {
  const [hook] = await db
    .select()
    .from(webhookTable)
    .where(and(eq(webhookTable.id, id), eq(webhookTable.accountId, principal.accountId)));
  if (!hook) throw notFound('Webhook');
  return hook;
}

/** Deletes a webhook of the caller's account (its delivery log goes with it); another account's is a 404. */
export async function deleteWebhook(db: Executor, principal: Principal, id: string): Promise<void> {
  const deleted = await db
    .delete(webhookTable)
    .where(and(eq(webhookTable.id, id), eq(webhookTable.accountId, principal.accountId)))
    .returning({ id: webhookTable.id });
  if (deleted.length === 0) throw notFound('Webhook');
}

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
          ? sql`(${d.createdAt}, ${d.id}) < (select c.created_at, c.id from webhook_delivery c where c.id = ${cursor.id} and c.webhook_id = ${webhookId})`
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

/** The caller's webhooks among `ids`, in the order of `ids` (null where another account's or none). */
export async function loadWebhooks(
  db: Executor,
  principal: Principal,
  ids: readonly string[],
): Promise<(WebhookView | null)[]> {
  const rows = await db
    .select()
    .from(webhookTable)
    .where(and(eq(webhookTable.accountId, principal.accountId), inArray(webhookTable.id, [...ids])));
  const byId = new Map(rows.map((w) => [w.id, viewOf(w)]));
  return ids.map((id) => byId.get(id) ?? null);
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
      ${cursor ? sql`and (d.created_at, d.id) < (select c.created_at, c.id from webhook_delivery c where c.id = ${cursor.id} and c.webhook_id = ${r.webhookId})` : sql``}
      order by d.created_at desc, d.id desc limit ${r.limit + 1})`;
  });
  const rows = (await db.execute(sql.join(parts, sql` union all `))) as unknown as Record<string, unknown>[];
  const byRequest = requests.map((): WebhookDelivery[] => []);
  for (const row of rows) byRequest[row.i as number]!.push(deliveryOfRow(row));
  return byRequest.map((rows, i) => {
    const limit = requests[i]!.limit;
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
    createdAt: date(row.created_at)!,
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

/** Logs deliveries and adds a `deliver_webhook` job for each, in the caller's transaction. */
async function queueDeliveries(
  tx: Transaction,
  rows: (typeof webhookDeliveryTable.$inferInsert)[],
): Promise<WebhookDelivery[]> {
  const queued = await tx.insert(webhookDeliveryTable).values(rows).returning();
  for (const row of queued) {
    await tx.execute(
      sql`select graphile_worker.add_job(${JOBS.deliverWebhook}::text, json_build_object('deliveryId', ${row.id}::text), max_attempts => ${DELIVERY_MAX_ATTEMPTS}, job_key => ${row.id}::text)`,
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
    const [queued] = await queueDeliveries(tx, [
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
    return deliveryView(queued!);
  });
}

/** Sends one signed POST; how is the caller's (through the outbound guard). */
export type WebhookPost = (
  url: string,
  body: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
) => Promise<{ status: number }>;

type DeliverDeps = Pick<Core, 'db' | 'logger'> & { post: WebhookPost };

/**
 * One attempt of a delivery: signs the payload (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) and POSTs it. A 2xx answer delivers it; anything else is recorded in the log
 * and thrown, so the job is tried again later, until the last attempt marks it failed. A URL the
 * outbound guard refuses (its name now resolves to a private address, say) fails at once, for good:
 * the refusal is the delivery's `lastError`, and the job ends without a retry or an error stack.
 */
export async function deliverWebhook(
  deps: DeliverDeps,
  deliveryId: string,
  attempt: number,
  maxAttempts: number,
  signal?: AbortSignal,
) {
  const [delivery] = await deps.db.select().from(webhookDeliveryTable).where(eq(webhookDeliveryTable.id, deliveryId));
  if (!delivery || delivery.status !== 'pending') return;
  const secret = await signingSecret(deps.db, delivery);
  if (!secret) {
    await deps.db
      .update(webhookDeliveryTable)
      .set({ status: 'failed', lastError: 'the webhook no longer exists' })
      .where(eq(webhookDeliveryTable.id, deliveryId));
    observeWebhookDelivery('dropped');
    return;
  }
  const body = JSON.stringify(delivery.payload);
  const sentAt = new Date();
  const signature = new Signer(secret).sign(delivery.id, sentAt, body);
  const headers = {
    'content-type': 'application/json',
    'webhook-id': delivery.id,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': signature,
  };
  let status: number | null = null;
  let error: string | null = null;
  let refused = false;
  try {
    status = (await deps.post(delivery.url, body, headers, signal)).status;
    if (status < 200 || status > 299) error = `the receiver answered ${status}`;
  } catch (err) {
    refused = err instanceof NetError && err.kind === 'refused';
    error = refused ? `refused by the outbound guard: ${(err as Error).message}` : (err as Error).message;
  }
  const done = error === null;
  const last = !done && (refused || attempt >= maxAttempts);
  await deps.db
    .update(webhookDeliveryTable)
    .set({
      attempts: attempt,
      responseStatus: status,
      lastError: error,
      lastAttemptAt: sentAt,
      status: done ? 'succeeded' : last ? 'failed' : 'pending',
      deliveredAt: done ? sentAt : null,
    })
    .where(eq(webhookDeliveryTable.id, deliveryId));
  observeWebhookDelivery(done ? 'delivered' : refused ? 'refused' : last ? 'failed' : 'retrying');
  if (!done && !last)
    throw new AppError(502, 'webhook_delivery_failed', `Delivery ${deliveryId} attempt ${attempt} failed: ${error}`);
  // The host only: a webhook URL's path or query may be a credential of its own (a chat app's incoming webhook).
  if (last)
    deps.logger.warn(
      {
        deliveryId,
        runId: delivery.runId,
        host: URL.canParse(delivery.url) ? new URL(delivery.url).host : undefined,
        error,
      },
      refused ? 'webhook delivery refused by the outbound guard; not retried' : 'webhook delivery failed for good',
    );
}

async function signingSecret(db: Executor, delivery: WebhookDelivery): Promise<string | null> {
  if (delivery.webhookId) {
    const [hook] = await db
      .select({ secret: webhookTable.secret })
      .from(webhookTable)
      .where(eq(webhookTable.id, delivery.webhookId));
    return hook?.secret ?? null;
  }
  if (!delivery.runId) return null;
  const [run] = (await db.execute(sql`select webhook_secret from run where id = ${delivery.runId}`)) as unknown as {
    webhook_secret: string | null;
  }[];
  return run?.webhook_secret ?? null;
}
