import { z } from 'zod';
import { boxAround, parsePlace, type Area, type BoundingBox } from '../services/geo.ts';
import { parseMapLink, splitQuery, type MapLink } from '../services/map-links.ts';
import type { Place } from '../sources/types.ts';
import { perResult } from './pricing.ts';
import { defineTool, type Row } from './types.ts';

const PAGE_SIZE = 50;

const lat = z.number().min(-90).max(90);
const lng = z.number().min(-180).max(180);
const mapLink = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    try {
      parseMapLink(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `${(err as Error).message}` });
    }
  });

export const mapsInput = z
  .object({
    searchStringsArray: z
      .array(z.string().trim().min(1, 'search terms must not be empty').max(200))
      .min(1)
      .max(100)
      .optional()
      .describe('Search terms, e.g. ["dentist", "orthodontist"].'),
    locationQuery: z.string().trim().min(1).max(300).optional().describe('City, state or address, e.g. "Denver, CO". Use it or customGeolocation, not both.'),
    customGeolocation: z
      .object({ lat1: lat, lng1: lng, lat2: lat, lng2: lng })
      .optional()
      .describe('Bounding box with numeric corners lat1, lng1, lat2, lng2.'),
    maxCrawledPlacesPerSearch: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(10_000, 'must be at most 10000')
      .default(100)
      .describe('Places per search term; default 100.'),
    url: mapLink.optional().describe('A map-search link used instead of searchStringsArray and locationQuery.'),
    startUrls: z.array(mapLink).min(1).max(100).optional().describe('Map-search or place links.'),
  })
  .superRefine((input, ctx) => {
    if (!input.searchStringsArray && !input.url && !input.startUrls) {
      ctx.addIssue({ code: 'custom', path: [], message: 'at least one of searchStringsArray, url or startUrls is required' });
    }
    if (input.locationQuery && input.customGeolocation) {
      ctx.addIssue({ code: 'custom', path: ['customGeolocation'], message: 'use locationQuery or customGeolocation, not both' });
    }
  });
export type MapsInput = z.output<typeof mapsInput>;

interface MapSearch {
  term: string;
  area: Area;
  limit: number;
}

export interface SearchTranslation {
  url: string;
  keywords: string[];
  keywordsFrom: 'link' | 'searchStringsArray';
  location: string | null;
  boundingBox: BoundingBox | null;
  locationFrom: 'link' | 'locationQuery' | 'customGeolocation' | 'map area' | 'none';
}

const areaLabel = (area: Area) => (area.kind === 'place' ? area.text : null);

function linkArea(link: MapLink): { area: Area; from: SearchTranslation['locationFrom'] } {
  if (link.kind === 'search' && link.place) return { area: parsePlace(link.place), from: 'link' };
  if (link.center) return { area: { kind: 'box', box: boxAround(link.center.lat, link.center.lng, link.center.zoom) }, from: 'map area' };
  return { area: { kind: 'anywhere' }, from: 'none' };
}

/** Turns the input into the searches to run, and reports how a `url` was read. */
export function planSearches(input: MapsInput): { searches: MapSearch[]; translation?: SearchTranslation } {
  const limit = input.maxCrawledPlacesPerSearch;
  const explicitArea: { area: Area; from: SearchTranslation['locationFrom'] } | undefined = input.locationQuery
    ? { area: parsePlace(input.locationQuery), from: 'locationQuery' }
    : input.customGeolocation
      ? { area: { kind: 'box', box: input.customGeolocation }, from: 'customGeolocation' }
      : undefined;
  const searches: MapSearch[] = [];
  let translation: SearchTranslation | undefined;

  if (input.url) {
    const link = parseMapLink(input.url);
    const linkWords = link.kind === 'search' ? link.keywords : link.name;
    const keywords = input.searchStringsArray ?? (linkWords ? [linkWords] : []);
    const where = explicitArea ?? linkArea(link);
    for (const term of keywords) searches.push({ term, area: where.area, limit: link.kind === 'place' && !input.searchStringsArray ? 1 : limit });
    translation = {
      url: input.url,
      keywords,
      keywordsFrom: input.searchStringsArray ? 'searchStringsArray' : 'link',
      location: areaLabel(where.area),
      boundingBox: where.area.kind === 'box' ? where.area.box : null,
      locationFrom: where.from,
    };
  } else if (input.searchStringsArray) {
    const area = explicitArea?.area ?? { kind: 'anywhere' };
    for (const term of input.searchStringsArray) searches.push({ term, area, limit });
  }

  for (const startUrl of input.startUrls ?? []) {
    const link = parseMapLink(startUrl);
    const where = explicitArea ?? linkArea(link);
    if (link.kind === 'place') searches.push({ term: link.name, area: where.area, limit: 1 });
    else searches.push({ term: link.keywords, area: where.area, limit });
  }
  return { searches, translation };
}

function formatAddress(p: Place): string {
  const stateZip = [p.state, p.postalCode].filter(Boolean).join(' ');
  return [p.street, p.city, stateZip].filter(Boolean).join(', ');
}

function toRow(p: Place, searchTerm: string): Row {
  return {
    name: p.name,
    category: p.category,
    address: formatAddress(p),
    street: p.street,
    city: p.city,
    state: p.state,
    postal_code: p.postalCode,
    country_code: p.countryCode,
    phone: p.phone,
    website: p.website,
    emails: p.emails,
    rating: p.rating,
    review_count: p.reviewCount,
    opening_hours: p.openingHours,
    latitude: p.lat,
    longitude: p.lng,
    place_id: p.placeId,
    search_term: searchTerm,
  };
}

export const mapsTool = defineTool({
  name: 'maps',
  title: 'Map-listing scraper',
  description:
    'Local businesses from map listings: name, address, phone, website, rating, opening hours and review count, per search term and location.',
  rest: { path: '/api/v1/scrape/maps' },
  graphql: { mutation: 'startMapsScrape', inputType: 'StartMapsScrapeInput' },
  mcp: { name: 'scrape_maps' },
  input: mapsInput,
  price: perResult('business', '0.0099'),
  cancellable: true,
  columns: [
    { key: 'name', header: 'name', description: 'Business name' },
    { key: 'category', header: 'category', description: 'Main category' },
    { key: 'address', header: 'address', description: 'Full street address' },
    { key: 'street', header: 'street', description: 'Street and number' },
    { key: 'city', header: 'city', description: 'City' },
    { key: 'state', header: 'state', description: 'State or region' },
    { key: 'postal_code', header: 'postal_code', description: 'Postal code' },
    { key: 'country_code', header: 'country_code', description: 'ISO country code' },
    { key: 'phone', header: 'phone', description: 'Phone number' },
    { key: 'website', header: 'website', description: 'Website URL' },
    { key: 'emails', header: 'emails', description: 'Email addresses found for the business' },
    { key: 'rating', header: 'rating', description: 'Average rating, 1–5' },
    { key: 'review_count', header: 'review_count', description: 'Number of reviews' },
    { key: 'opening_hours', header: 'opening_hours', description: 'Opening hours by weekday' },
    { key: 'latitude', header: 'latitude', description: 'Latitude' },
    { key: 'longitude', header: 'longitude', description: 'Longitude' },
    { key: 'place_id', header: 'place_id', description: 'Stable place identifier' },
    { key: 'search_term', header: 'search_term', description: 'The search term that found the place' },
  ],
  requested: (input) => planSearches(input).searches.reduce((sum, s) => sum + s.limit, 0),
  describeStart(input) {
    const { searches, translation } = planSearches(input);
    return {
      message: `Searching ${searches.length} term${searches.length === 1 ? '' : 's'}, up to ${input.maxCrawledPlacesPerSearch} places each`,
      extra: translation ? { search_translation: translation } : undefined,
    };
  },
  async *run(ctx) {
    const { searches } = planSearches(ctx.input);
    const seen = new Set<string>();
    for (const search of searches) {
      let taken = 0;
      let afterId: number | undefined;
      while (taken < search.limit && !ctx.signal.aborted) {
        const page = await ctx.sources.localBusinesses.searchPlaces({
          keyword: search.term,
          area: search.area,
          limit: Math.min(PAGE_SIZE, search.limit - taken),
          afterId,
        });
        if (page.length === 0) break;
        afterId = page.at(-1)!.id;
        const rows: Row[] = [];
        for (const place of page) {
          if (seen.has(place.placeId)) continue;
          seen.add(place.placeId);
          rows.push(toRow(place, search.term));
          taken += 1;
        }
        yield { rows, message: `"${search.term}": ${taken} place${taken === 1 ? '' : 's'} found` };
      }
    }
  },
});

/** The overview's `POST /api/v1/maps/run {query, limit}`, read as a maps input. */
export const overviewMapsRequest = z
  .object({
    query: z.string().trim().min(1, 'query is required').max(300),
    limit: z.number().int('must be a whole number').min(1, 'must be at least 1').max(10_000, 'must be at most 10000').default(100),
  })
  .transform(({ query, limit }) => ({ url: undefined, ...searchFromQuery(query), maxCrawledPlacesPerSearch: limit }));

/** "dentists in Denver, CO" → terms plus location; a bare query searches everywhere. */
function searchFromQuery(query: string): { searchStringsArray: string[]; locationQuery?: string } {
  const { keywords, place } = splitQuery(query);
  return place ? { searchStringsArray: [keywords], locationQuery: place } : { searchStringsArray: [keywords] };
}
