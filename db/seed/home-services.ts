import { HOME_SERVICE_CATEGORIES } from '../tables/home-services.ts';
import { WEEKLY_HOURS } from './local-businesses.ts';
import { COMPANY_PREFIXES, STREET_NAMES, US_CITIES } from './reference.ts';
import { phoneIn } from './phones.ts';
import { fixed, kebab, Random, slugify, weighted } from './random.ts';
import type { Sizes, TableRows } from './types.ts';

const GRADES: [string | null, number][] = [
  ['A', 35],
  ['B', 28],
  ['C', 15],
  ['D', 8],
  ['F', 6],
  [null, 8],
];
const label = (slug: string) =>
  slug
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');

/** Home-service pros: every one of the 167 category slugs appears. */
export function homeServiceTables(seed: number, sizes: Sizes): TableRows[] {
  return [
    {
      dataset: 'home_service_pros',
      table: 'home_service_pro',
      columns: [
        'id',
        'profile_url',
        'name',
        'category',
        'grade',
        'phone',
        'email',
        'website',
        'street',
        'city',
        'state',
        'zip',
        'hours',
        'licensed',
        'insured',
        'years_in_business',
        'service_zips',
        'rating',
        'review_count',
      ],
      count: HOME_SERVICE_CATEGORIES.length * sizes.prosPerCategory,
      *rows() {
        const rng = new Random(seed * 1_000_003 + 89);
        let id = 0;
        for (const category of HOME_SERVICE_CATEGORIES) {
          for (let k = 0; k < sizes.prosPerCategory; k++) {
            id += 1;
            const city = rng.pick(US_CITIES);
            const name = `${rng.pick(COMPANY_PREFIXES)} ${label(category)}`;
            const domain = `${slugify(name)}${id}.com`;
            const zip = Number(city.zip);
            const served = Array.from(
              new Set(Array.from({ length: rng.int(3, 12) }, () => String(zip + rng.int(0, 40)).padStart(5, '0'))),
            ).sort();
            yield [
              id,
              `https://www.homepros.net/${category}/${kebab(name)}-${id}`,
              name,
              category,
              weighted(rng, GRADES),
              phoneIn(rng, city),
              rng.chance(0.6) ? `office@${domain}` : null,
              rng.chance(0.7) ? `https://www.${domain}` : null,
              `${rng.int(10, 9899)} ${rng.pick(STREET_NAMES)}`,
              city.city,
              city.state,
              served[0],
              rng.pick(WEEKLY_HOURS),
              rng.chance(0.7),
              rng.chance(0.75),
              rng.int(1, 40),
              served,
              rng.chance(0.9) ? fixed(2.5 + rng.next() * 2.5, 1) : null,
              rng.int(0, 600),
            ];
          }
        }
      },
    },
  ];
}
