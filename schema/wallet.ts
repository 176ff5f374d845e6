import { z } from 'zod';
import { LEDGER_KINDS, type LedgerEntry } from '../db/schema/accounts.ts';
import { formatDollars as dollars, microsToNumber } from '../src/billing/money.ts';
import { describePurchase, listLedger, PURCHASE_RULES_TEXT, type Balances, type Purchase } from '../src/billing/wallet.ts';
import { buyCredits, wallet } from '../src/endpoints/api/account.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { AccountRef } from './account.ts';
import { builder } from './builder.ts';

/** Balances as the Wallet type answers them (a purchase's answer is stored for replays, so plain JSON). */
interface WalletShape {
  balanceDollars: string;
  purchasedCreditsDollars: string;
  totalBalanceDollars: string;
}
const walletShape = (b: Balances): WalletShape => ({
  balanceDollars: dollars(b.planMicros),
  purchasedCreditsDollars: dollars(b.purchasedMicros),
  totalBalanceDollars: dollars(b.planMicros + b.purchasedMicros),
});

const WalletRef = builder.objectRef<WalletShape>('Wallet').implement({
  description: 'Balances as decimal-dollar strings. Purchased credits are spent first and never expire.',
  fields: (t) => ({
    balanceDollars: t.exposeString('balanceDollars', { description: 'Plan credits.' }),
    purchasedCreditsDollars: t.exposeString('purchasedCreditsDollars'),
    totalBalanceDollars: t.exposeString('totalBalanceDollars'),
  }),
});

const LedgerKindEnum = builder.enumType('LedgerKind', { values: LEDGER_KINDS });

const LedgerEntryRef = builder.objectRef<LedgerEntry>('LedgerEntry').implement({
  description: 'One money movement. A run holds its estimate at start; at the end the hold is released and the actual cost charged.',
  fields: (t) => ({
    id: t.id({ resolve: (e) => e.id.toString() }),
    kind: t.field({ type: LedgerKindEnum, resolve: (e) => e.kind }),
    amountDollars: t.string({ description: 'Change of the total balance.', resolve: (e) => dollars(e.planMicros + e.purchasedMicros) }),
    planDollars: t.string({ resolve: (e) => dollars(e.planMicros) }),
    purchasedDollars: t.string({ resolve: (e) => dollars(e.purchasedMicros) }),
    runId: t.exposeString('runId', { nullable: true }),
    note: t.exposeString('note', { nullable: true }),
    createdAt: t.field({ type: 'DateTime', resolve: (e) => e.createdAt }),
  }),
});

builder.objectField(AccountRef, wallet.graphql!.field, (t) =>
  t.field({
    type: WalletRef,
    // The viewer's account: the caller's own wallet.
    resolve: async (_account, _, ctx) => (await callEndpoint(ctx.core, ctx.principal, wallet, undefined, { shape: walletShape })).body,
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

interface PurchaseShape {
  success: true;
  amount: number;
  originalAmount: number;
  wasAdjusted: boolean;
  message: string;
  bonus: number;
  wallet: WalletShape;
}
const purchaseShape = (p: Purchase): PurchaseShape => ({
  success: true,
  amount: p.amountUsd,
  originalAmount: p.originalUsd,
  wasAdjusted: p.wasAdjusted,
  message: describePurchase(p),
  bonus: microsToNumber(p.bonusMicros),
  wallet: walletShape(p.balances),
});

const BuyCreditsPayloadRef = builder.objectRef<PurchaseShape>('BuyCreditsPayload').implement({
  fields: (t) => ({
    success: t.exposeBoolean('success'),
    amount: t.exposeFloat('amount', { description: 'USD charged (after any adjustment), without the bonus.' }),
    originalAmount: t.exposeFloat('originalAmount'),
    wasAdjusted: t.exposeBoolean('wasAdjusted'),
    message: t.exposeString('message'),
    bonus: t.exposeFloat('bonus', { description: 'USD of bonus credits added by the plan.' }),
    wallet: t.field({ type: WalletRef, resolve: (p) => p.wallet }),
  }),
});

builder.mutationField(buyCredits.graphql!.field, (t) =>
  t.field({
    type: BuyCreditsPayloadRef,
    description: `Buys credits: ${PURCHASE_RULES_TEXT}`,
    args: { amount: t.arg.float({ required: true }), idempotencyKey: t.arg.string() },
    resolve: async (_, args, ctx) => {
      const request = { amount: args.amount };
      const { body } = await callEndpoint(ctx.core, ctx.principal, buyCredits, request, {
        idempotency: { key: args.idempotencyKey, scope: 'graphql:buyCredits', request },
        shape: purchaseShape,
      });
      return body;
    },
  }),
);
