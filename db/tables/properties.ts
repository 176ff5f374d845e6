import { sql } from 'drizzle-orm';
import {
  bigint,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  real,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { catalogId, textList } from './columns.ts';

export interface PriceEvent {
  date: string;
  event: string;
  price: number;
}
export interface TaxYear {
  year: number;
  tax: number;
  assessment: number;
}
export interface Comparable {
  address: string;
  price: number;
  sqft: number;
  distanceMiles: number;
}
export interface School {
  name: string;
  level: string;
  rating: number;
  distanceMiles: number;
}

/**
 * The natural key of a property: "street|city|state|zip", lower case, whitespace collapsed (seed and import share it).
 */
export function addressKey(parts: string[]): string {
  return parts.map((part) => part.trim().toLowerCase().replace(/\s+/g, ' ')).join('|');
}

/**
 * US residential properties with their owner. The natural key `address_key` is the normalised
 * "street|city|state|zip" (lower case, single spaces).
 */
export const propertyTable = pgTable(
  'property',
  {
    id: catalogId(),
    addressKey: text('address_key').notNull(),
    street: text('street').notNull(),
    city: text('city').notNull(),
    state: text('state').notNull(),
    zip: text('zip').notNull(),
    lat: doublePrecision('lat'),
    lng: doublePrecision('lng'),
    propertyType: text('property_type'),
    beds: integer('beds'),
    baths: real('baths'),
    sqft: integer('sqft'),
    lotSqft: integer('lot_sqft'),
    yearBuilt: integer('year_built'),
    /** USD. */
    estimatedValue: bigint('estimated_value', { mode: 'number' }),
    /** off_market, for_sale, pending or sold. */
    listingStatus: text('listing_status'),
    listPrice: bigint('list_price', { mode: 'number' }),
    daysOnMarket: integer('days_on_market'),
    lastSoldDate: date('last_sold_date', { mode: 'string' }),
    lastSoldPrice: bigint('last_sold_price', { mode: 'number' }),
    priceHistory: jsonb('price_history').$type<PriceEvent[]>().notNull().default(sql`'[]'::jsonb`),
    taxHistory: jsonb('tax_history').$type<TaxYear[]>().notNull().default(sql`'[]'::jsonb`),
    comparables: jsonb('comparables').$type<Comparable[]>().notNull().default(sql`'[]'::jsonb`),
    schools: jsonb('schools').$type<School[]>().notNull().default(sql`'[]'::jsonb`),
    ownerName: text('owner_name'),
    ownerMailingAddress: text('owner_mailing_address'),
    ownerPhones: textList('owner_phones'),
    ownerEmails: textList('owner_emails'),
  },
  (t) => [
    uniqueIndex('property_address_key').on(t.addressKey),
    index('property_street_trgm').using('gin', sql`${t.street} gin_trgm_ops`),
    index('property_city_idx').on(t.state, sql`lower(${t.city})`),
    index('property_zip_idx').on(t.zip),
    index('property_status_idx').on(t.listingStatus, t.state),
    // The people finder: owners by name prefix, a person's properties by exact name, relatives by mailing address.
    index('property_owner_name_prefix_idx').on(sql`lower(${t.ownerName}) text_pattern_ops`),
    index('property_owner_name_idx').on(t.ownerName),
    index('property_owner_mailing_idx').on(sql`lower(${t.ownerMailingAddress})`),
  ],
);
export type Property = typeof propertyTable.$inferSelect;
