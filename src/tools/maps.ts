import { z } from 'zod';
import { boxAround, parsePlace, type Area, type BoundingBox } from '../shared/geo.ts';
import { parseMapLink, placeLink, splitQuery, type MapLink } from './lib/map-links.ts';
import type { Place, PlaceLookup } from '../sources/types.ts';
import { perResult } from '../billing/pricing.ts';
import { cell, defineTool, type Row } from './types.ts';
import { mapsInput, type MapsInput } from './lib/maps-input.ts';

export { mapsInput, type MapsInput };

const PAGE_SIZE = 50;

/** A keyword search in an area, or the one place a place link names. */
export type MapSearch =
  | { kind: 'search'; term: string; area: Area; limit: number }
  | { kind: 'place'; term: string; lookup: PlaceLookup; limit: 1 };

type LocationFrom = 'link' | 'locationQuery' | 'customGeolocation' | 'map area' | 'place id' | 'none';

export interface SearchTranslation {
  url: string;
  /** What the link is: a search, or one place. */
  kind: 'search' | 'place';
  keywords: string[];
  keywordsFrom: 'link' | 'searchStringsArray';
  location: string | null;
  boundingBox: BoundingBox | null;
  locationFrom: LocationFrom;
  /** The place id a place link carries; it finds that place wherever it is. */
  placeId: string | null;
}

/** Zoom of the area searched around a place link's point when the link has no map view. */
const PLACE_ZOOM = 17;

const areaLabel = (area: Area) => (area.kind === 'place' ? area.text : null);

function linkArea(link: MapLink): { area: Area; from: LocationFrom } {
  if (link.kind === 'search' && link.place) return { area: parsePlace(link.place), from: 'link' };
  if (link.center)
    return {
      area: { kind: 'box', box: boxAround(link.center.lat, link.center.lng, link.center.zoom) },
      from: 'map area',
    };
  if (link.kind === 'place' && link.point)
    return { area: { kind: 'box', box: boxAround(link.point.lat, link.point.lng, PLACE_ZOOM) }, from: 'map area' };
  return { area: { kind: 'anywhere' }, from: 'none' };
}

/**
 * How to find the one place of a place link: by its id, else by name in `where` (the link's own map
 * area unless replaced), nearest to the link's point first.
 */
export function placeLinkLookup(
  link: Extract<MapLink, { kind: 'place' }>,
  where: { area: Area; from: LocationFrom } = linkArea(link),
): PlaceLookup {
  if (link.placeId) return { placeId: link.placeId };
  const near = where.from === 'map area' ? (link.point ?? link.center) : undefined;
  if (!link.name) throw new Error('a place link with neither a place id nor a name');
  return { name: link.name, area: where.area, ...(near ? { near: { lat: near.lat, lng: near.lng } } : {}) };
}

function placeSearch(link: Extract<MapLink, { kind: 'place' }>, where: { area: Area; from: LocationFrom }): MapSearch {
  return { kind: 'place', term: link.name ?? link.placeId ?? '', lookup: placeLinkLookup(link, where), limit: 1 };
}

/** Turns the input into the searches to run, and reports how a `url` was read. */
export function planSearches(input: MapsInput): { searches: MapSearch[]; translation?: SearchTranslation } {
  const limit = input.maxCrawledPlacesPerSearch;
  const explicitArea: { area: Area; from: LocationFrom } | undefined = input.locationQuery
    ? { area: parsePlace(input.locationQuery), from: 'locationQuery' }
    : input.customGeolocation
      ? { area: { kind: 'box', box: input.customGeolocation }, from: 'customGeolocation' }
      : undefined;
  const searches: MapSearch[] = [];
  let translation: SearchTranslation | undefined;

  if (input.url) {
    const link = parseMapLink(input.url);
    const where = explicitArea ?? linkArea(link);
    let keywords: string[];
    if (input.searchStringsArray) {
      keywords = input.searchStringsArray;
      for (const term of keywords) searches.push({ kind: 'search', term, area: where.area, limit });
    } else if (link.kind === 'place') {
      const search = placeSearch(link, where);
      keywords = link.name ? [link.name] : [];
      searches.push(search);
    } else {
      keywords = [link.keywords];
      searches.push({ kind: 'search', term: link.keywords, area: where.area, limit });
    }
    const byId = link.kind === 'place' && link.placeId && !input.searchStringsArray;
    translation = {
      url: input.url,
      kind: link.kind,
      keywords,
      keywordsFrom: input.searchStringsArray ? 'searchStringsArray' : 'link',
      location: byId ? null : areaLabel(where.area),
      boundingBox: !byId && where.area.kind === 'box' ? where.area.box : null,
      locationFrom: byId ? 'place id' : where.from,
      placeId: link.kind === 'place' ? (link.placeId ?? null) : null,
    };
  } else if (input.searchStringsArray) {
    const area = explicitArea?.area ?? { kind: 'anywhere' };
    for (const term of input.searchStringsArray) searches.push({ kind: 'search', term, area, limit });
  }

  for (const startUrl of input.startUrls ?? []) {
    const link = parseMapLink(startUrl);
    const where = explicitArea ?? linkArea(link);
    if (link.kind === 'place') searches.push(placeSearch(link, where));
    else searches.push({ kind: 'search', term: link.keywords, area: where.area, limit });
  }
  return { searches, translation };
}

/** "street, city, ST 80202". */
export function formatAddress(p: Place): string {
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
    hours: p.openingHours,
    latitude: p.lat,
    longitude: p.lng,
    place_id: p.placeId,
    url: placeLink(p.placeId),
    search_term: searchTerm,
  };
}
const places = (n: number) => `${n} place${n === 1 ? '' : 's'}`;

export const mapsTool = defineTool({
  name: 'maps',
  title: 'Map-listing scraper',
  description:
    'Local businesses from map listings: name, address, phone, website, ' +
    'rating, opening hours and review count, per search term and location.',
  rest: { path: '/api/v1/scrape/maps' },
  graphql: { mutation: 'startMapsScrape', inputType: 'StartMapsScrapeInput' },
  mcp: { name: 'scrape_maps', toolset: 'maps', openWorld: true },
  example: { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 100 },
  input: mapsInput,
  price: perResult('business', '0.0099'),
  cancellable: true,
  notes: [
    'At least one of searchStringsArray, url or startUrls is required; ' +
      'locationQuery and customGeolocation cannot be sent together.',
    'Without a location, search terms are searched in the whole catalog.',
    'Search terms match business names and categories, stemmed ("dentists" finds a Dentist); ' +
      'places come in catalog order, so the same request returns the same places.',
    'locationQuery reads "City, ST", "City, State", a state alone, a 5-digit ZIP code, ' +
      'or "City, ST 80202"; customGeolocation is a box whose corners may be given in either order.',
    'A `url` search link is read as "<words> in|near <place>": the words become the search term and ' +
      'the place the location; with no place, the map view of the link (@lat,lng,zoom, ' +
      'about 1000 × 700 pixels) is the area searched; a link with neither words nor searchStringsArray is refused.',
    "searchStringsArray sent with `url` replaces the link's words; " +
      "locationQuery or customGeolocation sent with it replaces the link's place or map area; " +
      '`search_translation` in the start response reports the keywords, the location or box and where each came from.',
    'A place link (/maps/place/<name>/@lat,lng,zoom, or one carrying a place id as `?q=place_id:<id>`, ' +
      '`query_place_id=<id>` or `!19s<id>`) finds that one place: by place id wherever it is, ' +
      "else by name in the link's map area, nearest to the link's point (`!3d<lat>!4d<lng>`, else the view's centre).",
    'startUrls are read one by one like `url` (search links are searched, place links find one place each); ' +
      'locationQuery or customGeolocation, when sent, replace the area of every start URL too.',
    'A place found by several searches is returned once, under the first search term that found it, ' +
      "and billed once; it does not count towards the later searches' maxCrawledPlacesPerSearch.",
    "The `url` column is the place's own link (by place id); " +
      'it can be sent back as a start URL, or to the local reviews scraper as a directUrl.',
    "The run holds the cost of every search's maxCrawledPlacesPerSearch (place links: " +
      '1) and is billed only for the places delivered.',
  ],
  identity: ['place_id'],
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
    { key: 'emails', header: 'emails', description: 'Email addresses found for the business', type: cell.texts },
    { key: 'rating', header: 'rating', description: 'Average rating, 1–5', type: cell.number },
    { key: 'review_count', header: 'review_count', description: 'Number of reviews', type: cell.int },
    {
      key: 'hours',
      header: 'hours',
      description: 'Opening hours by weekday, e.g. "Monday: 9 AM–5 PM"',
      type: cell.texts,
    },
    { key: 'latitude', header: 'latitude', description: 'Latitude', type: cell.number },
    { key: 'longitude', header: 'longitude', description: 'Longitude', type: cell.number },
    { key: 'place_id', header: 'place_id', description: 'Stable place identifier' },
    { key: 'url', header: 'url', description: 'Map link of the place (by place id)' },
    {
      key: 'search_term',
      header: 'search_term',
      description: 'The search term that found the place (for a place link: its name, else its place id)',
    },
  ],
  requested: (input) => planSearches(input).searches.reduce((sum, s) => sum + s.limit, 0),
  startDetails: z.object({
    search_translation: z
      .object({
        url: z.string().describe('The link sent.'),
        kind: z.enum(['search', 'place']).describe('What the link is: search (a search) or place (one place).'),
        keywords: z.array(z.string()).describe('The words searched.'),
        keywordsFrom: z
          .enum(['link', 'searchStringsArray'])
          .describe('Where the words came from: link or searchStringsArray.'),
        location: z.string().nullable().describe('The place searched, when one was named.'),
        boundingBox: z
          .object({
            lat1: z.number().describe('Latitude of one corner.'),
            lng1: z.number().describe('Longitude of that corner.'),
            lat2: z.number().describe('Latitude of the opposite corner.'),
            lng2: z.number().describe('Longitude of the opposite corner.'),
          })
          .nullable()
          .describe('The map area searched, when there is one.'),
        locationFrom: z
          .enum(['link', 'locationQuery', 'customGeolocation', 'map area', 'place id', 'none'])
          .describe(
            'Where the location came from: link, locationQuery, customGeolocation, map area, place id or none.',
          ),
        placeId: z
          .string()
          .nullable()
          .describe('The place id a place link carries; it finds that place wherever it is.'),
      })
      .optional()
      .describe(
        'What the `url` was read as: keywords, location or map area, and where each came from; absent without a url.',
      ),
  }),
  describeStart(input) {
    const { searches, translation } = planSearches(input);
    const lookups = searches.filter((s) => s.kind === 'place').length;
    const terms = searches.length - lookups;
    const parts = [
      ...(terms
        ? [`${terms} term${terms === 1 ? '' : 's'}, up to ${input.maxCrawledPlacesPerSearch} places each`]
        : []),
      ...(lookups ? [`${lookups} place link${lookups === 1 ? '' : 's'}`] : []),
    ];
    return {
      message: `Searching ${parts.join(' and ')}`,
      extra: translation ? { search_translation: translation } : undefined,
    };
  },
  async *run(ctx) {
    const { searches } = planSearches(ctx.input);
    const seen = new Set<string>();
    let found: Row[] = [];
    let lookedUp = 0;
    const flush = () => {
      const batch = { rows: found, message: `Place links: ${places(lookedUp)} looked up` };
      found = [];
      return batch;
    };
    for (const [index, search] of searches.entries()) {
      if (ctx.signal.aborted) break;
      if (search.kind === 'place') {
        const place = await ctx.sources.localBusinesses.findPlace(search.lookup);
        lookedUp += 1;
        if (place && !seen.has(place.placeId)) {
          seen.add(place.placeId);
          found.push(toRow(place, search.term));
        }
        if (found.length >= PAGE_SIZE) yield flush();
        continue;
      }
      if (found.length > 0) yield flush();
      let taken = 0;
      let afterId: number | undefined;
      while (taken < search.limit && !ctx.signal.aborted) {
        const page = await ctx.sources.localBusinesses.searchPlaces({
          keyword: search.term,
          area: search.area,
          limit: Math.min(PAGE_SIZE, search.limit - taken),
          afterId,
        });
        const last = page.at(-1);
        if (!last) break;
        afterId = last.id;
        const rows: Row[] = [];
        for (const place of page) {
          if (seen.has(place.placeId)) continue;
          seen.add(place.placeId);
          rows.push(toRow(place, search.term));
          taken += 1;
        }
        // The page that fills the last search is the run's last. (A short
        // page is not: only the next, empty, says the source has no more.)
        yield {
          rows,
          message: `"${search.term}": ${places(taken)} found`,
          last: taken >= search.limit && index === searches.length - 1,
        };
      }
    }
    if (found.length > 0) yield { ...flush(), last: true };
  },
});

/** The overview's `POST /api/v1/maps/run {query, limit}`, read as a maps input. */
export const overviewMapsRequest = z
  .object({
    query: z.string().trim().min(1, 'query is required').max(300),
    limit: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(10_000, 'must be at most 10000')
      .default(100),
  })
  .transform(({ query, limit }) => ({ url: undefined, ...searchFromQuery(query), maxCrawledPlacesPerSearch: limit }));

/** "dentists in Denver, CO" → terms plus location; a bare query searches everywhere. */
function searchFromQuery(query: string): { searchStringsArray: string[]; locationQuery?: string } {
  const { keywords, place } = splitQuery(query);
  return place ? { searchStringsArray: [keywords], locationQuery: place } : { searchStringsArray: [keywords] };
}
