import { addressKey } from '../../../../db/tables/properties.ts';
import { stateAbbreviation } from '../../../shared/geo.ts';

/**
 * US street addresses in the catalog's form: USPS abbreviations (Street → st, North → n), lower case,
 * single spaces, state codes, 5-digit zips. Input addresses and catalog streets go through the same
 * functions, so a partial match compares like with like.
 */

/** Street suffixes (USPS Publication 28, the common ones) by every accepted spelling. */
const SUFFIXES: Record<string, string[]> = {
  aly: ['alley', 'allee', 'ally'],
  ave: ['avenue', 'av', 'aven', 'avenu', 'avn', 'avnue'],
  blvd: ['boulevard', 'boul', 'boulv'],
  byp: ['bypass', 'bypa', 'bypas', 'byps'],
  cir: ['circle', 'circ', 'circl', 'crcl', 'crcle'],
  ct: ['court', 'crt'],
  ctr: ['center', 'centre', 'cntr', 'cnter', 'centr'],
  cv: ['cove'],
  cswy: ['causeway', 'causwa'],
  dr: ['drive', 'drv', 'driv'],
  expy: ['expressway', 'exp', 'expr', 'express', 'expw'],
  fwy: ['freeway', 'freewy', 'frway', 'frwy'],
  grn: ['green'],
  hl: ['hill'],
  holw: ['hollow', 'hllw', 'hollows', 'holws'],
  hts: ['heights', 'ht'],
  hwy: ['highway', 'highwy', 'hiway', 'hiwy', 'hway'],
  lk: ['lake'],
  ln: ['lane'],
  loop: ['loops'],
  mnr: ['manor'],
  park: ['prk'],
  path: ['paths'],
  pike: ['pikes'],
  pkwy: ['parkway', 'parkwy', 'pkway', 'pky'],
  pl: ['place'],
  plz: ['plaza', 'plza'],
  pt: ['point'],
  rd: ['road'],
  rdg: ['ridge', 'rdge'],
  row: [],
  run: [],
  sq: ['square', 'sqr', 'sqre', 'squ'],
  st: ['street', 'str', 'strt', 'streets'],
  ter: ['terrace', 'terr'],
  tpke: ['turnpike', 'trnpk', 'turnpk'],
  trl: ['trail', 'trails', 'trls'],
  vly: ['valley', 'vally', 'vlly'],
  vw: ['view'],
  walk: ['walks'],
  way: ['wy'],
  xing: ['crossing', 'crssng'],
};
const SUFFIX = new Map(
  Object.entries(SUFFIXES).flatMap(([abbr, spellings]) => [
    [abbr, abbr] as const,
    ...spellings.map((s) => [s, abbr] as const),
  ]),
);

const DIRECTIONAL = new Map([
  ['north', 'n'],
  ['south', 's'],
  ['east', 'e'],
  ['west', 'w'],
  ['northeast', 'ne'],
  ['northwest', 'nw'],
  ['southeast', 'se'],
  ['southwest', 'sw'],
  ['n', 'n'],
  ['s', 's'],
  ['e', 'e'],
  ['w', 'w'],
  ['ne', 'ne'],
  ['nw', 'nw'],
  ['se', 'se'],
  ['sw', 'sw'],
]);

/** Secondary unit designators and their abbreviation; "#" stands alone. */
const UNIT = new Map([
  ['apt', 'apt'],
  ['apartment', 'apt'],
  ['unit', 'unit'],
  ['ste', 'ste'],
  ['suite', 'ste'],
  ['rm', 'rm'],
  ['room', 'rm'],
  ['fl', 'fl'],
  ['floor', 'fl'],
  ['bldg', 'bldg'],
  ['building', 'bldg'],
  ['lot', 'lot'],
  ['spc', 'spc'],
  ['space', 'spc'],
  ['trlr', 'trlr'],
  ['trailer', 'trlr'],
  ['#', '#'],
]);

const ORDINAL = new Map([
  ['first', '1st'],
  ['second', '2nd'],
  ['third', '3rd'],
  ['fourth', '4th'],
  ['fifth', '5th'],
  ['sixth', '6th'],
  ['seventh', '7th'],
  ['eighth', '8th'],
  ['ninth', '9th'],
  ['tenth', '10th'],
]);

const COUNTRY = /^(us|usa|u ?s ?a?|united states( of america)?)$/i;
const ZIP_AT_END = /(?:^|\s)(\d{5})(?:-?\d{4})?$/;

/** A street line split into its parts, normalised. */
export interface Street {
  /** House number, e.g. "1234" or "12b". */
  number: string;
  /** Number, directionals, name and suffix without the unit: "1234 n main st". */
  primary: string;
  /** Unit identifier without its designator ("5" of "Apt 5"), or null. */
  unit: string | null;
  /** The whole street line in catalog form: "1234 n main st apt 5". */
  line: string;
}

export interface ParsedAddress {
  /** The address as the caller wrote it. */
  input: string;
  street: Street;
  /** Lower case, single spaces. */
  city: string | null;
  /** Two-letter code. */
  state: string | null;
  /** Five digits. */
  zip: string | null;
}

const words = (text: string) =>
  text.toLowerCase().replace(/\./g, '').replace(/#/g, ' # ').replace(/[,;]/g, ' ').split(/\s+/).filter(Boolean);

/** Index where a unit ("apt 5", "# 5", "suite b") starts in street words, or -1. */
function unitStart(tokens: string[]): number {
  // After a house number and a street word, and before the unit's id.
  return tokens.findIndex((t, i) => i >= 2 && i < tokens.length - 1 && UNIT.has(t));
}

/** Normalises a street line; null when it does not start with a house number followed by a street. */
export function normalizeStreet(text: string): Street | null {
  const tokens = words(text);
  const u = unitStart(tokens);
  const primary = u >= 0 ? tokens.slice(0, u) : [...tokens];
  const [unitWord, ...unitId] = u >= 0 ? tokens.slice(u) : [];
  const [number] = primary;
  if (primary.length < 2 || number === undefined || !/\d/.test(number)) return null;

  const word = (i: number) => primary[i] ?? '';
  let end = primary.length - 1;
  const postDirection = DIRECTIONAL.get(word(end));
  if (primary.length >= 4 && postDirection !== undefined && SUFFIX.has(word(end - 1))) {
    primary[end] = postDirection;
    end -= 1;
  }
  const suffix = end >= 2 ? SUFFIX.get(word(end)) : undefined;
  if (suffix !== undefined) primary[end] = suffix;
  const nameEnd = suffix !== undefined ? end - 1 : end;
  const preDirection = DIRECTIONAL.get(word(1));
  if (preDirection !== undefined && nameEnd >= 2) primary[1] = preDirection;
  for (let i = 1; i <= nameEnd; i++) primary[i] = ORDINAL.get(word(i)) ?? word(i);

  let unit: string | null = null;
  let unitLine = '';
  if (unitWord !== undefined) {
    const designator = UNIT.get(unitWord) ?? unitWord;
    const id = unitId.filter((w) => w !== '#').join('');
    if (id) {
      unit = id;
      unitLine = designator === '#' ? ` # ${id}` : ` ${designator} ${id}`;
    }
  }
  const primaryLine = primary.join(' ');
  return { number, primary: primaryLine, unit, line: primaryLine + unitLine };
}

/**
 * Splits "1234 Main St Denver" (no comma) into street and city after the street suffix, keeping a
 * short post-directional and a unit with the street. The first suffix after a name word that is not
 * followed by another suffix wins ("10 River Park Dr Denver" splits after "Dr").
 */
function splitStreetAndCity(part: string): { street: string; city: string | null } {
  const tokens = part.split(' ').filter(Boolean);
  const lower = tokens.map((t) => t.toLowerCase().replace(/\./g, ''));
  const at = (i: number) => lower[i] ?? '';
  for (let s = 2; s < lower.length; s++) {
    if (!SUFFIX.has(at(s)) || SUFFIX.has(at(s + 1))) continue;
    if (!lower.slice(1, s).some((w) => !DIRECTIONAL.has(w))) continue;
    let end = s + 1;
    if (at(end) && at(end).length <= 2 && DIRECTIONAL.has(at(end))) end += 1;
    if (at(end) && UNIT.has(at(end)) && at(end + 1)) end += at(end + 1) === '#' && at(end + 2) ? 3 : 2;
    else if (at(end).startsWith('#') && at(end).length > 1) end += 1;
    const city = tokens.slice(end).join(' ');
    return { street: tokens.slice(0, end).join(' '), city: city || null };
  }
  return { street: part, city: null };
}

const looksLikeUnit = (part: string) => part.startsWith('#') || UNIT.has(words(part)[0] ?? '');
const normalizeCity = (city: string) => city.trim().toLowerCase().replace(/\s+/g, ' ');

/**
 * Reads a US address written the usual ways: "1234 Main Street, Apt 5, Denver, Colorado 80202-1234",
 * "1234 main st denver co 80202", "1234 Main St, 80202". Returns an error text when it cannot be used:
 * it needs a house number and street, and a city or a zip code.
 */
export function parseAddress(input: string): ParsedAddress | { error: string } {
  const parts = input
    .replace(/\s+/g, ' ')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  while (parts.length > 1 && COUNTRY.test((parts.at(-1) ?? '').replace(/\./g, ''))) parts.pop();

  let zip: string | null = null;
  let state: string | null = null;
  const zipPart = parts.at(-1);
  const zipMatch = zipPart === undefined ? null : ZIP_AT_END.exec(zipPart);
  if (zipPart !== undefined && zipMatch && (parts.length > 1 || zipMatch.index > 0)) {
    zip = zipMatch[1] ?? null;
    const rest = zipPart.slice(0, zipMatch.index).trim();
    if (rest) parts[parts.length - 1] = rest;
    else parts.pop();
  }

  const statePart = parts.at(-1);
  if (statePart !== undefined) {
    const last = statePart.split(' ');
    for (const n of [3, 2, 1]) {
      // A lone part that would be only a state keeps its words for the street.
      if (last.length < n || (parts.length === 1 && last.length <= n)) continue;
      const code = stateAbbreviation(last.slice(-n).join(' '));
      if (!code) continue;
      const wholePart = last.length === n;
      // "123 Pine Ct, 80202", "12 Main St NE, 80202": a suffix or directional ending a bare street is not a state.
      const word = (last.at(-1) ?? '').toLowerCase();
      if (
        parts.length === 1 &&
        n === 1 &&
        (SUFFIX.has(word) || DIRECTIONAL.has(word)) &&
        !splitStreetAndCity(last.slice(0, -1).join(' ')).city
      )
        break;
      // "1234 Main St, Washington": a lone state name right after a bare street is the city.
      if (
        wholePart &&
        parts.length === 2 &&
        !zip &&
        last.join('').length > 2 &&
        !splitStreetAndCity(parts[0] ?? '').city
      )
        break;
      state = code;
      if (wholePart) parts.pop();
      else parts[parts.length - 1] = last.slice(0, -n).join(' ');
      break;
    }
  }

  let streetText: string;
  let city: string | null;
  const cityPart = parts.length >= 2 ? parts.at(-1) : undefined;
  if (cityPart !== undefined && !looksLikeUnit(cityPart)) {
    city = cityPart;
    streetText = parts.slice(0, -1).join(' ');
  } else {
    ({ street: streetText, city } = splitStreetAndCity(parts.join(' ')));
  }

  const street = normalizeStreet(streetText);
  if (!street) return { error: 'must start with a house number and street, e.g. "1234 Main St, Denver, CO 80202"' };
  if (!city && !zip) return { error: 'needs a city and state or a zip code, e.g. "1234 Main St, Denver, CO 80202"' };
  return { input, street, city: city ? normalizeCity(city) : null, state, zip };
}

/**
 * Catalog keys to try for an exact match: with the unit, then without
 * it; none unless street, city, state and zip are all known.
 */
export function exactKeys(address: ParsedAddress): string[] {
  const { street, city, state, zip } = address;
  if (!city || !state || !zip) return [];
  const lines = street.line === street.primary ? [street.line] : [street.line, street.primary];
  return lines.map((line) => addressKey([line, city, state, zip]));
}

/** The normalised address, equal for two spellings of the same address (used to skip duplicates). */
export function canonicalAddress(address: ParsedAddress): string {
  return [address.street.line, address.city ?? '', address.state ?? '', address.zip ?? ''].join('|');
}
