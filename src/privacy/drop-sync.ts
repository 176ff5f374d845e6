/**
 * The scheduled DROP cycle (docs/drop.md), when the operator gives DROP_API_KEY: answers a processed
 * archive that DROP has not accepted yet, then downloads the next one, runs its cycle and uploads the
 * answers. DROP offers no new archive until every work item of the last one has a status, so an upload
 * that failed is sent again before anything else; one DROP already accepted (its file name refused as a
 * duplicate) counts as sent.
 */
import { mkdir, readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { dropCycleTable } from '../../db/tables/privacy.ts';
import type { DropConfig } from '../config/drop.ts';
import { createDropClient, DropApiError, isAlreadyUploaded, type DropClient } from './drop/client.ts';
import { cycleNameOf, markUploaded, runDropCycle, type DropCycleSummary } from './drop-cycle.ts';

export type DropSyncOutcome =
  | { kind: 'preparing'; retryAfterSeconds: number }
  | { kind: 'no-data'; uploaded: string[] }
  | { kind: 'processed'; cycle: DropCycleSummary; uploaded: string[] };

/** Where a cycle's archive and answers are kept. */
const archiveOf = (dir: string, name: string) => path.join(dir, `${name}_DROP.zip`);
const answersOf = (dir: string, name: string) => path.join(dir, name);

/** Sends a cycle's answers; a file DROP already holds counts as sent, any other refusal is thrown. */
async function upload(db: Database, client: DropClient, cycle: DropCycleSummary): Promise<void> {
  if (cycle.responses.length > 0) {
    const files = await Promise.all(
      cycle.responses.map(async (r) => ({ name: r.file, content: await readFile(r.path) })),
    );
    let result: Awaited<ReturnType<DropClient['upload']>>;
    try {
      result = await client.upload(files);
    } catch (err) {
      // No batch waiting for answers: DROP holds every status of this one already (an upload whose
      // acceptance was not recorded here).
      if (err instanceof DropApiError && err.httpStatus === 409) return markUploaded(db, cycle.cycleId);
      throw err;
    }
    const refused = result.rejected.filter((r) => !isAlreadyUploaded(r));
    if (refused.length > 0)
      throw new DropApiError(400, refused.map((r) => `${r.fileName}: ${r.message}`).join('; '), undefined, refused);
  }
  await markUploaded(db, cycle.cycleId);
}

/** Cycles answered here but not yet accepted by DROP, answered again from their archives and sent. */
async function sendOutstanding(db: Database, client: DropClient, config: DropConfig): Promise<string[]> {
  const waiting = await db
    .select({ name: dropCycleTable.fileName })
    .from(dropCycleTable)
    .where(eq(dropCycleTable.state, 'answered'));
  const sent: string[] = [];
  for (const { name } of waiting) {
    const cycle = await runDropCycle(db, archiveOf(config.dir, name), {
      out: `${answersOf(config.dir, name)}/`,
      by: 'system',
    });
    await upload(db, client, cycle);
    sent.push(name);
  }
  return sent;
}

export async function syncWithDrop(
  db: Database,
  config: DropConfig,
  options: { fetch?: typeof fetch } = {},
): Promise<DropSyncOutcome> {
  if (!config.apiKey) throw new Error('DROP_API_KEY is not set');
  const client = createDropClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, fetch: options.fetch });
  await mkdir(config.dir, { recursive: true });
  const uploaded = await sendOutstanding(db, client, config);
  const download = await client.download(config.dir);
  if (download.kind === 'preparing') return { kind: 'preparing', retryAfterSeconds: download.retryAfterSeconds ?? 60 };
  if (download.kind === 'no-data') return { kind: 'no-data', uploaded };
  // The cycle is named by its lists: the archive is kept under that name, for an upload sent again.
  const name = await cycleNameOf(download.path);
  const archive = archiveOf(config.dir, name);
  if (download.path !== archive) await rename(download.path, archive);
  const cycle = await runDropCycle(db, archive, { out: `${answersOf(config.dir, name)}/`, by: 'system' });
  await upload(db, client, cycle);
  return { kind: 'processed', cycle, uploaded: [...uploaded, cycle.name] };
}
