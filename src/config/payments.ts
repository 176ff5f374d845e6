import { PLANS, type Plan } from '../../db/tables/accounts.ts';
import { oneOf } from './env.ts';

/**
 * `stripe` when STRIPE_SECRET_KEY is set; `demo` (purchases recorded without payment, marked as such)
 * when PAYMENTS=demo, and by default only with the embedded database; otherwise `none`: buy-credits
 * answers 503 payments_not_configured and operators grant credits with the CLI.
 */
export type PaymentsConfig = { mode: 'none' } | { mode: 'demo' } | StripeConfig;

export interface StripeConfig {
  mode: 'stripe';
  /** STRIPE_SECRET_KEY (`sk_live_…`, `sk_test_…`). */
  secretKey: string;
  /** STRIPE_WEBHOOK_SECRET (`whsec_…`): the signing secret of the /hooks/stripe endpoint. */
  webhookSecret: string;
  /**
   * STRIPE_PRICE_STARTER, _GROWTH, _SCALE: the monthly price of each plan
   * (`price_…`); a plan without one cannot be chosen by Checkout.
   */
  prices: Partial<Record<Plan, string>>;
  /** STRIPE_API_BASE, tests only: the API at this base URL (a local fake) instead of api.stripe.com. */
  apiBase: URL | undefined;
}

/** PAYMENTS, STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, STRIPE_PRICE_<PLAN> and STRIPE_API_BASE (see PaymentsConfig). */
export function payments(env: NodeJS.ProcessEnv): PaymentsConfig {
  const secretKey = env.STRIPE_SECRET_KEY || undefined;
  const chosen = oneOf(
    'PAYMENTS',
    env.PAYMENTS,
    ['stripe', 'demo', 'none'] as const,
    secretKey ? 'stripe' : env.DATABASE_URL ? 'none' : 'demo',
  );
  if (chosen !== 'stripe') {
    if (secretKey)
      throw new Error(
        `PAYMENTS=${chosen} with STRIPE_SECRET_KEY set: unset one of them, so it is clear whether purchases are paid`,
      );
    return { mode: chosen };
  }
  if (!secretKey) throw new Error('PAYMENTS=stripe needs STRIPE_SECRET_KEY');
  if (!env.STRIPE_WEBHOOK_SECRET)
    throw new Error(
      'STRIPE_SECRET_KEY needs STRIPE_WEBHOOK_SECRET: ' +
        'purchases that need 3-D Secure and subscriptions are applied from signed events',
    );
  const prices: Partial<Record<Plan, string>> = {};
  for (const plan of PLANS) {
    const price = env[`STRIPE_PRICE_${plan.toUpperCase()}`];
    if (price) prices[plan] = price;
  }
  let apiBase: URL | undefined;
  if (env.STRIPE_API_BASE) {
    apiBase = new URL(env.STRIPE_API_BASE);
    if (!['http:', 'https:'].includes(apiBase.protocol))
      throw new Error(`STRIPE_API_BASE must be an http(s) URL, got "${env.STRIPE_API_BASE}"`);
  }
  return { mode: 'stripe', secretKey, webhookSecret: env.STRIPE_WEBHOOK_SECRET, prices, apiBase };
}
