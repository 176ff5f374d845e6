import type { Sql } from '../../../db/client.ts';
import type { FoundPage, PageWindow } from '../sql.ts';
import { companyIdsOf, loadCompanies, type CompanyRecord } from './companies.ts';
import type { LeadFilters } from './filters.ts';
import { leadRecord } from './lead-record.ts';
import { leadConditions, selectLeadPage, selectLeadSearch, where, type LeadRow } from './query.ts';

/**
 * The lead database's search: the people matching `filters` in id order, one page (one row more than
 * the limit when more follow) and the size of the whole search, in one statement (selectLeadSearch).
 * `excludeDelivered` leaves out the people the account has received already.
 */
export async function findLeads(sql: Sql, filters: LeadFilters, window: PageWindow, options: { accountId?: string; excludeDelivered?: boolean } = {}): Promise<FoundPage<LeadRow>> {
  const found = await selectLeadSearch(sql, where(sql, leadConditions(sql, filters, options)), window);
  return { total: found[0]!.total, rows: found.flatMap(({ total: _total, id, ...row }) => (id === null ? [] : [{ id, ...row }])) };
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
