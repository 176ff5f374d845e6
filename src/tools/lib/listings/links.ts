import { z } from 'zod';
import { usdAmount } from '../../../shared/amounts.ts';
import { httpLink, stateAbbreviation } from '../../../shared/geo.ts';

/**
 * Pieces shared by the listing-site link readers (business for sale, commercial property): any host
 * is accepted, only the path and query are read. Readers throw an Error whose message explains what
 * is wrong; the tools' input schemas turn it into `validation_failed` naming the URL.
 */

export interface ReadLink {
  url: URL;
  /** Decoded, lower-case path segments. */
  segments: string[];
  /** Query parameters by normalised name (see `paramKey`), values in order; repeated names collect. */
  params: Map<string, { name: string; values: string[] }>;
}

/** "price_min", "priceMin", "types[]" and "Price-Min" all read as "pricemin" / "types". */
export const paramKey = (name: string) =>
  name
    .replace(/\[\]$/, '')
    .replace(/[_\-\s]/g, '')
    .toLowerCase();

export function readLink(link: string): ReadLink {
  const url = httpLink(link);
  const segments = url.pathname
    .split('/')
    .filter(Boolean)
    .map((s) => {
      try {
        return decodeURIComponent(s).toLowerCase();
      } catch {
        return s.toLowerCase();
      }
    });
  const params = new Map<string, { name: string; values: string[] }>();
  for (const [name, value] of url.searchParams) {
    const key = paramKey(name);
    const entry = params.get(key) ?? { name, values: [] };
    entry.values.push(value);
    params.set(key, entry);
  }
  return { url, segments, params };
}

/** "salt-lake-city" → "salt lake city"; also the form catalog city names are compared in. */
export const slugWords = (slug: string) =>
  slug
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/** Nationwide location segments. */
const EVERYWHERE = new Set(['all', 'us', 'usa', 'united-states', 'nationwide']);

export type LocationSlug =
  | { kind: 'everywhere' }
  | { kind: 'state'; state: string }
  | { kind: 'city'; city: string; state: string };

/** Reads "colorado", "new-york", "co" (a state), "denver-co" / "salt-lake-city-ut" (a city) or "all". */
export function readLocationSlug(segment: string): LocationSlug | undefined {
  if (EVERYWHERE.has(segment)) return { kind: 'everywhere' };
  const state = stateAbbreviation(slugWords(segment));
  if (state) return { kind: 'state', state };
  const [, citySlug = '', stateCode = ''] = /^(.+)-([a-z]{2})$/.exec(segment) ?? [];
  const cityState = stateAbbreviation(stateCode);
  const city = slugWords(citySlug);
  return cityState && city ? { kind: 'city', city, state: cityState } : undefined;
}

/** A whole-dollar amount from a query parameter: "250000", "250,000", "$250,000", "250k", "1.5m". */
export function readDollars(value: string, name: string): number {
  const [, amount, unit] = /^\$?\s*(\d[\d,]*(?:\.\d+)?)\s*([km])?$/i.exec(value.trim()) ?? [];
  if (!amount) throw new Error(`${name} must be an amount in dollars such as 250000 or 250k (got "${value}")`);
  const n = Number(amount.replace(/,/g, '')) * (unit?.toLowerCase() === 'm' ? 1_000_000 : unit ? 1_000 : 1);
  if (!Number.isFinite(n) || n > Number.MAX_SAFE_INTEGER) throw new Error(`${name} is too large`);
  return Math.round(n);
}

/** A whole number from a query parameter ("5,000" allowed). */
export function readWholeNumber(value: string, name: string): number {
  const [, digits] = /^(\d[\d,]*)$/.exec(value.trim()) ?? [];
  if (!digits) throw new Error(`${name} must be a whole number (got "${value}")`);
  const n = Number(digits.replace(/,/g, ''));
  if (!Number.isSafeInteger(n)) throw new Error(`${name} is too large`);
  return n;
}

/** A Range of US dollars as declared for the faces (a start's url_translation). */
export const dollarRange = z
  .object({
    min: usdAmount(z.number()).optional().describe('At least this.'),
    max: usdAmount(z.number()).optional().describe('At most this.'),
  })
  .describe('A range of US dollars; either end may be open.');

export interface Range {
  min?: number;
  max?: number;
}

/** A min/max pair of query parameters; refuses min above max. */
export function readRange(
  link: ReadLink,
  label: string,
  minKeys: string[],
  maxKeys: string[],
  read: (value: string, name: string) => number,
): Range | undefined {
  const one = (keys: string[]) => {
    for (const key of keys) {
      const entry = link.params.get(key);
      const value = entry?.values.at(-1);
      if (entry && value !== undefined && value.trim() !== '') return read(value, entry.name);
    }
    return undefined;
  };
  const min = one(minKeys);
  const max = one(maxKeys);
  if (min !== undefined && max !== undefined && min > max)
    throw new Error(`${label}: the minimum ${min} is above the maximum ${max}`);
  return min === undefined && max === undefined
    ? undefined
    : { ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) };
}

/** Parameters a listing-site link carries for paging, sorting or tracking; they do not change what is searched. */
export const isPresentationParam = (key: string) =>
  /^(page|pagesize|pagenumber|sort|sortby|sortorder|sortdirection|view|ref|source|fbclid|gclid|utm.*)$/.test(key);

/** "1 listing", "3 listings"; "1 property", "2 properties". */
export const countOf = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
