import { FIRST_NAMES, LAST_NAMES, STREET_NAMES, US_CITIES } from './reference.ts';
import { phoneIn } from './phones.ts';
import { dateBetween, fixed, Random, slugify } from './random.ts';
import type { Sizes, TableRows } from './types.ts';

export const SEED_CATEGORIES = [
  { category: 'Dentist', nouns: ['Dental', 'Dental Care', 'Family Dentistry', 'Smiles'] },
  { category: 'Plumber', nouns: ['Plumbing', 'Plumbing & Drain', 'Pipe Works'] },
  { category: 'Coffee shop', nouns: ['Coffee', 'Coffee Roasters', 'Espresso Bar'] },
  { category: 'Italian restaurant', nouns: ['Trattoria', 'Pasta House', 'Ristorante'] },
  { category: 'Hair salon', nouns: ['Hair Studio', 'Salon', 'Cuts'] },
  { category: 'Real estate agency', nouns: ['Realty', 'Properties', 'Real Estate Group'] },
  { category: 'Auto repair shop', nouns: ['Auto Repair', 'Auto Care', 'Garage'] },
  { category: 'Gym', nouns: ['Fitness', 'Athletic Club', 'Strength Gym'] },
  { category: 'Law firm', nouns: ['Law Group', 'Legal', 'Attorneys at Law'] },
  { category: 'Veterinarian', nouns: ['Animal Hospital', 'Veterinary Clinic', 'Pet Care'] },
  { category: 'Bakery', nouns: ['Bakery', 'Bake Shop', 'Breads'] },
  { category: 'Roofing contractor', nouns: ['Roofing', 'Roof Pros', 'Roofing & Gutters'] },
  { category: 'Accountant', nouns: ['CPA', 'Accounting', 'Tax & Bookkeeping'] },
  { category: 'Florist', nouns: ['Flowers', 'Floral Design', 'Blooms'] },
  { category: 'Yoga studio', nouns: ['Yoga', 'Yoga Studio', 'Yoga & Wellness'] },
  { category: 'Electrician', nouns: ['Electric', 'Electrical Services', 'Wiring Co'] },
] as const;

const PREFIXES = [
  'Summit',
  'Blue Sky',
  'Golden',
  'Riverside',
  'Maple',
  'Union',
  'Parkside',
  'Evergreen',
  'Harbor',
  'Main Street',
  'North Star',
  'Cedar',
  'Liberty',
  'Pioneer',
  'Highland',
  'Oak',
  'Metro',
  'Bright',
  'Urban',
  'Lakeside',
];
const WEEK = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
export const WEEKLY_HOURS = [
  ['9 AM–5 PM', '9 AM–5 PM', '9 AM–5 PM', '9 AM–5 PM', '9 AM–5 PM', 'Closed', 'Closed'],
  ['7 AM–7 PM', '7 AM–7 PM', '7 AM–7 PM', '7 AM–7 PM', '7 AM–9 PM', '8 AM–9 PM', '8 AM–3 PM'],
  ['Closed', '11 AM–10 PM', '11 AM–10 PM', '11 AM–10 PM', '11 AM–11 PM', '11 AM–11 PM', '4–9 PM'],
  ['8 AM–6 PM', '8 AM–6 PM', '8 AM–6 PM', '8 AM–6 PM', '8 AM–6 PM', '9 AM–1 PM', 'Closed'],
  Array.from({ length: 7 }, () => 'Open 24 hours'),
].map((week) => week.map((hours, day) => `${WEEK[day]}: ${hours}`));

const REVIEW_TEXT: Record<number, string[]> = {
  5: ['Fantastic service, highly recommend!', 'Friendly staff and great results.', 'Best in town, will be back.'],
  4: ['Very good overall, a short wait.', 'Great experience, fair prices.', 'Solid work and helpful people.'],
  3: ['Okay, nothing special.', 'Decent, but communication could be better.', 'Average experience.'],
  2: ['Slow and a bit pricey.', 'Not great, had to call twice.', 'Below expectations.'],
  1: ['Terrible experience, would not return.', 'Rude staff and poor work.', 'Avoid.'],
};

/** Local businesses in every city × category, and their reviews. */
export function localBusinessTables(seed: number, sizes: Sizes): TableRows[] {
  const rng = new Random(seed * 1_000_003 + 37);
  const rows: unknown[][] = [];
  const placeIds: { placeId: string; rating: number | null; reviews: number }[] = [];
  const per = sizes.businessesPerCityCategory;
  for (const city of US_CITIES) {
    for (const cat of SEED_CATEGORIES) {
      const count = rng.int(Math.ceil(per * 0.5), Math.ceil(per * 1.5));
      for (let i = 0; i < count; i++) {
        const id = rows.length + 1;
        const name = `${rng.pick(PREFIXES)} ${rng.pick(cat.nouns)}`;
        const domain = `${slugify(name)}${slugify(city.city)}${id}.com`;
        const hasWebsite = rng.chance(0.8);
        const rating = rng.chance(0.95) ? fixed(3 + rng.next() * 2, 1) : null;
        const reviewCount = rng.int(0, 1500);
        const placeId = `ChIJ${rng.id(23)}`;
        placeIds.push({ placeId, rating, reviews: reviewCount });
        rows.push([
          id,
          placeId,
          name,
          cat.category,
          `${rng.int(10, 9899)} ${rng.pick(STREET_NAMES)}`,
          city.city,
          city.state,
          String(Number(city.zip) + rng.int(0, 30)).padStart(5, '0'),
          'US',
          fixed(city.lat + (rng.next() - 0.5) * 0.2, 6),
          fixed(city.lng + (rng.next() - 0.5) * 0.2, 6),
          rng.chance(0.9) ? phoneIn(rng, city) : null,
          hasWebsite ? `https://www.${domain}` : null,
          hasWebsite && rng.chance(0.6) ? [`info@${domain}`] : [],
          rating,
          reviewCount,
          rng.pick(WEEKLY_HOURS),
          rng.chance(0.3) ? `${rng.pick(FIRST_NAMES)} ${rng.pick(LAST_NAMES)}` : null,
        ]);
      }
    }
  }
  const reviewCounts = placeIds.map(() => rng.int(0, sizes.reviewsPerBusiness * 2));
  return [
    {
      dataset: 'local_businesses',
      table: 'local_business',
      columns: [
        'id',
        'place_id',
        'name',
        'category',
        'street',
        'city',
        'state',
        'postal_code',
        'country_code',
        'lat',
        'lng',
        'phone',
        'website',
        'emails',
        'rating',
        'review_count',
        'opening_hours',
        'contact_name',
      ],
      count: rows.length,
      rows: () => rows as never,
    },
    {
      dataset: 'local_business_reviews',
      table: 'local_business_review',
      columns: ['id', 'review_key', 'business_id', 'author', 'rating', 'text', 'published_at'],
      count: reviewCounts.reduce((a, b) => a + b, 0),
      *rows() {
        const rrng = new Random(seed * 1_000_003 + 41);
        let id = 0;
        for (const [index, business] of placeIds.entries()) {
          const count = reviewCounts[index] ?? 0;
          for (let k = 0; k < count; k++) {
            id += 1;
            const center = Math.round(business.rating ?? 4);
            const rating = Math.min(5, Math.max(1, center + rrng.int(-1, 1)));
            yield [
              id,
              `${business.placeId}-${k + 1}`,
              index + 1,
              `${rrng.pick(FIRST_NAMES)} ${rrng.pick(LAST_NAMES)[0]}.`,
              rating,
              rrng.pick(REVIEW_TEXT[rating] ?? []),
              dateBetween(rrng, '2018-01-01', '2026-10-31'),
            ];
          }
        }
      },
    },
  ];
}
