import { DELIVERY_STATUSES, type DeliveryStatus } from '../db/tables/webhooks.ts';
import { MAX_WEBHOOKS_PER_ACCOUNT, type WebhookView } from '../src/webhooks/subscriptions.ts';
import { DELIVERY_EVENTS, type DeliveryEvent, type DeliveryView } from '../src/webhooks/deliveries.ts';
import {
  createAccountWebhook,
  deleteAccountWebhook,
  listAccountWebhooks,
  sendTestWebhookEvent,
} from '../src/endpoints/api/webhooks.ts';
import { graphqlFieldOf } from '../src/endpoints/define.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { may } from '../src/accounts/roles.ts';
import { ValidationError } from '../src/shared/errors.ts';
import { builder } from './builder.ts';
import { AFTER_DESCRIPTION, connectionOf, connectionType, FIRST_DESCRIPTION, pageSize } from './connection.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { NodeRef, registerNode } from './node.ts';
import { RunRef } from './run.ts';

const EVENT_TEXT: Record<DeliveryEvent, string> = {
  'run.succeeded': 'A run ended SUCCEEDED.',
  'run.failed': 'A run ended FAILED.',
  'run.aborted': 'A run ended ABORTED.',
  'run.timed_out': 'A run ended TIMED_OUT.',
  'schedule.paused': 'A schedule paused itself: its account could not pay, or its plan no longer allows the tool.',
  'pipeline.succeeded': 'A pipeline ran every step it had rows for.',
  'pipeline.failed': 'A step of a pipeline failed; the steps after it did not run.',
  'pipeline.aborted': 'A pipeline was cancelled; the rest of its hold was released.',
  'connection.broken':
    'A provider connection was refused by its provider (grant revoked or expired); its destinations paused.',
  'delivery.finished': 'A delivery of rows to a destination ended (its counts and problems in its log).',
  'webhook.test': 'A test event, sent by `sendTestWebhook` only; not one to subscribe to (`createWebhook` refuses it).',
};

const WebhookEventEnum = builder.enumType('WebhookEvent', {
  description:
    'How a run or a pipeline ended, a schedule paused, or the test event; the `type` of the event POSTed ' +
    '(`run.succeeded` is RUN_SUCCEEDED).',
  values: Object.fromEntries(
    DELIVERY_EVENTS.map((e) => [e.replace('.', '_').toUpperCase(), { value: e, description: EVENT_TEXT[e] }]),
  ) as Record<string, { value: DeliveryEvent; description: string }>,
});

const DELIVERY_TEXT: Record<DeliveryStatus, string> = {
  pending: 'Not yet accepted; retried with exponential backoff for about a day.',
  succeeded: 'Accepted by the URL (a 2xx answer).',
  failed: 'Refused or unreachable after the last retry.',
};

const DeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', {
  description: 'Where a delivery stands.',
  values: Object.fromEntries(
    DELIVERY_STATUSES.map((s) => [s.toUpperCase(), { value: s, description: DELIVERY_TEXT[s] }]),
  ) as Record<string, { value: DeliveryStatus; description: string }>,
});

const DeliveryRef = builder.objectRef<DeliveryView>('WebhookDelivery').implement({
  description: 'One event sent to a webhook: its attempts and outcome.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', {
      description: 'The delivery’s global id (`msg_…`), also the `webhook-id` header of every attempt.',
    }),
    event: t.field({
      type: WebhookEventEnum,
      description: 'The event sent.',
      resolve: (d) => d.event as DeliveryEvent,
    }),
    runId: t.exposeID('runId', {
      nullable: true,
      description: 'The run the event is about (its runId, also its global id).',
    }),
    run: t.field({
      type: RunRef,
      nullable: true,
      description: 'The run the event is about; null once deleted.',
      resolve: (d, _, ctx) => (d.runId ? ctx.loaders.run.load(d.runId) : null),
    }),
    url: t.exposeString('url', { description: 'Where it was POSTed.' }),
    status: t.field({ type: DeliveryStatusEnum, description: 'Where the delivery stands.', resolve: (d) => d.status }),
    attempts: t.exposeInt('attempts', { description: 'Attempts so far.' }),
    responseStatus: t.exposeInt('responseStatus', {
      nullable: true,
      description: 'The HTTP status of the last answer; null when none came.',
    }),
    lastError: t.exposeString('lastError', { nullable: true, description: 'Why the last attempt failed.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When the event happened.', resolve: (d) => d.createdAt }),
    lastAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it was last tried.',
      resolve: (d) => d.lastAttemptAt,
    }),
    deliveredAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the URL accepted it.',
      resolve: (d) => d.deliveredAt,
    }),
  }),
});

registerNode('msg', 'WebhookDelivery', {
  keepsPrefix: true,
  localId: /^msg_[A-Za-z0-9]{1,64}$/,
  load: async (ids, ctx) =>
    may(ctx.principal, 'webhooks')
      ? ctx.loaders.delivery.loadMany(ids).then((all) => all.map((d) => (d instanceof Error ? null : d)))
      : ids.map(() => null),
});

const DeliveryConnectionRef = connectionType<DeliveryView>('WebhookDelivery', DeliveryRef, {
  description: 'A page of a webhook’s delivery log, newest first.',
  totalCount: 'How many deliveries the log holds.',
});

const MAX_DELIVERIES = 100;

const WebhookRef = builder.objectRef<WebhookView>('Webhook').implement({
  description:
    'An account webhook: every run end of the subscribed kinds is POSTed to its URL, ' +
    'signed per the Standard Webhooks spec.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The webhook’s global id (`wh_…`), the same in REST.' }),
    url: t.exposeString('url', { description: 'Where events are POSTed.' }),
    events: t.field({ type: [WebhookEventEnum], description: 'The events it receives.', resolve: (w) => w.events }),
    description: t.exposeString('description', { nullable: true, description: 'The caller’s note about it.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was registered.', resolve: (w) => w.createdAt }),
    deliveries: t.field({
      type: DeliveryConnectionRef,
      description: 'Its delivery log, newest first.',
      args: {
        first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_DELIVERIES, 20) }),
        after: t.arg.string({ description: AFTER_DESCRIPTION }),
      },
      complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 20, MAX_DELIVERIES) }),
      resolve: async (w, args, ctx) => {
        const limit = pageSize(args.first, { max: MAX_DELIVERIES, byDefault: 20 });
        // Batched across the webhooks of a list: one statement for every webhook's page, one for the counts.
        const page = await ctx.loaders.deliveryPage.load({ webhookId: w.id, limit, after: args.after ?? null });
        return connectionOf(page.deliveries, {
          cursorOf: (d) => d.cursor,
          hasNextPage: page.hasMore,
          totalCount: () => ctx.loaders.deliveryCount.load(w.id),
        });
      },
    }),
  }),
});

registerNode('wh', 'Webhook', {
  keepsPrefix: true,
  localId: /^wh_[A-Za-z0-9]{1,64}$/,
  // Webhooks are the owners' and admins' (src/accounts/roles.ts): a console member refetches none.
  load: async (ids, ctx) =>
    may(ctx.principal, 'webhooks')
      ? ctx.loaders.webhook.loadMany(ids).then((all) => all.map((w) => (w instanceof Error ? null : w)))
      : ids.map(() => null),
});

const WebhookConnectionRef = connectionType<WebhookView>('Webhook', WebhookRef, {
  description: 'A page of the account’s webhooks, oldest first.',
  totalCount: `How many webhooks the account has (at most ${MAX_WEBHOOKS_PER_ACCOUNT}).`,
});

builder.queryField(graphqlFieldOf(listAccountWebhooks), (t) =>
  t.field({
    type: WebhookConnectionRef,
    description: "The account's webhooks, oldest first.",
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_WEBHOOKS_PER_ACCOUNT, MAX_WEBHOOKS_PER_ACCOUNT) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: (args) => ({
      field: 1,
      multiplier: Math.min(args.first ?? MAX_WEBHOOKS_PER_ACCOUNT, MAX_WEBHOOKS_PER_ACCOUNT),
    }),
    resolve: async (_, args, ctx) => {
      const first = pageSize(args.first, { max: MAX_WEBHOOKS_PER_ACCOUNT, byDefault: MAX_WEBHOOKS_PER_ACCOUNT });
      const all = (await callEndpoint(ctx.core, ctx.principal, listAccountWebhooks, undefined, { shape: (r) => r }))
        .body;
      for (const hook of all) ctx.loaders.webhook.prime(hook.id, hook);
      // The account has at most 20: the list is paged here, with the webhook's id as its cursor.
      const start = args.after ? all.findIndex((w) => w.id === args.after) + 1 : 0;
      if (start === 0 && args.after)
        throw new ValidationError([{ path: 'after', message: 'not a cursor returned by this API' }]);
      const page = all.slice(start, start + first);
      return connectionOf(page, {
        cursorOf: (w) => w.id,
        hasNextPage: start + first < all.length,
        totalCount: all.length,
      });
    },
  }),
);

const CreateWebhookInput = builder.inputType('CreateWebhookInput', {
  description: 'A webhook to register.',
  fields: (t) => ({
    url: t.string({
      required: true,
      description: 'Where events are POSTed: an http or https URL without credentials.',
    }),
    events: t.field({ type: [WebhookEventEnum], description: 'The events to receive; default all.' }),
    description: t.string({ description: 'A note about it, up to 200 characters.' }),
  }),
});

type CreateWebhookPayload = { created?: WebhookView & { secret: string }; userErrors: UserError[] };

const CreateWebhookPayloadRef = builder.objectRef<CreateWebhookPayload>('CreateWebhookPayload').implement({
  description: 'What `createWebhook` answers: the webhook and its signing secret, or `userErrors`.',
  fields: (t) => ({
    webhook: t.field({
      type: WebhookRef,
      nullable: true,
      description: 'The webhook registered; null when refused.',
      resolve: (p) => p.created ?? null,
    }),
    secret: t.string({
      nullable: true,
      description: 'The signing secret (whsec_…), shown only in this answer; null when refused.',
      resolve: (p) => p.created?.secret ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(createAccountWebhook), (t) =>
  t.field({
    type: CreateWebhookPayloadRef,
    description: `Registers an account webhook (at most ${MAX_WEBHOOKS_PER_ACCOUNT} per account).`,
    args: { input: t.arg({ type: CreateWebhookInput, required: true, description: 'The webhook.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(async () => {
        const body = {
          url: input.url,
          ...(input.events ? { events: input.events } : {}),
          ...(input.description ? { description: input.description } : {}),
        };
        return {
          created: (await callEndpoint(ctx.core, ctx.principal, createAccountWebhook, body, { shape: (r) => r })).body,
        };
      }, ['input']),
  }),
);

type DeleteWebhookPayload = { deletedWebhookId?: string; userErrors: UserError[] };

const DeleteWebhookPayloadRef = builder.objectRef<DeleteWebhookPayload>('DeleteWebhookPayload').implement({
  description: 'What `deleteWebhook` answers.',
  fields: (t) => ({
    deletedWebhookId: t.id({
      nullable: true,
      description: 'The id of the webhook deleted, with its delivery log; null when refused.',
      resolve: (p) => p.deletedWebhookId ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(deleteAccountWebhook), (t) =>
  t.field({
    type: DeleteWebhookPayloadRef,
    description:
      'Deletes a webhook of the account and its delivery log. ' +
      'User error NOT_FOUND for no such webhook in this account.',
    args: { id: t.arg.id({ required: true, description: 'The webhook’s id.' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        await callEndpoint(ctx.core, ctx.principal, deleteAccountWebhook, String(args.id), { shape: () => undefined });
        return { deletedWebhookId: String(args.id) };
      }, ['id']),
  }),
);

type SendTestWebhookPayload = { delivery?: DeliveryView; userErrors: UserError[] };

const SendTestWebhookPayloadRef = builder.objectRef<SendTestWebhookPayload>('SendTestWebhookPayload').implement({
  description: 'What `sendTestWebhook` answers: the test delivery queued, or `userErrors`.',
  fields: (t) => ({
    delivery: t.field({
      type: DeliveryRef,
      nullable: true,
      description:
        'The `webhook.test` delivery, queued (PENDING); its outcome shows in the delivery log. Null when refused.',
      resolve: (p) => p.delivery ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(sendTestWebhookEvent), (t) =>
  t.field({
    type: SendTestWebhookPayloadRef,
    description:
      'Queues one `webhook.test` event to a webhook of the account, whatever events it subscribes to: ' +
      '`{type: "webhook.test", timestamp, data: {webhookId, sentAt}}`, signed, retried and guarded like a ' +
      'run event, and logged among its deliveries. User error NOT_FOUND for no such webhook in this account.',
    args: { id: t.arg.id({ required: true, description: 'The webhook’s id.' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(
        async () => ({
          delivery: (
            await callEndpoint(ctx.core, ctx.principal, sendTestWebhookEvent, String(args.id), { shape: (r) => r })
          ).body,
        }),
        ['id'],
      ),
  }),
);
