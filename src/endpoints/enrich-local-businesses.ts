import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { countryCode, stateAbbreviation } from '../shared/geo.ts';
import { bareHost } from '../shared/hosts.ts';
import {
  assertMatchable,
  enrichmentAnswer,
  readEnrichRequest,
  skipUnusable,
  textField,
  type EnrichOptions,
  type SkippedRow,
} from './enrichment.ts';
import { lookUpPlaces, placeNameKey, type Place, type Review } from '../catalog/local-businesses/enrich-lookup.ts';

export { countryCode };

interface PlaceKeys {
  /** The phone as written, and the country it is read in (US, which shares +1 with Canada, when none is given). */
  phoneText?: string;
  country?: CountryCode;
  /** The phone's last 10 digits, once read (readPhone). */
  phone?: string;
  name?: string;
  city?: string;
  postalCode?: string;
  state?: string;
  domain?: string;
}

/** The distinct values of `values`, leaving out the missing ones. */
const distinct = (values: (string | undefined)[]) => [...new Set(values.filter((v): v is string => v !== undefined))];

/** A row's keys; its phone is only read later (readPhone), while the other lookups run. */
function keysOf(row: Record<string, unknown>): PlaceKeys {
  const name = textField(row, 'name', 'business_name');
  const city = textField(row, 'city');
  const postalCode = textField(row, 'postal_code', 'zip', 'postcode');
  const state = textField(row, 'state');
  const website = textField(row, 'website', 'domain', 'url');
  const domain = website && bareHost(website);
  return {
    phoneText: textField(row, 'phone', 'phone_number'),
    country: countryCode(textField(row, 'country', 'country_code')),
    name: name && (city || postalCode) ? placeNameKey(name) : undefined,
    city: city?.toLowerCase(),
    postalCode,
    state: state ? (stateAbbreviation(state) ?? state).toLowerCase() : undefined,
    domain: domain?.includes('.') ? domain : undefined,
  };
}

/**
 * Reads the phone's last 10 digits into `keys.phone` when it is a possible number. A number without a
 * country is read as a US or Canadian one: the two share the +1 numbering plan, so reading it as
 * either gives the same number.
 */
function readPhone(keys: PlaceKeys): void {
  if (!keys.phoneText) return;
  const parsed = parsePhoneNumberFromString(keys.phoneText, keys.country ?? 'US');
  if (parsed?.isPossible()) keys.phone = parsed.number.replace(/\D/g, '').slice(-10);
}

const MATCH_KINDS = ['phone', 'name', 'website'] as const;
type MatchKind = (typeof MATCH_KINDS)[number];

/**
 * A local business's contact values, masked in a preview: its phone and emails (its phone read in its
 * country). Its website, address and contact person's name are what the listing shows anyway.
 */
export const PLACE_CONTACTS = { phones: ['phone'], emails: ['emails'], country: 'country_code' } as const;

/** A matched row's fields: the place's, then its latest reviews. */
function assignPlace(row: Record<string, unknown>, p: Place, reviews: Review[] | undefined): void {
  row.business_name = p.name;
  row.phone = p.phone;
  row.website = p.website;
  row.emails = p.emails;
  const stateZip = p.state && p.postal_code ? `${p.state} ${p.postal_code}` : p.state || p.postal_code;
  row.address = [p.street, p.city, stateZip].filter(Boolean).join(', ');
  row.city = p.city;
  row.state = p.state;
  row.postal_code = p.postal_code;
  row.country_code = p.country_code;
  row.category = p.category;
  row.rating = p.rating;
  row.review_count = p.review_count;
  row.reviews = reviews ?? [];
  row.contact_person = p.contact_name;
}

/** Why a row cannot be matched, in plain words (its phone read); empty when it can. */
function problemsOf(k: PlaceKeys, row: Record<string, unknown>): string[] {
  if (k.phone || k.name || k.domain) return [];
  const problems: string[] = [];
  if (k.phoneText) problems.push(`the phone “${k.phoneText.slice(0, 60)}” is not a phone number`);
  if (textField(row, 'name', 'business_name')) problems.push('a business name needs a city or postal code beside it');
  const website = textField(row, 'website', 'domain', 'url');
  if (website) problems.push(`the website “${website.slice(0, 60)}” is not a web address`);
  problems.push('no phone, business name with city or postal code, or website to match on');
  return problems;
}

/**
 * Local business enrichment (its declaration holds the plan gate). Match priority: phone (a number without a
 * country is read as a US or Canadian one), then name with city or postal code (state separates
 * same-name places), then website (one location). Matches count against the enrichment allowance;
 * previews do not, and show PLACE_CONTACTS masked (enrichmentAnswer). A request with a row that has
 * nothing to match on is refused whole, unless the face asks for such rows to be skipped (EnrichOptions).
 */
export async function enrichLocalBusinesses(
  core: Pick<Core, 'sql' | 'db' | 'catalogReader' | 'config' | 'clock'>,
  principal: Principal,
  body: unknown,
  options: EnrichOptions = {},
) {
  const request = readEnrichRequest(body, keysOf);
  let skipped: SkippedRow[] | undefined;
  const keys = request.keys;
  const named = keys.filter((k): k is PlaceKeys => k?.name !== undefined);
  // `matchable`: the keys, every one now known to be matchable (assertMatchable).
  const [phone, name, host, matchable] = await core.catalogReader.read((sql) => {
    const lookups = lookUpPlaces(sql);
    // The lookups by name and by website start while the phone numbers are read (the slowest keys to
    // work out); a request refused meanwhile leaves them to finish unheard.
    const byName = Promise.resolve(lookups.byName(named));
    const byHost = Promise.resolve(lookups.byHost(distinct(keys.map((k) => k?.domain))));
    byName.catch(() => {});
    byHost.catch(() => {});
    for (const k of keys) if (k) readPhone(k);
    let usable = keys;
    if (options.skipUnusable)
      ({ keys: usable, skipped } = skipUnusable(keys, (k, i) => problemsOf(k, request.rows[i] ?? {})));
    else
      assertMatchable(keys, (k) => !k.phone && !k.name && !k.domain, 'phone; name with city or postal_code; website');
    return Promise.all([lookups.byPhone(distinct(usable.map((k) => k?.phone))), byName, byHost, usable]);
  });
  const rowNumber = new Map(named.map((k, i) => [k, String(i + 1)]));
  const reviews = new Map([...phone.reviews, ...name.reviews, ...host.reviews]);
  const matches = matchable.map((k): { kind: MatchKind; place: Place } | undefined => {
    if (!k) return undefined;
    const viaPhone = k.phone ? phone.byKey.get(k.phone) : undefined;
    if (viaPhone) return { kind: 'phone', place: viaPhone };
    const number = k.name ? rowNumber.get(k) : undefined;
    const viaName = number ? name.byKey.get(number) : undefined;
    if (viaName) return { kind: 'name', place: viaName };
    const viaHost = k.domain ? host.byKey.get(k.domain) : undefined;
    return viaHost ? { kind: 'website', place: viaHost } : undefined;
  });
  return enrichmentAnswer(
    core,
    principal.accountId,
    request,
    matches,
    MATCH_KINDS,
    (row, m) => assignPlace(row, m.place, reviews.get(m.place.id)),
    PLACE_CONTACTS,
    { skipped, job: options.job && { ...options.job, createdBy: principal.userId ?? null } },
  );
}
