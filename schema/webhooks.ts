import { WEBHOOK_EVENTS } from '../db/schema/webhooks.ts';
import { listDeliveries, type DeliveryView, type WebhookView } from '../src/runs/webhooks.ts';
import { createAccountWebhook, deleteAccountWebhook, listAccountWebhooks } from '../src/endpoints/api/webhooks.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { builder } from './builder.ts';

const WebhookEventEnum = builder.enumType('WebhookEvent', {
  description: 'How a run ended.',
  values: Object.fromEntries(WEBHOOK_EVENTS.map((e) => [e.replace('.', '_').toUpperCase(), { value: e }])) as Record<string, { value: (typeof WEBHOOK_EVENTS)[number] }>,
});

const DeliveryRef = builder.objectRef<DeliveryView>('WebhookDelivery').implement({
  description: 'One event sent to a webhook: its attempts and outcome.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The `webhook-id` header of every attempt.' }),
    event: t.exposeString('event'),
    runId: t.exposeString('runId', { nullable: true }),
    url: t.exposeString('url'),
    status: t.exposeString('status', { description: 'pending, succeeded or failed (after the last retry).' }),
    attempts: t.exposeInt('attempts'),
    responseStatus: t.exposeInt('responseStatus', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    createdAt: t.field({ type: 'DateTime', resolve: (d) => d.createdAt }),
    lastAttemptAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.lastAttemptAt }),
    deliveredAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.deliveredAt }),
  }),
});

const WebhookRef = builder.objectRef<WebhookView>('Webhook').implement({
  description: 'An account webhook: every run end of the subscribed kinds is POSTed to its URL, signed per the Standard Webhooks spec.',
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    events: t.field({ type: [WebhookEventEnum], resolve: (w) => w.events }),
    description: t.exposeString('description', { nullable: true }),
    createdAt: t.field({ type: 'DateTime', resolve: (w) => w.createdAt }),
    deliveries: t.field({
      type: [DeliveryRef],
      description: 'The latest deliveries, newest first.',
      args: { limit: t.arg.int({ defaultValue: 20 }) },
      complexity: (args) => ({ field: args.limit ?? 20, multiplier: 1 }),
      resolve: async (w, args, ctx) => (await listDeliveries(ctx.core.db, ctx.principal, w.id, { limit: args.limit ?? 20 })).deliveries,
    }),
  }),
});

builder.queryField(listAccountWebhooks.graphql!.field, (t) =>
  t.field({
    type: [WebhookRef],
    description: "The account's webhooks.",
    resolve: async (_, __, ctx) => (await callEndpoint(ctx.core, ctx.principal, listAccountWebhooks, undefined, { shape: (r) => r })).body,
  }),
);

const CreateWebhookInput = builder.inputType('CreateWebhookInput', {
  fields: (t) => ({
    url: t.string({ required: true }),
    events: t.field({ type: [WebhookEventEnum], description: 'Default: all.' }),
    description: t.string(),
  }),
});

const CreatedWebhookRef = builder.objectRef<WebhookView & { secret: string }>('CreatedWebhook').implement({
  fields: (t) => ({
    webhook: t.field({ type: WebhookRef, resolve: (w) => w }),
    secret: t.exposeString('secret', { description: 'The signing secret (whsec_…), shown only this once.' }),
  }),
});

builder.mutationField(createAccountWebhook.graphql!.field, (t) =>
  t.field({
    type: CreatedWebhookRef,
    args: { input: t.arg({ type: CreateWebhookInput, required: true }) },
    resolve: async (_, { input }, ctx) => {
      const body = { url: input.url, ...(input.events ? { events: input.events } : {}), ...(input.description ? { description: input.description } : {}) };
      return (await callEndpoint(ctx.core, ctx.principal, createAccountWebhook, body, { shape: (r) => r })).body;
    },
  }),
);

builder.mutationField(deleteAccountWebhook.graphql!.field, (t) =>
  t.boolean({
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_, args, ctx) => {
      await callEndpoint(ctx.core, ctx.principal, deleteAccountWebhook, String(args.id), { shape: () => undefined });
      return true;
    },
  }),
);
