/**
 * The rows of enrichment jobs (src/endpoints/enrichment-jobs.ts) that name a person: a job keeps its
 * file's rows and what was found for 48 hours, as JSON, outside the identifier index. A job's row names
 * the person when its text holds their e-mail, or their phone as E.164 or as its national number, written
 * with or without spaces, dashes, dots or brackets. An access request reads those rows out with their job;
 * an erasure deletes the jobs' rows at once, as expiry would (their counts stay). A number inside a longer
 * one can match too: the job's rows go, which only shortens a cache.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { sql } from 'drizzle-orm';
import type { Executor, Transaction } from '../../db/client.ts';
import type { NormalIdentifier } from './requests.ts';

/** What is taken out of the rows' text (and the identifiers) before matching: how numbers are written. */
const SEPARATORS = '[[:space:]().-]';
/** The same separators, for the identifiers and for one row's text here. */
const bare = (text: string) => text.toLowerCase().replace(/[\s().-]/g, '');

/** The texts that name the person in a row's text with separators taken out. */
function textsOf(person: readonly NormalIdentifier[]): string[] {
  const texts = person.flatMap((p) => {
    if (p.kind === 'email') return [p.value];
    const national = parsePhoneNumberFromString(p.value)?.nationalNumber;
    return [p.value.replace('+', ''), ...(national ? [String(national)] : [])];
  });
  return [...new Set(texts.map(bare))];
}

/** The jobs still keeping rows whose text holds one of `texts`. */
function naming(texts: readonly string[]) {
  const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
  return sql`purged_at is null and rows is not null
    and regexp_replace(lower(rows::text), ${SEPARATORS}, '', 'g') like any(array[${sql.join(
      texts.map((t) => sql`${`%${likeEscaped(t)}%`}`),
      sql`, `,
    )}]::text[])`;
}

/** A job that keeps rows naming the person: which account ran it, and those rows (numbered from 1). */
export interface EnrichmentJobHolding {
  id: string;
  accountId: string;
  fileName: string;
  createdAt: Date;
  expiresAt: Date;
  rows: { row: number; entry: unknown }[];
}

/** The jobs whose kept rows name the person, with those rows only; oldest first. */
export async function enrichmentJobsNaming(
  db: Executor,
  person: readonly NormalIdentifier[],
): Promise<EnrichmentJobHolding[]> {
  const texts = textsOf(person);
  if (texts.length === 0) return [];
  const jobs = (await db.execute(sql`
    select id, account_id as "accountId", file_name as "fileName", created_at as "createdAt",
      expires_at as "expiresAt", rows
    from enrichment_job where ${naming(texts)}
    order by created_at, id`)) as unknown as (Omit<EnrichmentJobHolding, 'rows'> & { rows: unknown[] })[];
  return jobs.map((job) => ({
    ...job,
    createdAt: new Date(job.createdAt),
    expiresAt: new Date(job.expiresAt),
    rows: job.rows
      .map((entry, i) => ({ row: i + 1, entry }))
      .filter(({ entry }) => texts.some((t) => bare(JSON.stringify(entry)).includes(t))),
  }));
}

/** Deletes the rows of the given jobs (those naming the person); how many jobs lost their rows. */
export async function purgeEnrichmentJobs(tx: Transaction, jobs: readonly Pick<EnrichmentJobHolding, 'id'>[]) {
  if (jobs.length === 0) return 0;
  const purged = (await tx.execute(sql`
    update enrichment_job set rows = null, purged_at = now()
    where purged_at is null and id in ${jobs.map((j) => j.id)}
    returning id`)) as unknown as { id: string }[];
  return purged.length;
}
