import { parsePlace, stateAbbreviation } from '../../../shared/geo.ts';
import {
  isPresentationParam,
  readDollars,
  readLink,
  readLocationSlug,
  readRange,
  slugWords,
  type Range,
} from './links.ts';

/**
 * Links of a business-for-sale listing site, on any host:
 *   search pages    /businesses-for-sale[/<location>][/<industry>][?price_min=…&price_max=…&cash_flow_min=…]
 *   single listings /business-opportunity/<slug>/<listing id>
 * <location> is "all", a state ("colorado", "new-york", "co") or a city with its state code
 * ("denver-co", "salt-lake-city-ut"); a lone segment that is not a location is an industry.
 */
export const BUSINESS_LINK_FORMS =
  'expected a search page /businesses-for-sale[/<state or city-st>][/<industry>] (e.g. ' +
  '/businesses-for-sale/denver-co/restaurants) or a single listing /business-opportunity/<slug>/<listing id>';

export interface BusinessSearchFilters {
  /** Two-letter state code. */
  state?: string;
  /** City in slug words ("salt lake city"). */
  city?: string;
  /** Industry as written in the link ("restaurants-food", "Retail"). */
  industry?: string;
  askingPrice?: Range;
  cashFlow?: Range;
  revenue?: Range;
  ebitda?: Range;
}

export type BusinessLink =
  | { kind: 'listing'; url: string; listingId: string }
  | { kind: 'search'; url: string; filters: BusinessSearchFilters; ignored: string[] };

const SEARCH = 'businesses-for-sale';
const LISTING = 'business-opportunity';

/** Query parameters of a search page, by normalised name. */
const RANGES: {
  field: 'askingPrice' | 'cashFlow' | 'revenue' | 'ebitda';
  label: string;
  min: string[];
  max: string[];
}[] = [
  {
    field: 'askingPrice',
    label: 'asking price',
    min: ['pricemin', 'minprice', 'askingpricemin', 'minaskingprice'],
    max: ['pricemax', 'maxprice', 'askingpricemax', 'maxaskingprice'],
  },
  { field: 'cashFlow', label: 'cash flow', min: ['cashflowmin', 'mincashflow'], max: ['cashflowmax', 'maxcashflow'] },
  { field: 'revenue', label: 'revenue', min: ['revenuemin', 'minrevenue'], max: ['revenuemax', 'maxrevenue'] },
  { field: 'ebitda', label: 'EBITDA', min: ['ebitdamin', 'minebitda'], max: ['ebitdamax', 'maxebitda'] },
];
const LOCATION_PARAMS = ['state', 'city', 'location'];
const INDUSTRY_PARAMS = ['industry', 'category'];
const KNOWN = new Set([...LOCATION_PARAMS, ...INDUSTRY_PARAMS, ...RANGES.flatMap((r) => [...r.min, ...r.max])]);

function applyLocation(filters: BusinessSearchFilters, segment: string): boolean {
  const location = readLocationSlug(segment);
  if (!location) return false;
  delete filters.state;
  delete filters.city;
  if (location.kind === 'state') filters.state = location.state;
  if (location.kind === 'city') Object.assign(filters, { city: location.city, state: location.state });
  return true;
}

/** Reads one start URL; throws an Error naming what is wrong and the accepted forms. */
export function parseBusinessLink(link: string): BusinessLink {
  const read = readLink(link);
  const { segments } = read;
  const listingAt = segments.indexOf(LISTING);
  if (listingAt >= 0) {
    const rest = segments.slice(listingAt + 1);
    const id = rest.at(-1);
    if (rest.length >= 1 && rest.length <= 2 && id && /^\d+$/.test(id))
      return { kind: 'listing', url: link, listingId: id };
    throw new Error(`is a listing link without a listing id; ${BUSINESS_LINK_FORMS}`);
  }
  const searchAt = segments.indexOf(SEARCH);
  if (searchAt < 0) throw new Error(`is not a business-for-sale link; ${BUSINESS_LINK_FORMS}`);
  const rest = segments.slice(searchAt + 1);
  if (rest.length > 2) throw new Error(`has too many path segments after /${SEARCH}/; ${BUSINESS_LINK_FORMS}`);

  const filters: BusinessSearchFilters = {};
  const [placePart, industryPart] = rest;
  if (placePart !== undefined && industryPart !== undefined) {
    if (!applyLocation(filters, placePart))
      throw new Error(
        `"${placePart}" is not a location ("all", ` +
          `a state such as "colorado" or a city such as "denver-co"); ${BUSINESS_LINK_FORMS}`,
      );
    filters.industry = industryPart;
  } else if (placePart !== undefined && !applyLocation(filters, placePart)) {
    filters.industry = placePart;
  }

  const param = (keys: string[]) => {
    for (const key of keys) {
      const value = read.params.get(key)?.values.at(-1)?.trim();
      if (value) return value;
    }
    return undefined;
  };
  const location = param(['location']);
  if (location) {
    const place = parsePlace(location);
    if (place.kind === 'place' && (place.city || place.state)) {
      delete filters.state;
      delete filters.city;
      if (place.state) filters.state = place.state;
      if (place.city) filters.city = slugWords(place.city);
    } else throw new Error(`location "${location}" is not a city or state such as "Denver, CO"`);
  }
  const state = param(['state']);
  if (state) {
    const abbr = stateAbbreviation(slugWords(state));
    if (!abbr) throw new Error(`state "${state}" is not a US state`);
    filters.state = abbr;
  }
  const city = param(['city']);
  if (city) filters.city = slugWords(city);
  const industry = param(INDUSTRY_PARAMS);
  if (industry) filters.industry = industry;
  for (const range of RANGES) {
    const value = readRange(read, range.label, range.min, range.max, readDollars);
    if (value) filters[range.field] = value;
  }
  const ignored = [...read.params.entries()]
    .filter(([key]) => !KNOWN.has(key) && !isPresentationParam(key))
    .map(([, { name }]) => name);
  return { kind: 'search', url: link, filters, ignored };
}

/** Words of an industry as compared: lower case, "and"/"business(es)" dropped, simple plurals folded. */
function industryWords(text: string): string[] {
  return slugWords(text.replace(/&/g, ' '))
    .split(' ')
    .filter((w) => w && !['and', 'business', 'businesses', 'for', 'sale'].includes(w))
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/**
 * The catalog categories an industry of a link means: those containing every word of it
 * ("restaurants-food" and "restaurants" both mean "Restaurants & Food").
 */
export function matchIndustries(industry: string, categories: string[]): string[] {
  const wanted = industryWords(industry);
  if (wanted.length === 0) return [];
  return categories.filter((category) => {
    const words = new Set(industryWords(category));
    return wanted.every((w) => words.has(w));
  });
}
