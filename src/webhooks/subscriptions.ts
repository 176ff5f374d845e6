/**
 * An account's webhooks: the URL rule, registration (with its signing secret, shown once), listing,
 * lookup and deletion. Registering and deleting one are recorded in the audit log (`webhook.created`,
 * `webhook.deleted`) with the receiver's host only, in the same transaction.
 */
import { randomBytes } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../db/client.ts';
import { WEBHOOK_EVENTS, webhookTable, type Webhook, type WebhookEvent } from '../../db/tables/webhooks.ts';
import { oneRow } from '../../db/rows.ts';
import type { Core } from '../core.ts';
import { lockAccount, type Principal } from '../accounts/accounts.ts';
import { byCaller, recordAudit } from '../audit/audit.ts';
import { fromZodError, notFound, ValidationError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import type { OutboundGuard } from '../net/guard.ts';
import { NetError } from '../net/errors.ts';

/** The most webhooks one account may register. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 20;

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

/** A webhook URL's host, as the audit log names the receiver (its path and query may hold a secret). */
const hostOf = (url: string) => new URL(url).host;

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
    const counted = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(webhookTable)
      .where(eq(webhookTable.accountId, principal.accountId));
    if (oneRow(counted, 'count of webhooks').n >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw new ValidationError([
        { path: 'url', message: `an account may have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first` },
      ]);
    }
    const secret = newSigningSecret();
    const created = await tx
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
    const hook = oneRow(created, 'the inserted webhook');
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'webhook.created',
      target: { type: 'webhook', id: hook.id, label: hostOf(hook.url) },
      details: { host: hostOf(hook.url), events: hook.events },
    });
    return { ...viewOf(hook), secret };
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

/** A webhook of the caller's account; another account's is a 404. */
export async function ownWebhook(db: Executor, principal: Principal, id: string): Promise<Webhook> {
  const [hook] = await db
    .select()
    .from(webhookTable)
    .where(and(eq(webhookTable.id, id), eq(webhookTable.accountId, principal.accountId)));
  if (!hook) throw notFound('Webhook');
  return hook;
}

/** Deletes a webhook of the caller's account (its delivery log goes with it); another account's is a 404. */
export async function deleteWebhook(
  db: Pick<Core['db'], 'transaction'>,
  principal: Principal,
  id: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    const [deleted] = await tx
      .delete(webhookTable)
      .where(and(eq(webhookTable.id, id), eq(webhookTable.accountId, principal.accountId)))
      .returning({ id: webhookTable.id, url: webhookTable.url });
    if (!deleted) throw notFound('Webhook');
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'webhook.deleted',
      target: { type: 'webhook', id: deleted.id, label: hostOf(deleted.url) },
      details: { host: hostOf(deleted.url) },
    });
  });
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
