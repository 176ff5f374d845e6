/**
 * Local-business enrichment at scale (part `places` of bench/lib/database.ts): 1,000 rows taken
 * from the seeded local_business table through `enrichLocalBusinesses` (three lookup queries at once,
 * each followed by its places' reviews), against one query per row in priority order, sent one after
 * another and producing the very same output rows (checked, bench/lib/enrich-compare.ts). Goals: ≤ 300
 * ms and ≥ 10× faster than per row, as for lead enrichment.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Sql } from '../../db/client.ts';
import { placeHostSql, placeNameKeySql } from '../../db/tables/local-businesses.ts';
import type { Core } from '../../src/core.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import { US_STATES, stateAbbreviation } from '../../src/shared/geo.ts';
import { bareHost as normaliseDomain } from '../../src/shared/hosts.ts';
import { countryCode, enrichLocalBusinesses } from '../../src/endpoints/enrich-local-businesses.ts';
import { compareEnrichment, type EnrichComparison, type EnrichComparisonOptions } from './enrich-compare.ts';

/** The rows by the key they carry, 250 of each, interleaved in this order. */
export const PLACE_ROW_KINDS = ['phone', 'nameCity', 'namePostal', 'website'] as const;
export type PlaceRowKind = (typeof PLACE_ROW_KINDS)[number];

export interface PlacesEnrichFigures extends EnrichComparison {
  /** Places in local_business, the rows taken evenly from them by id. */
  places: number;
  mix: Record<PlaceRowKind, number>;
}

const ROWS = 1000;

interface Picked {
  stretch: number;
  name: string;
  city: string;
  state: string | null;
  postal_code: string | null;
  phone: string | null;
  website: string | null;
}

/**
 * 1,000 rows, one from each of 1,000 stretches of the table by id, the kinds taking turns: the first
 * place of its stretch with what the row's kind needs, its keys written the various ways callers write
 * them. Each row also carries a field of the caller's own (crm_id).
 */
async function placeRows(
  sql: Sql,
): Promise<{ places: number; rows: Record<string, string>[]; mix: Record<PlaceRowKind, number> }> {
  const picked = await sql<(Picked & { places: number })[]>`
    select distinct on (t.stretch) t.stretch, t.places, t.name, t.city, t.state, t.postal_code, t.phone, t.website
    from (
      select b.id, b.name, b.city, b.state, b.postal_code, b.phone, b.website,
        ntile(${ROWS}) over (order by b.id)::int as stretch, (count(*) over ())::int as places
      from local_business b
    ) t
    where case (t.stretch - 1) % 4 when 0 then t.phone is not null when 2 then t.postal_code is not null when 3 then t.website is not null else true end
    order by t.stretch, t.id`;
  if (picked.length < ROWS) throw new Error(`local_business holds too few places for ${ROWS} enrichment rows`);
  const mix = { phone: 0, nameCity: 0, namePostal: 0, website: 0 };
  const rows = picked.map((p): Record<string, string> => {
    const kind = PLACE_ROW_KINDS[(p.stretch - 1) % 4]!;
    mix[kind] += 1;
    const i = Math.floor((p.stretch - 1) / 4);
    const state = p.state ?? '';
    switch (kind) {
      case 'phone': {
        const digits = p.phone!.replace(/\D/g, '').slice(-10);
        const [area, exchange, line] = [digits.slice(0, 3), digits.slice(3, 6), digits.slice(6)];
        const phone: Record<string, string> = [
          { phone: p.phone! },
          { phone: `(${area}) ${exchange}-${line}` },
          { phone: `${area}.${exchange}.${line}`, country: 'US' },
          { phone_number: `+1 ${area} ${exchange} ${line}`, country: 'United States' },
        ][i % 4]!;
        return { ...phone, crm_id: `P${i}` };
      }
      case 'nameCity': {
        const named: Record<string, string> = [
          { name: p.name, city: p.city },
          { name: p.name.toUpperCase(), city: p.city.toLowerCase(), state },
          { business_name: p.name, city: p.city, state: US_STATES[state] ?? state },
        ][i % 3]!;
        return { ...named, crm_id: `C${i}` };
      }
      case 'namePostal': {
        const named: Record<string, string> = [
          { name: p.name, postal_code: p.postal_code! },
          { name: p.name.toLowerCase(), zip: p.postal_code!, state },
          { business_name: p.name, postcode: p.postal_code! },
        ][i % 3]!;
        return { ...named, crm_id: `Z${i}` };
      }
      case 'website': {
        const host = normaliseDomain(p.website!);
        const site: Record<string, string> = [
          { website: p.website! },
          { domain: host },
          { website: `www.${host}/contact` },
          { url: `HTTP://${host.toUpperCase()}/about?ref=crm` },
        ][i % 4]!;
        return { ...site, crm_id: `W${i}` };
      }
      default:
        throw new Error(`no enrichment rows of kind ${kind satisfies never}`);
    }
  });
  return { places: picked[0]!.places, rows, mix };
}

type MatchKind = 'phone' | 'name' | 'website';

interface FoundPlace {
  name: string;
  category: string;
  phone: string | null;
  website: string | null;
  emails: string[];
  address: string;
  city: string;
  state: string | null;
  postal_code: string | null;
  country_code: string;
  rating: number | null;
  review_count: number;
  contact_name: string | null;
  reviews: { author: string; rating: number; text: string | null; published_at: string }[];
}

const PLACE =
  'b.id, b.name, b.category, b.street, b.city, b.state, b.postal_code, b.country_code, b.phone, b.website, b.emails, b.rating, b.review_count, b.contact_name';

/**
 * The naive baseline: each row on its own, its keys in priority order (the phone, then the name with
 * its city or postal code, then the website's host), one query per key until one matches, the place's
 * three latest reviews joined in the same query; then the output row built field by field. The same matching rules as enrichLocalBusinesses: keys normalised alike, a phone without a
 * country read as a US or Canadian one, the state (when given) separating same-name places, the place
 * with the lowest id for every key. Only the allowance is left out.
 */
function perRowBaseline(sql: Sql, rows: Record<string, string>[]) {
  // The place a lookup finds (at most one), its address as the service writes it, and its three
  // latest reviews, newest first, as JSON.
  const withReviews = (place: string) => `
    select b.name, b.category, b.phone, b.website, b.emails,
      concat_ws(', ', nullif(b.street, ''), nullif(b.city, ''), nullif(concat_ws(' ', nullif(b.state, ''), nullif(b.postal_code, '')), '')) as address,
      b.city, b.state, b.postal_code, b.country_code, b.rating, b.review_count, b.contact_name, r.reviews
    from (${place}) b cross join lateral (
      select coalesce(json_agg(json_build_object('author', r.author, 'rating', r.rating, 'text', r.text, 'published_at', r.published_at::text)
                               order by r.published_at desc, r.id desc), '[]') as reviews
      from (select r.id, r.author, r.rating, r.text, r.published_at from local_business_review r
            where r.business_id = b.id order by r.published_at desc, r.id desc limit 3) r
    ) r`;
  const byPhone = withReviews(
    `select ${PLACE} from local_business b where right(regexp_replace(b.phone, '\\D', '', 'g'), 10) = $1 order by b.id limit 1`,
  );
  // Name with city, name with postal code (a row may give both); $4 the state when given.
  const byName = withReviews(`
    select * from (
      select ${PLACE} from local_business b where ${placeNameKeySql('b.')} = $1 and lower(b.city) = $2
      union all
      select ${PLACE} from local_business b where ${placeNameKeySql('b.')} = $1 and b.postal_code = $3
    ) b where $4::text is null or lower(b.state) = $4
    order by b.id limit 1`);
  const byHost = withReviews(
    `select ${PLACE} from local_business b where ${placeHostSql('b.')} = $1 order by b.id limit 1`,
  );

  interface Lookup {
    kind: MatchKind;
    text: string;
    values: (string | null)[];
  }
  const field = (row: Record<string, string>, ...names: string[]) => names.map((n) => row[n]?.trim()).find((v) => v);
  /** A row's lookups in priority order. */
  const lookupsOf = (row: Record<string, string>): Lookup[] => {
    const lookups: Lookup[] = [];
    const country = countryCode(field(row, 'country', 'country_code'));
    const phone = field(row, 'phone', 'phone_number');
    // Without a country, a US or Canadian number (one +1 numbering plan).
    const parsed = phone ? parsePhoneNumberFromString(phone, country ?? 'US') : undefined;
    if (parsed?.isPossible())
      lookups.push({ kind: 'phone', text: byPhone, values: [parsed.number.replace(/\D/g, '').slice(-10)] });
    const name = field(row, 'name', 'business_name');
    const city = field(row, 'city');
    const postal = field(row, 'postal_code', 'zip', 'postcode');
    const state = field(row, 'state');
    if (name && (city || postal)) {
      const nameKey = name
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, ' ')
        .trim();
      const stateKey = state ? (stateAbbreviation(state) ?? state).toLowerCase() : null;
      lookups.push({
        kind: 'name',
        text: byName,
        values: [nameKey, city?.toLowerCase() ?? null, postal ?? null, stateKey],
      });
    }
    const website = field(row, 'website', 'domain', 'url');
    const host = website && normaliseDomain(website);
    if (host?.includes('.')) lookups.push({ kind: 'website', text: byHost, values: [host] });
    return lookups;
  };

  return async () => {
    let queries = 0;
    const out: Record<string, unknown>[] = [];
    for (const row of rows) {
      let enriched: Record<string, unknown> = { ...row, match_status: 'not_found', matched_by: null };
      for (const { kind, text, values } of lookupsOf(row)) {
        queries += 1;
        const [p] = await sql.unsafe<FoundPlace[]>(text, values, { prepare: true });
        if (p) {
          enriched = {
            ...row,
            match_status: 'matched',
            matched_by: kind,
            business_name: p.name,
            phone: p.phone,
            website: p.website,
            emails: p.emails,
            address: p.address,
            city: p.city,
            state: p.state,
            postal_code: p.postal_code,
            country_code: p.country_code,
            category: p.category,
            rating: p.rating,
            review_count: p.review_count,
            reviews: p.reviews,
            contact_person: p.contact_name,
          };
          break;
        }
      }
      out.push(enriched);
    }
    return { queries, rows: out };
  };
}

export async function benchPlacesEnrichment(
  core: Core,
  principal: Principal,
  options: EnrichComparisonOptions,
): Promise<PlacesEnrichFigures> {
  const { places, rows, mix } = await placeRows(core.sql);
  const comparison = await compareEnrichment(
    () => enrichLocalBusinesses(core, principal, { rows }),
    perRowBaseline(core.sql, rows),
    options,
  );
  return { ...comparison, places, mix };
}
