const MONTHS: Record<string, number> = {
  january: 1,
  february: 2,
  march: 3,
  april: 4,
  may: 5,
  june: 6,
  july: 7,
  august: 8,
  september: 9,
  october: 10,
  november: 11,
  december: 12,
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};

const pad = (n: number) => String(n).padStart(2, '0');

function isoDate(year: number, month: number, day: number): string | undefined {
  if (month < 1 || month > 12 || day < 1) return undefined;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return `${year}-${pad(month)}-${pad(day)}`;
}

/** M/D/YYYY, read as D/M/YYYY only when the first number cannot be a month. */
function fromSlashes(a: number, b: number, year: number): string | undefined {
  if (a > 12 && b <= 12) return isoDate(year, b, a);
  return isoDate(year, a, b);
}

/**
 * Reads a calendar date written the common ways and returns it as YYYY-MM-DD, or undefined:
 * ISO "1980-03-05" (a time after it is ignored), "1980/03/05", US slashes "3/5/1980" or "03-05-1980"
 * (day first only when the first number is over 12, "25/12/1980"), and long forms "March 5, 1980",
 * "Mar. 5th 1980", "5 March 1980", "5th of March, 1980". Two-digit years are refused as ambiguous.
 */
export function parseCalendarDate(text: string): string | undefined {
  const t = text.trim().replace(/\s+/g, ' ');
  let m =
    /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(t) ??
    /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/.exec(t);
  if (m) return isoDate(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /^(\d{1,2})([/.-])(\d{1,2})\2(\d{4})$/.exec(t);
  if (m) return fromSlashes(Number(m[1]), Number(m[3]), Number(m[4]));
  const words = t.toLowerCase().replace(/,/g, ' ').replace(/\s+/g, ' ').trim();
  const monthOf = (name: string | undefined) => (name === undefined ? undefined : MONTHS[name]);
  m = /^([a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)? (\d{4})$/.exec(words);
  let month = monthOf(m?.[1]);
  if (m && month) return isoDate(Number(m[3]), month, Number(m[2]));
  m = /^(\d{1,2})(?:st|nd|rd|th)?(?: of)? ([a-z]+)\.? (\d{4})$/.exec(words);
  month = monthOf(m?.[2]);
  if (m && month) return isoDate(Number(m[3]), month, Number(m[1]));
  return undefined;
}

/**
 * A date of birth: a calendar date from 1900-01-01 up to `today` (YYYY-MM-DD), or a reason it is not.
 */
export function parseDateOfBirth(text: string, today: string): { date: string } | { error: string } {
  const date = parseCalendarDate(text);
  if (!date) return { error: `"${text.trim()}" is not a date; write it like 1980-03-05, 3/5/1980 or March 5, 1980` };
  if (date < '1900-01-01') return { error: 'must be 1900 or later' };
  if (date > today) return { error: 'must not be in the future' };
  return { date };
}
