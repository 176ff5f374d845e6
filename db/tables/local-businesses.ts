import { sql, type SQL } from 'drizzle-orm';
import {
  bigint,
  date,
  doublePrecision,
  index,
  integer,
  pgTable,
  real,
  smallint,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { catalogId, textList, tsvector } from './columns.ts';

/**
 * A place's name as matched by enrichment: lower case, each run of characters other than a-z and 0-9
 * as one space, trimmed (`placeNameKey`, src/catalog/local-businesses/enrich-lookup.ts). `b` is the
 * table's alias in a query.
 */
export const placeNameKeySql = (b = '') => `trim(regexp_replace(lower(${b}name), '[^a-z0-9]+', ' ', 'g'))`;

/**
 * A place's website as a bare host: lower case, without scheme, "www.", port or path. The SQL twin of
 * `bareHost` (src/shared/hosts.ts): the two keep the same rules, and an index (migration 0017) holds
 * this expression. `b` is the table's alias in a query.
 */
export const placeHostSql = (b = '') =>
  `regexp_replace(regexp_replace(lower(btrim(${b}website)), '^([a-z]+://)?(www\\.)?', ''), '[/?#:].*$', '')`;

/** Local businesses of the map-listing catalog; `place_id` is the natural key. */
export const localBusinessTable = pgTable(
  'local_business',
  {
    id: catalogId(),
    placeId: text('place_id').notNull(),
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
    emails: textList('emails'),
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
    uniqueIndex('local_business_place_key').on(t.placeId),
    index('local_business_search_idx').using('gin', t.searchText),
    index('local_business_city_idx').on(sql`lower(${t.city})`, t.state),
    index('local_business_postal_idx').on(t.postalCode),
    index('local_business_geo_idx').on(t.lat, t.lng),
    index('local_business_phone_idx').on(sql`right(regexp_replace(${t.phone}, '\\D', '', 'g'), 10)`),
    index('local_business_name_trgm').using('gin', sql`${t.name} gin_trgm_ops`),
    // Enrichment by name with city, by name with postal code, and by website.
    index('local_business_name_city_idx').on(sql.raw(`(${placeNameKeySql()})`), sql`lower(${t.city})`),
    index('local_business_name_postal_idx').on(sql.raw(`(${placeNameKeySql()})`), t.postalCode),
    index('local_business_host_idx').on(sql.raw(`(${placeHostSql()})`)),
  ],
);
export type LocalBusiness = typeof localBusinessTable.$inferSelect;
export type NewLocalBusiness = typeof localBusinessTable.$inferInsert;

/** Reviews of local businesses; `review_key` is the natural key. */
export const localBusinessReviewTable = pgTable(
  'local_business_review',
  {
    id: catalogId(),
    reviewKey: text('review_key').notNull(),
    businessId: bigint('business_id', { mode: 'number' })
      .notNull()
      .references(() => localBusinessTable.id, { onDelete: 'cascade' }),
    author: text('author').notNull(),
    rating: smallint('rating').notNull(),
    text: text('text'),
    publishedAt: date('published_at', { mode: 'string' }).notNull(),
  },
  (t) => [
    uniqueIndex('local_business_review_key').on(t.reviewKey),
    // With the id: a place's latest reviews (newest first, then highest id) are read backwards, unsorted.
    index('local_business_review_business_idx').on(t.businessId, t.publishedAt, t.id),
  ],
);
export type LocalBusinessReview = typeof localBusinessReviewTable.$inferSelect;
