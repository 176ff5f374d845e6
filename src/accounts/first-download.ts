/**
 * The account's first download of rows, for the console's getting-started checklist: the moment any
 * face first served a file of a run, a dataset or a pipeline. Written once; later downloads match no row
 * (the `is null` guard), so they cost one primary-key lookup and no write.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { accountTable } from '../../db/tables/accounts.ts';

export async function recordFirstDownload(db: Executor, accountId: string): Promise<void> {
  await db
    .update(accountTable)
    .set({ firstDownloadAt: sql`now()` })
    .where(and(eq(accountTable.id, accountId), isNull(accountTable.firstDownloadAt)));
}
