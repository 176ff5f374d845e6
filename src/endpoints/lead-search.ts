import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { AppError } from '../shared/errors.ts';
import { COMPANY_FILTERS, isSet, PARAMETER_OF } from '../catalog/leads/filters.ts';
import type { LeadFilters } from '../sources/leads.ts';
import { parseLeadSearch, filtersOf, type LeadSearchParams } from '../catalog/leads/params.ts';
import {
  NoUsableFiltersError,
  translatePeopleSearchUrl,
  type SearchTranslation,
  type TranslationEntry,
} from '../catalog/leads/people-search-url.ts';
import { companiesReady, companyIdsOf, loadCompanies, type CompanyRecord } from '../catalog/leads/companies.ts';
import { deliveredAmong, recordDelivered } from '../catalog/leads/delivered.ts';
import { findLeads } from '../catalog/leads/search.ts';
import type { LeadRow } from '../catalog/leads/query.ts';
import { databaseSearch, pageRequest, type SearchPage } from './search.ts';

export { companiesReady, loadCompanies, type CompanyRecord };

/** The parameters a translation entry's filter sets ("city=Denver, state=CO" sets city and state). */
const parametersSet = (entry: TranslationEntry) =>
  (entry.filter ?? '').split(', ').map((part) => part.split('=')[0] ?? '');

/**
 * The URL's filters, with every filter sent explicitly replacing the matching one. The link's
 * parameters so replaced leave `applied` and `broadened` for `overridden`, naming the explicit
 * parameters that replaced them: the translation says what the search ran with.
 */
function mergeFilters(fromUrl: LeadFilters, explicit: LeadFilters, translation: SearchTranslation): LeadFilters {
  const sent = new Set(
    (Object.keys(explicit) as (keyof LeadFilters)[]).filter((k) => isSet(explicit[k])).map((k) => PARAMETER_OF[k]),
  );
  const keep = (entries: TranslationEntry[]) =>
    entries.filter((entry) => {
      const overriddenBy = parametersSet(entry).filter((p) => sent.has(p));
      if (overriddenBy.length > 0) translation.overridden.push({ ...entry, overriddenBy });
      return overriddenBy.length === 0;
    });
  translation.applied = keep(translation.applied);
  translation.broadened = keep(translation.broadened);
  return { ...fromUrl, ...explicit };
}

/** A page of people, the companies they work at, and what a saved search url was turned into. */
export interface LeadSearchResult extends SearchPage<LeadRow> {
  companies: Map<number, CompanyRecord>;
  translation?: SearchTranslation;
}

/**
 * The filters a lead search runs with: the request's own, over those of its saved search url (400
 * `no_usable_filters` when the url has none the database can use). 409 `filters_not_applied_yet` for
 * company filters while the companies dataset is being prepared. Shared by the metered search and the
 * free preview (lead-preview.ts).
 */
export async function leadSearchFilters(
  core: Pick<Core, 'sql'>,
  params: LeadSearchParams,
): Promise<{ filters: LeadFilters; translation?: SearchTranslation }> {
  let filters = filtersOf(params);
  let translation: SearchTranslation | undefined;
  if (params.url) {
    const fromUrl = translatePeopleSearchUrl(params.url);
    translation = fromUrl.translation;
    if (translation.applied.length + translation.broadened.length === 0) throw new NoUsableFiltersError(translation);
    filters = mergeFilters(fromUrl.filters, filters, translation);
  }
  const companyFilters = COMPANY_FILTERS.filter((k) => isSet(filters[k]));
  if (companyFilters.length > 0 && !(await companiesReady(core.sql))) {
    const names = companyFilters.map((k) => PARAMETER_OF[k]);
    throw new AppError(
      409,
      'filters_not_applied_yet',
      'Company data is still being prepared, so these filters cannot be applied yet: ' +
        `${names.join(', ')}. Nothing was counted; retry later or search without them.`,
      names.map((name) => ({ path: name, message: 'cannot be applied while company data is being prepared' })),
      { filters_not_applied_yet: names },
    );
  }
  return { filters, ...(translation ? { translation } : {}) };
}

export const NARROW =
  'Narrow it and retry: fewer titles or keywords, or add a location or a company size (minEmployees/maxEmployees).';

/**
 * A page of the lead database (its declaration holds the plan gate). Every lead returned is saved to the account;
 * leads it already received do not count against the daily allowance again, and `excludeDelivered`
 * leaves them out.
 */
export async function searchLeads(
  core: Pick<Core, 'sql' | 'db' | 'catalogReader' | 'config' | 'clock'>,
  principal: Principal,
  raw: unknown,
): Promise<LeadSearchResult> {
  const params = parseLeadSearch(raw);
  const request = pageRequest(params);
  const { filters, translation } = await leadSearchFilters(core, params);

  let companies = new Map<number, CompanyRecord>();
  const page = await databaseSearch<LeadRow>(
    core,
    principal,
    request,
    NARROW,
    (sql, window) =>
      findLeads(sql, filters, window, { accountId: principal.accountId, excludeDelivered: params.excludeDelivered }),
    // Leads new to this account count against today's allowance; already-delivered ones are free.
    async (sql, page, take) => {
      const ids = page.map((r) => r.id);
      const [known, loaded] = await Promise.all([
        deliveredAmong(sql, principal.accountId, ids),
        loadCompanies(sql, companyIdsOf(page)),
      ]);
      companies = loaded;
      const fresh = ids.filter((id) => !known.has(id));
      const allowance = await take(fresh.length);
      const granted = fresh.slice(0, allowance.granted);
      const keep = new Set([...known, ...granted]);
      await recordDelivered(sql, principal.accountId, granted);
      return { rows: page.filter((r) => keep.has(r.id)), remaining: allowance.remaining };
    },
  );
  return { ...page, companies, ...(translation ? { translation } : {}) };
}
