import { LEDGER_KINDS, type LedgerEntry } from '../db/tables/accounts.ts';
import { formatDollars as dollars, microsToNumber } from '../src/billing/money.ts';
import {
  countLedger,
  describePurchase,
  listLedger,
  PURCHASE_RULES_TEXT,
  type Balances,
  type Purchase,
} from '../src/billing/wallet.ts';
import { buyCredits, wallet } from '../src/endpoints/api/account.ts';
import { ledger as ledgerEndpoint } from '../src/endpoints/api/ledger.ts';
import { graphqlFieldOf, permissionOf } from '../src/endpoints/define.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { may, requireRole } from '../src/accounts/roles.ts';
import { AccountRef } from './account.ts';
import { builder } from './builder.ts';
import {
  AFTER_DESCRIPTION,
  bigintCursor,
  connectionOf,
  connectionType,
  FIRST_DESCRIPTION,
  pageSize,
} from './connection.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { globalId, NodeRef, registerNode } from './node.ts';
import { RunRef } from './run.ts';

/**
 * Balances as the Wallet type reads them. A purchase's answer is stored for idempotent replays as
 * plain JSON, so its shape stays what earlier versions stored (decimal-dollar strings).
 */
interface WalletShape {
  balanceDollars: string;
  purchasedCreditsDollars: string;
  totalBalanceDollars: string;
  /** What running runs hold now; the wallet query only (a purchase's answer does not read it). */
  heldDollars?: string;
}
const walletShape = (b: Balances & { heldMicros?: bigint }): WalletShape => ({
  balanceDollars: dollars(b.planMicros),
  purchasedCreditsDollars: dollars(b.purchasedMicros),
  totalBalanceDollars: dollars(b.planMicros + b.purchasedMicros),
  ...(b.heldMicros === undefined ? {} : { heldDollars: dollars(b.heldMicros) }),
});

const WalletRef = builder.objectRef<WalletShape>('Wallet').implement({
  description: 'The account’s balances. Purchased credits are spent first and never expire.',
  fields: (t) => ({
    balance: t.field({ type: 'Money', description: 'Plan credits.', resolve: (w) => w.balanceDollars }),
    purchasedCredits: t.field({
      type: 'Money',
      description: 'Purchased credits (spent first, never expire).',
      resolve: (w) => w.purchasedCreditsDollars,
    }),
    totalBalance: t.field({
      type: 'Money',
      description: 'Plan and purchased credits together.',
      resolve: (w) => w.totalBalanceDollars,
    }),
    held: t.field({
      type: 'Money',
      nullable: true,
      description:
        'What running and waiting runs hold now, already taken from the balances ' +
        '(each run gives it back at its end and is charged for its results; ' +
        '`ledger` lists both with the run); null in a credit purchase’s answer.',
      resolve: (w) => w.heldDollars ?? null,
    }),
  }),
});

const LEDGER_TEXT: Record<(typeof LEDGER_KINDS)[number], string> = {
  purchase: 'Credits bought (with the plan’s bonus).',
  plan_grant: 'The plan’s monthly credits.',
  hold: 'A run’s estimated cost, held when it started.',
  charge: 'A run’s actual cost, charged when it ended.',
  release: 'A run’s hold given back when it ended.',
  refund: 'Money given back.',
};

const LedgerKindEnum = builder.enumType('LedgerKind', {
  description: 'What moved money.',
  values: Object.fromEntries(
    LEDGER_KINDS.map((k) => [k.toUpperCase(), { value: k, description: LEDGER_TEXT[k] }]),
  ) as Record<string, { value: LedgerEntry['kind']; description: string }>,
});

const LEDGER_PREFIX = 'ledger';

export const LedgerEntryRef = builder.objectRef<LedgerEntry>('LedgerEntry').implement({
  description:
    'One money movement. A run holds its estimate at start; ' +
    'at the end the hold is released and the actual cost charged.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.id({ description: 'The entry’s global id.', resolve: (e) => globalId(LEDGER_PREFIX, e.id) }),
    kind: t.field({ type: LedgerKindEnum, description: 'What moved the money.', resolve: (e) => e.kind }),
    amount: t.field({
      type: 'Money',
      description: 'Change of the total balance (negative when spent).',
      resolve: (e) => e.planMicros + e.purchasedMicros,
    }),
    planAmount: t.field({ type: 'Money', description: 'Change of the plan credits.', resolve: (e) => e.planMicros }),
    purchasedAmount: t.field({
      type: 'Money',
      description: 'Change of the purchased credits.',
      resolve: (e) => e.purchasedMicros,
    }),
    runId: t.exposeID('runId', {
      nullable: true,
      description: 'The run it belongs to (its runId, also its global id); null for purchases and grants.',
    }),
    run: t.field({
      type: RunRef,
      nullable: true,
      description: 'The run it belongs to; null for purchases and grants, or once the run is deleted.',
      resolve: (e, _, ctx) => (e.runId ? ctx.loaders.run.load(e.runId) : null),
    }),
    note: t.exposeString('note', { nullable: true, description: 'What the movement was for, for people.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When the money moved.', resolve: (e) => e.createdAt }),
  }),
});

/** Who may read the ledger (its REST declaration's permission): also the statement's rule. */
export const LEDGER_PERMISSION = permissionOf(ledgerEndpoint);

// Ledger entries are billing: a console member or admin refetches none (null, as for another account's).
registerNode(LEDGER_PREFIX, 'LedgerEntry', {
  load: async (ids, ctx) =>
    may(ctx.principal, LEDGER_PERMISSION)
      ? ctx.loaders.ledgerEntry.loadMany(ids.map(BigInt)).then((all) => all.map((e) => (e instanceof Error ? null : e)))
      : ids.map(() => null),
});

builder.objectField(AccountRef, graphqlFieldOf(wallet), (t) =>
  t.field({
    type: WalletRef,
    description: 'The account’s balances.',
    // The viewer's account: the caller's own wallet.
    resolve: async (_account, _, ctx) =>
      (await callEndpoint(ctx.core, ctx.principal, wallet, undefined, { shape: walletShape })).body,
  }),
);

const LedgerEntryConnectionRef = connectionType<LedgerEntry>('LedgerEntry', LedgerEntryRef, {
  description: 'A page of the account’s money movements, newest first.',
  totalCount: 'How many entries the ledger holds.',
});

const MAX_ENTRIES = 100;

builder.objectField(AccountRef, 'ledger', (t) =>
  t.field({
    type: LedgerEntryConnectionRef,
    description:
      'Money movements, newest first (owners, the keys they created and the operator’s keys: ROLE_REQUIRED otherwise).',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_ENTRIES, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 20, MAX_ENTRIES) }),
    resolve: async (account, args, ctx) => {
      // The rule of the ledger's declaration (REST's GET /api/v1/wallet/ledger):
      // billing is the owners' (and their keys').
      requireRole(ctx.principal, LEDGER_PERMISSION);
      const first = pageSize(args.first, { max: MAX_ENTRIES, byDefault: 20 });
      const { entries, hasNextPage } = await listLedger(ctx.core.db, account.id, {
        first,
        after: bigintCursor(args.after),
      });
      return connectionOf(entries, {
        cursorOf: (e) => e.id.toString(),
        hasNextPage,
        totalCount: () => countLedger(ctx.core.db, account.id),
      });
    },
  }),
);

/** A purchase as stored for replays (see WalletShape): plain JSON. */
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

const CreditPurchaseRef = builder.objectRef<PurchaseShape>('CreditPurchase').implement({
  description: 'Credits bought.',
  fields: (t) => ({
    amount: t.field({
      type: 'Money',
      description: 'Charged (after any adjustment), without the bonus.',
      resolve: (p) => p.amount,
    }),
    originalAmount: t.field({ type: 'Money', description: 'The amount asked for.', resolve: (p) => p.originalAmount }),
    wasAdjusted: t.exposeBoolean('wasAdjusted', {
      description: 'The amount asked for was adjusted down (49, 50, 149 and 649 become 48, 48, 148 and 648).',
    }),
    bonus: t.field({
      type: 'Money',
      description: 'Bonus credits the plan added on top (0, 10 or 30 %).',
      resolve: (p) => p.bonus,
    }),
    message: t.exposeString('message', { description: 'The purchase in words, naming any adjustment.' }),
  }),
});

type BuyCreditsPayload = { purchase?: PurchaseShape; userErrors: UserError[] };

const BuyCreditsPayloadRef = builder.objectRef<BuyCreditsPayload>('BuyCreditsPayload').implement({
  description: 'What `buyCredits` answers: the purchase and the wallet after it, or `userErrors`.',
  fields: (t) => ({
    purchase: t.field({
      type: CreditPurchaseRef,
      nullable: true,
      description: 'The purchase; null when refused.',
      resolve: (p) => p.purchase ?? null,
    }),
    wallet: t.field({
      type: WalletRef,
      nullable: true,
      description: 'The balances after the purchase; null when refused.',
      resolve: (p) => p.purchase?.wallet ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(buyCredits), (t) =>
  t.field({
    type: BuyCreditsPayloadRef,
    description:
      `Buys credits: ${PURCHASE_RULES_TEXT} User errors VALIDATION_FAILED (the amount), SUBSCRIPTION_INACTIVE, ` +
      'and with Stripe PAYMENT_METHOD_REQUIRED (no card on file: openBillingPortal), PAYMENT_FAILED (declined, ' +
      'with the reason) and PAYMENT_REQUIRES_ACTION (3-D Secure: credited once the payment succeeds). ' +
      'Without payments on the server, the top-level error PAYMENTS_NOT_CONFIGURED.',
    args: {
      amount: t.arg({ type: 'Money', required: true, description: 'US dollars to buy, e.g. "100".' }),
      idempotencyKey: t.arg.string({
        description:
          'Replays the first answer for 24 hours; ' +
          'the same key with another amount is refused (IDEMPOTENCY_KEY_REUSED).',
      }),
    },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        // The service reads the amount as REST's JSON number; Money is exact to the micro-dollar, which a number keeps.
        const request = { amount: Number(args.amount) };
        const { body } = await callEndpoint(ctx.core, ctx.principal, buyCredits, request, {
          idempotency: { key: args.idempotencyKey, scope: 'graphql:buyCredits', request },
          shape: purchaseShape,
        });
        return { purchase: body };
      }),
  }),
);
