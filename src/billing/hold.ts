/**
 * A run's hold: taken when the run is placed, as part of the run queue's placing statement (the SQL is
 * written here and composed there), and settled at the run's end: released, and the rows charged.
 */
import { eq, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { ledgerTable, walletTable } from '../../db/tables/accounts.ts';
import type { Balances } from './wallet.ts';

/** What a run's hold asks of the account's wallet. */
export interface HoldTerms {
  accountId: string;
  /** The run the hold is for, or the pipeline whose single hold it is (`pipelineId`). */
  runId: string | null;
  pipelineId?: string;
  /** Micro-dollars to reserve; less is taken when the wallet holds less. */
  wanted: bigint;
  /** How far the hold may go below zero (the lead scraper's "balance plus 1 USD"). */
  overdraftMicros: bigint;
}

/**
 * What the statement that takes a hold changes in the wallet row for its own purpose (the run queue:
 * the count of active runs), written into the hold's update: a statement updates a row once.
 */
export interface WalletRowShare {
  /** Columns decided from the row as locked: `select` items over its columns (`active_runs >= 10 as queued`). */
  decide: SQL;
  /** Assignments to the wallet row `w` from the decided columns `d`. */
  set: SQL;
  /** Decided columns the update returns beside the hold (`d.queued`). */
  returning: SQL;
}

/**
 * The hold as the leading common table expressions of one statement (after `with`): `current` locks
 * the account's wallet row and reckons the amount, up to `wanted` and at most the balances plus the
 * overdraft; `decided` takes it from purchased credits first; `updated` takes it off the balances, the
 * share's columns with it, returning `from_purchased`, `from_plan` and the share's returned columns;
 * `entry` writes the ledger entry. The rest of the statement reads `updated`. The amount is reckoned
 * from the row after its lock is granted, so concurrent holds never overdraw.
 */
export function holdExpressions(h: HoldTerms, share: WalletRowShare): SQL {
  return sql`current as (
      select *,
        -- A wallet below zero (a purchase refunded or disputed after its credits were spent) holds
        -- nothing, overdraft or not, so no paid run starts until it is settled.
        case when plan_micros + purchased_micros < 0 then 0
          else greatest(least(${h.wanted}::bigint, plan_micros + purchased_micros + ${h.overdraftMicros}::bigint), 0)
          end as amount
      from wallet where account_id = ${h.accountId} for update
    ), decided as (
      select amount, greatest(least(purchased_micros, amount), 0) as from_purchased, ${share.decide} from current
    ), updated as (
      update wallet w set
        purchased_micros = w.purchased_micros - d.from_purchased,
        plan_micros = w.plan_micros - (d.amount - d.from_purchased),
        ${share.set},
        updated_at = now()
      from decided d
      where w.account_id = ${h.accountId}
      returning d.from_purchased, d.amount - d.from_purchased as from_plan, ${share.returning}
    ), entry as (
      insert into ledger_entry (account_id, kind, run_id, pipeline_id, plan_micros, purchased_micros, note)
      select ${h.accountId}, 'hold', ${h.runId}, ${h.pipelineId ?? null}, -from_plan, -from_purchased,
        'reserved at start'
      from updated where from_plan + from_purchased > 0
    )`;
}

/**
 * Ends a run's hold: releases all of it and charges `charged` (at most the hold), purchased credits
 * first. The entries and the balance change happen in the caller's transaction, sent together (neither
 * needs the other's result): one round trip.
 */
export async function settleHold(
  tx: Executor,
  accountId: string,
  runId: string,
  hold: Balances,
  charged: bigint,
): Promise<void> {
  const total = hold.planMicros + hold.purchasedMicros;
  const cost = charged > total ? total : charged;
  // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
  const fromPurchased = cost < hold.purchasedMicros ? cost : hold.purchasedMicros;
  const fromPlan = cost - fromPurchased;
  const entries: (typeof ledgerTable.$inferInsert)[] = [
    ...(total > 0n
      ? [
          {
            accountId,
            kind: 'release' as const,
            runId,
            planMicros: hold.planMicros,
            purchasedMicros: hold.purchasedMicros,
            note: 'hold released',
          },
        ]
      : []),
    ...(cost > 0n
      ? [
          {
            accountId,
            kind: 'charge' as const,
            runId,
            planMicros: -fromPlan,
            purchasedMicros: -fromPurchased,
            note: 'results delivered',
          },
        ]
      : []),
  ];
  await Promise.all([
    // One statement, so the release comes before the charge in the ledger.
    entries.length > 0 ? tx.insert(ledgerTable).values(entries) : undefined,
    tx
      .update(walletTable)
      .set({
        planMicros: sql`${walletTable.planMicros} + ${hold.planMicros - fromPlan}`,
        purchasedMicros: sql`${walletTable.purchasedMicros} + ${hold.purchasedMicros - fromPurchased}`,
        updatedAt: new Date(),
      })
      .where(eq(walletTable.accountId, accountId)),
  ]);
}

/** Nothing of the wallet row changes beside the hold (a pipeline's hold counts no run). */
const NOTHING_ELSE: WalletRowShare = {
  decide: sql`true as held`,
  set: sql`active_runs = w.active_runs`,
  returning: sql`d.held`,
};

/**
 * A pipeline's single hold (src/workflows/pipelines.ts): up to `wanted`, purchased credits first, as a
 * run's; its steps' runs take their holds out of it (`passPipelineHold`).
 */
export async function holdForPipeline(
  tx: Executor,
  accountId: string,
  pipelineId: string,
  wanted: bigint,
): Promise<Balances> {
  const rows = (await tx.execute(sql`
    with ${holdExpressions({ accountId, runId: null, pipelineId, wanted, overdraftMicros: 0n }, NOTHING_ELSE)}
    select from_purchased::text as purchased, from_plan::text as plan from updated`)) as unknown as {
    purchased: string;
    plan: string;
  }[];
  const row = rows[0];
  if (!row) throw new Error(`account ${accountId} has no wallet`);
  return { purchasedMicros: BigInt(row.purchased), planMicros: BigInt(row.plan) };
}

/**
 * Gives `amount` of a pipeline's hold back to the wallet (purchased credits first, as they were taken),
 * in the caller's transaction: to the step's run that holds it next in the same transaction, or
 * released for good when the pipeline ends. Answers what is left of the hold.
 */
export async function passPipelineHold(
  tx: Executor,
  accountId: string,
  pipelineId: string,
  hold: Balances,
  amount: bigint,
  note: string,
): Promise<Balances> {
  const total = hold.planMicros + hold.purchasedMicros;
  const given = amount > total ? total : amount;
  // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
  const purchased = given < hold.purchasedMicros ? given : hold.purchasedMicros;
  const plan = given - purchased;
  if (given > 0n)
    await Promise.all([
      tx.insert(ledgerTable).values({
        accountId,
        kind: 'release',
        pipelineId,
        planMicros: plan,
        purchasedMicros: purchased,
        note,
      }),
      tx
        .update(walletTable)
        .set({
          planMicros: sql`${walletTable.planMicros} + ${plan}`,
          purchasedMicros: sql`${walletTable.purchasedMicros} + ${purchased}`,
          updatedAt: new Date(),
        })
        .where(eq(walletTable.accountId, accountId)),
    ]);
  return { planMicros: hold.planMicros - plan, purchasedMicros: hold.purchasedMicros - purchased };
}
