/**
 * What an erasure does to the rows of enrichment jobs (src/endpoints/enrichment-jobs.ts): a job keeps
 * its file's rows and what was found for 48 hours, as JSON, outside the identifier index. A job whose
 * rows name the person (their e-mail, or their phone as E.164 or as its national number, written with
 * or without spaces, dashes, dots or brackets) has its rows deleted at once, as expiry would; its counts
 * stay. A number inside a longer one can match too: the job's rows go, which only shortens a cache.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { sql } from 'drizzle-orm';
import type { Transaction } from '../../db/client.ts';
import type { NormalIdentifier } from './requests.ts';

/** What is taken out of the rows' text (and the identifiers) before matching: how numbers are written. */
const SEPARATORS = '[[:space:]().-]';

/** LIKE patterns, escaped, each matching the identifier in the rows' text with separators taken out. */
function patternsOf(person: readonly NormalIdentifier[]): string[] {
  const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
  // The same separators the rows' text loses (SEPARATORS), so "ann.lee@example.com" still matches.
  const bare = (text: string) => text.toLowerCase().replace(/[\s().-]/g, '');
  const texts = person.flatMap((p) => {
    if (p.kind === 'email') return [p.value];
    const national = parsePhoneNumberFromString(p.value)?.nationalNumber;
    return [p.value.replace('+', ''), ...(national ? [String(national)] : [])];
  });
  return [...new Set(texts.map(bare))].map((t) => `%${likeEscaped(t)}%`);
}

/** Deletes the rows of the jobs that name the person; how many jobs lost their rows. */
export async function purgeEnrichmentJobsNaming(tx: Transaction, person: readonly NormalIdentifier[]) {
  const patterns = patternsOf(person);
  if (patterns.length === 0) return 0;
  const purged = (await tx.execute(sql`
    update enrichment_job set rows = null, purged_at = now()
    where purged_at is null and rows is not null
      and regexp_replace(lower(rows::text), ${SEPARATORS}, '', 'g') like any(array[${sql.join(
        patterns.map((p) => sql`${p}`),
        sql`, `,
      )}]::text[])
    returning id`)) as unknown as { id: string }[];
  return purged.length;
}
