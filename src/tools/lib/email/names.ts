/** A person's name reduced to the letters mail systems use in addresses. */
export interface PersonName {
  /** ASCII letters, lower case ("José" → "jose", "O'Brien" → "obrien"). */
  first: string;
  last: string | null;
}

const SPECIAL: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i' };
const HONORIFICS = new Set(['mr', 'mrs', 'ms', 'miss', 'mx', 'dr', 'prof', 'sir', 'dame']);
const SUFFIXES = new Set(['jr', 'sr', 'ii', 'iii', 'iv', 'phd', 'md', 'mba', 'esq', 'cpa']);

/** "José-Luis" → "joseluis": diacritics dropped, only a–z kept. */
export function asciiLetters(text: string): string {
  return text
    .toLowerCase()
    .replace(/[ßæœøłđðþı]/g, (ch) => SPECIAL[ch] ?? ch)
    .normalize('NFKD')
    .replace(/[^a-z]/g, '');
}

const words = (text: string) =>
  text
    .split(/\s+/)
    .map((w) => w.replace(/[.,]+$/g, ''))
    .filter((w) => w.length > 0 && !HONORIFICS.has(asciiLetters(w)) && !SUFFIXES.has(asciiLetters(w)));

/** Splits a full name: "Jane Q. Doe" → Jane / Doe; "Doe, Jane" → Jane / Doe; titles and suffixes dropped. */
export function splitFullName(full: string): { first: string; last: string | null } {
  const comma = full.indexOf(',');
  if (comma > 0) {
    const last = words(full.slice(0, comma)).join(' ');
    const first = words(full.slice(comma + 1))[0];
    if (first && last) return { first, last };
  }
  const [first, ...others] = words(full);
  if (first === undefined) return { first: '', last: null };
  return { first, last: others.at(-1) ?? null };
}

/** The name of a contact from first_name/last_name, else full_name; null when no letters are left. */
export function contactName(contact: {
  first_name?: string;
  last_name?: string;
  full_name?: string;
}): PersonName | null {
  let first = contact.first_name?.trim() ?? '';
  let last = contact.last_name?.trim() ?? '';
  if (!first && contact.full_name) {
    const split = splitFullName(contact.full_name);
    first = split.first;
    last ||= split.last ?? '';
  }
  const f = asciiLetters(first);
  if (!f) return null;
  const l = asciiLetters(last);
  return { first: f, last: l || null };
}
