import { and, eq, inArray, lt } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { datasetItemTable, toolCacheTable } from '../../db/tables/runs.ts';
import type { RunStore } from '../tools/types.ts';

const CLAIM_BATCH = 1_000;

/** The account state runs keep beyond themselves (named datasets, shared caches), in Postgres. */
export function runStore(db: Database, accountId: string, runId: string): RunStore {
  return {
    async claimDatasetKeys(dataset, keys) {
      const owned = new Set<string>();
      const unique = [...new Set(keys)];
      for (let i = 0; i < unique.length; i += CLAIM_BATCH) {
        const slice = unique.slice(i, i + CLAIM_BATCH);
        await db
          .insert(datasetItemTable)
          .values(slice.map((key) => ({ accountId, dataset, key, runId })))
          .onConflictDoNothing();
        // Owned by this run: claimed just now, or by an earlier attempt of the same run.
        const rows = await db
          .select({ key: datasetItemTable.key })
          .from(datasetItemTable)
          .where(
            and(
              eq(datasetItemTable.accountId, accountId),
              eq(datasetItemTable.dataset, dataset),
              inArray(datasetItemTable.key, slice),
              eq(datasetItemTable.runId, runId),
            ),
          );
        for (const row of rows) owned.add(row.key);
      }
      return owned;
    },

    async cached<T>(tool: string, key: string, period: string, compute: () => Promise<T>) {
      const where = and(eq(toolCacheTable.tool, tool), eq(toolCacheTable.key, key), eq(toolCacheTable.period, period));
      const [hit] = await db.select({ value: toolCacheTable.value }).from(toolCacheTable).where(where);
      if (hit) return { value: hit.value as T, hit: true };
      const value = await compute();
      const inserted = await db
        .insert(toolCacheTable)
        .values({ tool, key, period, value })
        .onConflictDoNothing()
        .returning({ tool: toolCacheTable.tool });
      if (inserted.length > 0) return { value, hit: false };
      // Another run stored the period's value first: every reader sees the same one.
      const [stored] = await db.select({ value: toolCacheTable.value }).from(toolCacheTable).where(where);
      return { value: (stored?.value ?? value) as T, hit: false };
    },
  };
}

/** Cached values older than `maxAgeDays` belong to past data periods. */
export async function purgeToolCache(db: Database, now: Date, maxAgeDays = 40) {
  const cutoff = new Date(now.getTime() - maxAgeDays * 86_400_000);
  const deleted = await db
    .delete(toolCacheTable)
    .where(lt(toolCacheTable.createdAt, cutoff))
    .returning({ tool: toolCacheTable.tool });
  return deleted.length;
}
