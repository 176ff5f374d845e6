import { parseMapLink } from '../lib/map-links.ts';
import { planSearches, type MapsInput } from '../maps.ts';
import { isGoogleMapsLink } from './google-maps-links.ts';
import { defineUpstream, int, num, obj, text, texts } from './types.ts';

/**
 * What the tool's input becomes for the actor, which runs its start URLs alone (a start URL switches its
 * search off): `url` and `startUrls` read as the tool reads them, searches sent as the actor's search
 * (terms, location or box) and only the links that must be found as themselves sent as start URLs.
 */
function actorSearch(input: MapsInput) {
  const { translation } = planSearches(input);
  const explicitArea = Boolean(input.locationQuery ?? input.customGeolocation);
  let terms = input.searchStringsArray;
  let location = input.locationQuery;
  let box = input.customGeolocation;
  const links: string[] = [];
  if (input.url && translation) {
    if (translation.kind === 'place' && !input.searchStringsArray && !explicitArea) links.push(input.url);
    else {
      terms = translation.keywords;
      if (translation.location) location = translation.location;
      else if (translation.boundingBox) box = translation.boundingBox;
    }
  }
  for (const url of input.startUrls ?? []) {
    const link = parseMapLink(url);
    // With an area of the caller's, a search link's words are searched there, as the tool does.
    if (explicitArea && link.kind === 'search') terms = [...(terms ?? []), link.keywords];
    else links.push(url);
  }
  return { terms, location, box, links };
}

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
 * the tool's input mostly is: searchStringsArray, locationQuery, maxCrawledPlacesPerSearch and
 * customGeolocation go through; links as `actorSearch` reads them.
 */
export const mapsUpstream = defineUpstream<MapsInput>({
  tool: 'maps',
  defaultActor: 'compass~crawler-google-places',
  actorUrl: 'https://apify.com/compass/crawler-google-places',
  unavailableColumns: {
    emails: 'needs the actor’s contact-details add-on (scrapeContacts, priced per place), not switched on',
    hours: 'needs the actor’s place detail pages (scrapePlaceDetailPage, slower and priced apart), not switched on',
  },
  input(input, maxItems) {
    const { terms, location, box, links } = actorSearch(input);
    return {
      ...(links.length > 0
        ? { startUrls: links.map((url) => ({ url })) }
        : {
            ...(terms ? { searchStringsArray: terms } : {}),
            ...(location ? { locationQuery: location } : box ? { customGeolocation: polygon(box) } : {}),
          }),
      maxCrawledPlacesPerSearch: Math.min(input.maxCrawledPlacesPerSearch, maxItems),
      language: 'en',
    };
  },
  unsupported(input) {
    const foreign = [...(input.url ? [input.url] : []), ...(input.startUrls ?? [])].filter(
      (url) => !isGoogleMapsLink(url),
    );
    const { terms, links } = actorSearch(input);
    return [
      ...(foreign.length > 0 ? [`links other than Google Maps links (${foreign.join(', ')})`] : []),
      ...(links.length > 0 && terms
        ? ['place links together with a search (it runs its links alone): start them as two runs']
        : []),
    ];
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
