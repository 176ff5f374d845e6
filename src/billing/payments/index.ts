import { eq } from 'drizzle-orm';
import type { Database, Executor } from '../../../db/client.ts';
import { accountTable, type Plan } from '../../../db/tables/accounts.ts';
import type { Core } from '../../core.ts';
import type { PaymentsConfig } from '../../config.ts';
import { purchaseTerms, type Purchase } from '../wallet.ts';
import type { Subscriber } from '../plans.ts';
import { demoPayments } from './demo.ts';
import { paymentsNotConfigured, stripeOnly, type Payments } from './port.ts';
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

/** What choosing a plan answers: the Stripe page to pay on, or (demo mode) the change already made, in words. */
export interface PlanChoice {
  url?: string;
  message: string;
}

/**
 * Chooses a plan, the one way every face does: with Stripe a Checkout page (the plan changes when
 * Stripe reports the subscription); in demo mode the plan and an ACTIVE status at once, without
 * payment and without the plan's monthly credits; without payments 503 payments_not_configured.
 */
export async function choosePlan(core: Core, accountId: string, plan: Plan, returnUrl: string): Promise<PlanChoice> {
  if (core.payments.mode === 'demo') {
    await core.db
      .update(accountTable)
      .set({ plan, subscriptionStatus: 'ACTIVE' })
      .where(eq(accountTable.id, accountId));
    core.auth.clear(); // the next request, this session's included, sees the new plan
    return {
      message:
        `Demo mode: the account is now on the ${plan} plan, active, without payment ` +
        '(and without its monthly plan credits). Credits can be bought now, recorded without payment.',
    };
  }
  const page = await stripeOnly(core.payments, 'Choosing a plan').checkout(accountId, plan, returnUrl);
  return {
    url: page.url,
    message: `Pay on Stripe’s page; the account moves to the ${plan} plan once Stripe confirms the subscription.`,
  };
}

export { paymentsNotConfigured, stripeOnly, type Payments, type StripePayments } from './port.ts';
