import type { Sql } from '../../../db/client.ts';
import { stateAbbreviation } from '../../shared/geo.ts';
import { likePattern, selectCatalogPage, type Fragment, type PageWindow } from '../sql.ts';

/** The local business database's filters; lists are any-of, every filter is combined with AND. */
export interface LocalBusinessFilter {
  /** Words of the name and category, stemmed; all of them. */
  keyword?: string;
  category?: string[];
  /** Partial match on the name. */
  name?: string;
  city?: string[];
  /** Names or abbreviations of US states, or other regions as stored. */
  state?: string[];
  postalCode?: string[];
  countryCode?: string[];
  minRating?: number;
  maxRating?: number;
  minReviews?: number;
  maxReviews?: number;
  hasPhone?: boolean;
  hasWebsite?: boolean;
  hasEmail?: boolean;
}

/** A local business as the database API lists it (snake_case columns, `id` as text). */
export type LocalBusinessRow = Record<string, unknown> & { id: string };

const lower = (v: string[]) => v.map((x) => x.toLowerCase());

/** One condition per filter over `local_business x`. */
export function localBusinessConditions(sql: Sql, f: LocalBusinessFilter): Fragment[] {
  return [
    ...(f.keyword ? [sql`x.search_text @@ plainto_tsquery('english', ${f.keyword})`] : []),
    ...(f.category ? [sql`lower(x.category) = any(${lower(f.category)})`] : []),
    ...(f.name ? [sql`x.name ilike ${likePattern(f.name)}`] : []),
    ...(f.city ? [sql`lower(x.city) = any(${lower(f.city)})`] : []),
    ...(f.state ? [sql`lower(x.state) = any(${lower(f.state.map((s) => stateAbbreviation(s) ?? s))})`] : []),
    ...(f.postalCode ? [sql`x.postal_code = any(${f.postalCode})`] : []),
    ...(f.countryCode ? [sql`upper(x.country_code) = any(${f.countryCode.map((c) => c.toUpperCase())})`] : []),
    ...(f.minRating !== undefined ? [sql`x.rating >= ${f.minRating}`] : []),
    ...(f.maxRating !== undefined ? [sql`x.rating <= ${f.maxRating}`] : []),
    ...(f.minReviews !== undefined ? [sql`x.review_count >= ${f.minReviews}`] : []),
    ...(f.maxReviews !== undefined ? [sql`x.review_count <= ${f.maxReviews}`] : []),
    ...(f.hasPhone ? [sql`x.phone is not null`] : []),
    ...(f.hasWebsite ? [sql`x.website is not null`] : []),
    ...(f.hasEmail ? [sql`cardinality(x.emails) > 0`] : []),
  ];
}

/** A page of the local businesses matching `filter` in id order (one row more when more follow) and their number. */
export function findLocalBusinesses(sql: Sql, filter: LocalBusinessFilter, window: PageWindow) {
  return selectCatalogPage<LocalBusinessRow>(
    sql,
    {
      select: (sql) => sql`select x.id::text as id, x.place_id, x.name, x.category, x.street, x.city, x.state, x.postal_code, x.country_code, x.lat, x.lng, x.phone, x.website, x.emails, x.rating, x.review_count, x.opening_hours, x.contact_name`,
      from: (sql) => sql`from local_business x`,
      where: (sql) => localBusinessConditions(sql, filter),
    },
    window,
  );
}
