import { getCountries, type CountryCode } from 'libphonenumber-js';
import { z } from 'zod';
import { US_STATES } from '../../db/us-states.ts';

export { US_STATES };

const BY_NAME = new Map(Object.entries(US_STATES).map(([abbr, name]) => [name.toLowerCase(), abbr]));

/** "co", "Colorado" → "CO"; undefined when it is not a US state. */
export function stateAbbreviation(text: string): string | undefined {
  const t = text.trim();
  if (US_STATES[t.toUpperCase()]) return t.toUpperCase();
  return BY_NAME.get(t.toLowerCase().replace(/\s+/g, ' '));
}

/** A US state parameter: a two-letter code or a full name, any case; normalised to the code. */
export const usStateParam = () =>
  z
    .string()
    .trim()
    .transform((value, ctx) => {
      const abbr = stateAbbreviation(value);
      if (!abbr) {
        ctx.addIssue({
          code: 'custom',
          message: `"${value}" is not a US state; give a two-letter code or a full name, e.g. "TX" or "Texas"`,
        });
        return z.NEVER;
      }
      return abbr;
    });

/** An absolute http(s) link, or an Error whose message says what is wrong with it. */
export function httpLink(link: string): URL {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new Error('is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('must be an http(s) link');
  return url;
}

export interface BoundingBox {
  lat1: number;
  lng1: number;
  lat2: number;
  lng2: number;
}

/** Where to search: a named place (city/state/postal code) or a box on the map. */
export type Area =
  | { kind: 'place'; city?: string; state?: string; postalCode?: string; text: string }
  | { kind: 'box'; box: BoundingBox }
  | { kind: 'anywhere' };

/** Reads "Denver, CO", "Denver, Colorado, USA", "Colorado", "80202" or "Denver". */
export function parsePlace(text: string): Area {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .filter((p) => !/^(us|usa|united states( of america)?)$/i.test(p));
  const area: Area = { kind: 'place', text: text.trim() };
  for (const [i, part] of parts.entries()) {
    const zip = /^\d{5}(?:-\d{4})?$/.exec(part);
    const [, stateName, stateZip] = /^([A-Za-z .]+?)\s+(\d{5})(?:-\d{4})?$/.exec(part) ?? [];
    const stateBeforeZip = stateName ? stateAbbreviation(stateName) : undefined;
    if (zip) area.postalCode = part.slice(0, 5);
    else if (stateBeforeZip) {
      area.state = stateBeforeZip;
      area.postalCode = stateZip;
    } else if (stateAbbreviation(part) && (i > 0 || parts.length === 1)) area.state = stateAbbreviation(part);
    else if (!area.city) area.city = part.replace(/^\d+\s+.*$/, '') || undefined;
  }
  return area;
}

/** The area a map view at `zoom` around a centre shows (about 1000 × 700 screen pixels). */
export function boxAround(lat: number, lng: number, zoom: number): BoundingBox {
  const lngSpan = (1000 / 256) * (360 / 2 ** zoom);
  const latSpan = (700 / 256) * (360 / 2 ** zoom) * Math.cos((lat * Math.PI) / 180);
  return { lat1: lat - latSpan / 2, lng1: lng - lngSpan / 2, lat2: lat + latSpan / 2, lng2: lng + lngSpan / 2 };
}

const COUNTRY_CODES = new Set<string>(getCountries());
const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region' });
const COUNTRY_BY_NAME = new Map(getCountries().map((code) => [(REGION_NAMES.of(code) ?? code).toLowerCase(), code]));
for (const [alias, code] of Object.entries({
  usa: 'US',
  us: 'US',
  'united states of america': 'US',
  uk: 'GB',
  'great britain': 'GB',
  uae: 'AE',
})) {
  COUNTRY_BY_NAME.set(alias, code as CountryCode);
}

/** "CA", "Canada", "ca" → "CA"; undefined when unknown. */
export function countryCode(value: string | undefined): CountryCode | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (COUNTRY_CODES.has(v.toUpperCase())) return v.toUpperCase() as CountryCode;
  return COUNTRY_BY_NAME.get(v.toLowerCase());
}
