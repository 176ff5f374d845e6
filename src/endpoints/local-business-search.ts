import { z } from 'zod';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { likePattern, searchCatalogPage } from './search.ts';
import { ValidationError } from '../shared/errors.ts';
import { stateAbbreviation } from '../shared/geo.ts';
import { param, pagingParams, parseParams } from '../shared/params.ts';
import { assertPlan } from '../billing/plans.ts';

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
 * GET/POST /api/v1/database/local-businesses (growth plan and up): the map-listing catalog with
 * filters that fit it; paged and counted like the lead database.
 */
export async function searchLocalBusinesses(core: Pick<Core, 'sql' | 'config' | 'clock'>, principal: Principal, raw: unknown) {
  assertPlan(principal, 'growth', 'The local business database API');
  const p = parseParams(localBusinessSearchParams, raw);
  if (p.page !== undefined && p.after !== undefined) throw new ValidationError([{ path: 'after', message: 'use page or after, not both' }]);
  const lower = (v: string[]) => v.map((x) => x.toLowerCase());
  const { records, ...rest } = await searchCatalogPage<Record<string, unknown> & { id: string }>(
    core,
    principal,
    p,
    {
      select: (sql) => sql`select x.id::text as id, x.place_id, x.name, x.category, x.street, x.city, x.state, x.postal_code, x.country_code, x.lat, x.lng, x.phone, x.website, x.emails, x.rating, x.review_count, x.opening_hours, x.contact_name`,
      from: (sql) => sql`from local_business x`,
      where: (sql) => [
        ...(p.keyword ? [sql`x.search_text @@ plainto_tsquery('english', ${p.keyword})`] : []),
        ...(p.category ? [sql`lower(x.category) = any(${lower(p.category)})`] : []),
        ...(p.name ? [sql`x.name ilike ${likePattern(p.name)}`] : []),
        ...(p.city ? [sql`lower(x.city) = any(${lower(p.city)})`] : []),
        ...(p.state ? [sql`lower(x.state) = any(${lower(p.state.map((s) => stateAbbreviation(s) ?? s))})`] : []),
        ...(p.postalCode ? [sql`x.postal_code = any(${p.postalCode})`] : []),
        ...(p.countryCode ? [sql`upper(x.country_code) = any(${p.countryCode.map((c) => c.toUpperCase())})`] : []),
        ...(p.minRating !== undefined ? [sql`x.rating >= ${p.minRating}`] : []),
        ...(p.maxRating !== undefined ? [sql`x.rating <= ${p.maxRating}`] : []),
        ...(p.minReviews !== undefined ? [sql`x.review_count >= ${p.minReviews}`] : []),
        ...(p.maxReviews !== undefined ? [sql`x.review_count <= ${p.maxReviews}`] : []),
        ...(p.hasPhone ? [sql`x.phone is not null`] : []),
        ...(p.hasWebsite ? [sql`x.website is not null`] : []),
        ...(p.hasEmail ? [sql`cardinality(x.emails) > 0`] : []),
      ],
    },
    (row) => Object.fromEntries(Object.entries({ ...row, id: Number(row.id) }).filter(([, v]) => v !== null)),
  );
  return { businesses: records, ...rest };
}
