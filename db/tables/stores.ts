import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { catalogId, textList } from './columns.ts';

/** The ten store platforms: hosted, open-source plugin and enterprise. */
export const STORE_PLATFORMS = [
  'shopify',
  'woocommerce',
  'bigcommerce',
  'wix',
  'squarespace',
  'magento',
  'prestashop',
  'opencart',
  'shopware',
  'salesforce_commerce_cloud',
] as const;
export const STORE_SOCIALS = [
  'instagram',
  'facebook',
  'tiktok',
  'youtube',
  'linkedin',
  'twitter',
  'pinterest',
] as const;

/** E-commerce stores; `domain` is the natural key. */
export const storeTable = pgTable(
  'store',
  {
    id: catalogId(),
    domain: text('domain').notNull(),
    name: text('name').notNull(),
    platform: text('platform').notNull(),
    planTier: text('plan_tier'),
    countryCode: text('country_code'),
    city: text('city'),
    state: text('state'),
    category: text('category'),
    technologies: textList('technologies'),
    /** Installed apps (hosted platform only). */
    apps: textList('apps'),
    instagramUrl: text('instagram_url'),
    facebookUrl: text('facebook_url'),
    tiktokUrl: text('tiktok_url'),
    youtubeUrl: text('youtube_url'),
    linkedinUrl: text('linkedin_url'),
    twitterUrl: text('twitter_url'),
    pinterestUrl: text('pinterest_url'),
    emails: textList('emails'),
    phones: textList('phones'),
    estimatedMonthlyVisits: integer('estimated_monthly_visits'),
    /** USD per month. */
    estimatedMonthlySales: bigint('estimated_monthly_sales', { mode: 'number' }),
    employeeCount: integer('employee_count'),
  },
  (t) => [
    uniqueIndex('store_domain_key').on(t.domain),
    index('store_platform_idx').on(t.platform, t.id),
    index('store_country_idx').on(t.countryCode, sql`lower(${t.state})`, sql`lower(${t.city})`),
    index('store_category_idx').on(sql`lower(${t.category})`),
    index('store_technologies_idx').using('gin', t.technologies),
    index('store_apps_idx').using('gin', t.apps),
    index('store_visits_idx').on(t.estimatedMonthlyVisits),
    index('store_sales_idx').on(t.estimatedMonthlySales),
  ],
);
export type Store = typeof storeTable.$inferSelect;
