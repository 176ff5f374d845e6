import type { Sql } from '../../../db/client.ts';
import { oneRow } from '../../../db/rows.ts';
import { EXACT_TOTAL_LIMIT, estimatedTotal, type FoundPage, type PageWindow } from '../sql.ts';
import { companyIdsOf, loadCompanies, type CompanyRecord } from './companies.ts';
import type { LeadFilters } from '../../sources/leads.ts';
import { leadRecord } from './lead-record.ts';
import {
  countByFacets,
  countedByFacets,
  estimateLeads,
  leadConditions,
  plannedMatches,
  readsCompany,
  selectLeadPage,
  selectLeadSearch,
  where,
  type LeadRow,
} from './query.ts';

/** A search the planner expects this many times past the exact-count limit is estimated without counting first. */
const PLANNED_PAST_LIMIT = 4;

/**
 * The lead database's search: the people matching `filters` in id order, one page (one row more than
 * the limit when more follow) and the size of the whole search.
 * - On the broad facets alone: counted from person_facet_count, exactly, beside its page.
 * - Otherwise its matches are gathered and counted with its page in one statement (selectLeadSearch),
 *   up to the exact-count limit; past it the page is read on its own and the total estimated
 *   (`totalIsEstimate`).
 * - When the planner expects far more matches than the limit (a title alone, say), gathering them would
 *   be wasted: the page and the estimate come first, and the count only if the estimate is not well
 *   past the limit after all.
 * `excludeDelivered` leaves out the people the account has received already.
 */
export async function findLeads(
  sql: Sql,
  filters: LeadFilters,
  window: PageWindow,
  options: { accountId?: string; excludeDelivered?: boolean } = {},
): Promise<FoundPage<LeadRow>> {
  const conditions = () => where(sql, leadConditions(sql, filters, options));
  if (countedByFacets(filters, options)) {
    const [rows, counted] = await Promise.all([selectLeadPage(sql, conditions(), window), countByFacets(sql, filters)]);
    return { rows, total: oneRow(counted, 'count by facets').total, totalIsEstimate: false };
  }
  const exactTotalLimit = window.exactTotalLimit ?? EXACT_TOTAL_LIMIT;
  const estimated = async () => {
    const [rows, sampled] = await Promise.all([
      selectLeadPage(sql, conditions(), window),
      estimateLeads(sql, conditions(), readsCompany(filters)),
    ]);
    return { rows, estimate: oneRow(sampled, 'estimate of a lead search').estimate };
  };
  if ((await plannedMatches(sql, conditions())) > PLANNED_PAST_LIMIT * exactTotalLimit) {
    const { rows, estimate } = await estimated();
    if (estimate > 2 * exactTotalLimit)
      return { rows, total: estimatedTotal(estimate, exactTotalLimit), totalIsEstimate: true };
  }
  const found = await selectLeadSearch(sql, conditions(), window, exactTotalLimit);
  const { total } = oneRow(found, 'lead search with its total');
  if (total <= exactTotalLimit) {
    return {
      total,
      totalIsEstimate: false,
      rows: found.flatMap(({ total: _total, id, ...row }) => (id === null ? [] : [{ id, ...row }])),
    };
  }
  const { rows, estimate } = await estimated();
  return { rows, total: estimatedTotal(estimate, exactTotalLimit), totalIsEstimate: true };
}

/** People with their companies (loadCompanies) as lead records. */
export function leadRecordsOf(rows: readonly LeadRow[], companies: Map<number, CompanyRecord>) {
  return rows.map((r) => leadRecord(r, r.company_id ? companies.get(Number(r.company_id)) : undefined));
}

/** A page of people matching `filters` in id order, after an id, as lead records (the lead scraper reads these). */
export async function leadRecordPage(sql: Sql, filters: LeadFilters, paging: { limit: number; afterId?: bigint }) {
  const rows = (await selectLeadPage(sql, where(sql, leadConditions(sql, filters)), paging)).slice(0, paging.limit);
  return leadRecordsOf(rows, await loadCompanies(sql, companyIdsOf(rows)));
}
