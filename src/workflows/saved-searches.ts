/**
 * Saved lead searches: a name and a lead database filter, kept for the whole account (the console's
 * lead search lists them for every member). Anyone who may search saves one; the one who saved it, and
 * the account's owners and admins, delete it (docs/catalog.md, "Saved searches").
 */
import { and, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../db/client.ts';
import { appUserTable } from '../../db/tables/accounts.ts';
import { savedSearchTable, type SavedSearch } from '../../db/tables/workflows.ts';
import type { Principal } from '../accounts/accounts.ts';
import { roleRequired } from '../accounts/roles.ts';
import { isSet } from '../catalog/leads/filters.ts';
import { parseLeadSearch, type LeadSearchParams } from '../catalog/leads/params.ts';
import { AppError, ValidationError, fromZodError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { assertStorable, unstorable } from '../shared/params.ts';

/** The most saved searches an account keeps. */
export const MAX_SAVED_SEARCHES = 100;

export const newSavedSearchId = () => `srch_${randomBase62(16)}`;

/** A saved search with the name (or email) of the user who saved it. */
export interface SavedSearchView extends SavedSearch {
  createdByName: string | null;
}

const savedSearchInput = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters').describe('Its name.'),
    filter: z.record(z.string(), z.unknown()).describe('The lead database filter, as `leads(filter:)` takes it.'),
  })
  .strict();

const PAGING = ['page', 'limit', 'after'] as const;

/**
 * A filter as the lead search reads it (leadSearchParams, the schema of REST, MCP and GraphQL's
 * LeadFilter), without paging; refusals at `filter.<name>`. A filter that filters nothing is refused.
 */
export function savedSearchFilter(raw: Record<string, unknown>): Omit<LeadSearchParams, (typeof PAGING)[number]> {
  const paging = PAGING.filter((k) => k in raw);
  if (paging.length > 0)
    throw new ValidationError(paging.map((k) => ({ path: `filter.${k}`, message: 'a saved search keeps no paging' })));
  let parsed: LeadSearchParams;
  try {
    parsed = parseLeadSearch(raw);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const details = (err.details ?? []) as { path: string; message: string }[];
    throw new ValidationError(details.map((d) => ({ ...d, path: d.path ? `filter.${d.path}` : 'filter' })));
  }
  const filter = Object.fromEntries(Object.entries(parsed).filter(([, v]) => isSet(v) && v !== false));
  if (Object.keys(filter).length === 0)
    throw new ValidationError([{ path: 'filter', message: 'choose at least one filter to save' }]);
  return filter as Omit<LeadSearchParams, (typeof PAGING)[number]>;
}

/**
 * Saves a search for the account: the name 1–100 characters and unique in the account (409
 * `saved_search_exists`), the filter checked as the lead search checks it, at most MAX_SAVED_SEARCHES
 * an account (409 `saved_search_limit`). The signed-in user is its creator (none for an API key).
 */
export async function createSavedSearch(db: Database, principal: Principal, raw: unknown): Promise<SavedSearchView> {
  assertStorable(raw);
  const parsed = savedSearchInput.safeParse(raw ?? {});
  if (!parsed.success) throw fromZodError(parsed.error);
  const filter = savedSearchFilter(parsed.data.filter);
  const { name } = parsed.data;
  return db.transaction(async (tx) => {
    // One account's saves wait for each other here, so the cap holds when several arrive at once.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('saved_search'), hashtext(${principal.accountId}))`);
    const [{ count } = { count: 0 }] = await tx
      .select({ count: sql<number>`count(*)::int` })
      .from(savedSearchTable)
      .where(eq(savedSearchTable.accountId, principal.accountId));
    if (count >= MAX_SAVED_SEARCHES)
      throw new AppError(
        409,
        'saved_search_limit',
        `The account keeps ${MAX_SAVED_SEARCHES} saved searches, the most it may; delete one it no longer needs.`,
      );
    const [created] = await tx
      .insert(savedSearchTable)
      .values({
        id: newSavedSearchId(),
        accountId: principal.accountId,
        createdBy: principal.userId ?? null,
        name,
        filter,
      })
      .onConflictDoNothing()
      .returning();
    if (!created)
      throw new AppError(409, 'saved_search_exists', `The account has a saved search named "${name}" already.`, [
        { path: 'name', message: `"${name}" is taken: choose another name` },
      ]);
    const [user] = principal.userId
      ? await tx
          .select({ name: appUserTable.name, email: appUserTable.email })
          .from(appUserTable)
          .where(eq(appUserTable.id, principal.userId))
      : [];
    return { ...created, createdByName: user ? (user.name ?? user.email) : null };
  });
}

/** The account's saved searches, newest first, each with its creator's name. */
export async function listSavedSearches(db: Database, accountId: string): Promise<SavedSearchView[]> {
  const rows = await db
    .select({ search: savedSearchTable, name: appUserTable.name, email: appUserTable.email })
    .from(savedSearchTable)
    .leftJoin(appUserTable, eq(appUserTable.id, savedSearchTable.createdBy))
    .where(eq(savedSearchTable.accountId, accountId))
    .orderBy(desc(savedSearchTable.createdAt), desc(savedSearchTable.id));
  return rows.map((r) => ({ ...r.search, createdByName: r.name ?? r.email ?? null }));
}

/** A saved search of the account; 404 `saved_search_not_found` for another account's or none. */
export async function findSavedSearch(db: Database, accountId: string, id: string): Promise<SavedSearch> {
  const [found] = unstorable(id)
    ? []
    : await db
        .select()
        .from(savedSearchTable)
        .where(and(eq(savedSearchTable.accountId, accountId), eq(savedSearchTable.id, id)))
        .limit(1);
  if (!found) throw new AppError(404, 'saved_search_not_found', 'The account has no such saved search.');
  return found;
}

/**
 * Whether the caller may delete a saved search: the user who saved it, an owner or admin (signed in, or a
 * key its creator made with that role), or an operator's key. A member's key deletes none: a key is no user.
 */
export function mayDeleteSavedSearch(principal: Principal, search: Pick<SavedSearch, 'createdBy'>): boolean {
  if (principal.userId && principal.userId === search.createdBy) return true;
  const role = principal.role ?? principal.keyRole;
  if (role === undefined) return principal.userId === undefined;
  return role === 'owner' || role === 'admin';
}

/** Deletes a saved search of the account (mayDeleteSavedSearch, else 403 `role_required`). */
export async function deleteSavedSearch(db: Database, principal: Principal, id: string): Promise<SavedSearch> {
  const search = await findSavedSearch(db, principal.accountId, id);
  if (!mayDeleteSavedSearch(principal, search)) {
    const role = principal.role ?? principal.keyRole;
    throw roleRequired(
      'A saved search is deleted by whoever saved it, or by the account’s owners and admins' +
        (role ? `; your role is ${role}.` : '.'),
    );
  }
  await db
    .delete(savedSearchTable)
    .where(and(eq(savedSearchTable.accountId, principal.accountId), eq(savedSearchTable.id, id)));
  return search;
}
