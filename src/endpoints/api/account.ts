import type { Principal } from '../../accounts/accounts.ts';
import { formatDollars, microsToNumber } from '../../billing/money.ts';
import { describePurchase, getBalances, PURCHASE_RULES_TEXT, prepareCreditPurchase, type Balances, type Purchase } from '../../billing/wallet.ts';
import { ValidationError } from '../../shared/errors.ts';
import { leadScraperStatus } from '../apollo-status.ts';
import { defineEndpoint } from '../define.ts';
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
  };
}

export const wallet = defineEndpoint({
  name: 'getWallet',
  title: 'Wallet balances',
  tag: 'Account',
  description: 'Plan credits and purchased credits, in decimal dollars; purchased credits are spent first.',
  rest: { path: '/api/v1/wallet', methods: ['get'], ok: 'The wallet.' },
  graphql: { field: 'wallet' },
  mcp: {
    tool: 'get_wallet',
    title: 'Wallet',
    description: [
      'Balances in USD (decimal strings): plan credits (balance_dollars), purchased credits (purchased_credits_dollars, spent first, never expire) and their total. Runs hold their estimated cost at start and are billed on actual results.',
    ],
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  response: walletResponse,
  errors: {},
  handler: ({ core, principal }) => getBalances(core.db, principal.accountId),
  respond: (balances) => ({ wallet: walletView(balances) }),
});

export const buyCredits = defineEndpoint({
  name: 'buyCredits',
  title: 'Buy credits',
  tag: 'Account',
  description: `Pay-as-you-go credits: ${PURCHASE_RULES_TEXT}`,
  rest: { path: '/api/v1/buy-credits', methods: ['post'], idempotent: true, input: (request) => request.body, example: { amount: 100 }, ok: 'The purchase.' },
  graphql: { field: 'buyCredits' },
  request: buyCreditsRequest,
  response: buyCreditsResponse,
  errors: { 403: ['subscription_inactive'] },
  handler: ({ core, principal }, body: unknown): Promise<Purchase> => core.accountWrites.run(principal.accountId, preparePurchase(principal, body)),
  prepare: ({ principal }, body: unknown) => preparePurchase(principal, body),
  respond: purchaseView,
});

/** A purchase's request checked (400, 403) and its write. */
function preparePurchase(principal: Principal, body: unknown) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError([{ path: '', message: 'the request body must be a JSON object such as {"amount": 100}' }]);
  }
  return prepareCreditPurchase(principal, (body as { amount?: unknown }).amount);
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
