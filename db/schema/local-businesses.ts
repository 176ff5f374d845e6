import { sql, type SQL } from 'drizzle-orm';
import {
  bigint,
  customType,
  doublePrecision,
  index,
  integer,
  pgTable,
  real,
  text,
} from 'drizzle-orm/pg-core';

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/** Local businesses of the map-listing catalog. */
export const localBusinessTable = pgTable(
  'local_business',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    placeId: text('place_id').notNull().unique(),
    name: text('name').notNull(),
    category: text('category').notNull(),
    street: text('street'),
    city: text('city').notNull(),
    state: text('state'),
    postalCode: text('postal_code'),
    countryCode: text('country_code').notNull().default('US'),
    lat: doublePrecision('lat').notNull(),
    lng: doublePrecision('lng').notNull(),
    phone: text('phone'),
    website: text('website'),
    emails: text('emails').array().notNull().default(sql`'{}'::text[]`),
    rating: real('rating'),
    reviewCount: integer('review_count').notNull().default(0),
    /** Ordered lines such as "Monday: 9 AM–5 PM". */
    openingHours: text('opening_hours').array(),
    contactName: text('contact_name'),
    searchText: tsvector('search_text').generatedAlwaysAs(
      (): SQL => sql`to_tsvector('english', ${localBusinessTable.name} || ' ' || ${localBusinessTable.category})`,
    ),
  },
  (t) => [
    index('local_business_search_idx').using('gin', t.searchText),
    index('local_business_city_idx').on(sql`lower(${t.city})`, t.state),
    index('local_business_geo_idx').on(t.lat, t.lng),
  ],
);
export type LocalBusiness = typeof localBusinessTable.$inferSelect;
export type NewLocalBusiness = typeof localBusinessTable.$inferInsert;
