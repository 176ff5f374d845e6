import { z } from 'zod';
import { STORE_SOCIALS } from '../../db/schema/stores.ts';
import type { Core } from '../core.ts';
import type { Principal } from './accounts.ts';
import { searchCatalogPage } from './catalog-search.ts';
import { ValidationError } from './errors.ts';
import { param, pagingParams, parseParams } from './params.ts';
import { assertPlan } from './plans.ts';

const socials = Object.fromEntries(STORE_SOCIALS.map((s) => [s, param.bool])) as Record<(typeof STORE_SOCIALS)[number], typeof param.bool>;

export const storeSearchParams = z
  .object({
    ...pagingParams,
    platform: param.list(),
    countryCode: param.list(),
    category: param.list(),
    city: param.list(),
    state: param.list(),
    technologies: param.list(),
    apps: param.list(),
    planExclude: param.list(),
    emails: param.bool,
    phones: param.bool,
    ...socials,
    minEstimatedMonthlyVisits: param.num(0, 1e12),
    maxEstimatedMonthlyVisits: param.num(0, 1e12),
    minEstimatedMonthlySales: param.num(0, 1e15, false),
    maxEstimatedMonthlySales: param.num(0, 1e15, false),
    minEmployeeCount: param.num(0, 10_000_000),
    maxEmployeeCount: param.num(0, 10_000_000),
    visitsMin: param.num(0, 1e12),
    visitsMax: param.num(0, 1e12),
    salesMin: param.num(0, 1e15, false),
    salesMax: param.num(0, 1e15, false),
    employeesMin: param.num(0, 10_000_000),
    employeesMax: param.num(0, 10_000_000),
  })
  .strict();

/**
 * GET/POST /api/v1/database/stores (growth plan and up): the e-commerce store catalog with the
 * store-leads filters (platform, location, category, technologies, apps, social profiles, plan tiers
 * excluded, traffic, sales and employee bounds with their aliases); paged and counted like the lead database.
 */
export async function searchStores(core: Pick<Core, 'sql' | 'config' | 'clock'>, principal: Principal, raw: unknown) {
  assertPlan(principal, 'growth', 'The e-commerce store database API');
  const p = parseParams(storeSearchParams, raw);
  if (p.page !== undefined && p.after !== undefined) throw new ValidationError([{ path: 'after', message: 'use page or after, not both' }]);
  const visitsMin = p.minEstimatedMonthlyVisits ?? p.visitsMin;
  const visitsMax = p.maxEstimatedMonthlyVisits ?? p.visitsMax;
  const salesMin = p.minEstimatedMonthlySales ?? p.salesMin;
  const salesMax = p.maxEstimatedMonthlySales ?? p.salesMax;
  const employeesMin = p.minEmployeeCount ?? p.employeesMin;
  const employeesMax = p.maxEmployeeCount ?? p.employeesMax;
  const lower = (v: string[]) => v.map((x) => x.toLowerCase().replace(/\s+/g, '_'));
  const { records, ...rest } = await searchCatalogPage<Record<string, unknown> & { id: string }>(
    core,
    principal,
    p,
    {
      select: (sql) => sql`select x.id::text as id, x.domain, x.name, x.platform, x.plan_tier, x.country_code, x.city, x.state, x.category, x.technologies, x.apps,
        x.instagram_url, x.facebook_url, x.tiktok_url, x.youtube_url, x.linkedin_url, x.twitter_url, x.pinterest_url, x.emails, x.phones,
        x.estimated_monthly_visits, x.estimated_monthly_sales::float8 as estimated_monthly_sales, x.employee_count`,
      from: (sql) => sql`from store x`,
      where: (sql) => [
        ...(p.platform ? [sql`x.platform = any(${lower(p.platform)})`] : []),
        ...(p.countryCode ? [sql`x.country_code = any(${p.countryCode.map((c) => c.toUpperCase())})`] : []),
        ...(p.category ? [sql`lower(x.category) = any(${p.category.map((c) => c.toLowerCase())})`] : []),
        ...(p.city ? [sql`lower(x.city) = any(${p.city.map((c) => c.toLowerCase())})`] : []),
        ...(p.state ? [sql`lower(x.state) = any(${p.state.map((c) => c.toLowerCase())})`] : []),
        ...(p.technologies ? [sql`x.technologies && ${p.technologies}::text[]`] : []),
        ...(p.apps ? [sql`x.apps && ${p.apps}::text[]`] : []),
        ...(p.planExclude ? [sql`(x.plan_tier is null or lower(x.plan_tier) <> all(${lower(p.planExclude)}))`] : []),
        ...(p.emails ? [sql`cardinality(x.emails) > 0`] : []),
        ...(p.phones ? [sql`cardinality(x.phones) > 0`] : []),
        ...STORE_SOCIALS.filter((s) => p[s]).map((s) => sql`${sql(`${s}_url`)} is not null`),
        ...(visitsMin !== undefined ? [sql`x.estimated_monthly_visits >= ${visitsMin}`] : []),
        ...(visitsMax !== undefined ? [sql`x.estimated_monthly_visits <= ${visitsMax}`] : []),
        ...(salesMin !== undefined ? [sql`x.estimated_monthly_sales >= ${salesMin}`] : []),
        ...(salesMax !== undefined ? [sql`x.estimated_monthly_sales <= ${salesMax}`] : []),
        ...(employeesMin !== undefined ? [sql`x.employee_count >= ${employeesMin}`] : []),
        ...(employeesMax !== undefined ? [sql`x.employee_count <= ${employeesMax}`] : []),
      ],
    },
    (row) => Object.fromEntries(Object.entries({ ...row, id: Number(row.id) }).filter(([, v]) => v !== null)),
  );
  return { stores: records, ...rest };
}
