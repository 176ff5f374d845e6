import {
  AGENT_SPECIALTIES,
  BUSINESS_CATEGORIES,
  COMMERCIAL_TYPES,
  COMPANY_PREFIXES,
  FIRST_NAMES,
  LANGUAGES,
  LAST_NAMES,
  STREET_NAMES,
  US_CITIES,
  type City,
} from './reference.ts';
import { phoneIn } from './phones.ts';
import { addressKey } from '../tables/properties.ts';
import { json } from './copy.ts';
import { dateBetween, fixed, kebab, Random, sample, slugify, weighted } from './random.ts';
import type { Sizes, TableRows } from './types.ts';

const PROPERTY_TYPES: [string, number][] = [
  ['single_family', 65],
  ['condo', 15],
  ['townhouse', 10],
  ['multi_family', 7],
  ['mobile', 3],
];
const STATUSES: [string, number][] = [
  ['off_market', 80],
  ['for_sale', 10],
  ['pending', 4],
  ['sold', 6],
];
const SCHOOL_SUFFIX: [string, string][] = [
  ['Elementary School', 'elementary'],
  ['Middle School', 'middle'],
  ['High School', 'high'],
];

/** USD per square foot by city, stable for a seed. */
/** The cities, each with its price per square foot. */
const pricedCities = (rng: Random) => US_CITIES.map((city) => ({ city, perSqft: rng.int(180, 950) }));

const MAIL_DOMAINS = ['gmail.com', 'yahoo.com', 'outlook.com', 'icloud.com'];
const person = (rng: Random) => `${rng.pick(FIRST_NAMES)} ${rng.pick(LAST_NAMES)}`;
const street = (rng: Random) => `${rng.int(10, 9899)} ${rng.pick(STREET_NAMES)}`;
const zipIn = (rng: Random, city: City) => String(Number(city.zip) + rng.int(0, 40)).padStart(5, '0');

export function realEstateTables(seed: number, sizes: Sizes): TableRows[] {
  const properties: TableRows = {
    dataset: 'properties',
    table: 'property',
    columns: [
      'id',
      'address_key',
      'street',
      'city',
      'state',
      'zip',
      'lat',
      'lng',
      'property_type',
      'beds',
      'baths',
      'sqft',
      'lot_sqft',
      'year_built',
      'estimated_value',
      'listing_status',
      'list_price',
      'days_on_market',
      'last_sold_date',
      'last_sold_price',
      'price_history',
      'tax_history',
      'comparables',
      'schools',
      'owner_name',
      'owner_mailing_address',
      'owner_phones',
      'owner_emails',
    ],
    count: sizes.properties,
    *rows() {
      const rng = new Random(seed * 1_000_003 + 61);
      const cities = pricedCities(rng);
      const keys = new Set<string>();
      for (let id = 1; id <= sizes.properties; id++) {
        const { city, perSqft } = rng.pick(cities);
        let address = street(rng);
        const zip = zipIn(rng, city);
        while (keys.has(addressKey([address, city.city, city.state, zip]))) address = street(rng);
        const key = addressKey([address, city.city, city.state, zip]);
        keys.add(key);
        const sqft = rng.int(600, 4800);
        const value = Math.round((sqft * perSqft * rng.int(80, 120)) / 100 / 1000) * 1000;
        const status = weighted(rng, STATUSES);
        const soldDate = dateBetween(rng, '2005-01-01', '2025-12-31');
        const soldPrice = Math.round((value * rng.int(45, 95)) / 100 / 1000) * 1000;
        const history = [{ date: soldDate, event: 'Sold', price: soldPrice }];
        const listed = status === 'for_sale' || status === 'pending';
        // Asking prices scatter around the estimate: some listings are deals (the deal finder's subject).
        const listPrice = listed ? Math.round((value * rng.int(70, 110)) / 100 / 1000) * 1000 : null;
        if (listPrice !== null)
          history.push({
            date: dateBetween(rng, '2026-06-01', '2026-11-15'),
            event: 'Listed for sale',
            price: listPrice,
          });
        const thisYear = 2025;
        const ownerName = rng.chance(0.12) ? `${rng.pick(COMPANY_PREFIXES)} Holdings LLC` : person(rng);
        const ownerSlug = slugify(ownerName);
        const mailing = rng.chance(0.75)
          ? `${address}, ${city.city}, ${city.state} ${zip}`
          : (() => {
              const other = rng.pick(US_CITIES);
              return `${street(rng)}, ${other.city}, ${other.state} ${zipIn(rng, other)}`;
            })();
        yield [
          id,
          key,
          address,
          city.city,
          city.state,
          zip,
          fixed(city.lat + (rng.next() - 0.5) * 0.3, 6),
          fixed(city.lng + (rng.next() - 0.5) * 0.3, 6),
          weighted(rng, PROPERTY_TYPES),
          rng.int(1, 6),
          rng.int(2, 9) / 2,
          sqft,
          rng.int(0, 20_000),
          rng.int(1900, 2024),
          value,
          status,
          listPrice,
          listed ? rng.int(1, 180) : null,
          soldDate,
          soldPrice,
          json(history),
          json(
            Array.from({ length: 3 }, (_, i) => ({
              year: thisYear - i,
              tax: Math.round(value * 0.011 * (1 - i * 0.03)),
              assessment: Math.round(value * 0.9 * (1 - i * 0.04)),
            })),
          ),
          json(
            Array.from({ length: 3 }, () => ({
              address: `${street(rng)}, ${city.city}, ${city.state}`,
              price: Math.round((value * rng.int(85, 115)) / 100 / 1000) * 1000,
              sqft: sqft + rng.int(-300, 300),
              distanceMiles: rng.int(1, 15) / 10,
            })),
          ),
          json(
            SCHOOL_SUFFIX.map(([suffix, level]) => ({
              name: `${rng.pick(COMPANY_PREFIXES)} ${suffix}`,
              level,
              rating: rng.int(3, 10),
              distanceMiles: rng.int(2, 40) / 10,
            })),
          ),
          ownerName,
          mailing,
          Array.from({ length: rng.int(0, 3) }, () => phoneIn(rng, city)),
          Array.from(
            { length: rng.int(0, 2) },
            (_, i) => `${ownerSlug}${i === 0 ? '' : i + 1}@${rng.pick(MAIL_DOMAINS)}`,
          ),
        ];
      }
    },
  };

  const agents: TableRows = {
    dataset: 'agents',
    table: 'real_estate_agent',
    columns: [
      'id',
      'profile_url',
      'name',
      'brokerage',
      'license_number',
      'phone',
      'email',
      'city',
      'state',
      'zip',
      'specialties',
      'languages',
      'years_experience',
      'rating',
      'review_count',
      'sales_last_12_months',
      'price_range_min',
      'price_range_max',
    ],
    count: sizes.agents,
    *rows() {
      const rng = new Random(seed * 1_000_003 + 67);
      for (let id = 1; id <= sizes.agents; id++) {
        const city = rng.pick(US_CITIES);
        const name = person(rng);
        const brokerage = `${rng.pick(COMPANY_PREFIXES)} ${rng.pick(['Realty', 'Real Estate', 'Properties', 'Homes'])}`;
        const min = rng.int(1, 8) * 50_000;
        const specialties = [
          rng.chance(0.6) ? '1001' : '1002',
          ...sample(
            rng,
            AGENT_SPECIALTIES.slice(2).map(([code]) => code),
            rng.int(0, 4),
          ),
        ];
        yield [
          id,
          `https://www.agentfinder.net/agent/${kebab(name)}-${id}`,
          name,
          brokerage,
          `${city.state}-${rng.int(100000, 999999)}`,
          phoneIn(rng, city),
          `${slugify(name)}@${slugify(brokerage)}.com`,
          city.city,
          city.state,
          zipIn(rng, city),
          specialties,
          ['English', ...sample(rng, LANGUAGES.slice(1), rng.chance(0.3) ? rng.int(1, 2) : 0)],
          rng.int(1, 35),
          rng.chance(0.9) ? fixed(3.5 + rng.next() * 1.5, 1) : null,
          rng.int(0, 300),
          rng.int(0, 80),
          min,
          min + rng.int(2, 30) * 50_000,
        ];
      }
    },
  };

  const businessListings: TableRows = {
    dataset: 'business_listings',
    table: 'business_listing',
    columns: [
      'id',
      'listing_url',
      'title',
      'category',
      'city',
      'state',
      'country',
      'asking_price',
      'revenue',
      'ebitda',
      'cash_flow',
      'established',
      'employees',
      'description',
      'broker_name',
      'broker_company',
      'broker_phone',
      'broker_email',
      'listed_at',
    ],
    count: sizes.businessListings,
    *rows() {
      const rng = new Random(seed * 1_000_003 + 71);
      for (let id = 1; id <= sizes.businessListings; id++) {
        const city = rng.pick(US_CITIES);
        const category = rng.pick(BUSINESS_CATEGORIES);
        const title =
          `${rng.pick(['Profitable', 'Established', 'Turnkey', 'Growing', 'Well-Known'])} ` +
          `${category} Business in ${city.city}`;
        const revenue = rng.int(20, 2000) * 5_000;
        const ebitda = Math.round((revenue * rng.int(5, 30)) / 100);
        const cashFlow = Math.round((ebitda * rng.int(90, 130)) / 100);
        const broker = person(rng);
        const company = `${rng.pick(COMPANY_PREFIXES)} Business Brokers`;
        yield [
          id,
          `https://www.bizlistings.net/business-opportunity/${kebab(title)}/${100000 + id}/`,
          title,
          category,
          city.city,
          city.state,
          'US',
          Math.round((cashFlow * rng.int(20, 40)) / 10 / 1000) * 1000,
          revenue,
          ebitda,
          cashFlow,
          rng.int(1960, 2023),
          rng.int(1, 120),
          `${title}. Owner retiring; staff in place; strong repeat customers.`,
          broker,
          company,
          phoneIn(rng, city),
          `${slugify(broker)}@${slugify(company)}.com`,
          dateBetween(rng, '2025-01-01', '2026-11-15'),
        ];
      }
    },
  };

  const commercial: TableRows = {
    dataset: 'commercial_properties',
    table: 'commercial_property',
    columns: [
      'id',
      'listing_url',
      'title',
      'property_type',
      'listing_type',
      'street',
      'city',
      'state',
      'zip',
      'market',
      'lat',
      'lng',
      'price',
      'size_sqft',
      'broker_name',
      'broker_company',
      'broker_phone',
      'broker_email',
      'broker_licence',
    ],
    count: sizes.commercialProperties,
    *rows() {
      const rng = new Random(seed * 1_000_003 + 73);
      for (let id = 1; id <= sizes.commercialProperties; id++) {
        const city = rng.pick(US_CITIES);
        const type = rng.pick(COMMERCIAL_TYPES);
        const listingType = rng.chance(0.55) ? 'sale' : 'lease';
        const size = rng.int(1_000, 250_000);
        const broker = person(rng);
        const company = `${rng.pick(COMPANY_PREFIXES)} Commercial`;
        const address = street(rng);
        yield [
          id,
          `https://www.crelistings.net/property/${kebab(address)}-${kebab(city.city)}-` +
            `${city.state.toLowerCase()}/${200000 + id}/`,
          `${address} ${type.replace('_', ' ')} ${listingType === 'sale' ? 'for sale' : 'for lease'}`,
          type,
          listingType,
          address,
          city.city,
          city.state,
          zipIn(rng, city),
          city.city,
          fixed(city.lat + (rng.next() - 0.5) * 0.3, 6),
          fixed(city.lng + (rng.next() - 0.5) * 0.3, 6),
          listingType === 'sale' ? size * rng.int(80, 600) : size * rng.int(12, 60),
          size,
          broker,
          company,
          phoneIn(rng, city),
          `${slugify(broker)}@${slugify(company)}.com`,
          `${city.state} #0${rng.int(1_000_000, 9_999_999)}`,
        ];
      }
    },
  };

  return [properties, agents, businessListings, commercial];
}
