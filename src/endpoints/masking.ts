import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

/**
 * How a preview shows contact values without handing them out, as lead platforms show a record
 * before it is revealed: enough to judge the match, not enough to reach the person. The one place
 * of this rule; every face shows what the services answer.
 * - an email keeps the first character of its local part and its domain: `j***@acme.com`;
 * - a phone number keeps its country code and last 4 digits, in the number's own grouping:
 *   `+1 ***-***-0142`, `+44 **-****-0958`;
 * - a profile URL keeps its site and path but the first character of its last segment:
 *   `https://www.linkedin.com/in/j***`.
 * The number of stars never tells the length.
 */

const STARS = '***';

/** `jane.doe@acme.com` → `j***@acme.com`; text that is not an address keeps its first character only. */
export function maskEmail(email: string): string {
  const text = email.trim();
  const at = text.lastIndexOf('@');
  if (at <= 0) return `${text.slice(0, 1)}${STARS}`;
  return `${text.slice(0, 1)}${STARS}${text.slice(at)}`;
}

/** Every digit but the last `keep` as `*`, the rest of the text (separators, brackets) as it is. */
function maskDigits(text: string, keep: number): string {
  let digitsLeft = (text.match(/\d/g) ?? []).length;
  return text.replace(/\d/g, (digit) => (digitsLeft-- > keep ? '*' : digit));
}

/** At most the last 4 digits, and never more than half of them (a short number stays mostly hidden). */
const keptDigits = (digits: number) => Math.min(4, Math.floor(digits / 2));

/**
 * `+1 303-555-0142` → `+1 ***-***-0142`: the number read with libphonenumber-js (in `country`, an ISO
 * code, when it has no country code; default US), shown as the country code and the national number in its groups
 * joined by hyphens, every digit but the last 4 hidden (an extension left out). Text it cannot read keeps its
 * own layout, its digits hidden the same way.
 */
export function maskPhone(phone: string, country?: string): string {
  const read = parsePhoneNumberFromString(
    phone,
    country && isSupportedCountry(country.toUpperCase()) ? (country.toUpperCase() as CountryCode) : 'US',
  );
  // Read again from its E.164 form, which leaves an extension out.
  const parsed = read?.isPossible() ? parsePhoneNumberFromString(read.number) : undefined;
  if (parsed) {
    const [code, ...groups] = parsed.formatInternational().split(' ');
    const national = groups.join('-');
    return `${code} ${maskDigits(national, keptDigits(parsed.nationalNumber.length))}`;
  }
  return maskDigits(phone, keptDigits((phone.match(/\d/g) ?? []).length));
}

/** `https://www.linkedin.com/in/jane-doe-16/` → `https://www.linkedin.com/in/j***` (query and fragment dropped). */
export function maskProfileUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return `${url.trim().slice(0, 1)}${STARS}`;
  }
  const segments = parsed.pathname.split('/').filter(Boolean);
  const last = segments.pop();
  if (last === undefined) return `${parsed.origin}/`;
  return `${parsed.origin}/${[...segments, `${decodeURIComponentSafe(last).slice(0, 1)}${STARS}`].join('/')}`;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Which fields of a record hold contact values, by kind. */
export interface ContactFields {
  /** Email addresses (a string or a list of them). */
  emails?: readonly string[];
  /** Phone numbers (a string or a list of them). */
  phones?: readonly string[];
  /** Profile URLs of a person. */
  profiles?: readonly string[];
}

const maskValue = (value: unknown, mask: (text: string) => string): unknown => {
  if (typeof value === 'string') return mask(value);
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? mask(v) : v));
  return value;
};

/**
 * Masks, in place, the contact values `fields` names in `record` (phones read
 * in `country`, an ISO code, when they have no country code; default US).
 */
export function maskContacts(record: Record<string, unknown>, fields: ContactFields, country?: string): void {
  for (const name of fields.emails ?? [])
    if (Object.hasOwn(record, name)) record[name] = maskValue(record[name], maskEmail);
  for (const name of fields.phones ?? [])
    if (Object.hasOwn(record, name)) record[name] = maskValue(record[name], (p) => maskPhone(p, country));
  for (const name of fields.profiles ?? [])
    if (Object.hasOwn(record, name)) record[name] = maskValue(record[name], maskProfileUrl);
}
