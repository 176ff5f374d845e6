import type { FastifyInstance } from 'fastify';
import type { Core } from '../core.ts';
import { receiveStripeEvent } from '../billing/payments/events.ts';

/**
 * POST /hooks/stripe: Stripe's events. No API key: the `Stripe-Signature` over the raw body is the
 * authentication, so the body is kept as bytes (a parsed and re-serialised body would not verify).
 * Answers 200 once the event is recorded with its job; a bad signature 400, nothing written; 503
 * payments_not_configured without Stripe.
 */
export async function stripeHookRoute(app: FastifyInstance, { core }: { core: Core }) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post('/hooks/stripe', async (request) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const signature = request.headers['stripe-signature'];
    const { id, duplicate } = await receiveStripeEvent(
      core.db,
      core.config.payments,
      body,
      typeof signature === 'string' ? signature : undefined,
    );
    return { received: true, id, duplicate };
  });
}
