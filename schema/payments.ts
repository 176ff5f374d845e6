import { PLANS } from '../db/tables/accounts.ts';
import { requireRole } from '../src/accounts/roles.ts';
import { choosePlan, stripeOnly } from '../src/billing/payments/index.ts';
import type { PaymentAwaitingAction } from '../src/billing/payments/port.ts';
import { AccountRef, PlanEnum } from './account.ts';
import { builder } from './builder.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { LedgerEntryRef } from './wallet.ts';

/** The account's payment state and the Stripe pages (Checkout, the customer portal): docs/payments.md. */

const MODE_TEXT = {
  STRIPE: 'Paid through Stripe: credits by card, plans by Checkout, the card and cancellation in the customer portal.',
  DEMO: 'Demo: credit purchases are recorded without payment (and marked so in the ledger).',
  NONE:
    'No payments on this server: buyCredits is refused (PAYMENTS_NOT_CONFIGURED); ' +
    'the operator grants credits and sets plans.',
} as const;

const PaymentsModeEnum = builder.enumType('PaymentsMode', {
  description: 'How this server takes payments.',
  values: Object.fromEntries(
    Object.entries(MODE_TEXT).map(([mode, description]) => [mode, { value: mode, description }]),
  ) as Record<keyof typeof MODE_TEXT, { value: keyof typeof MODE_TEXT; description: string }>,
});

interface PaymentStateShape {
  accountId: string;
  mode: keyof typeof MODE_TEXT;
  stripeSubscriptionStatus: string | null;
}

const PaymentAwaitingActionRef = builder.objectRef<PaymentAwaitingAction>('PaymentAwaitingAction').implement({
  description:
    'A credit purchase the bank asked the card holder to authenticate (3-D Secure): ' +
    'complete it with Stripe.js `confirmCardPayment(clientSecret)`; the credits are added once it succeeds.',
  fields: (t) => ({
    paymentIntentId: t.exposeString('paymentIntentId', { description: 'The Stripe PaymentIntent (`pi_…`).' }),
    amount: t.field({
      type: 'Money',
      description: 'What will be charged (without the bonus).',
      resolve: (p) => p.amountMicros,
    }),
    status: t.exposeString('status', {
      description: 'The PaymentIntent’s status at Stripe (`requires_action`, `requires_payment_method`, …).',
    }),
    clientSecret: t.exposeString('clientSecret', {
      description: 'The PaymentIntent’s client secret, for Stripe.js in the customer’s browser only.',
    }),
    nextActionType: t.exposeString('nextActionType', {
      nullable: true,
      description: 'Stripe’s `next_action.type`; null when the payment is to be confirmed with the card first.',
    }),
  }),
});

const PaymentStateRef = builder.objectRef<PaymentStateShape>('PaymentState').implement({
  description: 'How the account pays: the server’s payments and the Stripe subscription’s own status.',
  fields: (t) => ({
    mode: t.field({ type: PaymentsModeEnum, description: 'How this server takes payments.', resolve: (p) => p.mode }),
    subscriptionStatus: t.string({
      nullable: true,
      description:
        'The Stripe subscription’s status (`active`, `trialing`, ' +
        '`past_due`, `canceled`, `unpaid`, …); null without one.',
      resolve: (p) => p.stripeSubscriptionStatus,
    }),
    warning: t.string({
      nullable: true,
      description:
        'Something to act on, for people: a failed renewal (`past_due`) ' +
        'keeps the account ACTIVE until Stripe gives up; null when all is well.',
      resolve: (p) =>
        p.stripeSubscriptionStatus === 'past_due'
          ? 'The last renewal payment failed. The account stays active while Stripe retries; ' +
            'update the card in the billing portal before it gives up and the subscription is cancelled.'
          : null,
    }),
    awaitingAction: t.field({
      type: PaymentAwaitingActionRef,
      nullable: true,
      description:
        'The latest credit purchase of the last day still waiting for 3-D Secure (after ' +
        '`buyCredits` answered PAYMENT_REQUIRES_ACTION); null when none. Owners only.',
      resolve: (p, _, ctx) => {
        if (ctx.core.payments.mode !== 'stripe') return null;
        requireRole(ctx.principal, 'billing');
        return ctx.core.payments.awaitingAction(p.accountId);
      },
    }),
  }),
});

builder.objectField(AccountRef, 'payments', (t) =>
  t.field({
    type: PaymentStateRef,
    description: 'How the account pays (Stripe, demo or none) and its subscription’s payment status.',
    resolve: (account, _, ctx) => ({
      accountId: account.id,
      mode: ctx.core.payments.mode.toUpperCase() as keyof typeof MODE_TEXT,
      stripeSubscriptionStatus: account.stripeSubscriptionStatus,
    }),
  }),
);

builder.objectField(LedgerEntryRef, 'paymentReference', (t) =>
  t.string({
    nullable: true,
    description:
      'What paid or took back the money at Stripe: the PaymentIntent (`pi_…`) of a card purchase and of its ' +
      'refund or dispute, the invoice (`in_…`) of a plan grant; null otherwise (demo purchases included).',
    resolve: (e) => e.paymentRef,
  }),
);

type HostedPagePayload = { url?: string; message?: string; userErrors: UserError[] };

const HostedPagePayloadRef = builder.objectRef<HostedPagePayload>('HostedPagePayload').implement({
  description: 'A Stripe page to send the customer to, or `userErrors`.',
  fields: (t) => ({
    url: t.string({
      nullable: true,
      description: 'The page (single use, expires within a day); null when refused.',
      resolve: (p) => p.url ?? null,
    }),
    message: t.string({
      nullable: true,
      description:
        'What happens next, in words: pay on the page, or (choosePlan in demo mode, no page) the change made.',
      resolve: (p) => p.message ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

/** Where Stripe's pages send the customer back: the console's billing page. */
const returnUrl = (publicUrl: string) => `${publicUrl}/billing`;

builder.mutationField('choosePlan', (t) =>
  t.field({
    type: HostedPagePayloadRef,
    description:
      'Chooses or changes the plan: a Stripe Checkout page (subscription mode) for it. ' +
      'The plan and status change when Stripe reports the subscription (its events), not before. Owners only. ' +
      'In demo mode (PAYMENTS=demo) no page: the plan changes at once to ACTIVE, without payment, as `message` says. ' +
      'Refused with PAYMENTS_NOT_CONFIGURED without payments; ' +
      `VALIDATION_FAILED for a plan without a Stripe price. Plans: ${PLANS.join(', ')}.`,
    args: { plan: t.arg({ type: PlanEnum, required: true, description: 'The plan wanted.' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        requireRole(ctx.principal, 'billing');
        return choosePlan(ctx.core, ctx.principal.accountId, args.plan, returnUrl(ctx.core.config.publicUrl));
      }, ['plan']),
  }),
);

builder.mutationField('openBillingPortal', (t) =>
  t.field({
    type: HostedPagePayloadRef,
    description:
      'A Stripe customer portal page: the card on file (needed to buy credits), invoices, ' +
      'and cancelling the subscription. Owners only. Refused with PAYMENTS_NOT_CONFIGURED without Stripe.',
    resolve: (_, __, ctx) =>
      mutationPayload(async () => {
        requireRole(ctx.principal, 'billing');
        return stripeOnly(ctx.core.payments, 'The billing portal').portal(
          ctx.principal.accountId,
          returnUrl(ctx.core.config.publicUrl),
        );
      }),
  }),
);
