import { z } from 'zod';
import { STORE_SOCIALS } from '../../db/tables/stores.ts';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { databaseSearch, NARROW_CATALOG_SEARCH, pageRequest } from './search.ts';
import { param, pagingParams, parseParams } from '../shared/params.ts';
import { resolveStoreNames, storeBoundFields, storeFilter } from '../catalog/stores/filters.ts';
import { storeNameLists } from '../catalog/stores/names.ts';
import { findStores } from '../catalog/stores/search.ts';

const socials = Object.fromEntries(
  STORE_SOCIALS.map((s) => [s, param.bool.describe(`Only stores with a social profile on ${s}.`)]),
) as Record<(typeof STORE_SOCIALS)[number], typeof param.bool>;

export const storeSearchParams = z
  .object({
    ...pagingParams,
    platform: param
      .list()
      .describe('Store platforms, any of, e.g. "shopify" (case-insensitive; spaces or hyphens for underscores).'),
    countryCode: param.list().describe('Two-letter ISO country codes, any of (case-insensitive).'),
    category: param.list().describe('Store categories, any of (case-insensitive), e.g. "Home & Garden".'),
    city: param.list().describe('Cities, any of (case-insensitive).'),
    state: param.list().describe('States or regions, any of (case-insensitive); a US state by name or abbreviation.'),
    technologies: param
      .list()
      .describe('Technologies used, any of, matched ignoring case and spacing ("google analytics").'),
    apps: param.list().describe('Installed apps (shopify stores only), any of, matched ignoring case and spacing.'),
    planExclude: param
      .list()
      .describe('Plan tiers to leave out (case-insensitive); stores without a known tier are kept.'),
    emails: param.bool.describe('Only stores with an email address.'),
    phones: param.bool.describe('Only stores with a phone number.'),
    ...socials,
    ...storeBoundFields((max, whole) => param.num(0, max, whole)),
  })
  .strict();

/**
 * A page of the e-commerce store catalog (the store database API; its declaration holds the plan gate) with the
 * store-leads filters (platform, location, category, technologies, apps, social profiles, plan tiers
 * excluded, traffic, sales and employee bounds with their aliases); paged and counted like the lead database.
 */
export async function searchStores(
  core: Pick<Core, 'sql' | 'db' | 'catalogReader' | 'config' | 'clock' | 'sources'>,
  principal: Principal,
  raw: unknown,
) {
  const p = parseParams(storeSearchParams, raw);
  const request = pageRequest(p);
  const { filter } = await resolveStoreNames(storeFilter(p), storeNameLists(core.sources.stores));
  return databaseSearch(core, principal, request, NARROW_CATALOG_SEARCH, (sql, window) =>
    findStores(sql, filter, window),
  );
}
