import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import { purgeIdempotencyKeys } from '../accounts/idempotency.ts';
import { purgeToolCache } from './store.ts';

const BATCH = 200;

/**
 * Deletes the result rows of runs past `expiresAt` (48 hours after they ended), a batch of runs per
 * transaction; the runs themselves stay, marked purged. Downloads answer 410 from `expiresAt` on.
 */
export async function purgeExpiredResults(db: Database, now: Date): Promise<{ runs: number; rows: number }> {
  let runs = 0;
  let rows = 0;
  for (;;) {
    const batch = await db.transaction(async (tx) => {
      const expired = (await tx.execute(sql`
        select id from run where purged_at is null and expires_at <= ${now.toISOString()}::timestamptz
        order by expires_at limit ${BATCH} for update skip locked`)) as unknown as { id: string }[];
      if (expired.length === 0) return { runs: 0, rows: 0 };
      const ids = expired.map((r) => r.id);
      const deleted = (await tx.execute(
        sql`with d as (delete from run_item where run_id in ${ids} returning 1) select count(*)::int as n from d`,
      )) as unknown as { n: number }[];
      await tx.execute(sql`delete from identifier_hash where run_id in ${ids}`);
      await tx.execute(sql`update run set purged_at = ${now.toISOString()}::timestamptz where id in ${ids}`);
      return { runs: ids.length, rows: oneRow(deleted, 'count of deleted rows').n };
    });
    runs += batch.runs;
    rows += batch.rows;
    if (batch.runs < BATCH) break;
  }
  return { runs, rows };
}

/**
 * The hourly housekeeping: expired results, idempotency keys past 24 hours, old rate-limit counters, cached tool
 * values of past data periods.
 */
export async function housekeeping(db: Database, now: Date) {
  const results = await purgeExpiredResults(db, now);
  const keys = await purgeIdempotencyKeys(db);
  await db.execute(sql`delete from rate_limit where expire < ${now.getTime() - 3_600_000}`);
  const cachedValues = await purgeToolCache(db, now);
  return { ...results, idempotencyKeys: keys, cachedValues };
}
