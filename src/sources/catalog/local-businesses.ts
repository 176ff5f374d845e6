import { and, asc, eq, gt, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { localBusinessReviewTable as review, localBusinessTable as lb, placeHostSql } from '../../../db/schema/local-businesses.ts';
import type { Area } from '../../shared/geo.ts';
import type { LocalBusinessSource, Place, PlaceLookup, PlaceReview } from '../local-businesses.ts';

function areaCondition(area: Area): SQL | undefined {
  if (area.kind === 'anywhere') return undefined;
  if (area.kind === 'box') {
    const { lat1, lat2, lng1, lng2 } = area.box;
    return and(
      gte(lb.lat, Math.min(lat1, lat2)),
      lte(lb.lat, Math.max(lat1, lat2)),
      gte(lb.lng, Math.min(lng1, lng2)),
      lte(lb.lng, Math.max(lng1, lng2)),
    );
  }
  return and(
    area.city ? sql`lower(${lb.city}) = lower(${area.city})` : undefined,
    area.state ? eq(lb.state, area.state) : undefined,
    area.postalCode ? eq(lb.postalCode, area.postalCode) : undefined,
  );
}

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

const matches = (words: string) => sql`${lb.searchText} @@ plainto_tsquery('english', ${words})`;

/** Local businesses from the catalog tables. */
export function catalogLocalBusinesses(db: Executor): LocalBusinessSource {
  const source: LocalBusinessSource = {
    async searchPlaces({ keyword, area, limit, afterId }) {
      return db
        .select(PLACE_COLUMNS)
        .from(lb)
        .where(and(keyword.trim() ? matches(keyword) : undefined, areaCondition(area), afterId === undefined ? undefined : gt(lb.id, afterId)))
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
        const near = lookup.near;
        rows = await query
          .where(and(matches(lookup.name), areaCondition(lookup.area)))
          .orderBy(
            ...(near ? [sql`(${lb.lat} - ${near.lat}) ^ 2 + ((${lb.lng} - ${near.lng}) * cos(radians(${near.lat}))) ^ 2`] : []),
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
      if (ids.length > 0) for (const place of await db.select(PLACE_COLUMNS).from(lb).where(inArray(lb.placeId, ids))) byId.set(place.placeId, place);
      const found: (Place | null)[] = [];
      for (const lookup of lookups) found.push('placeId' in lookup ? (byId.get(lookup.placeId) ?? null) : await source.findPlace(lookup));
      return found;
    },

    async latestReviews(placeIds: string[], perPlace: number): Promise<PlaceReview[]> {
      if (placeIds.length === 0) return [];
      const rows = await db.execute<{ review_id: string; place_id: string; author: string; rating: number; text: string | null; date: string }>(sql`
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
      return rows.map((r) => ({ reviewId: r.review_id, placeId: r.place_id, author: r.author, rating: r.rating, text: r.text, date: r.date }));
    },
  };
  return source;
}
