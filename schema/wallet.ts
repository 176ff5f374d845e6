import { z } from 'zod';
import { LEDGER_KINDS, type LedgerEntry } from '../db/schema/accounts.ts';
import { formatDollars } from '../src/billing/money.ts';
import { listLedger, walletView, type PurchaseResult } from '../src/billing/wallet.ts';
import { buyCredits, wallet } from '../src/endpoints/api/account.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { AccountRef } from './account.ts';
import { builder } from './builder.ts';

/** The wallet as a purchase reports it too: decimal-dollar strings. */
const WalletRef = builder.objectRef<PurchaseResult['wallet']>('Wallet').implement({
  description: 'Balances as decimal-dollar strings. Purchased credits are spent first and never expire.',
  fields: (t) => ({
    balanceDollars: t.exposeString('balance_dollars', { description: 'Plan credits.' }),
    purchasedCreditsDollars: t.exposeString('purchased_credits_dollars'),
    totalBalanceDollars: t.exposeString('total_balance_dollars'),
  }),
});

const LedgerKindEnum = builder.enumType('LedgerKind', { values: LEDGER_KINDS });

const LedgerEntryRef = builder.objectRef<LedgerEntry>('LedgerEntry').implement({
  description: 'One money movement. A run holds its estimate at start; at the end the hold is released and the actual cost charged.',
  fields: (t) => ({
    id: t.id({ resolve: (e) => e.id.toString() }),
    kind: t.field({ type: LedgerKindEnum, resolve: (e) => e.kind }),
    amountDollars: t.string({ description: 'Change of the total balance.', resolve: (e) => formatDollars(e.planMicros + e.purchasedMicros) }),
    planDollars: t.string({ resolve: (e) => formatDollars(e.planMicros) }),
    purchasedDollars: t.string({ resolve: (e) => formatDollars(e.purchasedMicros) }),
    runId: t.exposeString('runId', { nullable: true }),
    note: t.exposeString('note', { nullable: true }),
    createdAt: t.field({ type: 'DateTime', resolve: (e) => e.createdAt }),
  }),
});

builder.objectField(AccountRef, wallet.graphql!.field, (t) =>
  t.field({
    type: WalletRef,
    // The viewer's account: the caller's own wallet.
    resolve: async (_account, _, ctx) => (await callEndpoint(ctx.core, ctx.principal, wallet, undefined, { shape: walletView })).body,
  }),
);

builder.objectField(AccountRef, 'ledger', (t) =>
  t.connection({
    type: LedgerEntryRef,
    description: 'Money movements, newest first.',
    complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 20, 100) }),
    validate: z
      .object({ first: z.number().int().min(1).max(100).nullish(), after: z.string().regex(/^\d+$/, 'not a cursor returned by this API').nullish() })
      .loose(),
    resolve: async (account, args, ctx) => {
      const { entries, hasNextPage } = await listLedger(ctx.core.db, account.id, {
        first: args.first ?? 20,
        after: args.after ? BigInt(args.after) : undefined,
      });
      const edges = entries.map((e) => ({ cursor: e.id.toString(), node: e }));
      return { edges, pageInfo: { hasNextPage, hasPreviousPage: false, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null } };
    },
  }),
);

const BuyCreditsPayloadRef = builder.objectRef<PurchaseResult>('BuyCreditsPayload').implement({
  fields: (t) => ({
    success: t.exposeBoolean('success'),
    amount: t.exposeFloat('amount', { description: 'USD charged (after any adjustment), without the bonus.' }),
    originalAmount: t.exposeFloat('original_amount'),
    wasAdjusted: t.exposeBoolean('was_adjusted'),
    message: t.exposeString('message'),
    bonus: t.exposeFloat('bonus', { description: 'USD of bonus credits added by the plan.' }),
    wallet: t.field({ type: WalletRef, resolve: (p) => p.wallet }),
  }),
});

builder.mutationField(buyCredits.graphql!.field, (t) =>
  t.field({
    type: BuyCreditsPayloadRef,
    description: 'Buys credits: 10 to 10,000 USD; 49, 50, 149 and 649 are adjusted down; 0/10/30 % bonus on starter/growth/scale; ACTIVE subscriptions only.',
    args: { amount: t.arg.float({ required: true }), idempotencyKey: t.arg.string() },
    resolve: async (_, args, ctx) => {
      const request = { amount: args.amount };
      const { body } = await callEndpoint(ctx.core, ctx.principal, buyCredits, request, {
        idempotency: { key: args.idempotencyKey, scope: 'graphql:buyCredits', request },
        shape: (purchase) => purchase,
      });
      return body;
    },
  }),
);
