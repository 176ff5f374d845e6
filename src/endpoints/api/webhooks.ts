import { createWebhook, createWebhookInput, deleteWebhook, listWebhooks } from '../../webhooks/subscriptions.ts';
import { deliveriesParams, listDeliveries, sendTestWebhook } from '../../webhooks/deliveries.ts';
import { defineEndpoint, type RestRequest } from '../define.ts';
import { createdWebhookResponse, deliveryListResponse, testDeliveryResponse, webhookListResponse } from '../schemas.ts';

const PATH = '/api/v1/webhooks';
const ONE = `${PATH}/:id`;
const idOf = (request: RestRequest) => request.params.id ?? '';

export const createAccountWebhook = defineEndpoint({
  name: 'createWebhook',
  permission: 'webhooks',
  title: 'Register an account webhook',
  tag: 'Webhooks',
  description:
    'Events are POSTed to url when a run of the account ends (run.succeeded, run.failed, run.aborted, ' +
    'run.timed_out), signed per the Standard Webhooks spec (webhook-id, webhook-timestamp, ' +
    'webhook-signature) and retried with exponential backoff for about a day. At most 20 webhooks per account. ' +
    'A url the outbound guard refuses (a private, loopback, link-local or metadata address, ' +
    'a host name resolving to one, a port other than 80 for http and 443 for https) ' +
    'answers 400 validation_failed saying why; at delivery such a refusal fails the delivery at once, without retries.',
  rest: {
    path: PATH,
    methods: ['post'],
    status: 201,
    input: (request) => request.body,
    example: { url: 'https://example.com/hooks/leadgate', events: ['run.succeeded', 'run.failed'] },
    ok: 'The webhook, with its signing secret (shown once).',
  },
  graphql: { field: 'createWebhook' },
  request: createWebhookInput,
  response: createdWebhookResponse,
  errors: {},
  handler: ({ core, principal }, body: unknown) => createWebhook(core, principal, body),
  respond: (webhook) => ({ webhook }),
});

export const listAccountWebhooks = defineEndpoint({
  name: 'listWebhooks',
  permission: 'webhooks',
  title: "The account's webhooks",
  tag: 'Webhooks',
  rest: { path: PATH, methods: ['get'], input: () => undefined, ok: 'Oldest first.' },
  graphql: { field: 'webhooks' },
  response: webhookListResponse,
  errors: {},
  handler: ({ core, principal }) => listWebhooks(core.db, principal),
  respond: (webhooks) => ({ webhooks }),
});

export const deleteAccountWebhook = defineEndpoint({
  name: 'deleteWebhook',
  permission: 'webhooks',
  title: 'Delete a webhook',
  tag: 'Webhooks',
  description: 'Its delivery log goes with it.',
  rest: { path: ONE, methods: ['delete'], status: 204, input: idOf, ok: 'Deleted.' },
  graphql: { field: 'deleteWebhook' },
  errors: { 404: ['not_found'] },
  handler: ({ core, principal }, id: string) => deleteWebhook(core.db, principal, id),
});

export const listWebhookDeliveries = defineEndpoint({
  name: 'listWebhookDeliveries',
  permission: 'webhooks',
  title: 'Delivery log of a webhook',
  tag: 'Webhooks',
  description: 'Newest first; page with after = nextAfter until it is null.',
  rest: {
    path: `${ONE}/deliveries`,
    methods: ['get'],
    input: (request) => ({ id: idOf(request), query: request.query }),
    ok: 'One page of deliveries.',
  },
  request: deliveriesParams,
  response: deliveryListResponse,
  errors: { 400: ['validation_failed'], 404: ['not_found'] },
  handler: ({ core, principal }, input: { id: string; query: unknown }) =>
    listDeliveries(core.db, principal, input.id, input.query),
});

export const sendTestWebhookEvent = defineEndpoint({
  name: 'sendTestWebhook',
  permission: 'webhooks',
  title: 'Send a test event to a webhook',
  tag: 'Webhooks',
  description:
    'Queues one webhook.test event to the webhook, whatever events it subscribes to: {"type": "webhook.test", ' +
    '"timestamp", "data": {"webhookId", "sentAt"}}, signed, retried and guarded like a run event, ' +
    'and logged among its deliveries. The answer is the delivery, pending; its outcome is in the delivery log.',
  rest: { path: `${ONE}/test`, methods: ['post'], status: 201, input: idOf, ok: 'The delivery queued.' },
  graphql: { field: 'sendTestWebhook' },
  response: testDeliveryResponse,
  errors: { 404: ['not_found'] },
  handler: ({ core, principal }, id: string) => sendTestWebhook(core.db, principal, id),
  respond: (delivery) => ({ delivery }),
});
