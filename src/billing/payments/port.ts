import type { Executor } from '../../../db/client.ts';
import type { Plan } from '../../../db/tables/accounts.ts';
import { AppError } from '../../shared/errors.ts';
import type { Purchase, PurchaseTerms } from '../wallet.ts';

/**
 * Glossary: *payments* is how credit purchases and subscriptions are paid. The port has two
 * implementations: Stripe (card charges, Checkout, the customer portal, signed events) and demo
 * (purchases recorded without payment, marked as such). Without either, buying credits is refused.
 */
export interface PurchaseRequest {
  terms: PurchaseTerms;
  /**
   * The caller's idempotency key (REST `Idempotency-Key`, GraphQL `idempotencyKey`), when sent: the
   * provider derives its own from it, so a retried request is one charge.
   */
  idempotencyKey: string | undefined;
}

export interface PaymentsPort {
  readonly mode: 'stripe' | 'demo';
  /**
   * Pays for a checked purchase and credits it in `tx`, or throws the refusal (402 when the provider
   * did not complete the payment). Runs inside the request's idempotent write.
   */
  buyCredits(tx: Executor, request: PurchaseRequest): Promise<Purchase>;
}

/** What a plan change through the provider answers: the page the customer goes to. */
export interface HostedPage {
  url: string;
}

/** The Stripe implementation's further operations (Checkout, the portal); see stripe.ts. */
export interface StripePayments extends PaymentsPort {
  readonly mode: 'stripe';
  /** A Checkout session (subscription mode) for `plan`; its completion arrives as `customer.subscription.*` events. */
  checkout(accountId: string, plan: Plan, returnUrl: string): Promise<HostedPage>;
  /** A customer portal session: the card, invoices and cancellation. */
  portal(accountId: string, returnUrl: string): Promise<HostedPage>;
  /**
   * The account's latest credit purchase still waiting for the customer
   * (3-D Secure), as Stripe has it now; null when none.
   */
  awaitingAction(accountId: string): Promise<PaymentAwaitingAction | null>;
}

/** What the console needs to let the customer complete a payment: Stripe.js `confirmCardPayment(clientSecret)`. */
export interface PaymentAwaitingAction {
  paymentIntentId: string;
  /** What will be charged, in micro-dollars. */
  amountMicros: bigint;
  status: string;
  clientSecret: string;
  /**
   * `next_action.type` (`use_stripe_sdk`, `redirect_to_url`); null
   * when the payment must first be confirmed with the card.
   */
  nextActionType: string | null;
}

/** The configured payments, or none (then buying credits answers 503). */
export type Payments = StripePayments | (PaymentsPort & { readonly mode: 'demo' }) | { readonly mode: 'none' };

/** The one refusal of a deployment without payments: every face answers it the same way. */
export const paymentsNotConfigured = () =>
  new AppError(
    503,
    'payments_not_configured',
    'Credit purchases are not available on this server: no payment provider is configured (STRIPE_SECRET_KEY). ' +
      'The operator can grant credits with `npx leadgate accounts grant`.',
  );

/** The Stripe operations need Stripe: 503 payments_not_configured elsewhere (the operator sets plans with the CLI). */
export function stripeOnly(payments: Payments, what: string): StripePayments {
  if (payments.mode === 'stripe') return payments;
  if (payments.mode === 'none') throw paymentsNotConfigured();
  throw new AppError(
    503,
    'payments_not_configured',
    `${what} needs a payment provider; this server records purchases without payment (PAYMENTS=demo).`,
  );
}
