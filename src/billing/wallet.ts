import { and, desc, eq, lt, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { ledgerTable, walletTable, type LedgerEntry, type Plan } from '../../db/schema/accounts.ts';
import type { Principal } from '../accounts/accounts.ts';
import { AppError, ValidationError } from '../shared/errors.ts';
import { formatDollars, microsToNumber, usdToMicros } from './money.ts';

/**
 * Glossary: plan credits come with the subscription (`plan_grant`); purchased credits are bought
 * (`purchase`) and never expire. Spending takes purchased credits first. A run *holds* its estimated
 * cost at start (balances go down), and at the end the hold is *released* and the actual cost
 * *charged*, so the ledger always sums to the balances.
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

/** The spec's wallet object: decimal-dollar strings. */
export function walletView(b: Balances) {
  return {
    balance_dollars: formatDollars(b.planMicros),
    purchased_credits_dollars: formatDollars(b.purchasedMicros),
    total_balance_dollars: formatDollars(b.planMicros + b.purchasedMicros),
  };
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

export interface HoldRequest {
  accountId: string;
  runId: string;
  /** Micro-dollars to reserve; less is taken when the wallet holds less. */
  wanted: bigint;
  /** How far the hold may go below zero (the lead scraper's "balance plus 1 USD"). */
  overdraftMicros: bigint;
  /** RUNNING runs an account may have; a start beyond waits as READY. */
  maxRunning: number;
  /** Status message of a run that waits. */
  waitingMessage: string;
  /** The run's progress notification for each outcome (channel and payloads). */
  notify: { channel: string; running: string; ready: string };
  /** A call that adds the run's worker job; made only when the run is placed RUNNING. */
  enqueue: SQL;
}

/**
 * Places a new run, in one statement: locks the account's wallet row, reserves up to `wanted`
 * (purchased credits first) with its ledger entry, decides RUNNING or READY from the active-run count
 * kept on that same row (read after the lock is granted, so concurrent starts and ends are all
 * seen), updates the run (inserted RUNNING by the caller, in the same transaction), adds its worker
 * job if it runs now (a waiting run gets one when a slot frees) and sends its notification. The wallet row is the only lock a start takes, and it is held from this statement
 * to the commit, nothing longer. The guard is in the UPDATE, so concurrent holds never overdraw.
 */
export async function holdAndPlace(tx: Executor, h: HoldRequest): Promise<Balances & { queued: boolean }> {
  const rows = (await tx.execute(sql`
    with current as (
      select plan_micros, purchased_micros, active_runs,
        greatest(least(${h.wanted}::bigint, plan_micros + purchased_micros + ${h.overdraftMicros}::bigint), 0) as amount
      from wallet where account_id = ${h.accountId} for update
    ), decided as (
      select amount, greatest(least(purchased_micros, amount), 0) as from_purchased, active_runs >= ${h.maxRunning} as queued from current
    ), updated as (
      update wallet w set
        purchased_micros = w.purchased_micros - d.from_purchased,
        plan_micros = w.plan_micros - (d.amount - d.from_purchased),
        active_runs = w.active_runs + case when d.queued then 0 else 1 end,
        updated_at = now()
      from decided d
      where w.account_id = ${h.accountId}
      returning d.from_purchased, d.amount - d.from_purchased as from_plan, d.queued
    ), entry as (
      insert into ledger_entry (account_id, kind, run_id, plan_micros, purchased_micros, note)
      select ${h.accountId}, 'hold', ${h.runId}, -from_plan, -from_purchased, 'reserved at start' from updated where from_plan + from_purchased > 0
    ), placed as (
      update run r set
        status = case when u.queued then 'READY'::run_status else r.status end,
        status_message = case when u.queued then ${h.waitingMessage} else r.status_message end,
        started_at = case when u.queued then null else r.started_at end,
        hold_purchased_micros = u.from_purchased,
        hold_plan_micros = u.from_plan
      from updated u
      where r.id = ${h.runId}
      returning r.id
    ), job as (
      select ${h.enqueue} from updated where not queued
    )
    select u.from_purchased::text as purchased, u.from_plan::text as plan, u.queued,
      pg_notify(${h.notify.channel}, case when u.queued then ${h.notify.ready} else ${h.notify.running} end) as notified,
      (select count(*)::int from placed) as placed,
      (select count(*)::int from job) as enqueued
    from updated u`)) as unknown as { purchased: string; plan: string; queued: boolean; placed: number; enqueued: number }[];
  const row = rows[0];
  if (!row || row.placed !== 1) throw new Error(`account ${h.accountId} has no wallet, or run ${h.runId} was not inserted first`);
  if (row.enqueued !== (row.queued ? 0 : 1)) throw new Error(`run ${h.runId}: its job was not added`);
  return { purchasedMicros: BigInt(row.purchased), planMicros: BigInt(row.plan), queued: row.queued };
}

/** One active run fewer (it ended), in the caller's transaction; never below zero. */
export async function releaseRunSlot(tx: Executor, accountId: string) {
  await tx.execute(sql`update wallet set active_runs = greatest(active_runs - 1, 0) where account_id = ${accountId}`);
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

export interface PurchaseResult {
  success: true;
  amount: number;
  original_amount: number;
  was_adjusted: boolean;
  message: string;
  bonus: number;
  wallet: ReturnType<typeof walletView>;
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
export function prepareCreditPurchase(principal: Principal, rawAmount: unknown): (tx: Executor) => Promise<PurchaseResult> {
  const original = parsePurchaseAmount(rawAmount);
  if (principal.subscriptionStatus !== 'ACTIVE') {
    throw new AppError(403, 'subscription_inactive', `Buying credits needs an active subscription; this account's subscription is ${principal.subscriptionStatus}.`);
  }
  return (tx) => recordPurchase(tx, principal, original);
}

/** Writes a checked purchase of `original` USD: the balance, the ledger entry, the answer. */
async function recordPurchase(tx: Executor, principal: Principal, original: number): Promise<PurchaseResult> {
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
  const parts = [
    wasAdjusted
      ? `${formatDollars(usdToMicros(original.toFixed(2)))} USD was adjusted to ${formatDollars(paid)} USD to avoid a conflict with subscription prices.`
      : `Purchased ${formatDollars(paid)} USD of credits.`,
    bonus > 0n ? `Your ${principal.plan} plan adds a ${bonusPercent}% bonus: ${formatDollars(bonus)} USD.` : '',
    'Purchased credits never expire.',
  ];
  return {
    success: true,
    amount,
    original_amount: original,
    was_adjusted: wasAdjusted,
    message: parts.filter(Boolean).join(' '),
    bonus: microsToNumber(bonus),
    wallet: walletView(await getBalances(tx, principal.accountId)),
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
