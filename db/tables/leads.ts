import { sql, type SQL } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { accountTable } from './accounts.ts';
import { catalogId, textList } from './columns.ts';

/** Companies of the lead database; `domain` is the natural key. */
export const companyTable = pgTable(
  'company',
  {
    id: catalogId(),
    domain: text('domain').notNull(),
    name: text('name').notNull(),
    industry: text('industry'),
    /** Employee band, e.g. "51-200". */
    sizeBand: text('size_band'),
    employeesCount: integer('employees_count'),
    /** Annual revenue in USD. */
    annualRevenue: bigint('annual_revenue', { mode: 'number' }),
    city: text('city'),
    state: text('state'),
    country: text('country'),
    keywords: textList('keywords'),
    technologies: textList('technologies'),
    /**
     * The words of the keywords, lower case, split where the regex engine's word characters end
     * (function in migration 0014): a whole-word keyword search is then an array overlap on an index.
     */
    keywordWords: text('keyword_words')
      .array()
      .generatedAlwaysAs((): SQL => sql`company_keyword_words(${companyTable.keywords})`),
    founded: integer('founded'),
    phone: text('phone'),
    linkedinUrl: text('linkedin_url'),
    twitterUrl: text('twitter_url'),
    facebookUrl: text('facebook_url'),
  },
  (t) => [
    uniqueIndex('company_domain_key').on(t.domain),
    index('company_name_trgm').using('gin', sql`${t.name} gin_trgm_ops`),
    index('company_domain_trgm').using('gin', sql`${t.domain} gin_trgm_ops`),
    index('company_industry_idx').on(sql`lower(${t.industry})`),
    index('company_keywords_idx').using('gin', t.keywords),
    // Whole-word keyword search: a trigram index on the keywords as one text (function in migration 0006).
    index('company_keywords_trgm').using('gin', sql`company_keywords_text(${t.keywords}) gin_trgm_ops`),
    index('company_keyword_words_idx').using('gin', t.keywordWords),
    index('company_technologies_idx').using('gin', t.technologies),
    index('company_employees_idx').on(t.employeesCount),
    index('company_revenue_idx').on(t.annualRevenue),
    index('company_location_idx').on(sql`lower(${t.country})`, sql`lower(${t.state})`, sql`lower(${t.city})`),
  ],
);
export type Company = typeof companyTable.$inferSelect;
export type NewCompany = typeof companyTable.$inferInsert;

export const SENIORITIES = [
  'owner',
  'founder',
  'c_suite',
  'partner',
  'vp',
  'head',
  'director',
  'manager',
  'senior',
  'entry',
  'intern',
] as const;
export const DEPARTMENTS = [
  'executive',
  'engineering',
  'sales',
  'marketing',
  'finance',
  'human_resources',
  'operations',
  'information_technology',
  'legal',
  'product',
  'customer_success',
  'design',
  'education',
  'medical',
] as const;
/**
 * What the lead database knows of a person's email (`email_status`): verified (the mailbox was
 * confirmed), guessed (built from the company's address pattern, not confirmed) or unavailable (no
 * email). The email validator's words and how the lead search reads them: src/shared/email-status.ts.
 */
export const LEAD_EMAIL_STATUSES = ['verified', 'guessed', 'unavailable'] as const;
export type LeadEmailStatus = (typeof LEAD_EMAIL_STATUSES)[number];

/**
 * A person's rank as their company's contact, lowest first: CEO, other C-suite, VP, Director or head,
 * then everyone else. Enrichment by company domain returns the lowest-ranked person (then the lowest
 * id); `person_company_idx` carries this very expression, so that is one index probe per company.
 * `p` is the table's alias in a query (empty in the index definition).
 */
export const contactRankSql = (p = '') =>
  `case when ${p}title ~* '^(ceo|chief executive officer)$' then 0 when ${p}seniority = 'c_suite' ` +
  `then 1 when ${p}seniority = 'vp' then 2 when ${p}seniority in ('director', 'head') then 3 else 4 end`;

/** The condition "the person's email, lower case, is `value`" as a probe of the unique `person_key` index. */
export const personByEmailSql = (p: string, value: string) => `${p}person_key = ${value} and ${p}email is not null`;

/**
 * People of the lead database. The natural key is the lower-cased email, else the social profile
 * URL (`person_key`, generated), so re-importing a file updates rather than duplicates. Its unique
 * index also finds a person by email: `lower(p.email) = $1` is `p.person_key = $1 and p.email is not
 * null` (personByEmailSql), so there is no index on the email itself.
 */
export const personTable = pgTable(
  'person',
  {
    id: catalogId(),
    companyId: bigint('company_id', { mode: 'number' }).references(() => companyTable.id, { onDelete: 'set null' }),
    firstName: text('first_name').notNull(),
    lastName: text('last_name').notNull(),
    title: text('title'),
    seniority: text('seniority'),
    department: text('department'),
    email: text('email'),
    /** One of LEAD_EMAIL_STATUSES. */
    emailStatus: text('email_status'),
    phone: text('phone'),
    mobile: text('mobile'),
    linkedinUrl: text('linkedin_url'),
    city: text('city'),
    state: text('state'),
    country: text('country'),
    /**
     * The company's industry, lower case: a copy kept on the person so that an industry filter
     * combines with person filters in one bitmap scan (see migration 0013: triggers keep it equal
     * to `lower(company.industry)`; the seeder and the importer write it directly).
     */
    companyIndustry: text('company_industry'),
    personKey: text('person_key')
      .notNull()
      .generatedAlwaysAs((): SQL => sql`coalesce(lower(${personTable.email}), lower(${personTable.linkedinUrl}))`),
  },
  (t) => [
    uniqueIndex('person_key').on(t.personKey),
    // A company's people: counted from the index alone (it carries the id), and its first contact
    // (contactRankSql) found with one probe.
    index('person_company_idx').on(t.companyId, sql.raw(`(${contactRankSql()})`), t.id),
    index('person_company_industry_idx').on(t.companyIndustry),
    // The title's trigrams with the company's industry (btree_gin, migration 0024): "title + industry" is one
    // scan of this index, where a BitmapAnd of the title's trigrams and the industry's btree read every
    // person of either (at 10M people: 326,374 "sales" titles, 505,726 in the industry). A title alone
    // uses it too (any subset of a GIN index's columns does).
    index('person_industry_title_trgm').using('gin', t.companyIndustry, sql`${t.title} gin_trgm_ops`),
    index('person_seniority_idx').on(t.seniority),
    index('person_department_idx').on(t.department),
    index('person_location_idx').on(sql`lower(${t.country})`, sql`lower(${t.state})`),
    index('person_city_trgm').using('gin', sql`${t.city} gin_trgm_ops`),
    index('person_name_idx').on(sql`lower(${t.lastName})`, sql`lower(${t.firstName})`),
    index('person_linkedin_idx').on(sql`lower(${t.linkedinUrl})`),
    // Enrichment matches mobiles on their last 10 digits, ignoring country codes.
    index('person_mobile_idx').on(sql`right(regexp_replace(${t.mobile}, '\\D', '', 'g'), 10)`),
  ],
);
export type Person = typeof personTable.$inferSelect;
export type NewPerson = typeof personTable.$inferInsert;

/**
 * How many people share each combination of the lead search's coarse filters (country, seniority,
 * department, the company's industry, email status, has an email, has a phone): a search on these
 * filters alone (the broad ones, with hundreds of thousands of matches) gets its exact total by
 * summing a few thousand rows here instead of counting its matches. Values are stored as the search
 * compares them (country in lower case). Statement triggers on `person` (migration 0022) apply every
 * insert, update, delete and truncate in the same transaction, so the sums are never stale.
 */
export const personFacetCountTable = pgTable(
  'person_facet_count',
  {
    country: text('country'),
    seniority: text('seniority'),
    department: text('department'),
    companyIndustry: text('company_industry'),
    emailStatus: text('email_status'),
    hasEmail: boolean('has_email').notNull(),
    hasPhone: boolean('has_phone').notNull(),
    people: integer('people').notNull(),
  },
  (t) => [
    unique('person_facet_count_key')
      .on(t.country, t.seniority, t.department, t.companyIndustry, t.emailStatus, t.hasEmail, t.hasPhone)
      .nullsNotDistinct(),
  ],
);

/** Leads an account has received (from the database API or unlocked): they never count against its allowance again. */
export const deliveredLeadTable = pgTable(
  'delivered_lead',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    personId: bigint('person_id', { mode: 'number' })
      .notNull()
      .references(() => personTable.id, { onDelete: 'cascade' }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.personId] }),
    // A person's deliveries, for the cascade when they are erased or deleted by a DROP list.
    index('delivered_lead_person_idx').on(t.personId),
  ],
);
