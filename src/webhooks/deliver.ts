/**
 * One attempt of a webhook delivery (the `deliver_webhook` job): signed per Standard Webhooks, POSTed
 * through the outbound guard, its outcome written to the delivery log.
 */
import { eq, sql } from 'drizzle-orm';
import { Webhook as Signer } from 'standardwebhooks';
import type { Executor } from '../../db/client.ts';
import { webhookDeliveryTable, webhookTable, type WebhookDelivery } from '../../db/tables/webhooks.ts';
import type { Core } from '../core.ts';
import { AttemptFailedError } from '../shared/errors.ts';
import { observeWebhookDelivery } from '../shared/metrics.ts';
import { NetError } from '../net/errors.ts';

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
  if (delivery?.status !== 'pending') return;
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
  if (done) return;
  // One warning line an attempt, without a stack: a receiver that is down is the receiver's business.
  // The host only: a webhook URL's path or query may be a credential of its own (a chat app's incoming webhook).
  const host = URL.canParse(delivery.url) ? new URL(delivery.url).host : undefined;
  const context = { deliveryId, runId: delivery.runId, host, attempt, maxAttempts, error };
  if (last) {
    deps.logger.warn(
      context,
      refused ? 'webhook delivery refused by the outbound guard; not retried' : 'webhook delivery failed for good',
    );
    return;
  }
  deps.logger.warn(context, `webhook delivery attempt ${attempt} of ${maxAttempts} failed; it is tried again later`);
  throw new AttemptFailedError('webhook_delivery_failed', `Delivery ${deliveryId} attempt ${attempt} failed: ${error}`);
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
