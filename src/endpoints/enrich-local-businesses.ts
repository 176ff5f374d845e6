import { getCountries, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import type { Sql } from '../../db/client.ts';
import { placeHostSql, placeNameKeySql } from '../../db/schema/local-businesses.ts';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { stateAbbreviation } from '../shared/geo.ts';
import { assertMatchable, enrichmentAnswer, normaliseDomain, readEnrichRequest, textField } from './enrichment.ts';
import { assertPlan } from '../billing/plans.ts';

const COUNTRY_CODES = new Set<string>(getCountries());
const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region' });
const COUNTRY_BY_NAME = new Map(getCountries().map((code) => [REGION_NAMES.of(code)!.toLowerCase(), code]));
for (const [alias, code] of Object.entries({ usa: 'US', us: 'US', 'united states of america': 'US', uk: 'GB', 'great britain': 'GB', uae: 'AE' })) {
  COUNTRY_BY_NAME.set(alias, code as CountryCode);
}

/** "CA", "Canada", "ca" → "CA"; undefined when unknown. */
export function countryCode(value: string | undefined): CountryCode | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (COUNTRY_CODES.has(v.toUpperCase())) return v.toUpperCase() as CountryCode;
  return COUNTRY_BY_NAME.get(v.toLowerCase());
}

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

/** A name as placeNameKeySql (db/schema/local-businesses.ts) has it in the index. */
const placeNameKey = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();

/** A row's keys; its phone is only read later (readPhone), while the other lookups run. */
function keysOf(row: Record<string, unknown>): PlaceKeys {
  const name = textField(row, 'name', 'business_name');
  const city = textField(row, 'city');
  const postalCode = textField(row, 'postal_code', 'zip', 'postcode');
  const state = textField(row, 'state');
  const website = textField(row, 'website', 'domain', 'url');
  const domain = website && normaliseDomain(website);
  return {
    phoneText: textField(row, 'phone', 'phone_number'),
    country: countryCode(textField(row, 'country', 'country_code')),
    name: name && (city || postalCode) ? placeNameKey(name) : undefined,
    city: city?.toLowerCase(),
    postalCode,
    state: state ? (stateAbbreviation(state) ?? state).toLowerCase() : undefined,
    domain: domain && domain.includes('.') ? domain : undefined,
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

interface Place {
  k: string;
  id: number;
  name: string;
  category: string;
  street: string | null;
  city: string;
  state: string | null;
  postal_code: string | null;
  country_code: string;
  phone: string | null;
  website: string | null;
  emails: string[];
  rating: number | null;
  review_count: number;
  contact_name: string | null;
}

const PLACE_COLUMNS = `b.id::int, b.name, b.category, b.street, b.city, b.state, b.postal_code, b.country_code, b.phone, b.website, to_json(b.emails) as emails, b.rating, b.review_count, b.contact_name`;

/**
 * The places a request's keys find, each with its latest reviews, in six queries whatever the number
 * of rows: by phone (last 10 digits), by name with city or postal code (one lookup per row, the row's
 * number as key), and by website host (one location per host), each key looked up in the index on its
 * very expression, the place with the lowest id kept; then each lookup's places' reviews, asked for as
 * soon as it answers (even those of a place a higher-priority key will outrank). The lookups only read:
 * they run at once on the pool, prepared.
 */
function lookUp(sql: Sql) {
  const query = async (text: string, params: unknown[]) => {
    const places = await sql.unsafe<Place[]>(text, params as never, { prepare: true });
    return { byKey: new Map(places.map((p) => [p.k, p])), reviews: await latestReviews(sql, places.map((p) => p.id)) };
  };
  const none = { byKey: new Map<string, Place>(), reviews: new Map<number, Review[]>() };
  return {
    byPhone: (phones: string[]) =>
      phones.length
        ? query(
            `select distinct on (k.k) k.k, ${PLACE_COLUMNS} from unnest($1::text[]) k join local_business b on right(regexp_replace(b.phone, '\\D', '', 'g'), 10) = k.k order by k.k, b.id`,
            [phones],
          )
        : none,
    // A name with a city and a name with a postal code, each answered by its own index
    // (local_business_name_city_idx, local_business_name_postal_idx); a row may match both ways.
    byName: (named: PlaceKeys[]) =>
      named.length
        ? query(
            `with i as (select * from unnest($1::text[], $2::text[], $3::text[], $4::text[]) with ordinality as i(name, city, postal, state, n))
             select distinct on (m.n) m.n::text as k, ${PLACE_COLUMNS.replaceAll('b.', 'm.')} from (
               select i.n, ${PLACE_COLUMNS} from i join local_business b on ${placeNameKeySql('b.')} = i.name and lower(b.city) = i.city
               where i.city is not null and (i.state is null or lower(b.state) = i.state)
               union all
               select i.n, ${PLACE_COLUMNS} from i join local_business b on ${placeNameKeySql('b.')} = i.name and b.postal_code = i.postal
               where i.postal is not null and (i.state is null or lower(b.state) = i.state)
             ) m order by m.n, m.id`,
            [named.map((k) => k.name), named.map((k) => k.city ?? null), named.map((k) => k.postalCode ?? null), named.map((k) => k.state ?? null)],
          )
        : none,
    byHost: (hosts: string[]) =>
      hosts.length ? query(`select distinct on (k.k) k.k, ${PLACE_COLUMNS} from unnest($1::text[]) k join local_business b on ${placeHostSql('b.')} = k.k order by k.k, b.id`, [hosts]) : none,
  };
}

interface Review {
  author: string;
  rating: number;
  text: string | null;
  published_at: string;
}

/** The three latest reviews of each place: one index probe per place. */
async function latestReviews(sql: Sql, ids: number[]): Promise<Map<number, Review[]>> {
  const map = new Map<number, Review[]>();
  if (ids.length === 0) return map;
  // Rows as arrays (values()): three reviews per place, about 3,000 rows for 1,000 places.
  const rows = (await sql
    .unsafe(
      `select b.id::int, r.author, r.rating, r.text, r.published_at::text
       from unnest($1::bigint[]) b(id) cross join lateral (
         select author, rating, text, published_at from local_business_review r
         where r.business_id = b.id order by r.published_at desc, r.id desc limit 3) r`,
      [ids] as never,
      { prepare: true },
    )
    .values()) as unknown as [number, string, number, string | null, string][];
  for (const [id, author, rating, text, published_at] of rows) {
    const review: Review = { author, rating, text, published_at };
    const list = map.get(id);
    if (list) list.push(review);
    else map.set(id, [review]);
  }
  return map;
}

const MATCH_KINDS = ['phone', 'name', 'website'] as const;
type MatchKind = (typeof MATCH_KINDS)[number];

/** A matched row's fields: the place's, then its latest reviews. */
function assignPlace(row: Record<string, unknown>, p: Place, reviews: Review[] | undefined): void {
  row.business_name = p.name;
  row.phone = p.phone;
  row.website = p.website;
  row.emails = p.emails;
  const stateZip = p.state && p.postal_code ? `${p.state} ${p.postal_code}` : (p.state || p.postal_code);
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

/**
 * POST /api/v1/enrich/local-businesses (scale plan). Match priority: phone (a number without a
 * country is read as a US or Canadian one), then name with city or postal code (state separates
 * same-name places), then website (one location). Matches count against the enrichment allowance;
 * previews do not (enrichmentAnswer).
 */
export async function enrichLocalBusinesses(core: Pick<Core, 'sql' | 'config' | 'clock'>, principal: Principal, body: unknown) {
  assertPlan(principal, 'scale', 'Local business enrichment');
  const request = readEnrichRequest(body, keysOf);
  const keys = request.keys;
  const sql = core.sql;
  const lookups = lookUp(sql);
  // The lookups by name and by website start while the phone numbers are read (the slowest keys to
  // work out); a request refused meanwhile leaves them to finish unheard.
  const named = keys.filter((k): k is PlaceKeys => k?.name !== undefined);
  const byName = Promise.resolve(lookups.byName(named));
  const byHost = Promise.resolve(lookups.byHost(distinct(keys.map((k) => k?.domain))));
  byName.catch(() => {});
  byHost.catch(() => {});
  for (const k of keys) if (k) readPhone(k);
  assertMatchable(keys, (k) => !k.phone && !k.name && !k.domain, 'phone; name with city or postal_code; website');
  const [phone, name, host] = await Promise.all([lookups.byPhone(distinct(keys.map((k) => k.phone))), byName, byHost]);
  const rowNumber = new Map(named.map((k, i) => [k, String(i + 1)]));
  const reviews = new Map([...phone.reviews, ...name.reviews, ...host.reviews]);
  const matches = keys.map((k): { kind: MatchKind; place: Place } | undefined => {
    const viaPhone = k.phone ? phone.byKey.get(k.phone) : undefined;
    if (viaPhone) return { kind: 'phone', place: viaPhone };
    const viaName = k.name ? name.byKey.get(rowNumber.get(k)!) : undefined;
    if (viaName) return { kind: 'name', place: viaName };
    const viaHost = k.domain ? host.byKey.get(k.domain) : undefined;
    return viaHost ? { kind: 'website', place: viaHost } : undefined;
  });
  return enrichmentAnswer(core, principal.accountId, request, matches, MATCH_KINDS, (row, m) => assignPlace(row, m.place, reviews.get(m.place.id)));
}
