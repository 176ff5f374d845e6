import { STORE_SOCIALS } from '../tables/stores.ts';
import {
  COMPANY_PREFIXES,
  SHOPIFY_APPS,
  STORE_CATEGORIES,
  STORE_PLATFORM_INFO,
  STORE_TECHNOLOGIES,
  US_CITIES,
  WORLD_CITIES,
} from './reference.ts';
import { phoneIn } from './phones.ts';
import { Random, sample, slugify, UniqueNames, weighted } from './random.ts';
import type { Sizes, TableRows } from './types.ts';

const STORE_WORDS = [
  'Co',
  'Shop',
  'Supply',
  'Goods',
  'Studio',
  'House',
  'Lab',
  'Market',
  'Outfitters',
  'Boutique',
  'Collective',
];
const SOCIAL_HOSTS: Record<(typeof STORE_SOCIALS)[number], [string, number]> = {
  instagram: ['https://www.instagram.com/', 0.7],
  facebook: ['https://www.facebook.com/', 0.65],
  tiktok: ['https://www.tiktok.com/@', 0.3],
  youtube: ['https://www.youtube.com/@', 0.2],
  linkedin: ['https://www.linkedin.com/company/', 0.25],
  twitter: ['https://twitter.com/', 0.3],
  pinterest: ['https://www.pinterest.com/', 0.2],
};
const COUNTRY_WEIGHTS: [string, number][] = [
  ['US', 55],
  ['GB', 10],
  ['CA', 8],
  ['AU', 7],
  ['DE', 5],
  ['FR', 5],
  ['NL', 4],
  ['AE', 3],
  ['SG', 3],
];
const TRAFFIC_MULTIPLIERS = [1, 1, 1, 2, 3, 5, 10, 20, 50, 100];

export function storeTables(seed: number, sizes: Sizes): TableRows[] {
  return [
    {
      dataset: 'stores',
      table: 'store',
      columns: [
        'id',
        'domain',
        'name',
        'platform',
        'plan_tier',
        'country_code',
        'city',
        'state',
        'category',
        'technologies',
        'apps',
        ...STORE_SOCIALS.map((s) => `${s}_url`),
        'emails',
        'phones',
        'estimated_monthly_visits',
        'estimated_monthly_sales',
        'employee_count',
      ],
      count: sizes.stores,
      *rows() {
        const rng = new Random(seed * 1_000_003 + 53);
        const domains = new UniqueNames();
        const platforms = Object.entries(STORE_PLATFORM_INFO).map(
          ([name, info]) => [{ name, ...info }, info.weight] as const,
        );
        for (let id = 1; id <= sizes.stores; id++) {
          const category = rng.pick(STORE_CATEGORIES);
          const name = `${rng.pick(COMPANY_PREFIXES)} ${rng.pick(STORE_WORDS)}`;
          const domain = domains.take(slugify(name), (base, n) => `${base}${n === 0 ? '' : n}.com`);
          const handle = domain.replace(/\.com$/, '');
          const { name: platform, tiers } = weighted(rng, platforms);
          const countryCode = weighted(rng, COUNTRY_WEIGHTS);
          const cities = [...US_CITIES, ...WORLD_CITIES].filter((c) => c.countryCode === countryCode);
          const city = rng.pick(cities);
          const visits = rng.int(300, 9000) * rng.pick(TRAFFIC_MULTIPLIERS);
          // Sales = visits × conversion (0.5–3 %) × average order (25–150 USD).
          const sales = Math.round((visits * rng.int(5, 30) * rng.int(25, 150)) / 1000);
          yield [
            id,
            domain,
            name,
            platform,
            rng.pick(tiers),
            countryCode,
            city.city,
            city.state,
            category,
            sample(rng, STORE_TECHNOLOGIES, rng.int(2, 10)),
            platform === 'shopify' ? sample(rng, SHOPIFY_APPS, rng.int(1, 8)) : [],
            ...STORE_SOCIALS.map((s) => (rng.chance(SOCIAL_HOSTS[s][1]) ? `${SOCIAL_HOSTS[s][0]}${handle}` : null)),
            rng.chance(0.85) ? (rng.chance(0.4) ? [`hello@${domain}`, `support@${domain}`] : [`hello@${domain}`]) : [],
            rng.chance(0.4) ? [phoneIn(rng, city)] : [],
            visits,
            sales,
            Math.max(1, Math.round(sales / rng.int(8_000, 25_000))),
          ];
        }
      },
    },
  ];
}
