import { and, eq, lt } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { toolCacheTable } from '../../db/tables/runs.ts';
import { claimIdentities, identityOf } from '../datasets/index.ts';
import type { RunStore, ToolDefinition } from '../tools/types.ts';

/** The account state runs keep beyond themselves (named datasets, shared caches), in Postgres. */
export function runStore(
  db: Database,
  accountId: string,
  runId: string,
  tool: Pick<ToolDefinition, 'identity'>,
): RunStore {
  return {
    async claimNew(dataset, rows) {
      const keys = rows.map((row) => identityOf(tool, row));
      const owned = await claimIdentities(
        db,
        accountId,
        dataset,
        runId,
        keys.filter((key): key is string => key !== null),
      );
      return keys.map((key) => key === null || owned.has(key));
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
