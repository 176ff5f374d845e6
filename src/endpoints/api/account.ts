import { idempotentWrite } from '../../accounts/idempotency.ts';
import { formatDollars, microsToNumber } from '../../billing/money.ts';
import {
  describePurchase,
  getBalances,
  getHeldMicros,
  PURCHASE_RULES_TEXT,
  type Balances,
  type Purchase,
} from '../../billing/wallet.ts';
import { prepareCreditPurchase } from '../../billing/payments/index.ts';
import { ValidationError } from '../../shared/errors.ts';
import { leadScraperStatus } from '../apollo-status.ts';
import { defineEndpoint, type EndpointContext } from '../define.ts';
import { apolloStatus, buyCreditsRequest, buyCreditsResponse, walletResponse } from '../schemas.ts';

/** The spec's wallet object: decimal-dollar strings. */
export function walletView(b: Balances) {
  return {
    balance_dollars: formatDollars(b.planMicros),
    purchased_credits_dollars: formatDollars(b.purchasedMicros),
    total_balance_dollars: formatDollars(b.planMicros + b.purchasedMicros),
  };
}

/** The spec's answer to a credit purchase. */
export function purchaseView(p: Purchase) {
  return {
    success: true as const,
    amount: p.amountUsd,
    original_amount: p.originalUsd,
    was_adjusted: p.wasAdjusted,
    message: describePurchase(p),
    bonus: microsToNumber(p.bonusMicros),
    wallet: walletView(p.balances),
    payment: { mode: p.payment.mode, payment_intent: p.payment.reference },
  };
}

export const wallet = defineEndpoint({
  name: 'getWallet',
  title: 'Wallet balances',
  tag: 'Account',
  description:
    'Plan credits and purchased credits, in decimal dollars; purchased credits are spent first. ' +
    'held_dollars is what running and waiting runs hold now, already taken from the balances; ' +
    'the ledger (GET /api/v1/wallet/ledger) lists each hold, release and charge with its run id.',
  rest: { path: '/api/v1/wallet', methods: ['get'], ok: 'The wallet.' },
  graphql: { field: 'wallet' },
  mcp: {
    tool: 'get_wallet',
    toolset: 'account',
    title: 'Wallet',
    description: [
      'Balances in USD (decimal strings): plan credits (balance_dollars), ' +
        'purchased credits (purchased_credits_dollars, spent first, never expire) and their total. ' +
        'Runs hold their estimated cost at start and are billed on actual results; ' +
        'held_dollars is what running runs hold now, already taken from the balances.',
    ],
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  response: walletResponse,
  errors: {},
  handler: async ({ core, principal }) => {
    const [balances, heldMicros] = await Promise.all([
      getBalances(core.db, principal.accountId),
      getHeldMicros(core.db, principal.accountId),
    ]);
    return { ...balances, heldMicros, paymentsMode: core.payments.mode };
  },
  respond: (balances) => ({
    wallet: { ...walletView(balances), held_dollars: formatDollars(balances.heldMicros) },
    payments: { mode: balances.paymentsMode },
  }),
});

export const buyCredits = defineEndpoint({
  name: 'buyCredits',
  permission: 'billing',
  title: 'Buy credits',
  tag: 'Account',
  description: `Pay-as-you-go credits: ${PURCHASE_RULES_TEXT}`,
  rest: {
    path: '/api/v1/buy-credits',
    methods: ['post'],
    idempotent: true,
    input: (request) => request.body,
    example: { amount: 100 },
    ok: 'The purchase.',
  },
  graphql: { field: 'buyCredits' },
  request: buyCreditsRequest,
  response: buyCreditsResponse,
  errors: {
    402: ['payment_failed', 'payment_requires_action', 'payment_method_required'],
    403: ['subscription_inactive'],
    503: ['payments_not_configured', 'payment_provider_unavailable'],
  },
  handler: async (ctx, body: unknown): Promise<Purchase> => {
    const call = { principal: ctx.principal, scope: 'buyCredits' };
    return (await idempotentWrite(ctx.core, call, () => preparePurchase(ctx, body))).body;
  },
  prepare: (ctx, body: unknown) => preparePurchase(ctx, body),
  respond: purchaseView,
});

/**
 * A purchase's request checked (400, then 503 without payments,
 * 400 for the amount, 403) and its write, which pays for it.
 */
function preparePurchase({ core, principal, idempotencyKey }: EndpointContext, body: unknown) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError([
      { path: '', message: 'the request body must be a JSON object such as {"amount": 100}' },
    ]);
  }
  return prepareCreditPurchase(core.payments, principal, (body as { amount?: unknown }).amount, idempotencyKey);
}

export const leadScraperMode = defineEndpoint({
  name: 'getLeadScraperStatus',
  title: 'Lead scraper mode',
  tag: 'Account',
  rest: { path: '/api/v1/apollo-status', methods: ['get'], ok: 'url-based or legacy.' },
  response: apolloStatus,
  errors: {},
  handler: async ({ core }) => leadScraperStatus(core.config, core.clock()),
});
