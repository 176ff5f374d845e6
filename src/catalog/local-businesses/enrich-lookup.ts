import type { Sql } from '../../../db/client.ts';
import { placeHostSql, placeNameKeySql } from '../../../db/tables/local-businesses.ts';

/*
 * The lookups of local-business enrichment (endpoints/enrich-local-businesses.ts): the places a
 * request's keys find, with their latest reviews. The matching rules (which key wins, the output row)
 * stay in enrich-local-businesses.ts.
 */

/** A name as placeNameKeySql (db/tables/local-businesses.ts) has it in the index. */
export const placeNameKey = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/**
 * A lookup by name: the name as placeNameKey reads it, with a lower-cased
 * city or a postal code, and a lower-cased state code.
 */
export interface NameKey {
  name?: string;
  city?: string;
  postalCode?: string;
  state?: string;
}

export interface Place {
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

const PLACE_COLUMNS = `b.id::int, b.name, b.category, b.street, b.city, b.state, b.postal_code, b.country_code,
  b.phone, b.website, to_json(b.emails) as emails, b.rating, b.review_count, b.contact_name`;

/**
 * The places a request's keys find, each with its latest reviews, in six queries whatever the number
 * of rows: by phone (last 10 digits), by name with city or postal code (one lookup per row, the row's
 * number as key), and by website host (one location per host), each key looked up in the index on its
 * very expression, the place with the lowest id kept; then each lookup's places' reviews, asked for as
 * soon as it answers (even those of a place a higher-priority key will outrank). The lookups only read:
 * they run at once on the pool, prepared.
 */
export function lookUpPlaces(sql: Sql) {
  const query = async (text: string, params: unknown[]) => {
    const places = await sql.unsafe<Place[]>(text, params as never, { prepare: true });
    return {
      byKey: new Map(places.map((p) => [p.k, p])),
      reviews: await latestReviews(
        sql,
        places.map((p) => p.id),
      ),
    };
  };
  const none = { byKey: new Map<string, Place>(), reviews: new Map<number, Review[]>() };
  return {
    byPhone: (phones: string[]) =>
      phones.length
        ? query(
            `select distinct on (k.k) k.k, ${PLACE_COLUMNS} from unnest($1::text[]) k join local_business b
              on right(regexp_replace(b.phone, '\\D', '', 'g'), 10) = k.k order by k.k, b.id`,
            [phones],
          )
        : none,
    // A name with a city and a name with a postal code, each answered by its own index
    // (local_business_name_city_idx, local_business_name_postal_idx); a row may match both ways.
    byName: (named: NameKey[]) =>
      named.length
        ? query(
            `with i as (select * from unnest($1::text[], $2::text[], $3::text[], $4::text[])
               with ordinality as i(name, city, postal, state, n))
             select distinct on (m.n) m.n::text as k, ${PLACE_COLUMNS.replaceAll('b.', 'm.')} from (
               select i.n, ${PLACE_COLUMNS} from i join local_business b on ${placeNameKeySql('b.')} = i.name
                 and lower(b.city) = i.city
               where i.city is not null and (i.state is null or lower(b.state) = i.state)
               union all
               select i.n, ${PLACE_COLUMNS} from i join local_business b on ${placeNameKeySql('b.')} = i.name
                 and b.postal_code = i.postal
               where i.postal is not null and (i.state is null or lower(b.state) = i.state)
             ) m order by m.n, m.id`,
            [
              named.map((k) => k.name),
              named.map((k) => k.city ?? null),
              named.map((k) => k.postalCode ?? null),
              named.map((k) => k.state ?? null),
            ],
          )
        : none,
    byHost: (hosts: string[]) =>
      hosts.length
        ? query(
            `select distinct on (k.k) k.k, ${PLACE_COLUMNS} from unnest($1::text[]) k join local_business b
              on ${placeHostSql('b.')} = k.k order by k.k, b.id`,
            [hosts],
          )
        : none,
  };
}

export interface Review {
  author: string;
  rating: number;
  text: string | null;
  published_at: string;
}

/** The three latest reviews of each place: one index probe per place. */
export async function latestReviews(sql: Sql, ids: number[]): Promise<Map<number, Review[]>> {
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
