import { parsePlace, stateAbbreviation } from '../../../shared/geo.ts';
import {
  isPresentationParam,
  readDollars,
  readLink,
  readLocationSlug,
  readRange,
  readWholeNumber,
  slugWords,
  type Range,
} from './links.ts';

/**
 * Links of a commercial property listing site, on any host (the spec's three forms):
 *   (1) /properties[/<filters>]            property search or list, nationwide unless a location is set
 *   (2) /search[/<filters>]?location=…     a city or market search, scoped to it
 *   (3) /resources/find-a-broker/[<city-st>][?location=…&name=…&company=…]  the broker directory
 * Path filters are a property type ("office", "retail-space"), "for-sale"/"for-lease" and a
 * location ("denver-co", "colorado"); query parameters add or replace them.
 */
export const COMMERCIAL_LINK_FORMS =
  'expected /properties (property search or list), /search with a location (e.g. ' +
  '/search?location=Denver%2C+CO or /search?market=Denver) or /resources/find-a-broker/';

export const PROPERTY_TYPES = [
  'office',
  'retail',
  'industrial',
  'multifamily',
  'land',
  'hospitality',
  'mixed_use',
  'healthcare',
] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

export type CommercialLinkForm = 'properties' | 'search' | 'broker-directory';

export interface CommercialFilters {
  /** Two-letter state code. */
  state?: string;
  /** City in slug words ("salt lake city"). */
  city?: string;
  /** Metro market in lower case ("denver"). */
  market?: string;
  /** A place named without a state: its market or a city of that name. */
  place?: string;
  zip?: string;
  propertyTypes?: PropertyType[];
  listingType?: 'sale' | 'lease';
  price?: Range;
  sizeSqft?: Range;
  /** Broker directory: part of the broker's name, firm or licence. */
  brokerName?: string;
  brokerCompany?: string;
  brokerLicence?: string;
}

export interface CommercialLink {
  url: string;
  form: CommercialLinkForm;
  filters: CommercialFilters;
  /** The link shows a map area (bounding box, centre and zoom) rather than a chosen place. */
  mapView: boolean;
  /**
   * Query parameters that do not change what is searched here (unknown
   * ones, and map parameters beside a city or market).
   */
  ignored: string[];
}

/** True when the link chose a city, market or ZIP code: the scope the spec asks a search to have. */
export const hasCityOrMarket = (f: CommercialFilters) => Boolean(f.city || f.market || f.place || f.zip);

const MAP_PARAMS = new Set([
  'bbox',
  'bounds',
  'boundingbox',
  'mapbounds',
  'mapcenter',
  'mapzoom',
  'zoom',
  'center',
  'lat',
  'lng',
  'lon',
  'latitude',
  'longitude',
  'ne',
  'sw',
  'nw',
  'se',
  'northeast',
  'southwest',
  'north',
  'south',
  'east',
  'west',
  'polygon',
  'mapview',
  'map',
]);
const TYPE_PARAMS = ['types', 'type', 'propertytype', 'propertytypes'];
const LISTING_TYPE_PARAMS = ['listingtype', 'transactiontype', 'for'];
const LOCATION_PARAMS = ['location', 'city', 'state', 'market', 'zip', 'zipcode', 'postalcode'];
const BROKER_PARAMS = [
  'name',
  'brokername',
  'broker',
  'company',
  'brokercompany',
  'brokerage',
  'firm',
  'licence',
  'license',
  'brokerlicence',
  'brokerlicense',
];
const PRICE = { min: ['pricemin', 'minprice'], max: ['pricemax', 'maxprice'] };
const SIZE = { min: ['sizemin', 'minsize', 'sqftmin', 'minsqft'], max: ['sizemax', 'maxsize', 'sqftmax', 'maxsqft'] };
const FILTER_PARAMS = new Set([
  ...TYPE_PARAMS,
  ...LISTING_TYPE_PARAMS,
  ...LOCATION_PARAMS,
  ...PRICE.min,
  ...PRICE.max,
  ...SIZE.min,
  ...SIZE.max,
]);

/** "Office", "retail-space", "Mixed Use" → the catalog's property type. */
export function readPropertyType(text: string): PropertyType | undefined {
  const words = slugWords(text)
    .replace(/\b(space|spaces|properties|property|buildings|building|for sale|for lease)\b/g, '')
    .trim()
    .replace(/\s+/g, '_');
  const singular = words.endsWith('s') && !PROPERTY_TYPES.includes(words as PropertyType) ? words.slice(0, -1) : words;
  return PROPERTY_TYPES.find((t) => t === singular || t.replace('_', '') === singular.replace('_', ''));
}

function readListingType(text: string): 'sale' | 'lease' | undefined {
  const t = slugWords(text);
  if (t === 'sale' || t === 'for sale' || t === 'sales' || t === 'buy') return 'sale';
  if (t === 'lease' || t === 'for lease' || t === 'rent' || t === 'for rent') return 'lease';
  return undefined;
}

const ANY_TYPE = new Set(['commercial-real-estate', 'commercial-property', 'commercial-properties', 'all-types']);

function applyPathFilter(filters: CommercialFilters, segment: string, form: CommercialLinkForm): boolean {
  if (form !== 'broker-directory') {
    const listingType = readListingType(segment);
    if (listingType) {
      filters.listingType = listingType;
      return true;
    }
    if (ANY_TYPE.has(segment)) return true;
    const type = readPropertyType(segment);
    if (type) {
      filters.propertyTypes = [...new Set([...(filters.propertyTypes ?? []), type])];
      return true;
    }
  }
  const location = readLocationSlug(segment);
  if (!location) return false;
  if (location.kind === 'state') filters.state = location.state;
  if (location.kind === 'city') Object.assign(filters, { city: location.city, state: location.state });
  return true;
}

/** Where the form's keyword sits in the path, and the form. */
function findForm(segments: string[]): { form: CommercialLinkForm; at: number; length: number } | undefined {
  for (let i = 0; i < segments.length; i++) {
    if (segments[i] === 'resources' && segments[i + 1] === 'find-a-broker')
      return { form: 'broker-directory', at: i, length: 2 };
    if (segments[i] === 'find-a-broker') return { form: 'broker-directory', at: i, length: 1 };
    if (segments[i] === 'properties') return { form: 'properties', at: i, length: 1 };
    if (segments[i] === 'search') return { form: 'search', at: i, length: 1 };
  }
  return undefined;
}

/**
 * Reads one start URL; throws an Error naming what is wrong and the accepted
 * forms. Map views are reported, not refused (see `mapView`).
 */
export function parseCommercialLink(link: string): CommercialLink {
  const read = readLink(link);
  const found = findForm(read.segments);
  if (!found) throw new Error(`is not a commercial property link; ${COMMERCIAL_LINK_FORMS}`);
  const { form } = found;
  const filters: CommercialFilters = {};
  let mapView = false;

  // A segment before the keyword may say sale or lease (e.g. /lease/properties).
  for (const segment of read.segments.slice(0, found.at)) {
    const listingType = readListingType(segment);
    if (listingType) filters.listingType = listingType;
  }
  for (const segment of read.segments.slice(found.at + found.length)) {
    if (/^@-?\d/.test(segment)) {
      mapView = true;
      continue;
    }
    if (!applyPathFilter(filters, segment, form)) {
      const what =
        form === 'broker-directory'
          ? 'a location such as "denver-co"'
          : 'a property type, "for-sale"/"for-lease" or a location such as "denver-co"';
      throw new Error(`path segment "${segment}" is not ${what}; ${COMMERCIAL_LINK_FORMS}`);
    }
  }

  const last = (keys: string[]) => {
    for (const key of keys) {
      const value = read.params.get(key)?.values.at(-1)?.trim();
      if (value) return value;
    }
    return undefined;
  };
  const location = last(['location']);
  if (location) {
    const place = parsePlace(location);
    if (place.kind !== 'place' || (!place.city && !place.state && !place.postalCode))
      throw new Error(`location "${location}" is not a city, market, state or ZIP code`);
    delete filters.city;
    delete filters.state;
    if (place.postalCode) filters.zip = place.postalCode;
    if (place.city && place.state) Object.assign(filters, { city: slugWords(place.city), state: place.state });
    else if (place.city) filters.place = slugWords(place.city);
    else if (place.state) filters.state = place.state;
  }
  const state = last(['state']);
  if (state) {
    const abbr = stateAbbreviation(slugWords(state));
    if (!abbr) throw new Error(`state "${state}" is not a US state`);
    filters.state = abbr;
  }
  const city = last(['city']);
  if (city) {
    delete filters.place;
    filters.city = slugWords(city);
  }
  const market = last(['market']);
  if (market) filters.market = market.trim().toLowerCase().replace(/\s+/g, ' ');
  const zip = last(['zip', 'zipcode', 'postalcode']);
  if (zip) {
    if (!/^\d{5}$/.test(zip)) throw new Error(`ZIP code "${zip}" must have five digits`);
    filters.zip = zip;
  }

  const types = TYPE_PARAMS.flatMap((key) => read.params.get(key)?.values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  if (types.length > 0) {
    const typed = types.map((text) => ({ text, type: readPropertyType(text) }));
    const unknown = typed.find((t) => !t.type);
    if (unknown) throw new Error(`property type "${unknown.text}" is not one of ${PROPERTY_TYPES.join(', ')}`);
    filters.propertyTypes = [...new Set(typed.flatMap((t) => (t.type ? [t.type] : [])))];
  }
  const listingType = last(LISTING_TYPE_PARAMS);
  if (listingType) {
    const value = readListingType(listingType);
    if (!value) throw new Error(`listing type "${listingType}" must be sale or lease`);
    filters.listingType = value;
  }
  const price = readRange(read, 'price', PRICE.min, PRICE.max, readDollars);
  if (price) filters.price = price;
  const size = readRange(read, 'size', SIZE.min, SIZE.max, readWholeNumber);
  if (size) filters.sizeSqft = size;

  if (form === 'broker-directory') {
    const name = last(['name', 'brokername', 'broker']);
    const company = last(['company', 'brokercompany', 'brokerage', 'firm']);
    const licence = last(['licence', 'license', 'brokerlicence', 'brokerlicense']);
    if (name) filters.brokerName = name;
    if (company) filters.brokerCompany = company;
    if (licence) filters.brokerLicence = licence;
  }

  const ignored: string[] = [];
  for (const [key, { name, values }] of read.params) {
    const isMap = MAP_PARAMS.has(key) || (key === 'view' && values.some((v) => v.toLowerCase() === 'map'));
    if (isMap) mapView = true;
    const used = FILTER_PARAMS.has(key) || (form === 'broker-directory' && BROKER_PARAMS.includes(key));
    if (!used && (isMap || !isPresentationParam(key))) ignored.push(name);
  }
  return { url: link, form, filters, mapView, ignored };
}

/**
 * Why the spec refuses a link, if it does: a map view with no city or market chosen, or a /search
 * without one (the search page shows the map until a place is picked).
 */
export function mapViewRefusal(link: CommercialLink): string | undefined {
  if (hasCityOrMarket(link.filters)) return undefined;
  if (link.mapView || link.form === 'search') {
    return (
      'is a map view with no city or market chosen: choose a specific city or market on the site ' +
      '(for example /search?location=Denver%2C+CO or /search?market=Denver) and send that URL'
    );
  }
  return undefined;
}
