/**
 * DROP standardization of our own record fields, one function a field, exactly as "Working with the data"
 * (Hashing) states it; test/fixtures/drop/SOURCES.md gives each rule's source and worked examples.
 * Every function answers undefined when nothing is left to hash: a missing field never makes a hash.
 */
import { isCalendarDate } from './spec.ts';
import { stripLatinAccents, transliterate } from './transliterate.ts';

type Input = string | null | undefined;

const present = (value: string): string | undefined => (value === '' ? undefined : value);

/** Email: remove all whitespace, then lowercase; dots, plus signs and every other character stay. */
export function standardizeEmail(value: Input): string | undefined {
  if (value == null) return undefined;
  return present(value.replace(/\s/gu, '').toLowerCase());
}

/**
 * Phone: keep digits only, then the last 10 digits (all of them when fewer remain). No E.164 and no
 * country logic: `+84(90)123 4567` is `4901234567`.
 */
export function standardizePhone(value: Input): string | undefined {
  if (value == null) return undefined;
  return present(
    value
      .normalize('NFKC')
      .replace(/[^0-9]/g, '')
      .slice(-10),
  );
}

/**
 * First or last name, each on its own: normalize Unicode, lowercase, transliterate Greek and Cyrillic,
 * fold Latin letters to ASCII where possible, then keep only letters and digits (`Juan Pablo` →
 * `juanpablo`; CJK, Arabic and Hebrew letters stay as they are).
 */
export function standardizeName(value: Input): string | undefined {
  if (value == null) return undefined;
  const folded = stripLatinAccents(transliterate(value.normalize('NFKC').toLowerCase()));
  return present(folded.replace(/[^\p{L}\p{Nd}]/gu, ''));
}

/**
 * ZIP: keep alphanumeric characters only; for ZIP+4 (nine digits once the hyphen is gone) drop the +4;
 * lowercase; remove leading zeros; use the first five characters present. `91790-3771` → `91790`,
 * `00712345` → `71234`, `M1B 1A1` → `m1b1a`.
 */
export function standardizeZip(value: Input): string | undefined {
  if (value == null) return undefined;
  let zip = value.normalize('NFKC').replace(/[^A-Za-z0-9]/g, '');
  if (/^[0-9]{9}$/.test(zip)) zip = zip.slice(0, 5);
  return present(zip.toLowerCase().replace(/^0+/, '').slice(0, 5));
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** A month's number from its English name or its three-letter (or `Sept`) abbreviation, a dot allowed. */
function monthNumber(name: string): number | undefined {
  const word = name.toLowerCase().replace(/\.$/, '');
  const index = MONTHS.findIndex(
    (month) => month === word || month.slice(0, 3) === word || (word === 'sept' && month === 'september'),
  );
  return index >= 0 ? index + 1 : undefined;
}

const ymd = (y: string | number, m: string | number, d: string | number): string | undefined => {
  const text = `${String(y).padStart(4, '0')}${String(m).padStart(2, '0')}${String(d).padStart(2, '0')}`;
  return String(y).length === 4 && isCalendarDate(text) ? text : undefined;
};

/**
 * Date of birth as `YYYYMMDD`. Reads ISO dates (`1985-07-04`, with or without a time after it, whose
 * date part is taken as written), `19850704`, `1985/7/4`, US month-first `7/4/1985` or `07-04-1985`, and
 * month names (`July 4, 1776`, `4 Jul 1776`, `Sept. 9, 1990`). A Date is read in UTC, as postgres.js
 * gives a `date` column. Two-digit years, day-first dots and impossible days give undefined.
 */
export function standardizeDob(value: string | Date | null | undefined): string | undefined {
  if (value == null) return undefined;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return undefined;
    return ymd(value.getUTCFullYear(), value.getUTCMonth() + 1, value.getUTCDate());
  }
  const text = value.trim().replace(/\s+/g, ' ');
  for (const [pattern, read] of DOB_FORMATS) {
    const m = pattern.exec(text);
    if (m) return read(m.slice(1));
  }
  return undefined;
}

const named = (y = '', month = '', d = '') => {
  const m = monthNumber(month);
  return m ? ymd(y, m, d) : undefined;
};

/** The date-of-birth forms we read, each with how its parts make `YYYYMMDD`. */
const DOB_FORMATS: [RegExp, (parts: string[]) => string | undefined][] = [
  [/^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$/, ([y, m, d]) => ymd(y ?? '', m ?? '', d ?? '')],
  [/^(\d{4})\/(\d{1,2})\/(\d{1,2})$/, ([y, m, d]) => ymd(y ?? '', m ?? '', d ?? '')],
  [/^(\d{4})(\d{2})(\d{2})$/, ([y, m, d]) => ymd(y ?? '', m ?? '', d ?? '')],
  [/^(\d{1,2})([/-])(\d{1,2})\2(\d{4})$/, ([m, , d, y]) => ymd(y ?? '', m ?? '', d ?? '')],
  [/^([A-Za-z]+\.?) (\d{1,2}),? (\d{4})$/, ([month, d, y]) => named(y, month, d)],
  [/^(\d{1,2}) ([A-Za-z]+\.?),? (\d{4})$/, ([d, month, y]) => named(y, month, d)],
];

/** MAID: hexadecimal characters only, lowercase; it must then be 32 characters. */
export function standardizeMaid(value: Input): string | undefined {
  if (value == null) return undefined;
  const maid = value.toLowerCase().replace(/[^0-9a-f]/g, '');
  return maid.length === 32 ? maid : undefined;
}

/** VIN: alphanumeric characters only, lowercase; it must then be 17 characters. */
export function standardizeVin(value: Input): string | undefined {
  if (value == null) return undefined;
  const vin = value.toLowerCase().replace(/[^0-9a-z]/g, '');
  return vin.length === 17 ? vin : undefined;
}

/** CTVID: alphanumeric characters only, lowercase; it must then be 8 to 32 characters. */
export function standardizeCtvid(value: Input): string | undefined {
  if (value == null) return undefined;
  const id = value.toLowerCase().replace(/[^0-9a-z]/g, '');
  return id.length >= 8 && id.length <= 32 ? id : undefined;
}
