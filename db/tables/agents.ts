import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, real, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { catalogId, textList } from './columns.ts';

/**
 * Real estate agents; `profile_url` is the natural key. Specialties
 * are codes (1001 buyer's agent, 1002 listing agent, …).
 */
export const agentTable = pgTable(
  'real_estate_agent',
  {
    id: catalogId(),
    profileUrl: text('profile_url').notNull(),
    name: text('name').notNull(),
    brokerage: text('brokerage'),
    licenseNumber: text('license_number'),
    phone: text('phone'),
    email: text('email'),
    city: text('city').notNull(),
    state: text('state').notNull(),
    zip: text('zip'),
    specialties: textList('specialties'),
    languages: textList('languages'),
    yearsExperience: integer('years_experience'),
    rating: real('rating'),
    reviewCount: integer('review_count').notNull().default(0),
    salesLast12Months: integer('sales_last_12_months'),
    priceRangeMin: bigint('price_range_min', { mode: 'number' }),
    priceRangeMax: bigint('price_range_max', { mode: 'number' }),
  },
  (t) => [
    uniqueIndex('real_estate_agent_profile_key').on(t.profileUrl),
    index('real_estate_agent_city_idx').on(t.state, sql`lower(${t.city})`),
    index('real_estate_agent_zip_idx').on(t.zip),
    index('real_estate_agent_specialties_idx').using('gin', t.specialties),
    index('real_estate_agent_languages_idx').using('gin', t.languages),
  ],
);
export type Agent = typeof agentTable.$inferSelect;
