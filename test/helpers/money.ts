import type { Sql } from '../../db/client.ts';

/**
 * An account's wallet and the sums of its ledger as integer micro-dollars, read in one statement so
 * both come from one snapshot: two statements would let a charge or release land between them while
 * runs are in flight.
 */
export async function walletAndLedger(sql: Sql, accountId: string) {
  const [row] = await sql`
    select w.plan_micros::bigint as wallet_plan, w.purchased_micros::bigint as wallet_purchased, w.active_runs,
           l.plan::bigint as ledger_plan, l.purchased::bigint as ledger_purchased
      from wallet w,
           (select coalesce(sum(plan_micros), 0) as plan, coalesce(sum(purchased_micros), 0) as purchased
              from ledger_entry where account_id = ${accountId}) l
     where w.account_id = ${accountId}`;
  if (!row) throw new Error(`no wallet for account ${accountId}`);
  return {
    wallet: { plan: BigInt(row.wallet_plan), purchased: BigInt(row.wallet_purchased) },
    ledger: { plan: BigInt(row.ledger_plan), purchased: BigInt(row.ledger_purchased) },
    activeRuns: row.active_runs as number,
  };
}
