import type { Database, Executor } from '../../../db/client.ts';
import type { PaymentsConfig } from '../../config.ts';
import { purchaseTerms, type Purchase } from '../wallet.ts';
import type { Subscriber } from '../plans.ts';
import { demoPayments } from './demo.ts';
import { paymentsNotConfigured, type Payments } from './port.ts';
import { createStripePayments } from './stripe.ts';

/** The configured payments (config.payments); `records` is the pool Stripe's purchase records commit on (stripe.ts). */
export function createPayments(config: PaymentsConfig, db: Database, records: Database): Payments {
  if (config.mode === 'stripe') return createStripePayments(config, db, records);
  return config.mode === 'demo' ? demoPayments : { mode: 'none' };
}

/**
 * A credit purchase, the one way every face buys credits: 503 payments_not_configured without a
 * payment provider, then the spec's rules (400, 403, wallet.ts `purchaseTerms`), checked without the
 * database; returns the write that pays and credits it, for the request's idempotent transaction.
 */
export function prepareCreditPurchase(
  payments: Payments,
  principal: Subscriber,
  rawAmount: unknown,
  idempotencyKey: string | undefined,
): (tx: Executor) => Promise<Purchase> {
  if (payments.mode === 'none') throw paymentsNotConfigured();
  const terms = purchaseTerms(principal, rawAmount);
  return (tx) => payments.buyCredits(tx, { terms, idempotencyKey });
}

export { paymentsNotConfigured, stripeOnly, type Payments, type StripePayments } from './port.ts';
