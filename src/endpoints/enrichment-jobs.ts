/**
 * Enrichment jobs: the account's history of files enriched in bulk (the console, or GraphQL with a file
 * name; previews and REST calls are not recorded). A job keeps its counts for good and its rows as long as
 * a run keeps its result rows (`resultRetentionHours`, 48 by default), then the hourly housekeeping
 * deletes them (purgeExpiredEnrichmentJobs). Each row is kept as sent, with its outcome and what was found
 * apart, so every download applies the do-not-contact list again (src/privacy): a person suppressed
 * since is answered as not found, like the enrichment itself answers them.
 */
import { randomBytes } from 'node:crypto';
import { and, count, desc, eq, isNull, lt, lte, or } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { type EnrichmentJob, type EnrichmentJobKind, enrichmentJobTable } from '../../db/tables/enrichment.ts';
import type { Core } from '../core.ts';
import { suppressionCheck } from '../privacy/suppression.ts';

/** What a face asks to record: the kind, the file's name and who ran it (a signed-in user, or none for a key). */
export interface JobOptions {
  kind: EnrichmentJobKind;
  fileName: string;
  createdBy?: string | null;
}

/** A row as kept: the caller's row, its outcome, what was found (when matched) and why it was skipped. */
export interface JobEntry {
  input: Record<string, unknown>;
  status: 'matched' | 'not_found' | 'daily_limit_reached' | 'skipped';
  matchedBy: string | null;
  found: Record<string, unknown> | null;
  reasons?: string[];
}

/** A job without its rows. */
export type EnrichmentJobView = Omit<EnrichmentJob, 'rows'>;

/** The longest file name kept; a longer one is cut. */
export const MAX_FILE_NAME = 200;

const newJobId = () => `enj_${randomBytes(12).toString('base64url')}`;

const VIEW_COLUMNS = {
  id: enrichmentJobTable.id,
  accountId: enrichmentJobTable.accountId,
  createdBy: enrichmentJobTable.createdBy,
  kind: enrichmentJobTable.kind,
  fileName: enrichmentJobTable.fileName,
  total: enrichmentJobTable.total,
  matched: enrichmentJobTable.matched,
  notFound: enrichmentJobTable.notFound,
  skipped: enrichmentJobTable.skipped,
  createdAt: enrichmentJobTable.createdAt,
  expiresAt: enrichmentJobTable.expiresAt,
  purgedAt: enrichmentJobTable.purgedAt,
};

/** Records a finished enrichment of a file with its rows; its rows expire with the run retention. */
export async function recordEnrichmentJob(
  core: Pick<Core, 'db' | 'config' | 'clock'>,
  accountId: string,
  job: JobOptions,
  summary: { total: number; matched: number; not_found: number; skipped?: number },
  entries: JobEntry[],
): Promise<EnrichmentJobView> {
  const now = core.clock();
  const fileName = job.fileName.trim().slice(0, MAX_FILE_NAME) || 'rows';
  const [row] = await core.db
    .insert(enrichmentJobTable)
    .values({
      id: newJobId(),
      accountId,
      createdBy: job.createdBy ?? null,
      kind: job.kind,
      fileName,
      total: summary.total,
      matched: summary.matched,
      notFound: summary.not_found,
      skipped: summary.skipped ?? 0,
      rows: entries,
      createdAt: now,
      expiresAt: new Date(now.getTime() + core.config.resultRetentionHours * 3_600_000),
    })
    .returning(VIEW_COLUMNS);
  if (!row) throw new Error('the enrichment job was not recorded');
  return row;
}

/**
 * A page of the account's jobs, newest first, after the job `after` (one of the account's; null when it
 * is not). One more than `first` is read, so the caller knows whether a page follows.
 */
export async function listEnrichmentJobs(
  db: Database,
  accountId: string,
  page: { first: number; after?: string },
): Promise<EnrichmentJobView[] | null> {
  const t = enrichmentJobTable;
  const from = page.after ? await findEnrichmentJob(db, accountId, page.after) : undefined;
  if (page.after && !from) return null;
  return db
    .select(VIEW_COLUMNS)
    .from(t)
    .where(
      and(
        eq(t.accountId, accountId),
        from ? or(lt(t.createdAt, from.createdAt), and(eq(t.createdAt, from.createdAt), lt(t.id, from.id))) : undefined,
      ),
    )
    .orderBy(desc(t.createdAt), desc(t.id))
    .limit(page.first + 1);
}

/** How many jobs the account's history holds. */
export async function countEnrichmentJobs(db: Database, accountId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(enrichmentJobTable)
    .where(eq(enrichmentJobTable.accountId, accountId));
  return row?.n ?? 0;
}

/** The account's job with this id; undefined for an unknown id or another account's. */
export async function findEnrichmentJob(
  db: Database,
  accountId: string,
  id: string,
): Promise<EnrichmentJobView | undefined> {
  const [row] = await db
    .select(VIEW_COLUMNS)
    .from(enrichmentJobTable)
    .where(and(eq(enrichmentJobTable.id, id), eq(enrichmentJobTable.accountId, accountId)));
  return row;
}

/** Whether the job's rows can still be read. */
export const rowsKept = (job: Pick<EnrichmentJob, 'expiresAt' | 'purgedAt'>, now: Date) =>
  job.purgedAt === null && job.expiresAt.getTime() > now.getTime();

/**
 * The rows of the account's job, as the enrichment answered them (the caller's row, `match_status`,
 * `matched_by`, then what was found), with the do-not-contact list applied again; each row as sent and its
 * skip reasons apart. Undefined for an unknown id or another account's; null once the rows have expired.
 */
export async function enrichmentJobRows(
  core: Pick<Core, 'db' | 'clock'>,
  accountId: string,
  id: string,
): Promise<
  | { rows: Record<string, unknown>[]; inputs: Record<string, unknown>[]; reasons: (string[] | undefined)[] }
  | null
  | undefined
> {
  const [job] = await core.db
    .select({
      rows: enrichmentJobTable.rows,
      expiresAt: enrichmentJobTable.expiresAt,
      purgedAt: enrichmentJobTable.purgedAt,
    })
    .from(enrichmentJobTable)
    .where(and(eq(enrichmentJobTable.id, id), eq(enrichmentJobTable.accountId, accountId)));
  if (!job) return undefined;
  if (!rowsKept(job, core.clock()) || !Array.isArray(job.rows)) return null;
  const entries = job.rows as JobEntry[];
  // The same rule as the enrichment's: what was found about a suppressed person is no match.
  const suppressed = await suppressionCheck(core.db, accountId)(entries.map((e) => e.found ?? {}));
  const rows = entries.map((e, i) => {
    const row: Record<string, unknown> = { ...e.input };
    const hidden = suppressed[i] === true;
    row.match_status = hidden ? 'not_found' : e.status;
    row.matched_by = hidden ? null : e.matchedBy;
    if (!hidden && e.found) Object.assign(row, e.found);
    return row;
  });
  return { rows, inputs: entries.map((e) => e.input), reasons: entries.map((e) => e.reasons) };
}

/** Deletes the rows of jobs past `expiresAt`; the jobs stay in the history, marked purged. */
export async function purgeExpiredEnrichmentJobs(db: Database, now: Date): Promise<number> {
  const purged = await db
    .update(enrichmentJobTable)
    .set({ rows: null, purgedAt: now })
    .where(and(isNull(enrichmentJobTable.purgedAt), lte(enrichmentJobTable.expiresAt, now)))
    .returning({ id: enrichmentJobTable.id });
  return purged.length;
}
