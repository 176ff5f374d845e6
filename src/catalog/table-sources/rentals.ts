import { and, asc, eq, exists, gt, gte, inArray, lte, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/client.ts';
import { bareHost } from '../../shared/hosts.ts';
import { rentalHostTable as host, rentalListingTable as listing } from '../../../db/tables/rentals.ts';
import { roomIdOf, type RentalListing, type RentalSource } from '../../sources/rentals.ts';

const LISTING_COLUMNS = {
  id: listing.id,
  hostId: listing.hostId,
  listingUrl: listing.listingUrl,
  title: listing.title,
  city: listing.city,
  country: listing.country,
  countryCode: listing.countryCode,
  lat: listing.lat,
  lng: listing.lng,
  pricePerNight: listing.pricePerNight,
  currency: listing.currency,
  amenities: listing.amenities,
  bedrooms: listing.bedrooms,
  guests: listing.guests,
  rating: listing.rating,
  reviewCount: listing.reviewCount,
};

/** The listing has every wanted amenity (lower-cased), whatever the case it is stored in. */
function hasAmenities(wanted: string[]): SQL | undefined {
  const lowered = [...new Set(wanted.map((a) => a.trim().toLowerCase()))];
  if (lowered.length === 0) return undefined;
  return sql`(select count(distinct lower(a)) from unnest(${listing.amenities}) a
    where lower(a) = any(${sql.param(lowered)}::text[])) = ${lowered.length}`;
}

/** The last path segment of a listing link (its room id), read in one pass of the table when no index can answer. */
const LAST_SEGMENT = sql`reverse(split_part(reverse(rtrim(${listing.listingUrl}, '/')), '/', 1))`;

/** The spellings of a listing link the catalog may store (scheme, "www."), so the unique listing_url index answers. */
function spellings(url: string, roomId: string): string[] {
  const bare = bareHost(new URL(url).hostname);
  return ['https://www.', 'https://', 'http://www.', 'http://'].map((prefix) => `${prefix}${bare}/rooms/${roomId}`);
}

/** Rental listings and their hosts from the catalog tables. */
export function catalogRentals(db: Executor): RentalSource {
  /**
   * The listings `where` selects, in id order, with their hosts. The listings are narrowed and limited
   * first, then each joins its host by primary key, so a page never reads the whole host table.
   */
  async function withHosts(where: SQL | undefined, limit?: number): Promise<RentalListing[]> {
    const base = db.select(LISTING_COLUMNS).from(listing).where(where).orderBy(asc(listing.id));
    const page = (limit === undefined ? base : base.limit(limit)).as('l');
    const rows = await db
      .select({
        id: page.id,
        listingUrl: page.listingUrl,
        title: page.title,
        city: page.city,
        country: page.country,
        countryCode: page.countryCode,
        lat: page.lat,
        lng: page.lng,
        pricePerNight: page.pricePerNight,
        currency: page.currency,
        amenities: page.amenities,
        bedrooms: page.bedrooms,
        guests: page.guests,
        rating: page.rating,
        reviewCount: page.reviewCount,
        host: {
          profileUrl: host.hostKey,
          name: host.name,
          email: host.email,
          phone: host.phone,
          isPro: host.isPro,
          isSuperhost: host.isSuperhost,
          listingsCount: host.listingsCount,
        },
      })
      .from(page)
      .innerJoin(host, eq(host.id, page.hostId))
      .orderBy(asc(page.id));
    return rows;
  }

  return {
    async searchListings(search) {
      const hostFilters = and(
        search.onlyProHosts ? eq(host.isPro, true) : undefined,
        search.onlySuperhosts ? eq(host.isSuperhost, true) : undefined,
      );
      return withHosts(
        and(
          sql`lower(${listing.city}) = lower(${search.city})`,
          eq(listing.countryCode, search.countryCode),
          search.minPrice === undefined ? undefined : gte(listing.pricePerNight, search.minPrice),
          search.maxPrice === undefined ? undefined : lte(listing.pricePerNight, search.maxPrice),
          hasAmenities(search.amenities),
          hostFilters
            ? exists(
                db
                  .select({ one: sql`1` })
                  .from(host)
                  .where(and(eq(host.id, listing.hostId), hostFilters)),
              )
            : undefined,
          search.afterId === undefined ? undefined : gt(listing.id, search.afterId),
        ),
        search.limit,
      );
    },

    async listingsByUrls(urls) {
      const wanted = urls
        .map((url) => ({ url, roomId: roomIdOf(url) }))
        .filter((w): w is { url: string; roomId: string } => w.roomId !== undefined);
      if (wanted.length === 0) return [];
      // Links on the catalog's own host are found through the unique index; others by room id alone.
      const bySpelling = new Map<string, RentalListing>();
      const candidates = [...new Set(wanted.flatMap((w) => spellings(w.url, w.roomId)))];
      for (const row of await withHosts(inArray(listing.listingUrl, candidates))) bySpelling.set(row.listingUrl, row);
      const found = new Map<string, RentalListing>();
      for (const w of wanted) {
        const hit = spellings(w.url, w.roomId)
          .map((s) => bySpelling.get(s))
          .find(Boolean);
        if (hit) found.set(w.url, hit);
      }
      const missing = [...new Set(wanted.filter((w) => !found.has(w.url)).map((w) => w.roomId))];
      if (missing.length > 0) {
        const byRoom = new Map<string, RentalListing>();
        for (const row of await withHosts(sql`${LAST_SEGMENT} in (select unnest(${sql.param(missing)}::text[]))`)) {
          const roomId = roomIdOf(row.listingUrl);
          if (roomId && !byRoom.has(roomId)) byRoom.set(roomId, row);
        }
        for (const w of wanted) {
          const row = byRoom.get(w.roomId);
          if (row && !found.has(w.url)) found.set(w.url, row);
        }
      }
      return urls.flatMap((url) => {
        const row = found.get(url);
        return row ? [{ ...row, requestedUrl: url }] : [];
      });
    },
  };
}
