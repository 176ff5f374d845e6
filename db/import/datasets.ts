import { is, SQL } from 'drizzle-orm';
import { getTableConfig, PgDialect, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { agentTable } from '../tables/agents.ts';
import { businessListingTable } from '../tables/business-listings.ts';
import { commercialPropertyTable } from '../tables/commercial-properties.ts';
import { CRIMINAL_SOURCES, criminalRecordTable } from '../tables/criminal-records.ts';
import { HOME_SERVICE_CATEGORIES, homeServiceProTable } from '../tables/home-services.ts';
import { companyTable, DEPARTMENTS, LEAD_EMAIL_STATUSES, personTable, SENIORITIES } from '../tables/leads.ts';
import { localBusinessReviewTable, localBusinessTable } from '../tables/local-businesses.ts';
import { addressKey, propertyTable } from '../tables/properties.ts';
import { rentalHostTable, rentalListingTable } from '../tables/rentals.ts';
import { STORE_PLATFORMS, storeTable } from '../tables/stores.ts';
import { codecFor, type Codec } from './kinds.ts';
import {
  countryCode,
  currencyCode,
  domain,
  each,
  email,
  latitude,
  longitude,
  nonNegative,
  oneOf,
  pattern,
  range,
  shaped,
  stateCode,
  url,
  year,
  type Rule,
} from './rules.ts';
import { quoteIdentifier as quote } from '../identifiers.ts';

/** One column of an import file. */
export interface ImportColumn {
  name: string;
  codec: Codec;
  /** Must be present in the header and non-empty in every row. */
  required: boolean;
  /** SQL for the table default, used when the cell is empty. */
  defaultSql?: string;
  /** The default as the docs show it. */
  defaultDoc?: string;
  rules: Rule[];
  /** The table column it fills (for a reference, the foreign-key column). */
  target: string;
  /** Set for natural-key references: the value is looked up in `table.column` and replaced by its `id`. */
  reference?: { table: string; column: string; id: string };
}

/** A column computed from others, not read from the file. */
export interface ComputedColumn {
  name: string;
  from: string[];
  doc: string;
  compute(parts: string[]): string;
}

/** A column copied from the row a reference names (kept next to it for searching), not read from the file. */
export interface CopiedColumn {
  name: string;
  /** The foreign-key column whose referenced row it is copied from. */
  via: string;
  /** SQL over the referenced row, written `ref.<column>`. */
  sql: string;
  doc: string;
}

export interface Dataset {
  /** CLI name, also the key of its `dataset_state` row. */
  name: string;
  table: string;
  description: string;
  naturalKey: {
    column: string;
    /** The key as SQL over the staging table aliased `s`. */
    sql: string;
    doc: string;
  };
  columns: ImportColumn[];
  computed: ComputedColumn[];
  copied: CopiedColumn[];
  /** Groups of columns of which each row needs at least one. */
  anyOf: string[][];
}

const dialect = new PgDialect();
const renderSql = (fragment: SQL) => dialect.sqlToQuery(fragment).sql;

function literal(value: unknown, sqlType: string): string {
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'::${sqlType}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${value}::${sqlType}`;
  return `'${JSON.stringify(value).replaceAll("'", "''")}'::${sqlType}`;
}

function defaultOf(column: PgColumn): { sql: string; doc: string } | undefined {
  if (!column.hasDefault || column.default === undefined) return undefined;
  if (is(column.default, SQL)) {
    const text = renderSql(column.default);
    if (text === "'{}'::text[]") return { sql: text, doc: 'empty list' };
    const [, quoted] = /^'(.*)'::[\w\s[\]]+$/.exec(text) ?? [];
    return { sql: text, doc: quoted ?? text };
  }
  return { sql: literal(column.default, column.getSQLType()), doc: String(column.default) };
}

/** The single column of the table's one unique index (not the primary key): the natural key. */
function naturalKeyColumn(table: PgTable): PgColumn {
  const config = getTableConfig(table);
  const unique = config.indexes.filter((index) => index.config.unique);
  const [index] = unique;
  const only = unique.length === 1 && index?.config.columns.length === 1 ? index.config.columns[0] : undefined;
  const column = only && 'name' in only ? config.columns.find((c) => c.name === (only as PgColumn).name) : undefined;
  if (!column)
    throw new Error(`table ${config.name}: expected exactly one single-column unique index (the natural key)`);
  return column;
}

function generationSql(column: PgColumn, table: string): string | undefined {
  const as = column.generated?.as;
  if (as === undefined) return undefined;
  const fragment = typeof as === 'function' ? as() : as;
  const text = typeof fragment === 'string' ? fragment : renderSql(fragment as SQL);
  return text.replaceAll(`${quote(table)}.`, 's.');
}

interface Spec {
  name: string;
  table: PgTable;
  description: string;
  /** Foreign-key column → the input column holding the referenced row's natural key. */
  references?: Record<string, string>;
  /** Columns computed from others instead of read. */
  computed?: Record<string, Omit<ComputedColumn, 'name'>>;
  /** Columns copied from a referenced row instead of read. */
  copied?: Record<string, Omit<CopiedColumn, 'name'>>;
  /** Rules per input column. */
  rules?: Record<string, Rule[]>;
  anyOf?: string[][];
}

function define(spec: Spec): Dataset {
  const config = getTableConfig(spec.table);
  const keyColumn = naturalKeyColumn(spec.table);
  const generatedKey = generationSql(keyColumn, config.name);
  const foreignKeys = new Map(
    config.foreignKeys.map((fk) => {
      const ref = fk.reference();
      const key = naturalKeyColumn(ref.foreignTable);
      const [column] = ref.columns;
      const [id] = ref.foreignColumns;
      if (!column || !id) throw new Error(`table ${config.name}: a foreign key without columns`);
      const lookup = { table: getTableConfig(ref.foreignTable).name, column: key.name, id: id.name };
      return [column.name, { lookup, codec: codecFor(key) }];
    }),
  );
  const columns: ImportColumn[] = [];
  const computed: ComputedColumn[] = [];
  for (const column of config.columns) {
    if (column.primary || column.generated || column.generatedIdentity) continue;
    const compute = spec.computed?.[column.name];
    if (compute) {
      computed.push({ name: column.name, ...compute });
      continue;
    }
    if (spec.copied?.[column.name]) continue;
    const fk = foreignKeys.get(column.name);
    const input = fk ? spec.references?.[column.name] : column.name;
    if (input === undefined) throw new Error(`${spec.name}: no input column named for reference ${column.name}`);
    const fallback = fk ? undefined : defaultOf(column);
    columns.push({
      name: input,
      codec: fk ? fk.codec : codecFor(column),
      required: column.notNull && !fallback,
      defaultSql: fallback?.sql,
      defaultDoc: fallback?.doc,
      rules: spec.rules?.[input] ?? [],
      target: column.name,
      reference: fk?.lookup,
    });
  }
  const names = new Set(columns.map((c) => c.name));
  for (const name of [
    ...Object.keys(spec.rules ?? {}),
    ...(spec.anyOf ?? []).flat(),
    ...computed.flatMap((c) => c.from),
  ]) {
    if (!names.has(name)) throw new Error(`${spec.name}: rule for unknown column ${name}`);
  }
  for (const group of spec.anyOf ?? []) {
    for (const column of columns) if (group.includes(column.name)) column.required = false;
  }
  const keySql = generatedKey ?? `s.${quote(keyColumn.name)}`;
  const keyDoc = generatedKey
    ? `\`${keyColumn.name}\` = \`${generatedKey.replaceAll('s.', '').replaceAll('"', '')}\``
    : computed.some((c) => c.name === keyColumn.name)
      ? `\`${keyColumn.name}\` (computed)`
      : `\`${keyColumn.name}\``;
  return {
    name: spec.name,
    table: config.name,
    description: spec.description,
    naturalKey: { column: keyColumn.name, sql: keySql, doc: keyDoc },
    columns,
    computed,
    copied: Object.entries(spec.copied ?? {}).map(([name, copy]) => {
      if (!foreignKeys.has(copy.via))
        throw new Error(`${spec.name}: ${name} is copied through ${copy.via}, which is not a reference`);
      return { name, ...copy };
    }),
    anyOf: spec.anyOf ?? [],
  };
}

const rating5 = range(0, 5);
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const money = z.number().finite();

export const DATASETS: readonly Dataset[] = [
  define({
    name: 'companies',
    table: companyTable,
    description: 'Companies of the lead database.',
    rules: {
      domain: [domain],
      employees_count: [nonNegative],
      annual_revenue: [nonNegative],
      founded: [year],
      linkedin_url: [url],
      twitter_url: [url],
      facebook_url: [url],
    },
  }),
  define({
    name: 'people',
    table: personTable,
    description: 'People of the lead database; `company_domain` links a person to an imported company.',
    references: { company_id: 'company_domain' },
    copied: {
      company_industry: {
        via: 'company_id',
        sql: 'lower(ref.industry)',
        doc: "the company's `industry` in lower case (the lead search filters on this copy)",
      },
    },
    anyOf: [['email', 'linkedin_url']],
    rules: {
      company_domain: [domain],
      seniority: [oneOf(SENIORITIES)],
      department: [oneOf(DEPARTMENTS)],
      email: [email],
      email_status: [oneOf(LEAD_EMAIL_STATUSES)],
      linkedin_url: [url],
    },
  }),
  define({
    name: 'local_businesses',
    table: localBusinessTable,
    description: 'Local businesses of the map-listing catalog.',
    rules: {
      country_code: [countryCode],
      lat: [latitude],
      lng: [longitude],
      website: [url],
      emails: [each(email)],
      rating: [rating5],
      review_count: [nonNegative],
    },
  }),
  define({
    name: 'local_business_reviews',
    table: localBusinessReviewTable,
    description: 'Reviews of local businesses; `place_id` names the reviewed business, which must already be imported.',
    references: { business_id: 'place_id' },
    rules: { rating: [range(1, 5)] },
  }),
  define({
    name: 'stores',
    table: storeTable,
    description: 'E-commerce stores.',
    rules: {
      domain: [domain],
      platform: [oneOf(STORE_PLATFORMS)],
      country_code: [countryCode],
      instagram_url: [url],
      facebook_url: [url],
      tiktok_url: [url],
      youtube_url: [url],
      linkedin_url: [url],
      twitter_url: [url],
      pinterest_url: [url],
      emails: [each(email)],
      estimated_monthly_visits: [nonNegative],
      estimated_monthly_sales: [nonNegative],
      employee_count: [nonNegative],
    },
  }),
  define({
    name: 'properties',
    table: propertyTable,
    description: 'US residential properties with their owner; the key is computed from the address.',
    computed: {
      address_key: {
        from: ['street', 'city', 'state', 'zip'],
        doc: '"street|city|state|zip", lower case, each part trimmed and its whitespace collapsed',
        compute: addressKey,
      },
    },
    rules: {
      lat: [latitude],
      lng: [longitude],
      beds: [nonNegative],
      baths: [nonNegative],
      sqft: [nonNegative],
      lot_sqft: [nonNegative],
      year_built: [year],
      estimated_value: [nonNegative],
      listing_status: [oneOf(['off_market', 'for_sale', 'pending', 'sold'])],
      list_price: [nonNegative],
      days_on_market: [nonNegative],
      last_sold_price: [nonNegative],
      price_history: [
        shaped(
          z.array(z.object({ date: isoDate, event: z.string(), price: money })),
          'a JSON array of {date, event, price}',
        ),
      ],
      tax_history: [
        shaped(
          z.array(z.object({ year: z.number().int(), tax: money, assessment: money })),
          'a JSON array of {year, tax, assessment}',
        ),
      ],
      comparables: [
        shaped(
          z.array(z.object({ address: z.string(), price: money, sqft: money, distanceMiles: money })),
          'a JSON array of {address, price, sqft, distanceMiles}',
        ),
      ],
      schools: [
        shaped(
          z.array(z.object({ name: z.string(), level: z.string(), rating: money, distanceMiles: money })),
          'a JSON array of {name, level, rating, distanceMiles}',
        ),
      ],
      owner_emails: [each(email)],
    },
  }),
  define({
    name: 'agents',
    table: agentTable,
    description: "Real estate agents; specialties are codes (1001 buyer's agent, 1002 listing agent, ...).",
    rules: {
      profile_url: [url],
      email: [email],
      specialties: [
        each(pattern(/^\d{4}$/, 'a four-digit specialty code such as 1001', 'a four-digit specialty code')),
      ],
      years_experience: [nonNegative],
      rating: [rating5],
      review_count: [nonNegative],
      sales_last_12_months: [nonNegative],
      price_range_min: [nonNegative],
      price_range_max: [nonNegative],
    },
  }),
  define({
    name: 'business_listings',
    table: businessListingTable,
    description: 'Businesses for sale; money in USD.',
    rules: {
      listing_url: [url],
      country: [countryCode],
      asking_price: [nonNegative],
      established: [year],
      employees: [nonNegative],
      broker_email: [email],
    },
  }),
  define({
    name: 'commercial_properties',
    table: commercialPropertyTable,
    description: 'Commercial properties with their broker.',
    rules: {
      listing_url: [url],
      property_type: [
        oneOf(['office', 'retail', 'industrial', 'multifamily', 'land', 'hospitality', 'mixed_use', 'healthcare']),
      ],
      listing_type: [oneOf(['sale', 'lease'])],
      lat: [latitude],
      lng: [longitude],
      price: [nonNegative],
      size_sqft: [nonNegative],
      broker_email: [email],
    },
  }),
  define({
    name: 'rental_hosts',
    table: rentalHostTable,
    description: 'Hosts of short-term rentals; `host_key` is their profile URL.',
    rules: { host_key: [url], email: [email], listings_count: [nonNegative], joined_year: [year] },
  }),
  define({
    name: 'rental_listings',
    table: rentalListingTable,
    description: 'Rental listings in European cities; `host_key` names the host, who must already be imported.',
    references: { host_id: 'host_key' },
    rules: {
      listing_url: [url],
      host_key: [url],
      country_code: [countryCode],
      lat: [latitude],
      lng: [longitude],
      price_per_night: [nonNegative],
      currency: [currencyCode],
      bedrooms: [nonNegative],
      guests: [nonNegative],
      rating: [rating5],
      review_count: [nonNegative],
    },
  }),
  define({
    name: 'home_service_pros',
    table: homeServiceProTable,
    description: 'Home-service professionals.',
    rules: {
      profile_url: [url],
      category: [oneOf(HOME_SERVICE_CATEGORIES, 'home-service category slug')],
      grade: [oneOf(['A', 'B', 'C', 'D', 'E', 'F'])],
      email: [email],
      website: [url],
      years_in_business: [nonNegative],
      rating: [rating5],
      review_count: [nonNegative],
    },
  }),
  define({
    name: 'criminal_records',
    table: criminalRecordTable,
    description: 'Criminal records; `record_key` identifies the record (source, state and case number).',
    rules: { state: [stateCode], source: [oneOf(CRIMINAL_SOURCES)] },
  }),
];

export const DATASET_NAMES = DATASETS.map((d) => d.name);

export function findDataset(name: string): Dataset | undefined {
  return DATASETS.find((d) => d.name === name);
}
