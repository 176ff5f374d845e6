import { sql } from 'drizzle-orm';
import { bigint, date, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { catalogId } from './columns.ts';

/** Businesses for sale; `listing_url` is the natural key. Money in USD. */
export const businessListingTable = pgTable(
  'business_listing',
  {
    id: catalogId(),
    listingUrl: text('listing_url').notNull(),
    title: text('title').notNull(),
    category: text('category'),
    city: text('city'),
    state: text('state'),
    country: text('country').notNull().default('US'),
    askingPrice: bigint('asking_price', { mode: 'number' }),
    revenue: bigint('revenue', { mode: 'number' }),
    ebitda: bigint('ebitda', { mode: 'number' }),
    cashFlow: bigint('cash_flow', { mode: 'number' }),
    established: integer('established'),
    employees: integer('employees'),
    description: text('description'),
    brokerName: text('broker_name'),
    brokerCompany: text('broker_company'),
    brokerPhone: text('broker_phone'),
    brokerEmail: text('broker_email'),
    listedAt: date('listed_at', { mode: 'string' }),
  },
  (t) => [
    uniqueIndex('business_listing_url_key').on(t.listingUrl),
    index('business_listing_category_idx').on(sql`lower(${t.category})`),
    index('business_listing_location_idx').on(t.state, sql`lower(${t.city})`),
    index('business_listing_price_idx').on(t.askingPrice),
  ],
);
export type BusinessListing = typeof businessListingTable.$inferSelect;
