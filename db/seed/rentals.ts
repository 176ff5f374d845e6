import { EUROPEAN_CITIES, FIRST_NAMES, LAST_NAMES, RENTAL_AMENITIES } from './reference.ts';
import { fixed, Random, sample, slugify } from './random.ts';
import type { Sizes, TableRows } from './types.ts';

const RATES: Record<string, number> = { EUR: 1, GBP: 0.85, CZK: 25, HUF: 390, DKK: 7.5 };
const rateOf = (currency: string) => {
  const rate = RATES[currency];
  if (rate === undefined) throw new Error(`no exchange rate for ${currency}`);
  return rate;
};
const TITLES = [
  'Bright apartment',
  'Cosy studio',
  'Loft with a view',
  'Old-town flat',
  'Modern suite',
  'Family home',
  'Quiet room',
];

/** Hosts, then their listings in European cities (pro hosts have several). */
export function rentalTables(seed: number, sizes: Sizes): TableRows[] {
  const rng = new Random(seed * 1_000_003 + 79);
  const hosts: unknown[][] = [];
  const listingsPerHost: number[] = [];
  for (let id = 1; id <= sizes.rentalHosts; id++) {
    const isPro = rng.chance(0.2);
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    const name = isPro ? `${last} Stays` : first;
    listingsPerHost.push(isPro ? rng.int(3, 12) : rng.int(1, 2));
    const emailDomain = isPro
      ? `${slugify(last)}stays.eu`
      : rng.pick(['gmail.com', 'outlook.com', 'yahoo.com', 'gmx.de', 'orange.fr']);
    hosts.push([
      id,
      `https://www.stayhosts.net/users/show/${1_000_000 + id}`,
      name,
      rng.chance(isPro ? 0.95 : 0.6) ? `${slugify(first)}.${slugify(last)}${id}@${emailDomain}` : null,
      rng.chance(0.4)
        ? `+${rng.pick(['33', '34', '351', '39', '31', '49', '43', '353', '30'])} ${rng.int(100_000_000, 999_999_999)}`
        : null,
      isPro,
      rng.chance(0.3),
      0,
      rng.int(2010, 2025),
    ]);
  }
  const total = sizes.rentalListings;
  // Spread exactly `total` listings over hosts by their share.
  const sum = listingsPerHost.reduce((a, b) => a + b, 0);
  const counts = listingsPerHost.map((n) => Math.max(1, Math.floor((n / sum) * total)));
  let assigned = counts.reduce((a, b) => a + b, 0);
  for (let i = 0; assigned !== total; i = (i + 1) % counts.length) {
    const count = counts[i] ?? 0;
    if (assigned < total) {
      counts[i] = count + 1;
      assigned += 1;
    } else if (count > 1) {
      counts[i] = count - 1;
      assigned -= 1;
    }
  }
  for (const [i, host] of hosts.entries()) host[7] = counts[i];

  return [
    {
      dataset: 'rental_hosts',
      table: 'rental_host',
      columns: ['id', 'host_key', 'name', 'email', 'phone', 'is_pro', 'is_superhost', 'listings_count', 'joined_year'],
      count: hosts.length,
      rows: () => hosts as never,
    },
    {
      dataset: 'rental_listings',
      table: 'rental_listing',
      columns: [
        'id',
        'listing_url',
        'host_id',
        'title',
        'city',
        'country',
        'country_code',
        'lat',
        'lng',
        'price_per_night',
        'currency',
        'amenities',
        'bedrooms',
        'guests',
        'rating',
        'review_count',
      ],
      count: total,
      *rows() {
        const lrng = new Random(seed * 1_000_003 + 83);
        let id = 0;
        for (const [index, count] of counts.entries()) {
          const home = lrng.pick(EUROPEAN_CITIES);
          for (let k = 0; k < count; k++) {
            id += 1;
            const city = lrng.chance(0.7) ? home : lrng.pick(EUROPEAN_CITIES);
            const bedrooms = lrng.int(1, 4);
            const reviews = lrng.int(0, 400);
            yield [
              id,
              `https://www.stayhosts.net/rooms/${5_000_000 + id}`,
              index + 1,
              `${lrng.pick(TITLES)} in ${city.city}`,
              city.city,
              city.country,
              city.countryCode,
              fixed(city.lat + (lrng.next() - 0.5) * 0.1, 6),
              fixed(city.lng + (lrng.next() - 0.5) * 0.1, 6),
              fixed(lrng.int(40, 400) * rateOf(city.currency), 2),
              city.currency,
              sample(lrng, RENTAL_AMENITIES, lrng.int(4, 12)),
              bedrooms,
              bedrooms * 2,
              reviews > 0 ? fixed(4 + lrng.next(), 2) : null,
              reviews,
            ];
          }
        }
      },
    },
  ];
}
