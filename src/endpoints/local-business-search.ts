import { z } from 'zod';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { databaseSearch, NARROW_CATALOG_SEARCH, pageRequest } from './search.ts';
import { param, pagingParams, parseParams } from '../shared/params.ts';
import { findLocalBusinesses } from '../catalog/local-businesses/search.ts';

export const localBusinessSearchParams = z
  .object({
    ...pagingParams,
    keyword: param.text.describe('Words of the name and category, stemmed; all of them.'),
    category: param.list().describe('Categories, any of (case-insensitive), e.g. "Dentist".'),
    name: param.text.describe('Partial match on the name.'),
    city: param.list().describe('Cities, any of (case-insensitive).'),
    state: param.list().describe('States, any of; names or abbreviations ("Colorado" or "CO").'),
    postalCode: param.list().describe('Postal codes, any of.'),
    countryCode: param.list().describe('Two-letter ISO country codes, any of (case-insensitive).'),
    minRating: param.num(0, 5, false).describe('Lowest rating, 0 to 5.'),
    maxRating: param.num(0, 5, false).describe('Highest rating, 0 to 5.'),
    minReviews: param.num(0, 10_000_000).describe('Fewest reviews.'),
    maxReviews: param.num(0, 10_000_000).describe('Most reviews.'),
    hasPhone: param.bool.describe('Only businesses with a phone number.'),
    hasWebsite: param.bool.describe('Only businesses with a website.'),
    hasEmail: param.bool.describe('Only businesses with an email address.'),
  })
  .strict();

/**
 * A page of the map-listing catalog (the local business database API; its declaration holds the plan
 * gate) with filters that fit it; paged and counted like the lead database.
 */
export async function searchLocalBusinesses(
  core: Pick<Core, 'sql' | 'db' | 'catalogReader' | 'config' | 'clock'>,
  principal: Principal,
  raw: unknown,
) {
  const p = parseParams(localBusinessSearchParams, raw);
  const request = pageRequest(p);
  return databaseSearch(core, principal, request, NARROW_CATALOG_SEARCH, (sql, window) =>
    findLocalBusinesses(sql, p, window),
  );
}
