import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import {
  localBusinessReviewTable as review,
  localBusinessTable as lb,
  placeHostSql,
} from '../../../db/tables/local-businesses.ts';
import { areaFilter, localBusinessConditions, type LocalBusinessFilter } from '../local-businesses/search.ts';
import { drizzleTemplate } from '../sql.ts';
import type { LocalBusinessSource, Place, PlaceLookup, PlaceReview } from '../../sources/local-businesses.ts';

const PLACE_COLUMNS = {
  id: lb.id,
  placeId: lb.placeId,
  name: lb.name,
  category: lb.category,
  street: lb.street,
  city: lb.city,
  state: lb.state,
  postalCode: lb.postalCode,
  countryCode: lb.countryCode,
  lat: lb.lat,
  lng: lb.lng,
  phone: lb.phone,
  website: lb.website,
  emails: lb.emails,
  rating: lb.rating,
  reviewCount: lb.reviewCount,
  openingHours: lb.openingHours,
};

/** The catalog's local-business conditions (shared with the database API) for a tool's words and area. */
const where = (filter: LocalBusinessFilter, afterId?: number) =>
  and(...localBusinessConditions(drizzleTemplate, filter), afterId === undefined ? undefined : gt(lb.id, afterId));

/** Local businesses from the catalog tables. */
export function catalogLocalBusinesses(db: Executor): LocalBusinessSource {
  const source: LocalBusinessSource = {
    async searchPlaces({ keyword, area, limit, afterId }) {
      return db
        .select(PLACE_COLUMNS)
        .from(lb)
        .where(where({ keyword, ...areaFilter(area) }, afterId))
        .orderBy(asc(lb.id))
        .limit(limit);
    },

    async findPlace(lookup: PlaceLookup): Promise<Place | null> {
      const query = db.select(PLACE_COLUMNS).from(lb);
      let rows: Place[];
      if ('placeId' in lookup) {
        rows = await query.where(eq(lb.placeId, lookup.placeId)).limit(1);
      } else if ('websiteHost' in lookup) {
        rows = await query
          .where(eq(sql.raw(placeHostSql('local_business.')), lookup.websiteHost))
          .orderBy(asc(lb.id))
          .limit(1);
      } else {
        // Words that hold no searchable term name no place.
        if (!lookup.name.trim()) return null;
        const near = lookup.near;
        rows = await query
          .where(where({ keyword: lookup.name, ...areaFilter(lookup.area) }))
          .orderBy(
            ...(near
              ? [sql`(${lb.lat} - ${near.lat}) ^ 2 + ((${lb.lng} - ${near.lng}) * cos(radians(${near.lat}))) ^ 2`]
              : []),
            asc(lb.id),
          )
          .limit(1);
      }
      return rows[0] ?? null;
    },

    async findPlaces(lookups: PlaceLookup[]): Promise<(Place | null)[]> {
      // Place ids in one query; other lookups (by website, by name near a point) one by one.
      const ids = lookups.flatMap((l) => ('placeId' in l ? [l.placeId] : []));
      const byId = new Map<string, Place>();
      if (ids.length > 0)
        for (const place of await db.select(PLACE_COLUMNS).from(lb).where(inArray(lb.placeId, ids)))
          byId.set(place.placeId, place);
      const found: (Place | null)[] = [];
      for (const lookup of lookups)
        found.push('placeId' in lookup ? (byId.get(lookup.placeId) ?? null) : await source.findPlace(lookup));
      return found;
    },

    async latestReviews(placeIds: string[], perPlace: number): Promise<PlaceReview[]> {
      if (placeIds.length === 0) return [];
      const rows = await db.execute<{
        review_id: string;
        place_id: string;
        author: string;
        rating: number;
        text: string | null;
        date: string;
      }>(sql`
        select r.review_key as review_id, p.place_id, r.author, r.rating, r.text, r.published_at::text as date
        from unnest(${sql.param(placeIds)}::text[]) with ordinality as p(place_id, n)
        join ${lb} b on b.place_id = p.place_id
        cross join lateral (
          select review_key, author, rating, text, published_at, id
          from ${review} r
          where r.business_id = b.id
          order by r.published_at desc, r.id desc
          limit ${perPlace}
        ) r
        order by p.n, r.published_at desc, r.id desc`);
      return rows.map((r) => ({
        reviewId: r.review_id,
        placeId: r.place_id,
        author: r.author,
        rating: r.rating,
        text: r.text,
        date: r.date,
      }));
    },
  };
  return source;
}
