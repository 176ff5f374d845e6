import { and, desc, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import { ledgerTable, walletTable, type LedgerEntry, type Plan } from '../../db/tables/accounts.ts';
import { runTable } from '../../db/tables/runs.ts';
import { AppError, ValidationError } from '../shared/errors.ts';
import { formatDollars, usdToMicros } from './money.ts';
import type { Subscriber } from './plans.ts';

/**
 * Glossary: plan credits come with the subscription (`plan_grant`); purchased credits are bought
 * (`purchase`) and never expire. Spending takes purchased credits first. A run *holds* its estimated
 * cost at start (balances go down), and at the end the hold is *released* and the actual cost
 * *charged*, so the ledger always sums to the balances (billing/hold.ts).
 */
export interface Balances {
  planMicros: bigint;
  purchasedMicros: bigint;
}

export async function getBalances(db: Executor, accountId: string): Promise<Balances> {
  const [wallet] = await db
    .select({ planMicros: walletTable.planMicros, purchasedMicros: walletTable.purchasedMicros })
    .from(walletTable)
    .where(eq(walletTable.accountId, accountId));
  return wallet ?? { planMicros: 0n, purchasedMicros: 0n };
}

/**
 * What the account's runs hold now: the holds of runs not yet settled (running or waiting). The
 * balances are net of them, so a balance that dips while runs go is explained by this amount coming
 * back, less what the runs are charged, when they end.
 */
export async function getHeldMicros(db: Executor, accountId: string): Promise<bigint> {
  const [row] = await db
    .select({ held: sql<string>`coalesce(sum(${runTable.holdPlanMicros} + ${runTable.holdPurchasedMicros}), 0)::text` })
    .from(runTable)
    .where(and(eq(runTable.accountId, accountId), isNull(runTable.settledAt)));
  return BigInt(row?.held ?? '0');
}

/** Adds plan credits: a ledger entry and the cached balance, in the caller's transaction. */
export async function grantPlanCredits(tx: Executor, accountId: string, micros: bigint, note: string) {
  await tx
    .insert(walletTable)
    .values({ accountId, planMicros: micros })
    .onConflictDoUpdate({
      target: walletTable.accountId,
      set: { planMicros: sql`${walletTable.planMicros} + ${micros}`, updatedAt: new Date() },
    });
  if (micros !== 0n) await tx.insert(ledgerTable).values({ accountId, kind: 'plan_grant', planMicros: micros, note });
}

/** Credit purchases: the subscription prices cannot be bought as credits. */
const ADJUSTED_AMOUNTS: Record<string, number> = { '49': 48, '50': 48, '149': 148, '649': 648 };
export const PURCHASE_BONUS_PERCENT: Record<Plan, number> = { starter: 0, growth: 10, scale: 30 };
export const MIN_PURCHASE_USD = 10;
export const MAX_PURCHASE_USD = 10_000;

const usd = (n: number) => n.toLocaleString('en-US');
const list = (items: string[]) =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;

/** The purchase rules in words, for the faces' descriptions: generated from the rules themselves. */
export const PURCHASE_RULES_TEXT = [
  `${usd(MIN_PURCHASE_USD)} to ${usd(MAX_PURCHASE_USD)} USD; purchased credits never expire.`,
  'Needs an ACTIVE subscription (not TRIAL or CANCELLED).',
  `${list(Object.keys(ADJUSTED_AMOUNTS))} are adjusted down (they clash with subscription prices);`,
  `the plan adds a bonus of ${Object.entries(PURCHASE_BONUS_PERCENT)
    .map(([plan, percent]) => `${percent} % (${plan})`)
    .join(', ')}.`,
].join(' ');

/** A recorded credit purchase and the balances after it. */
export interface Purchase {
  /** USD asked for. */
  originalUsd: number;
  /** USD charged: the amount asked for after the adjustments. */
  amountUsd: number;
  wasAdjusted: boolean;
  plan: Plan;
  bonusPercent: number;
  bonusMicros: bigint;
  payment: PurchasePayment;
  balances: Balances;
}

/** What a purchase did, in words: the adjustment, the bonus, and that purchased credits never expire. */
export function describePurchase(p: Purchase): string {
  const paid = usdToMicros(p.amountUsd.toFixed(2));
  return [
    p.wasAdjusted
      ? `${formatDollars(usdToMicros(p.originalUsd.toFixed(2)))} USD was adjusted ` +
        `to ${formatDollars(paid)} USD to avoid a conflict with subscription prices.`
      : `Purchased ${formatDollars(paid)} USD of credits.`,
    p.bonusMicros > 0n
      ? `Your ${p.plan} plan adds a ${p.bonusPercent}% bonus: ${formatDollars(p.bonusMicros)} USD.`
      : '',
    'Purchased credits never expire.',
    p.payment.mode === 'demo' ? 'Demo mode: recorded without payment.' : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** Validates the `amount` of a purchase: a number of dollars with at most 2 decimals, 10–10,000. */
export function parsePurchaseAmount(raw: unknown): number {
  const fail = (message: string) => new ValidationError([{ path: 'amount', message }]);
  if (raw === undefined || raw === null) throw fail('amount is required (USD, 10 to 10000)');
  if (typeof raw !== 'number' || !Number.isFinite(raw)) throw fail('amount must be a number of US dollars');
  if (Math.round(raw * 100) !== raw * 100) throw fail('amount must have at most 2 decimals');
  if (raw < MIN_PURCHASE_USD || raw > MAX_PURCHASE_USD)
    throw fail(`amount must be between ${MIN_PURCHASE_USD} and ${MAX_PURCHASE_USD} USD`);
  return raw;
}

/** A purchase checked against the spec's rules: what is charged and the bonus it brings. */
export interface PurchaseTerms {
  accountId: string;
  plan: Plan;
  /** USD asked for. */
  originalUsd: number;
  /** USD charged: the amount asked for after the adjustments. */
  amountUsd: number;
  bonusPercent: number;
  paidMicros: bigint;
  bonusMicros: bigint;
}

/**
 * A credit purchase's rules: 10–10,000 USD (400), ACTIVE subscriptions only (403); 49, 50, 149 and 649
 * are adjusted down (they clash with subscription prices); the plan's bonus is added to purchased
 * credits. Checks without touching the database; how it is paid is the payments' (payments/).
 */
export function purchaseTerms(principal: Subscriber, rawAmount: unknown): PurchaseTerms {
  const original = parsePurchaseAmount(rawAmount);
  if (principal.subscriptionStatus !== 'ACTIVE') {
    throw new AppError(
      403,
      'subscription_inactive',
      `Buying credits needs an active subscription; this account's subscription is ${principal.subscriptionStatus}.`,
    );
  }
  const amount = ADJUSTED_AMOUNTS[String(original)] ?? original;
  const bonusPercent = PURCHASE_BONUS_PERCENT[principal.plan];
  const paid = usdToMicros(amount.toFixed(2));
  return {
    accountId: principal.accountId,
    plan: principal.plan,
    originalUsd: original,
    amountUsd: amount,
    bonusPercent,
    paidMicros: paid,
    bonusMicros: (paid * BigInt(bonusPercent)) / 100n,
  };
}

/** How a purchase was paid: by card at Stripe (the PaymentIntent), or not at all (PAYMENTS=demo). */
export type PurchasePayment = { mode: 'stripe'; reference: string } | { mode: 'demo'; reference: null };

/**
 * Credits a paid purchase and its bonus: the ledger entry (referencing the payment) and the balance,
 * in the caller's transaction. A payment already credited is not credited again (the ledger's unique
 * payment reference): false then.
 */
export async function creditPurchase(tx: Executor, terms: PurchaseTerms, payment: PurchasePayment): Promise<boolean> {
  const credit = terms.paidMicros + terms.bonusMicros;
  const bonus =
    terms.bonusMicros > 0n
      ? ` + ${terms.bonusPercent}% ${terms.plan} bonus ${formatDollars(terms.bonusMicros)} USD`
      : '';
  const bought = `bought ${formatDollars(terms.paidMicros)} USD${bonus}`;
  const inserted = await tx
    .insert(ledgerTable)
    .values({
      accountId: terms.accountId,
      kind: 'purchase',
      purchasedMicros: credit,
      paymentRef: payment.reference,
      note:
        payment.mode === 'demo'
          ? `demo purchase, no payment taken: ${bought}`
          : `${bought}, paid by card (${payment.reference})`,
    })
    .onConflictDoNothing()
    .returning({ id: ledgerTable.id });
  if (inserted.length === 0) return false;
  await tx
    .insert(walletTable)
    .values({ accountId: terms.accountId, purchasedMicros: credit })
    .onConflictDoUpdate({
      target: walletTable.accountId,
      set: { purchasedMicros: sql`${walletTable.purchasedMicros} + ${credit}`, updatedAt: new Date() },
    });
  return true;
}

/** The purchase's answer: its terms, how it was paid and the balances now. */
export async function purchaseOf(db: Executor, terms: PurchaseTerms, payment: PurchasePayment): Promise<Purchase> {
  return {
    originalUsd: terms.originalUsd,
    amountUsd: terms.amountUsd,
    wasAdjusted: terms.amountUsd !== terms.originalUsd,
    plan: terms.plan,
    bonusPercent: terms.bonusPercent,
    bonusMicros: terms.bonusMicros,
    payment,
    balances: await getBalances(db, terms.accountId),
  };
}

/** The account's ledger, newest first, by keyset on id. */
export async function listLedger(
  db: Executor,
  accountId: string,
  options: { first: number; after?: bigint },
): Promise<{ entries: LedgerEntry[]; hasNextPage: boolean }> {
  const rows = await db
    .select()
    .from(ledgerTable)
    .where(
      and(
        eq(ledgerTable.accountId, accountId),
        options.after === undefined ? undefined : lt(ledgerTable.id, options.after),
      ),
    )
    .orderBy(desc(ledgerTable.id))
    .limit(options.first + 1);
  return { entries: rows.slice(0, options.first), hasNextPage: rows.length > options.first };
}

/** How many ledger entries the account has (a connection's `totalCount`). */
export async function countLedger(db: Executor, accountId: string): Promise<number> {
  const rows = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(ledgerTable)
    .where(eq(ledgerTable.accountId, accountId));
  return oneRow(rows, 'count of ledger entries').n;
}

/** The account's ledger entries among `ids`, in the order of `ids` (null where another account's or none). */
export async function loadLedgerEntries(
  db: Executor,
  accountId: string,
  ids: readonly bigint[],
): Promise<(LedgerEntry | null)[]> {
  const rows = await db
    .select()
    .from(ledgerTable)
    .where(and(eq(ledgerTable.accountId, accountId), inArray(ledgerTable.id, [...ids])));
  const byId = new Map(rows.map((e) => [e.id, e]));
  return ids.map((id) => byId.get(id) ?? null);
}
