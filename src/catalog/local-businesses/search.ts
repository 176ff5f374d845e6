import type { Sql } from '../../../db/client.ts';
import { stateAbbreviation, type Area } from '../../shared/geo.ts';
import { likePattern, postgresTemplate, selectCatalogPage, type PageWindow, type SqlTemplate } from '../sql.ts';

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
  /** Inside a box of latitudes and longitudes (the tools' areas). */
  bounds?: { minLat: number; maxLat: number; minLng: number; maxLng: number };
}

/** A local business as the database API lists it (snake_case columns, `id` as text). */
export type LocalBusinessRow = Record<string, unknown> & { id: string };

const lower = (v: string[]) => v.map((x) => x.toLowerCase());

/**
 * One condition per filter over the local_business table (its columns unqualified), for the database
 * API (postgres.js) and the tools' catalog source (drizzle) alike.
 */
export function localBusinessConditions<F>(q: SqlTemplate<F>, f: LocalBusinessFilter): F[] {
  const c: F[] = [];
  if (f.keyword?.trim()) c.push(q`search_text @@ plainto_tsquery('english', ${f.keyword})`);
  if (f.category) c.push(q`lower(category) = any(${q.array(lower(f.category))}::text[])`);
  if (f.name) c.push(q`name ilike ${likePattern(f.name)}`);
  if (f.city) c.push(q`lower(city) = any(${q.array(lower(f.city))}::text[])`);
  if (f.state) c.push(q`lower(state) = any(${q.array(lower(f.state.map((s) => stateAbbreviation(s) ?? s)))}::text[])`);
  if (f.postalCode) c.push(q`postal_code = any(${q.array(f.postalCode)}::text[])`);
  if (f.countryCode)
    c.push(q`upper(country_code) = any(${q.array(f.countryCode.map((x) => x.toUpperCase()))}::text[])`);
  if (f.minRating !== undefined) c.push(q`rating >= ${f.minRating}`);
  if (f.maxRating !== undefined) c.push(q`rating <= ${f.maxRating}`);
  if (f.minReviews !== undefined) c.push(q`review_count >= ${f.minReviews}`);
  if (f.maxReviews !== undefined) c.push(q`review_count <= ${f.maxReviews}`);
  if (f.hasPhone) c.push(q`phone is not null`);
  if (f.hasWebsite) c.push(q`website is not null`);
  if (f.hasEmail) c.push(q`cardinality(emails) > 0`);
  if (f.bounds) {
    const { minLat, maxLat, minLng, maxLng } = f.bounds;
    c.push(q`lat >= ${minLat}`, q`lat <= ${maxLat}`, q`lng >= ${minLng}`, q`lng <= ${maxLng}`);
  }
  return c;
}

/** The filter of a tool's area: a city, state or postal code as the place names them, or a box. */
export function areaFilter(area: Area): LocalBusinessFilter {
  if (area.kind === 'anywhere') return {};
  if (area.kind === 'box') {
    const { lat1, lat2, lng1, lng2 } = area.box;
    return {
      bounds: {
        minLat: Math.min(lat1, lat2),
        maxLat: Math.max(lat1, lat2),
        minLng: Math.min(lng1, lng2),
        maxLng: Math.max(lng1, lng2),
      },
    };
  }
  return {
    ...(area.city ? { city: [area.city] } : {}),
    ...(area.state ? { state: [area.state] } : {}),
    ...(area.postalCode ? { postalCode: [area.postalCode] } : {}),
  };
}

/** A page of the local businesses matching `filter` in id order (one row more when more follow) and their number. */
export function findLocalBusinesses(sql: Sql, filter: LocalBusinessFilter, window: PageWindow) {
  return selectCatalogPage<LocalBusinessRow>(
    sql,
    {
      select: (sql) =>
        sql`select x.id::text as id, x.place_id, x.name, x.category, x.street, x.city, x.state, x.postal_code,
          x.country_code, x.lat, x.lng, x.phone, x.website, x.emails, x.rating, x.review_count, x.opening_hours,
          x.contact_name`,
      table: 'local_business',
      where: (sql) => localBusinessConditions(postgresTemplate(sql), filter),
    },
    window,
  );
}
