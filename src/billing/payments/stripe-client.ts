import Stripe from 'stripe';
import type { StripeConfig } from '../../config.ts';

/**
 * The official SDK, configured once: the API at api.stripe.com, or at STRIPE_API_BASE in tests (a
 * local fake, through the SDK's host, port and protocol options). Network failures are retried twice
 * by the SDK, which then sends an idempotency key of its own on the POSTs that have none.
 */
export function stripeClient(config: StripeConfig): Stripe {
  let client = clients.get(config);
  if (!client) {
    client = createClient(config);
    clients.set(config, client);
  }
  return client;
}

/** One client per configuration (it keeps its connections). */
const clients = new WeakMap<StripeConfig, Stripe>();

function createClient(config: StripeConfig): Stripe {
  const base = config.apiBase;
  return new Stripe(config.secretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    appInfo: { name: 'leadgate' },
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          protocol: base.protocol === 'https:' ? 'https' : 'http',
        }
      : {}),
  });
}

export { Stripe };
