import type { PersonName } from '../../sources/people.ts';

const SUFFIXES = new Set(['jr', 'sr', 'ii', 'iii', 'iv', 'v']);

const words = (text: string) =>
  text
    .toLowerCase()
    .replace(/[.]/g, ' ')
    .split(/\s+/)
    .map((w) => w.trim())
    .filter(Boolean);

const withoutSuffix = (tokens: string[]) =>
  tokens.length > 1 && SUFFIXES.has(tokens.at(-1) ?? '') ? tokens.slice(0, -1) : tokens;

/**
 * Reads a full name: "First Last", "First Middle Last" (the last word is the last name) or
 * "Last, First Middle" (for compound last names). Case and periods are ignored and a trailing
 * Jr/Sr/II/III/IV/V is dropped. Returns undefined without both a first and a last name.
 */
export function parseFullName(text: string): PersonName | undefined {
  const commaParts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  let last: string[];
  let given: string[];
  if (commaParts.length >= 2) {
    // "Smith Jr., John" and "Smith, John, Jr." both carry the suffix outside the given names.
    const [lastPart = '', ...givenParts] = commaParts;
    last = withoutSuffix(words(lastPart));
    given = withoutSuffix(words(givenParts.join(' ')));
  } else {
    const tokens = withoutSuffix(words(text));
    if (tokens.length < 2) return undefined;
    last = tokens.slice(-1);
    given = tokens.slice(0, -1);
  }
  const [first, ...middle] = given;
  if (last.length === 0 || first === undefined || [...last, ...given].some((w) => !/[\p{L}]/u.test(w)))
    return undefined;
  return { first, last: last.join(' '), ...(middle.length ? { middle: middle.join(' ') } : {}) };
}

/** "john", "m", "smith" → "John M Smith". */
export function formatName(name: PersonName): string {
  const cap = (w: string) => w.replace(/(^|[\s'-])(\p{L})/gu, (_, sep: string, c: string) => sep + c.toUpperCase());
  return [name.first, name.middle, name.last].flatMap((w) => (w ? [cap(w)] : [])).join(' ');
}
