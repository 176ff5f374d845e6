import type { FastifyInstance } from 'fastify';
import type { Core } from '../core.ts';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks } from '../runs/webhooks.ts';

type WebhookParams = { Params: { id: string } };

/** Account webhooks: register (the secret is shown once), list, delete, and each one's delivery log. */
export async function webhookRoutes(app: FastifyInstance, { core }: { core: Core }) {
  app.post('/api/v1/webhooks', async (request, reply) => reply.status(201).send({ webhook: await createWebhook(core.db, request.principal, request.body) }));

  app.get('/api/v1/webhooks', async (request) => ({ webhooks: await listWebhooks(core.db, request.principal) }));

  app.delete<WebhookParams>('/api/v1/webhooks/:id', async (request, reply) => {
    await deleteWebhook(core.db, request.principal, request.params.id);
    return reply.status(204).send();
  });

  app.get<WebhookParams>('/api/v1/webhooks/:id/deliveries', async (request) => listDeliveries(core.db, request.principal, request.params.id, request.query));
}
