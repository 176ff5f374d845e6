import type { NewLocalBusiness } from '../schema/local-businesses.ts';
import type { Random } from './random.ts';

export const SEED_CITIES = [
  { city: 'Denver', state: 'CO', zip: 80202, area: '303', lat: 39.7392, lng: -104.9903 },
  { city: 'Austin', state: 'TX', zip: 78701, area: '512', lat: 30.2672, lng: -97.7431 },
  { city: 'Seattle', state: 'WA', zip: 98101, area: '206', lat: 47.6062, lng: -122.3321 },
  { city: 'Boston', state: 'MA', zip: 2108, area: '617', lat: 42.3601, lng: -71.0589 },
  { city: 'Chicago', state: 'IL', zip: 60601, area: '312', lat: 41.8781, lng: -87.6298 },
  { city: 'Miami', state: 'FL', zip: 33101, area: '305', lat: 25.7617, lng: -80.1918 },
  { city: 'Phoenix', state: 'AZ', zip: 85001, area: '602', lat: 33.4484, lng: -112.074 },
  { city: 'Portland', state: 'OR', zip: 97201, area: '503', lat: 45.5152, lng: -122.6784 },
  { city: 'Nashville', state: 'TN', zip: 37201, area: '615', lat: 36.1627, lng: -86.7816 },
  { city: 'San Diego', state: 'CA', zip: 92101, area: '619', lat: 32.7157, lng: -117.1611 },
  { city: 'Atlanta', state: 'GA', zip: 30301, area: '404', lat: 33.749, lng: -84.388 },
  { city: 'Minneapolis', state: 'MN', zip: 55401, area: '612', lat: 44.9778, lng: -93.265 },
] as const;

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
  'Summit', 'Blue Sky', 'Golden', 'Riverside', 'Maple', 'Union', 'Parkside', 'Evergreen', 'Harbor', 'Main Street',
  'North Star', 'Cedar', 'Liberty', 'Pioneer', 'Highland', 'Oak', 'Metro', 'Bright', 'Urban', 'Lakeside',
];
const STREETS = ['Main St', 'Broadway', 'Oak Ave', 'Pine St', '1st Ave', 'Market St', 'Elm St', 'Park Ave', 'Lake Dr', 'Hill Rd'];
const WEEK = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const HOURS = [
  ['9 AM–5 PM', '9 AM–5 PM', '9 AM–5 PM', '9 AM–5 PM', '9 AM–5 PM', 'Closed', 'Closed'],
  ['7 AM–7 PM', '7 AM–7 PM', '7 AM–7 PM', '7 AM–7 PM', '7 AM–9 PM', '8 AM–9 PM', '8 AM–3 PM'],
  ['Closed', '11 AM–10 PM', '11 AM–10 PM', '11 AM–10 PM', '11 AM–11 PM', '11 AM–11 PM', '4–9 PM'],
  Array.from({ length: 7 }, () => 'Open 24 hours'),
].map((week) => week.map((hours, day) => `${WEEK[day]}: ${hours}`));

const slug = (s: string) => s.toLowerCase().replace(/&/g, 'and').replace(/[^a-z0-9]+/g, '');

/** Local businesses: `perCityCategory` on average for every city × category. */
export function* generateLocalBusinesses(rng: Random, perCityCategory: number): Generator<NewLocalBusiness> {
  for (const city of SEED_CITIES) {
    for (const cat of SEED_CATEGORIES) {
      const count = rng.int(Math.ceil(perCityCategory * 0.5), Math.ceil(perCityCategory * 1.5));
      for (let i = 0; i < count; i++) {
        const name = `${rng.pick(PREFIXES)} ${rng.pick(cat.nouns)}`;
        const domain = `${slug(name)}${slug(city.city)}.com`;
        const hasWebsite = rng.chance(0.8);
        yield {
          placeId: `ChIJ${rng.id(23)}`,
          name,
          category: cat.category,
          street: `${rng.int(10, 9899)} ${rng.pick(STREETS)}`,
          city: city.city,
          state: city.state,
          postalCode: String(city.zip + rng.int(0, 30)).padStart(5, '0'),
          countryCode: 'US',
          lat: city.lat + (rng.next() - 0.5) * 0.2,
          lng: city.lng + (rng.next() - 0.5) * 0.2,
          phone: rng.chance(0.9) ? `+1 ${city.area}-555-${String(rng.int(100, 9999)).padStart(4, '0')}` : null,
          website: hasWebsite ? `https://www.${domain}` : null,
          emails: hasWebsite && rng.chance(0.6) ? [`info@${domain}`] : [],
          rating: rng.chance(0.95) ? Math.round((3 + rng.next() * 2) * 10) / 10 : null,
          reviewCount: rng.int(0, 1500),
          openingHours: rng.pick(HOURS),
          contactName: null,
        };
      }
    }
  }
}
