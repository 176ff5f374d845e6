/**
 * An account's own do-not-contact list: entries added in bulk (each checked and normalised, refused
 * ones said at their place) by anyone in the account, listed newest first, removed one by one by owners
 * and admins. Every
 * row the account's runs, searches and enrichments produce is checked against it and the deployment's
 * list (suppression.ts).
 */
import { and, desc, eq, lt, or } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../db/client.ts';
import { SUPPRESSION_KINDS, type Suppression, suppressionTable } from '../../db/tables/privacy.ts';
import type { Principal } from '../accounts/principal.ts';
import { requireRole } from '../accounts/roles.ts';
import { AppError, fromZodError, ValidationError } from '../shared/errors.ts';
import { assertStorable, unstorable } from '../shared/params.ts';
import { addSuppressions, normalIdentifier } from './suppression.ts';

/** At most this many entries an add. */
export const MAX_ENTRIES = 1_000;

export const suppressionInput = z
  .object({
    entries: z
      .array(
        z
          .object({
            kind: z
              .enum(SUPPRESSION_KINDS, { message: `must be one of ${SUPPRESSION_KINDS.join(', ')}` })
              .describe('email, domain (every address at it), phone, profile (a social profile URL), or hash.'),
            value: z.string().min(1, 'must not be empty').max(500).describe('The address, number, domain or URL.'),
          })
          .strict(),
      )
      .min(1, 'at least one entry')
      .max(MAX_ENTRIES, `at most ${MAX_ENTRIES} entries an add`)
      .describe('People no row may carry: rows with any of them are dropped, not returned, not billed.'),
    note: z.string().max(200).optional().describe('Why, for whoever reads the list later.'),
  })
  .strict();

const notFound = () => new AppError(404, 'suppression_not_found', 'The account’s list has no such entry.');

/** Adds entries to the account's list; answers how many were new (an entry already there is not added twice). */
export async function addToAccountList(db: Database, principal: Principal, raw: unknown) {
  assertStorable(raw);
  const parsed = suppressionInput.safeParse(raw ?? {});
  if (!parsed.success) throw fromZodError(parsed.error);
  const issues: { path: string; message: string }[] = [];
  const entries = parsed.data.entries.flatMap((entry, i) => {
    const normal = normalIdentifier(entry.kind, entry.value);
    if ('refused' in normal) {
      issues.push({ path: `entries.${i}.value`, message: normal.refused });
      return [];
    }
    return [{ kind: entry.kind, value: normal.value }];
  });
  if (issues.length > 0) throw new ValidationError(issues);
  const added = await addSuppressions(db, principal.accountId, entries, 'account', {
    userId: principal.userId ?? null,
    note: parsed.data.note ?? null,
  });
  return { added, alreadyListed: entries.length - added };
}

/** The account's entries, newest first, 100 a page (`before`: the last id of the page before). */
export async function listAccountList(db: Database, accountId: string, before?: string) {
  const cursor = before && !unstorable(before) ? await findEntry(db, accountId, before).catch(() => null) : null;
  return db
    .select()
    .from(suppressionTable)
    .where(
      and(
        eq(suppressionTable.accountId, accountId),
        cursor
          ? or(
              lt(suppressionTable.createdAt, cursor.createdAt),
              and(eq(suppressionTable.createdAt, cursor.createdAt), lt(suppressionTable.id, cursor.id)),
            )
          : undefined,
      ),
    )
    .orderBy(desc(suppressionTable.createdAt), desc(suppressionTable.id))
    .limit(100);
}

/** One of the account's entries, or 404. */
export async function findEntry(db: Database, accountId: string, id: string): Promise<Suppression> {
  if (unstorable(id)) throw notFound();
  const [found] = await db
    .select()
    .from(suppressionTable)
    .where(and(eq(suppressionTable.id, id), eq(suppressionTable.accountId, accountId)));
  if (!found) throw notFound();
  return found;
}

/** Removes an entry the account added (rows about the person are delivered again from then on). */
export async function removeFromAccountList(db: Database, principal: Principal, id: string) {
  requireRole(principal, 'suppressions');
  const found = await findEntry(db, principal.accountId, id);
  if (found.source !== 'account')
    throw new AppError(409, 'suppression_kept', 'This entry came from the person’s own request and stays.');
  await db.delete(suppressionTable).where(eq(suppressionTable.id, found.id));
}

export const suppressionView = (s: Suppression) => ({
  id: s.id,
  kind: s.kind,
  value: s.value,
  source: s.source,
  note: s.note,
  createdAt: s.createdAt.toISOString(),
});
