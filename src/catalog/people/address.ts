import { parsePlace } from '../../shared/geo.ts';

/** A US address as typed, split into its parts; absent parts were not given. */
export interface AddressParts {
  /** Lower case, single spaces, without punctuation: "123 main st". */
  street?: string;
  city?: string;
  /** Two-letter code. */
  state?: string;
  /** Five digits. */
  zip?: string;
}

/** Street words written in full or abbreviated; a street matches in either form. */
const STREET_WORDS: [string, string][] = [
  ['street', 'st'],
  ['avenue', 'ave'],
  ['road', 'rd'],
  ['boulevard', 'blvd'],
  ['drive', 'dr'],
  ['lane', 'ln'],
  ['court', 'ct'],
  ['place', 'pl'],
  ['terrace', 'ter'],
  ['highway', 'hwy'],
  ['parkway', 'pkwy'],
  ['circle', 'cir'],
  ['square', 'sq'],
  ['trail', 'trl'],
];
const DIRECTIONS: [string, string][] = [
  ['north', 'n'],
  ['south', 's'],
  ['east', 'e'],
  ['west', 'w'],
];

function forms(word: string, pairs: [string, string][]): string[] {
  const pair = pairs.find(([full, short]) => word === full || word === short);
  return pair ? [...pair] : [word];
}

/** "123 Main St." → "123 main st". */
export const normaliseStreet = (street: string) =>
  street.toLowerCase().replace(/[.,#]/g, ' ').replace(/\s+/g, ' ').trim();

/**
 * The spellings a normalised street may be stored with: the street type ("st"/"street") and a
 * direction after the house number ("n"/"north") in full and abbreviated form.
 */
export function streetVariants(street: string): string[] {
  const tokens = street.split(' ');
  const [, second = ''] = tokens;
  const lastWord = tokens.at(-1) ?? '';
  const last = tokens.length > 1 ? forms(lastWord, STREET_WORDS) : [lastWord];
  const direction = tokens.length > 2 ? forms(second, DIRECTIONS) : undefined;
  const variants = new Set<string>();
  for (const end of last) {
    for (const dir of direction ?? [undefined]) {
      const copy = [...tokens];
      copy[copy.length - 1] = end;
      if (dir) copy[1] = dir;
      variants.add(copy.join(' '));
    }
  }
  return [...variants];
}

/**
 * Reads "123 Main St, Denver, CO 80202": the part before the first comma is the street (it starts
 * with the house number); city, state and ZIP code follow, separated by commas. Without a comma the
 * whole text is the street. Returns an error message when the street has no house number.
 */
export function parseAddress(text: string): AddressParts | { error: string } {
  const [first = '', ...rest] = text.split(',').map((p) => p.trim());
  const street = normaliseStreet(first);
  if (!/^\d+[a-z]?(-\d+)? \S/.test(street)) {
    return { error: 'must start with the house number and street, e.g. "123 Main St, Denver, CO 80202"' };
  }
  const parts: AddressParts = { street };
  if (rest.filter(Boolean).length) {
    const place = parsePlace(rest.join(', '));
    if (place.kind === 'place') {
      if (place.city) parts.city = place.city;
      if (place.state) parts.state = place.state;
      if (place.postalCode) parts.zip = place.postalCode;
    }
  }
  return parts;
}
