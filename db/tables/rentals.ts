import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  numeric,
  pgTable,
  real,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { catalogId, textList } from './columns.ts';

/** Hosts of short-term rentals; `host_key` (their profile URL) is the natural key. */
export const rentalHostTable = pgTable(
  'rental_host',
  {
    id: catalogId(),
    hostKey: text('host_key').notNull(),
    name: text('name').notNull(),
    email: text('email'),
    phone: text('phone'),
    isPro: boolean('is_pro').notNull().default(false),
    isSuperhost: boolean('is_superhost').notNull().default(false),
    listingsCount: integer('listings_count').notNull().default(1),
    joinedYear: integer('joined_year'),
  },
  (t) => [uniqueIndex('rental_host_key').on(t.hostKey), index('rental_host_email_idx').on(sql`lower(${t.email})`)],
);
export type RentalHost = typeof rentalHostTable.$inferSelect;

/** Rental listings in European cities; `listing_url` is the natural key. */
export const rentalListingTable = pgTable(
  'rental_listing',
  {
    id: catalogId(),
    listingUrl: text('listing_url').notNull(),
    hostId: bigint('host_id', { mode: 'number' })
      .notNull()
      .references(() => rentalHostTable.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    city: text('city').notNull(),
    country: text('country').notNull(),
    countryCode: text('country_code').notNull(),
    lat: doublePrecision('lat'),
    lng: doublePrecision('lng'),
    /** Per night, in `currency`. */
    pricePerNight: numeric('price_per_night', { precision: 10, scale: 2, mode: 'number' }),
    currency: text('currency').notNull().default('EUR'),
    amenities: textList('amenities'),
    bedrooms: integer('bedrooms'),
    guests: integer('guests'),
    rating: real('rating'),
    reviewCount: integer('review_count').notNull().default(0),
  },
  (t) => [
    uniqueIndex('rental_listing_url_key').on(t.listingUrl),
    index('rental_listing_city_idx').on(sql`lower(${t.city})`, t.countryCode, t.id),
    index('rental_listing_host_idx').on(t.hostId),
    index('rental_listing_amenities_idx').using('gin', t.amenities),
  ],
);
export type RentalListing = typeof rentalListingTable.$inferSelect;
