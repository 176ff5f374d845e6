import type { MapsInput } from '../maps.ts';
import { defineUpstream, int, num, obj, text, texts } from './types.ts';

/** "Monday: 9 AM–5 PM" from the actor's `{ day, hours }` entries. */
function hours(value: unknown): string[] | null {
  if (!Array.isArray(value)) return null;
  const out = value
    .map((h) => [text(obj(h).day), text(obj(h).hours)])
    .filter(([day, open]) => day && open)
    .map(([day, open]) => `${day}: ${open}`);
  return out.length > 0 ? out : null;
}

/** A box's corners as the actor's `customGeolocation`, a GeoJSON polygon ([lng, lat] pairs, closed). */
function polygon(box: NonNullable<MapsInput['customGeolocation']>) {
  const [south, north] = [Math.min(box.lat1, box.lat2), Math.max(box.lat1, box.lat2)];
  const [west, east] = [Math.min(box.lng1, box.lng2), Math.max(box.lng1, box.lng2)];
  return {
    type: 'Polygon',
    coordinates: [
      [
        [west, north],
        [east, north],
        [east, south],
        [west, south],
        [west, north],
      ],
    ],
  };
}

/**
 * The map-listing scraper on Apify's Google Maps Scraper (compass/crawler-google-places), whose input
 * the tool's own input already is: searchStringsArray, locationQuery, maxCrawledPlacesPerSearch,
 * customGeolocation and startUrls go through, `url` becomes one more start URL.
 */
export const mapsUpstream = defineUpstream<MapsInput>({
  tool: 'maps',
  defaultActor: 'compass~crawler-google-places',
  actorUrl: 'https://apify.com/compass/crawler-google-places',
  input(input, maxItems) {
    const startUrls = [...(input.url ? [input.url] : []), ...(input.startUrls ?? [])].map((url) => ({ url }));
    return {
      ...(input.searchStringsArray ? { searchStringsArray: input.searchStringsArray } : {}),
      ...(input.locationQuery ? { locationQuery: input.locationQuery } : {}),
      ...(input.customGeolocation ? { customGeolocation: polygon(input.customGeolocation) } : {}),
      ...(startUrls.length > 0 ? { startUrls } : {}),
      maxCrawledPlacesPerSearch: Math.min(input.maxCrawledPlacesPerSearch, maxItems),
      language: 'en',
    };
  },
  row(item) {
    const placeId = text(item.placeId);
    const name = text(item.title);
    if (!placeId || !name) return null;
    const location = obj(item.location);
    return {
      name,
      category: text(item.categoryName),
      address: text(item.address),
      street: text(item.street),
      city: text(item.city),
      state: text(item.state),
      postal_code: text(item.postalCode),
      country_code: text(item.countryCode),
      phone: text(item.phone),
      website: text(item.website),
      emails: texts(item.emails) ?? [],
      rating: num(item.totalScore),
      review_count: int(item.reviewsCount),
      hours: hours(item.openingHours),
      latitude: num(location.lat),
      longitude: num(location.lng),
      place_id: placeId,
      url: text(item.url),
      search_term: text(item.searchString),
    };
  },
});
