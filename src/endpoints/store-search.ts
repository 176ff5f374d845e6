import { z } from 'zod';
import type { Sql } from '../../db/client.ts';
import { STORE_SOCIALS } from '../../db/schema/stores.ts';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { searchCatalogPage, type Fragment } from './search.ts';
import { ValidationError } from '../shared/errors.ts';
import { param, pagingParams, parseParams } from '../shared/params.ts';
import { assertPlan } from '../billing/plans.ts';
import { resolveStoreNames, storeBoundFields, storeConditions, storeFilter, type SqlTemplate } from '../catalog/stores/filters.ts';
import { storeNameLists } from '../catalog/stores/names.ts';

const socials = Object.fromEntries(STORE_SOCIALS.map((s) => [s, param.bool.describe(`Only stores with a social profile on ${s}.`)])) as Record<(typeof STORE_SOCIALS)[number], typeof param.bool>;

/** The shared store filter rendered with postgres.js (lists are sent as arrays). */
const postgresTemplate = (sql: Sql): SqlTemplate<Fragment> =>
  Object.assign((strings: TemplateStringsArray, ...values: unknown[]) => sql(strings, ...(values as never[])) as Fragment, { array: (values: readonly string[]) => values });

export const storeSearchParams = z
  .object({
    ...pagingParams,
    platform: param.list().describe('Store platforms, any of, e.g. "shopify" (case-insensitive; spaces or hyphens for underscores).'),
    countryCode: param.list().describe('Two-letter ISO country codes, any of (case-insensitive).'),
    category: param.list().describe('Store categories, any of (case-insensitive), e.g. "Home & Garden".'),
    city: param.list().describe('Cities, any of (case-insensitive).'),
    state: param.list().describe('States or regions, any of (case-insensitive); a US state by name or abbreviation.'),
    technologies: param.list().describe('Technologies used, any of, matched ignoring case and spacing ("google analytics").'),
    apps: param.list().describe('Installed apps (shopify stores only), any of, matched ignoring case and spacing.'),
    planExclude: param.list().describe('Plan tiers to leave out (case-insensitive); stores without a known tier are kept.'),
    emails: param.bool.describe('Only stores with an email address.'),
    phones: param.bool.describe('Only stores with a phone number.'),
    ...socials,
    ...storeBoundFields((max, whole) => param.num(0, max, whole)),
  })
  .strict();

/**
 * GET/POST /api/v1/database/stores (growth plan and up): the e-commerce store catalog with the
 * store-leads filters (platform, location, category, technologies, apps, social profiles, plan tiers
 * excluded, traffic, sales and employee bounds with their aliases); paged and counted like the lead database.
 */
export async function searchStores(core: Pick<Core, 'sql' | 'config' | 'clock' | 'sources'>, principal: Principal, raw: unknown) {
  assertPlan(principal, 'growth', 'The e-commerce store database API');
  const p = parseParams(storeSearchParams, raw);
  if (p.page !== undefined && p.after !== undefined) throw new ValidationError([{ path: 'after', message: 'use page or after, not both' }]);
  const { filter } = await resolveStoreNames(storeFilter(p), storeNameLists(core.sources.stores));
  const { records, ...rest } = await searchCatalogPage<Record<string, unknown> & { id: string }>(
    core,
    principal,
    p,
    {
      select: (sql) => sql`select x.id::text as id, x.domain, x.name, x.platform, x.plan_tier, x.country_code, x.city, x.state, x.category, x.technologies, x.apps,
        x.instagram_url, x.facebook_url, x.tiktok_url, x.youtube_url, x.linkedin_url, x.twitter_url, x.pinterest_url, x.emails, x.phones,
        x.estimated_monthly_visits, x.estimated_monthly_sales::float8 as estimated_monthly_sales, x.employee_count`,
      from: (sql) => sql`from store x`,
      where: (sql) => storeConditions(postgresTemplate(sql), filter),
    },
    (row) => Object.fromEntries(Object.entries({ ...row, id: Number(row.id) }).filter(([, v]) => v !== null)),
  );
  return { stores: records, ...rest };
}
