import { and, desc, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { ledgerTable, walletTable, type LedgerEntry, type Plan } from '../../db/schema/accounts.ts';
import { AppError, ValidationError } from '../shared/errors.ts';
import { formatDollars, usdToMicros } from './money.ts';
import type { Subscriber } from './plans.ts';

/**
 * Glossary: plan credits come with the subscription (`plan_grant`); purchased credits are bought
 * (`purchase`) and never expire. Spending takes purchased credits first. A run *holds* its estimated
 * cost at start (balances go down), and at the end the hold is *released* and the actual cost
 * *charged*, so the ledger always sums to the balances. The hold is taken by the statement that
 * places the run (runs/queue.ts `holdAndPlace`), the same that decides whether it runs now.
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

/**
 * Ends a run's hold: releases all of it and charges `charged` (at most the hold), purchased credits
 * first. Both entries and the balance change happen in the caller's transaction.
 */
export async function settleHold(tx: Executor, accountId: string, runId: string, hold: Balances, charged: bigint): Promise<void> {
  const total = hold.planMicros + hold.purchasedMicros;
  const cost = charged > total ? total : charged;
  const fromPurchased = cost < hold.purchasedMicros ? cost : hold.purchasedMicros;
  const fromPlan = cost - fromPurchased;
  if (total > 0n) {
    await tx.insert(ledgerTable).values({ accountId, kind: 'release', runId, planMicros: hold.planMicros, purchasedMicros: hold.purchasedMicros, note: 'hold released' });
  }
  if (cost > 0n) {
    await tx.insert(ledgerTable).values({ accountId, kind: 'charge', runId, planMicros: -fromPlan, purchasedMicros: -fromPurchased, note: 'results delivered' });
  }
  await tx
    .update(walletTable)
    .set({
      planMicros: sql`${walletTable.planMicros} + ${hold.planMicros - fromPlan}`,
      purchasedMicros: sql`${walletTable.purchasedMicros} + ${hold.purchasedMicros - fromPurchased}`,
      updatedAt: new Date(),
    })
    .where(eq(walletTable.accountId, accountId));
}

/** Credit purchases: the subscription prices cannot be bought as credits. */
const ADJUSTED_AMOUNTS: Record<string, number> = { '49': 48, '50': 48, '149': 148, '649': 648 };
export const PURCHASE_BONUS_PERCENT: Record<Plan, number> = { starter: 0, growth: 10, scale: 30 };
export const MIN_PURCHASE_USD = 10;
export const MAX_PURCHASE_USD = 10_000;

const usd = (n: number) => n.toLocaleString('en-US');
const list = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

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
  balances: Balances;
}

/** What a purchase did, in words: the adjustment, the bonus, and that purchased credits never expire. */
export function describePurchase(p: Purchase): string {
  const paid = usdToMicros(p.amountUsd.toFixed(2));
  return [
    p.wasAdjusted
      ? `${formatDollars(usdToMicros(p.originalUsd.toFixed(2)))} USD was adjusted to ${formatDollars(paid)} USD to avoid a conflict with subscription prices.`
      : `Purchased ${formatDollars(paid)} USD of credits.`,
    p.bonusMicros > 0n ? `Your ${p.plan} plan adds a ${p.bonusPercent}% bonus: ${formatDollars(p.bonusMicros)} USD.` : '',
    'Purchased credits never expire.',
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
  if (raw < MIN_PURCHASE_USD || raw > MAX_PURCHASE_USD) throw fail(`amount must be between ${MIN_PURCHASE_USD} and ${MAX_PURCHASE_USD} USD`);
  return raw;
}

/**
 * A credit purchase: ACTIVE subscriptions only; 49, 50, 149 and 649 are adjusted down (they clash
 * with subscription prices); the plan's bonus is added to purchased credits. No payment processor
 * yet: the purchase is recorded in the ledger. Checks the purchase without touching the database (400
 * for the amount, 403 for the subscription) and returns its write, for the caller's transaction.
 */
export function prepareCreditPurchase(principal: Subscriber, rawAmount: unknown): (tx: Executor) => Promise<Purchase> {
  const original = parsePurchaseAmount(rawAmount);
  if (principal.subscriptionStatus !== 'ACTIVE') {
    throw new AppError(403, 'subscription_inactive', `Buying credits needs an active subscription; this account's subscription is ${principal.subscriptionStatus}.`);
  }
  return (tx) => recordPurchase(tx, principal, original);
}

/** Writes a checked purchase of `original` USD: the balance and the ledger entry. */
async function recordPurchase(tx: Executor, principal: Subscriber, original: number): Promise<Purchase> {
  const amount = ADJUSTED_AMOUNTS[String(original)] ?? original;
  const wasAdjusted = amount !== original;
  const bonusPercent = PURCHASE_BONUS_PERCENT[principal.plan];
  const paid = usdToMicros(amount.toFixed(2));
  const bonus = (paid * BigInt(bonusPercent)) / 100n;
  await tx
    .insert(walletTable)
    .values({ accountId: principal.accountId, purchasedMicros: paid + bonus })
    .onConflictDoUpdate({
      target: walletTable.accountId,
      set: { purchasedMicros: sql`${walletTable.purchasedMicros} + ${paid + bonus}`, updatedAt: new Date() },
    });
  await tx.insert(ledgerTable).values({
    accountId: principal.accountId,
    kind: 'purchase',
    purchasedMicros: paid + bonus,
    note: `bought ${formatDollars(paid)} USD${bonus > 0n ? ` + ${bonusPercent}% ${principal.plan} bonus ${formatDollars(bonus)} USD` : ''}`,
  });
  return {
    originalUsd: original,
    amountUsd: amount,
    wasAdjusted,
    plan: principal.plan,
    bonusPercent,
    bonusMicros: bonus,
    balances: await getBalances(tx, principal.accountId),
  };
}

/** The account's ledger, newest first, by keyset on id. */
export async function listLedger(db: Executor, accountId: string, options: { first: number; after?: bigint }): Promise<{ entries: LedgerEntry[]; hasNextPage: boolean }> {
  const rows = await db
    .select()
    .from(ledgerTable)
    .where(and(eq(ledgerTable.accountId, accountId), options.after === undefined ? undefined : lt(ledgerTable.id, options.after)))
    .orderBy(desc(ledgerTable.id))
    .limit(options.first + 1);
  return { entries: rows.slice(0, options.first), hasNextPage: rows.length > options.first };
}

/** How many ledger entries the account has (a connection's `totalCount`). */
export async function countLedger(db: Executor, accountId: string): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(ledgerTable).where(eq(ledgerTable.accountId, accountId));
  return row!.n;
}

/** The account's ledger entries among `ids`, in the order of `ids` (null where another account's or none). */
export async function loadLedgerEntries(db: Executor, accountId: string, ids: readonly bigint[]): Promise<(LedgerEntry | null)[]> {
  const rows = await db
    .select()
    .from(ledgerTable)
    .where(and(eq(ledgerTable.accountId, accountId), inArray(ledgerTable.id, [...ids])));
  const byId = new Map(rows.map((e) => [e.id, e]));
  return ids.map((id) => byId.get(id) ?? null);
}
