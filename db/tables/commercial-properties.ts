import { sql } from 'drizzle-orm';
import { bigint, doublePrecision, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { catalogId } from './columns.ts';

/** Commercial properties with their broker; `listing_url` is the natural key. */
export const commercialPropertyTable = pgTable(
  'commercial_property',
  {
    id: catalogId(),
    listingUrl: text('listing_url').notNull(),
    title: text('title').notNull(),
    /** office, retail, industrial, multifamily, land, hospitality, mixed_use, healthcare. */
    propertyType: text('property_type').notNull(),
    /** sale or lease. */
    listingType: text('listing_type').notNull(),
    street: text('street'),
    city: text('city').notNull(),
    state: text('state').notNull(),
    zip: text('zip'),
    /** Metro market, e.g. "Denver". */
    market: text('market').notNull(),
    lat: doublePrecision('lat').notNull(),
    lng: doublePrecision('lng').notNull(),
    price: bigint('price', { mode: 'number' }),
    sizeSqft: integer('size_sqft'),
    brokerName: text('broker_name'),
    brokerCompany: text('broker_company'),
    brokerPhone: text('broker_phone'),
    brokerEmail: text('broker_email'),
    brokerLicence: text('broker_licence'),
  },
  (t) => [
    uniqueIndex('commercial_property_url_key').on(t.listingUrl),
    index('commercial_property_market_idx').on(sql`lower(${t.market})`, t.id),
    index('commercial_property_city_idx').on(t.state, sql`lower(${t.city})`),
    index('commercial_property_type_idx').on(t.propertyType),
    index('commercial_property_geo_idx').on(t.lat, t.lng),
  ],
);
export type CommercialProperty = typeof commercialPropertyTable.$inferSelect;
