import { getCountries, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import type { Sql } from '../../../db/client.ts';
import type { Core } from '../../core.ts';
import type { Principal } from '../accounts.ts';
import { takeAllowance } from '../allowances.ts';
import { stateAbbreviation } from '../geo.ts';
import { normaliseDomain, parseEnrichRequest } from '../leads/enrich.ts';
import { assertPlan } from '../plans.ts';

const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region' });
const COUNTRY_BY_NAME = new Map(getCountries().map((code) => [REGION_NAMES.of(code)!.toLowerCase(), code]));
for (const [alias, code] of Object.entries({ usa: 'US', us: 'US', 'united states of america': 'US', uk: 'GB', 'great britain': 'GB', uae: 'AE' })) {
  COUNTRY_BY_NAME.set(alias, code as CountryCode);
}

/** "CA", "Canada", "ca" → "CA"; undefined when unknown. */
export function countryCode(value: string | undefined): CountryCode | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if ((getCountries() as string[]).includes(v.toUpperCase())) return v.toUpperCase() as CountryCode;
  return COUNTRY_BY_NAME.get(v.toLowerCase());
}

interface PlaceKeys {
  /** Last 10 digits of each way the phone can be read (US and Canada when no country is given). */
  phones: string[];
  name?: string;
  city?: string;
  postalCode?: string;
  state?: string;
  domain?: string;
}

const text = (row: Record<string, unknown>, ...names: string[]) => {
  for (const n of names) {
    const v = row[n];
    if (typeof v === 'string' && v.trim()) return v.trim();
  }
  return undefined;
};

const simplify = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();

function keysOf(row: Record<string, unknown>): PlaceKeys {
  const country = countryCode(text(row, 'country', 'country_code'));
  const rawPhone = text(row, 'phone', 'phone_number');
  const phones = new Set<string>();
  if (rawPhone) {
    // A number without a country is tried as a US and as a Canadian number.
    for (const region of country ? [country] : (['US', 'CA'] as CountryCode[])) {
      const parsed = parsePhoneNumberFromString(rawPhone, region);
      if (parsed?.isPossible()) phones.add(parsed.number.replace(/\D/g, '').slice(-10));
    }
  }
  const name = text(row, 'name', 'business_name');
  const city = text(row, 'city');
  const postalCode = text(row, 'postal_code', 'zip', 'postcode');
  const state = text(row, 'state');
  const website = text(row, 'website', 'domain', 'url');
  return {
    phones: [...phones],
    name: name && (city || postalCode) ? simplify(name) : undefined,
    city: city?.toLowerCase(),
    postalCode,
    state: state ? (stateAbbreviation(state) ?? state).toLowerCase() : undefined,
    domain: website && normaliseDomain(website).includes('.') ? normaliseDomain(website) : undefined,
  };
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

const PLACE_COLUMNS = `b.id::int, b.name, b.category, b.street, b.city, b.state, b.postal_code, b.country_code, b.phone, b.website, b.emails, b.rating, b.review_count, b.contact_name`;

async function lookUp(sql: Sql, keys: PlaceKeys[]) {
  const phones = [...new Set(keys.flatMap((k) => k.phones))];
  const named = keys.filter((k) => k.name);
  const domains = [...new Set(keys.map((k) => k.domain).filter((d): d is string => !!d))];
  const [byPhone, byName, byDomain] = await Promise.all([
    phones.length
      ? sql.unsafe<Place[]>(`select right(regexp_replace(b.phone, '\\D', '', 'g'), 10) as k, ${PLACE_COLUMNS} from local_business b where right(regexp_replace(b.phone, '\\D', '', 'g'), 10) = any($1) order by b.id`, [phones] as never)
      : [],
    named.length
      ? sql.unsafe<(Place & { k: string })[]>(
          `select i.n::text as k, ${PLACE_COLUMNS}
           from unnest($1::text[], $2::text[], $3::text[], $4::text[]) with ordinality as i(name, city, postal, state, n)
           join local_business b on trim(regexp_replace(lower(b.name), '[^a-z0-9]+', ' ', 'g')) = i.name
             and (lower(b.city) = i.city or b.postal_code = i.postal)
             and (i.state is null or lower(b.state) = i.state)
           order by i.n, b.id`,
          [named.map((k) => k.name), named.map((k) => k.city ?? null), named.map((k) => k.postalCode ?? null), named.map((k) => k.state ?? null)] as never,
        )
      : [],
    // A website-only row returns one location of the business.
    domains.length
      ? sql.unsafe<Place[]>(
          `select distinct on (d) d as k, ${PLACE_COLUMNS}
           from (select regexp_replace(regexp_replace(lower(website), '^[a-z]+://(www\\.)?', ''), '[/?#:].*$', '') as d, * from local_business where website is not null) b
           where d = any($1) order by d, b.id`,
          [domains] as never,
        )
      : [],
  ]);
  const first = (rows: Place[]) => {
    const map = new Map<string, Place>();
    for (const r of rows) if (!map.has(r.k)) map.set(r.k, r);
    return map;
  };
  return { phone: first(byPhone), name: first(byName), domain: first(byDomain), namedIndex: new Map(named.map((k, i) => [k, String(i + 1)])) };
}

async function latestReviews(sql: Sql, ids: number[]) {
  if (ids.length === 0) return new Map<number, unknown[]>();
  const rows = await sql<{ business_id: number; author: string; rating: number; text: string | null; published_at: string }[]>`
    select business_id::int, author, rating, text, published_at::text from (
      select r.*, row_number() over (partition by business_id order by published_at desc, id desc) as n
      from local_business_review r where business_id = any(${ids}::bigint[])
    ) x where n <= 3 order by business_id, n`;
  const map = new Map<number, unknown[]>();
  for (const r of rows) {
    const { business_id, ...review } = r;
    map.set(business_id, [...(map.get(business_id) ?? []), review]);
  }
  return map;
}

/**
 * POST /api/v1/enrich/local-businesses (scale plan). Match priority: phone (a number without a
 * country is tried as US and Canadian), then name with city or postal code (state separates
 * same-name places), then website (one location). Matches count against the enrichment allowance;
 * previews do not.
 */
export async function enrichLocalBusinesses(core: Pick<Core, 'sql' | 'config' | 'clock'>, principal: Principal, body: unknown) {
  assertPlan(principal, 'scale', 'Local business enrichment');
  const request = parseEnrichRequest(body, keysOf, (k) => k.phones.length === 0 && !k.name && !k.domain, 'phone; name with city or postal_code; website');
  return core.sql.begin(async (tx) => {
    const sql = tx as unknown as Sql;
    const found = await lookUp(sql, request.keys);
    const matches = request.keys.map((k) => {
      for (const phone of k.phones) {
        const place = found.phone.get(phone);
        if (place) return { kind: 'phone', place };
      }
      const byName = k.name ? found.name.get(found.namedIndex.get(k)!) : undefined;
      if (byName) return { kind: 'name', place: byName };
      const byDomain = k.domain ? found.domain.get(k.domain) : undefined;
      return byDomain ? { kind: 'website', place: byDomain } : undefined;
    });
    const matched = matches.filter(Boolean).length;
    let granted = matched;
    let remaining: number | undefined;
    if (!request.preview && matched > 0) {
      ({ granted, remaining } = await takeAllowance(sql, principal.accountId, 'enrichment', matched, core.config.dailyEnrichmentMatches, core.clock()));
    }
    const reviews = await latestReviews(sql, matches.filter((m) => m).map((m) => m!.place.id));
    let used = 0;
    const by: Record<string, number> = { phone: 0, name: 0, website: 0 };
    const rows = request.rows.map((input, i) => {
      const m = matches[i];
      if (!m) return { ...input, match_status: 'not_found', matched_by: null };
      if (used >= granted) return { ...input, match_status: 'daily_limit_reached', matched_by: null };
      used += 1;
      by[m.kind]! += 1;
      const p = m.place;
      const stateZip = [p.state, p.postal_code].filter(Boolean).join(' ');
      return {
        ...input,
        match_status: 'matched',
        matched_by: m.kind,
        business_name: p.name,
        phone: p.phone,
        website: p.website,
        emails: p.emails,
        address: [p.street, p.city, stateZip].filter(Boolean).join(', '),
        city: p.city,
        state: p.state,
        postal_code: p.postal_code,
        country_code: p.country_code,
        category: p.category,
        rating: p.rating,
        review_count: p.review_count,
        reviews: reviews.get(p.id) ?? [],
        contact_person: p.contact_name,
      };
    });
    const summary = { total: rows.length, matched: used, not_found: rows.length - matched, by };
    if (request.preview) return { preview: true as const, summary, sample: rows.filter((r) => r.match_status === 'matched').slice(0, 5) };
    return {
      rows,
      summary,
      daily_allowance: { remaining: remaining ?? (await takeAllowance(sql, principal.accountId, 'enrichment', 0, core.config.dailyEnrichmentMatches, core.clock())).remaining },
    };
  });
}
