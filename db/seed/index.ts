import { sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { localBusinessTable } from '../schema/local-businesses.ts';
import { generateLocalBusinesses } from './local-businesses.ts';
import { Random } from './random.ts';

export const SCALES = { small: 12, medium: 120, large: 1200 } as const;
export type Scale = keyof typeof SCALES;

const CHUNK = 1000;

async function insertChunks<T>(rows: Iterable<T>, insert: (chunk: T[]) => Promise<unknown>): Promise<number> {
  let chunk: T[] = [];
  let total = 0;
  for (const row of rows) {
    chunk.push(row);
    if (chunk.length === CHUNK) {
      await insert(chunk);
      total += chunk.length;
      chunk = [];
    }
  }
  if (chunk.length > 0) await insert(chunk);
  return total + chunk.length;
}

/**
 * Fills the demo catalog deterministically (same scale → same rows). Datasets that already hold
 * rows are left alone, so seeding twice changes nothing.
 */
export async function seedCatalog(db: Database, scale: Scale = 'small'): Promise<Record<string, number>> {
  const result: Record<string, number> = {};
  const [{ count }] = (await db.execute<{ count: number }>(sql`select count(*)::int as count from local_business`)) as unknown as [{ count: number }];
  if (count === 0) {
    result.local_business = await insertChunks(generateLocalBusinesses(new Random(1), SCALES[scale]), (chunk) =>
      db.insert(localBusinessTable).values(chunk).onConflictDoNothing(),
    );
  } else {
    result.local_business = 0;
  }
  return result;
}
