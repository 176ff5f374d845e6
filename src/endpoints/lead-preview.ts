import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { takeAllowance } from '../billing/allowances.ts';
import { AppError, ValidationError } from '../shared/errors.ts';
import { plural } from '../shared/text.ts';
import { parseLeadSearch } from '../catalog/leads/params.ts';
import { companyIdsOf, loadCompanies, type CompanyRecord } from '../catalog/leads/companies.ts';
import { deliveredAmong, recordDelivered } from '../catalog/leads/delivered.ts';
import { findLeads } from '../catalog/leads/search.ts';
import { MAX_REVEAL, previewOf, selectLeadsByIds, type LeadPreviewRow } from '../catalog/leads/preview.ts';
import type { LeadRow } from '../catalog/leads/query.ts';
import type { Sql } from '../../db/client.ts';
import { suppressionCheck, withoutSuppressed, type SuppressionCheck } from '../privacy/suppression.ts';
import { leadSearchFilters, NARROW, type LeadSearchResult } from './lead-search.ts';
import { databaseSearch, pageRequest, type SearchPage } from './search.ts';

/*
 * Searching is free, contact details cost (as Apollo's people search): `previewLeads` is the lead
 * search with the same filters, paging and total, whose records carry no email, phone or mobile and
 * which counts nothing against the daily allowance; `revealLeads` hands over chosen people with their
 * contact details, counted like the lead search's records (leads the account has received are free).
 */

type SearchCore = Pick<Core, 'sql' | 'db' | 'catalogReader' | 'config' | 'clock'>;

/** A page of the free preview: people without contact details, their companies, the allowance left. */
export interface LeadPreviewResult extends SearchPage<LeadPreviewRow> {
  companies: Map<number, CompanyRecord>;
  translation?: LeadSearchResult['translation'];
}

/**
 * A page of the lead database as a preview: the lead search's filters, paging, total, statement timeout
 * and suppression (the faces apply the plan gate the endpoint declares, api/database.ts), without email,
 * phone or mobile and without counting against (or recording anything to) the account.
 * `allowanceRemaining` is read, not taken.
 */
export async function previewLeads(core: SearchCore, principal: Principal, raw: unknown): Promise<LeadPreviewResult> {
  const params = parseLeadSearch(raw);
  const request = pageRequest(params);
  const { filters, translation } = await leadSearchFilters(core, params);
  let companies = new Map<number, CompanyRecord>();
  let received = new Set<string>();
  const page = await databaseSearch<LeadRow>(
    core,
    principal,
    request,
    NARROW,
    (sql, window) =>
      findLeads(sql, filters, window, { accountId: principal.accountId, excludeDelivered: params.excludeDelivered }),
    async (sql, rows, take) => {
      [received, companies] = await Promise.all([
        deliveredAmong(
          sql,
          principal.accountId,
          rows.map((r) => r.id),
        ),
        loadCompanies(sql, companyIdsOf(rows)),
      ]);
      // Taking nothing reads what is left without writing.
      return { rows, remaining: (await take(0)).remaining };
    },
  );
  const rows = page.rows.map((row) => previewOf(row, received.has(row.id)));
  return { ...page, rows, companies, ...(translation ? { translation } : {}) };
}

/** People revealed with their contact details, what they counted and the allowance left today. */
export interface RevealedLeads {
  rows: LeadRow[];
  companies: Map<number, CompanyRecord>;
  /** Records taken from today's allowance: the people the account had not received before. */
  counted: number;
  allowanceRemaining: number;
}

/** The rows of people on no suppression list (generic, as databaseSearch's: a catalog row is a Row). */
const notSuppressed = async <R extends { id: string }>(check: SuppressionCheck, rows: R[]) =>
  (await withoutSuppressed(check, rows)).rows;

/** The ids as database ids (1 to MAX_REVEAL, digits), each once, in order; 400 `validation_failed` at `ids.<i>`. */
function checkedIds(ids: readonly string[]): string[] {
  if (ids.length === 0) throw new ValidationError([{ path: 'ids', message: 'name at least one person' }]);
  if (ids.length > MAX_REVEAL)
    throw new ValidationError([{ path: 'ids', message: `at most ${MAX_REVEAL} people at once; split the list` }]);
  const wrong = ids.flatMap((id, i) =>
    /^[1-9]\d{0,18}$/.test(id) ? [] : [{ path: `ids.${i}`, message: 'not the id of a person of the lead database' }],
  );
  if (wrong.length > 0) throw new ValidationError(wrong);
  return [...new Set(ids)];
}

/**
 * Chosen people of the lead database with their contact details (the export of a selection, a person's
 * "Show contact details"): the lead search's suppression and metering (the faces apply its plan gate). People the
 * account has not received count against today's database allowance and are recorded as received;
 * received ones are free. All or nothing: an id of no person the caller may see (unknown, or on a
 * do-not-contact list) is 404 `not_found` at `ids.<i>`, and more new people than the allowance has left
 * is 429 `daily_limit_reached`, with nothing counted.
 */
export async function revealLeads(core: SearchCore, principal: Principal, raw: readonly string[]) {
  const ids = checkedIds(raw);
  const limit = core.config.dailyDatabaseRecords;
  return core.sql.begin(async (tx) => {
    const sql = tx as unknown as Sql;
    const found = await selectLeadsByIds(sql, ids);
    const rows = await notSuppressed(suppressionCheck(core.db, principal.accountId), found);
    const seen = new Set(rows.map((r) => r.id));
    const missing = raw.flatMap((id, i) =>
      /^\d+$/.test(id) && !seen.has(id) ? [{ path: `ids.${i}`, message: `no person ${id} in the lead database` }] : [],
    );
    if (missing.length > 0)
      throw new AppError(404, 'not_found', 'No person of those ids in the lead database.', missing);
    const known = await deliveredAmong(sql, principal.accountId, ids);
    const fresh = ids.filter((id) => !known.has(id));
    const now = core.clock();
    const take = (count: number) => takeAllowance(sql, principal.accountId, 'database', count, limit, now);
    const short = (left: number) =>
      new AppError(
        429,
        'daily_limit_reached',
        `Revealing ${plural(fresh.length, 'new person', 'new people')} needs ${plural(fresh.length, 'record')} ` +
          `of today’s database allowance; ${left.toLocaleString('en-US')} ${left === 1 ? 'is' : 'are'} left ` +
          '(it resets at midnight UTC). Nothing was counted: choose fewer people.',
      );
    const before = (await take(0)).remaining;
    if (fresh.length > before) throw short(before);
    const taken = fresh.length > 0 ? await take(fresh.length) : { granted: 0, remaining: before };
    // A request of the same account in between took some: the transaction gives this one's back.
    if (taken.granted < fresh.length) throw short(taken.remaining);
    await recordDelivered(sql, principal.accountId, fresh);
    const companies = await loadCompanies(sql, companyIdsOf(rows));
    return { rows, companies, counted: fresh.length, allowanceRemaining: taken.remaining } satisfies RevealedLeads;
  }) as unknown as Promise<RevealedLeads>;
}
