import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { ledgerTable, walletTable } from '../../db/schema/accounts.ts';

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
