import type { Sql } from '../../db/client.ts';
import type { Company } from '../../db/schema/leads.ts';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { takeAllowance } from '../billing/allowances.ts';
import { AppError } from '../shared/errors.ts';
import { assertPlan } from '../billing/plans.ts';
import { COMPANY_FILTERS, isSet, PARAMETER_OF, type LeadFilters } from '../catalog/leads/filters.ts';
import { parseLeadSearch, filtersOf } from '../catalog/leads/params.ts';
import { translatePeopleSearchUrl, type SearchTranslation } from '../catalog/leads/people-search-url.ts';
import { leadRecord } from '../catalog/leads/lead-record.ts';
import { leadConditions, selectLeadSearch, where, type LeadRow } from '../catalog/leads/query.ts';

export interface CompanyRecord {
  id: number;
  name: string;
  domain: string;
  industry: string | null;
  sizeBand: string | null;
  employeesCount: number | null;
  annualRevenue: number | null;
  city: string | null;
  state: string | null;
  country: string | null;
  keywords: string[];
  technologies: string[];
  founded: number | null;
  phone: string | null;
  linkedinUrl: string | null;
  twitterUrl: string | null;
  facebookUrl: string | null;
}

/** Companies by id, one query, for a page of leads (the GraphQL DataLoader batches the same call). */
export async function loadCompanies(sql: Sql, ids: readonly number[]): Promise<Map<number, CompanyRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<CompanyRecord[]>`
    select id::int, name, domain, industry, size_band as "sizeBand", employees_count as "employeesCount", annual_revenue::float8 as "annualRevenue",
           city, state, country, keywords, technologies, founded, phone, linkedin_url as "linkedinUrl", twitter_url as "twitterUrl", facebook_url as "facebookUrl"
    from company where id = any(${[...ids]}::bigint[])`;
  return new Map(rows.map((r) => [r.id, r]));
}

/** The URL's filters, with every filter sent explicitly replacing the matching one. */
function mergeFilters(fromUrl: LeadFilters, explicit: LeadFilters): LeadFilters {
  return { ...fromUrl, ...explicit };
}

/** False while the companies dataset is being prepared (an import is loading it). */
export async function companiesReady(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ ready: boolean }[]>`select ready from dataset_state where dataset = 'companies'`;
  return row?.ready ?? true;
}

export interface LeadSearchResult {
  leads: Record<string, unknown>[];
  pagination: { page: number | null; limit: number; total: number; next_after: string | null; has_more: boolean };
  daily_allowance: { remaining: number };
  search_translation?: SearchTranslation;
  /** People rows and their companies, for faces that shape records themselves. */
  rows: LeadRow[];
  companies: Map<number, CompanyRecord>;
}

/** The lead search as REST and MCP answer it: the records, paging and translation, without the raw rows. */
export function leadSearchBody({ rows: _rows, companies: _companies, ...body }: LeadSearchResult) {
  return body;
}

/**
 * GET/POST /api/v1/database/leads. Growth plan and up. Every lead returned is saved to the account;
 * leads it already received do not count against the daily allowance again, and `excludeDelivered`
 * leaves them out.
 */
export async function searchLeads(core: Pick<Core, 'sql' | 'config' | 'clock'>, principal: Principal, raw: unknown): Promise<LeadSearchResult> {
  assertPlan(principal, 'growth', 'The lead database API');
  const params = parseLeadSearch(raw);
  let filters = filtersOf(params);
  let translation: SearchTranslation | undefined;
  if (params.url) {
    const fromUrl = translatePeopleSearchUrl(params.url);
    translation = fromUrl.translation;
    if (translation.applied.length + translation.broadened.length === 0) {
      throw new AppError(400, 'no_usable_filters', 'The url has no filters the lead database can use; see search_translation for what was found.', translation);
    }
    filters = mergeFilters(fromUrl.filters, filters);
  }
  const companyFilters = COMPANY_FILTERS.filter((k) => isSet(filters[k]));
  if (companyFilters.length > 0 && !(await companiesReady(core.sql))) {
    const names = companyFilters.map((k) => PARAMETER_OF[k]);
    throw new AppError(
      409,
      'filters_not_applied_yet',
      `Company data is still being prepared, so these filters cannot be applied yet: ${names.join(', ')}. Nothing was counted; retry later or search without them.`,
      names,
      { filters_not_applied_yet: names },
    );
  }

  const limit = params.limit ?? 50;
  const page = params.after === undefined ? (params.page ?? 1) : null;
  const afterId = params.after === undefined ? undefined : BigInt(params.after);

  return core.sql.begin(async (tx) => {
    const sql = tx as unknown as Sql;
    // Statements that do not wait for each other's answers are sent together (pipelined).
    const timeout = sql`select set_config('statement_timeout', ${String(core.config.leadQueryTimeoutMs)}, true)`;
    let rows: LeadRow[];
    let total: number;
    try {
      const whereClause = where(sql, leadConditions(sql, filters, { accountId: principal.accountId, excludeDelivered: params.excludeDelivered }));
      const [, found] = await Promise.all([timeout, selectLeadSearch(sql, whereClause, { limit, offset: page ? (page - 1) * limit : 0, afterId })]);
      total = found[0]!.total;
      rows = found.flatMap(({ total: _total, id, ...row }) => (id === null ? [] : [{ id, ...row }]));
    } catch (err) {
      if ((err as { code?: string }).code === '57014') {
        throw new AppError(503, 'query_timeout', `The search took longer than ${core.config.leadQueryTimeoutMs / 1000} s. Narrow it and retry: fewer titles or keywords, or add a location or a company size (minEmployees/maxEmployees).`);
      }
      throw err;
    }
    const hasMore = rows.length > limit;
    rows = rows.slice(0, limit);

    // Leads new to this account count against today's allowance; already-delivered ones are free.
    const ids = rows.map((r) => r.id);
    const [delivered, companies] = await Promise.all([
      sql<{ id: string }[]>`select person_id::text as id from delivered_lead where account_id = ${principal.accountId} and person_id = any(${ids}::bigint[])`,
      loadCompanies(sql, [...new Set(rows.map((r) => r.company_id).filter((id): id is string => id !== null).map(Number))]),
    ]);
    const known = new Set(delivered.map((r) => r.id));
    const fresh = ids.filter((id) => !known.has(id));
    const allowance = await takeAllowance(sql, principal.accountId, 'database', fresh.length, core.config.dailyDatabaseRecords, core.clock());
    const keep = new Set([...known, ...fresh.slice(0, allowance.granted)]);
    const cut = rows.length - keep.size;
    rows = rows.filter((r) => keep.has(r.id));
    const granted = fresh.slice(0, allowance.granted);
    if (granted.length > 0) {
      await sql`insert into delivered_lead (account_id, person_id) select ${principal.accountId}, unnest(${granted}::bigint[]) on conflict do nothing`;
    }
    const last = rows.at(-1);
    return {
      leads: rows.map((r) => leadRecord(r, r.company_id ? companies.get(Number(r.company_id)) : undefined)),
      pagination: {
        page,
        limit,
        total,
        next_after: (hasMore || cut > 0) && last ? last.id : null,
        has_more: hasMore || cut > 0,
      },
      daily_allowance: { remaining: allowance.remaining },
      ...(translation ? { search_translation: translation } : {}),
      rows,
      companies,
    };
  });
}

