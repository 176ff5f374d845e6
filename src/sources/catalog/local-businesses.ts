import { and, asc, eq, gt, gte, lte, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { localBusinessTable as lb } from '../../../db/schema/local-businesses.ts';
import type { Area } from '../../services/geo.ts';
import type { LocalBusinessSource } from '../local-businesses.ts';

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

/** Local businesses from the catalog tables. */
export function catalogLocalBusinesses(db: Executor): LocalBusinessSource {
  return {
    async searchPlaces({ keyword, area, limit, afterId }) {
      const rows = await db
        .select({
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
        })
        .from(lb)
        .where(
          and(
            keyword.trim() ? sql`${lb.searchText} @@ plainto_tsquery('english', ${keyword})` : undefined,
            areaCondition(area),
            afterId === undefined ? undefined : gt(lb.id, afterId),
          ),
        )
        .orderBy(asc(lb.id))
        .limit(limit);
      return rows;
    },
  };
}
