import type { SqlTemplate } from '../sql.ts';
import type { z } from 'zod';
import { STORE_PLATFORMS, STORE_SOCIALS } from '../../../db/tables/stores.ts';
import { usdAmount } from '../../shared/amounts.ts';
import { ValidationError, type ErrorDetail } from '../../shared/errors.ts';
import { stateVariants } from '../leads/vocabulary.ts';
import { technologyKey } from './technologies.ts';
import type { Range, StoreFilter, StoreSocial } from '../../sources/stores.ts';

/**
 * The store-leads filters, shared by the store leads tool and the e-commerce store database API:
 * how a caller's parameters (aliases included) become one normalised filter, and that filter as SQL.
 */

export type StorePlatform = (typeof STORE_PLATFORMS)[number];

/** Bounds given under their long name or their alias (visitsMin, salesMax, employeesMin, ...). */
export const STORE_RANGE_ALIASES = {
  minEstimatedMonthlyVisits: 'visitsMin',
  maxEstimatedMonthlyVisits: 'visitsMax',
  minEstimatedMonthlySales: 'salesMin',
  maxEstimatedMonthlySales: 'salesMax',
  minEmployeeCount: 'employeesMin',
  maxEmployeeCount: 'employeesMax',
} as const;
type BoundName = keyof typeof STORE_RANGE_ALIASES;
type RangeName = BoundName | (typeof STORE_RANGE_ALIASES)[BoundName];

/** What each bound limits, its label and an example, its largest value, and whether it takes whole numbers only. */
const STORE_BOUNDS: Record<
  BoundName,
  { description: string; label: string; example: number; max: number; whole: boolean; usd?: true }
> = {
  minEstimatedMonthlyVisits: {
    description: 'Least estimated monthly visits.',
    label: 'Monthly visits, at least',
    example: 10_000,
    max: 1e12,
    whole: true,
  },
  maxEstimatedMonthlyVisits: {
    description: 'Most estimated monthly visits.',
    label: 'Monthly visits, at most',
    example: 500_000,
    max: 1e12,
    whole: true,
  },
  minEstimatedMonthlySales: {
    description: 'Least estimated monthly sales, USD.',
    label: 'Monthly sales (USD), at least',
    example: 5_000,
    max: 1e15,
    whole: false,
    usd: true,
  },
  maxEstimatedMonthlySales: {
    description: 'Most estimated monthly sales, USD.',
    label: 'Monthly sales (USD), at most',
    example: 100_000,
    max: 1e15,
    whole: false,
    usd: true,
  },
  minEmployeeCount: {
    description: 'Fewest employees.',
    label: 'Employees, at least',
    example: 1,
    max: 10_000_000,
    whole: true,
  },
  maxEmployeeCount: {
    description: 'Most employees.',
    label: 'Employees, at most',
    example: 50,
    max: 10_000_000,
    whole: true,
  },
};

/**
 * The bound parameters, long names first, then their aliases. `number` makes an optional parameter
 * from 0 to `max`; the store database API and the store leads tool read numbers each in their own way.
 */
export function storeBoundFields<T extends z.ZodType>(
  number: (max: number, whole: boolean) => T,
): Record<RangeName, T> {
  const names = Object.keys(STORE_RANGE_ALIASES) as BoundName[];
  const field = (name: BoundName, description: string, alias = false) => {
    const { label, example } = STORE_BOUNDS[name];
    const schema = number(STORE_BOUNDS[name].max, STORE_BOUNDS[name].whole)
      .describe(description)
      .meta({ title: alias ? `${label} (alias)` : label, examples: [example] });
    return STORE_BOUNDS[name].usd ? usdAmount(schema) : schema;
  };
  return Object.fromEntries([
    ...names.map((name) => [
      name,
      field(name, `${STORE_BOUNDS[name].description} Alias: ${STORE_RANGE_ALIASES[name]}.`),
    ]),
    ...names.map((name) => [STORE_RANGE_ALIASES[name], field(name, `Alias of ${name}.`, true)]),
  ]) as Record<RangeName, T>;
}

/** The filters as a caller sends them; lists are any-of. */
export type StoreFilterParams = {
  platform?: string[];
  countryCode?: string[];
  category?: string[];
  city?: string[];
  state?: string[];
  technologies?: string[];
  apps?: string[];
  planExclude?: string[];
  emails?: boolean;
  phones?: boolean;
} & Partial<Record<StoreSocial, boolean>> &
  Partial<Record<RangeName, number>>;

/**
 * "Salesforce Commerce Cloud", "salesforce-commerce-cloud" → "salesforce_commerce_cloud" (platforms and plan tiers).
 */
export const storeKey = (value: string) =>
  value
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

export const isStorePlatform = (value: string): value is StorePlatform =>
  (STORE_PLATFORMS as readonly string[]).includes(storeKey(value));

const nonEmpty = <T>(list: T[] | undefined) => (list && list.length > 0 ? list : undefined);
const unique = <T>(list: T[]) => [...new Set(list)];

function range(params: StoreFilterParams, minName: BoundName, maxName: BoundName, issues: ErrorDetail[]): Range {
  const pick = (name: BoundName) => {
    const alias = STORE_RANGE_ALIASES[name];
    const long = params[name];
    const short = params[alias];
    if (long !== undefined && short !== undefined && long !== short) {
      issues.push({
        path: alias,
        message: `${alias} is an alias of ${name}; send one of them, or the same value in both`,
      });
    }
    return long ?? short;
  };
  const min = pick(minName);
  const max = pick(maxName);
  if (min !== undefined && max !== undefined && min > max) {
    issues.push({
      path: params[maxName] !== undefined ? maxName : STORE_RANGE_ALIASES[maxName],
      message: `must be at least the minimum (${min})`,
    });
  }
  return { min, max };
}

/** Sales are whole dollars: bounds with cents become the whole-dollar bounds that select the same stores. */
const wholeDollars = ({ min, max }: Range): Range => ({
  min: min === undefined ? undefined : Math.ceil(min),
  max: max === undefined ? undefined : Math.floor(max),
});

/** Normalises the caller's parameters; 400 `validation_failed` for contradictory bounds or aliases. */
export function storeFilter(params: StoreFilterParams): StoreFilter {
  const issues: ErrorDetail[] = [];
  const filter: StoreFilter = {
    platforms: nonEmpty(params.platform && unique(params.platform.map(storeKey))),
    countryCodes: nonEmpty(params.countryCode && unique(params.countryCode.map((c) => c.trim().toUpperCase()))),
    categories: nonEmpty(params.category && unique(params.category.map((c) => c.trim().toLowerCase()))),
    cities: nonEmpty(params.city && unique(params.city.map((c) => c.trim().toLowerCase()))),
    states: nonEmpty(params.state && unique(params.state.flatMap(stateVariants))),
    technologies: nonEmpty(params.technologies),
    apps: nonEmpty(params.apps),
    planExclude: nonEmpty(params.planExclude && unique(params.planExclude.map(storeKey))),
    emails: params.emails === true,
    phones: params.phones === true,
    socials: STORE_SOCIALS.filter((s) => params[s] === true),
    visits: range(params, 'minEstimatedMonthlyVisits', 'maxEstimatedMonthlyVisits', issues),
    sales: wholeDollars(range(params, 'minEstimatedMonthlySales', 'maxEstimatedMonthlySales', issues)),
    employees: range(params, 'minEmployeeCount', 'maxEmployeeCount', issues),
  };
  if (issues.length > 0) throw new ValidationError(issues);
  return filter;
}

/** Stored spellings of technology or app names, for matching names written another way. */
export interface StoreNameLists {
  technologies(): Promise<string[]>;
  apps(): Promise<string[]>;
}

/**
 * Names match ignoring case, spacing and punctuation ("google-analytics" is "Google Analytics");
 * a name with commas that is not itself known is read as a list. Names no store uses match nothing.
 */
export function matchNames(requested: string[], known: string[]): { names: string[]; unknown: string[] } {
  const byKey = new Map<string, string[]>();
  for (const name of known) {
    const key = technologyKey(name);
    byKey.set(key, [...(byKey.get(key) ?? []), name]);
  }
  const names: string[] = [];
  const unknown: string[] = [];
  for (const value of requested) {
    const whole = byKey.get(technologyKey(value));
    const parts = whole
      ? [value]
      : value
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean);
    for (const part of parts) {
      const found = byKey.get(technologyKey(part));
      if (found) names.push(...found);
      else unknown.push(part);
    }
  }
  return { names: unique(names), unknown };
}

/**
 * The filter with technology and app names turned into the spellings stores use; `unknown` lists names no store uses.
 */
export async function resolveStoreNames(
  filter: StoreFilter,
  lists: StoreNameLists,
): Promise<{ filter: StoreFilter; unknown: string[] }> {
  const unknown: string[] = [];
  const resolved = { ...filter };
  if (filter.technologies) {
    const match = matchNames(filter.technologies, await lists.technologies());
    resolved.technologies = match.names;
    unknown.push(...match.unknown);
  }
  if (filter.apps) {
    const match = matchNames(filter.apps, await lists.apps());
    resolved.apps = match.names;
    unknown.push(...match.unknown);
  }
  return { filter: resolved, unknown };
}

const SOCIAL_PRESENT: Record<StoreSocial, <F>(q: SqlTemplate<F>) => F> = {
  instagram: (q) => q`instagram_url is not null`,
  facebook: (q) => q`facebook_url is not null`,
  tiktok: (q) => q`tiktok_url is not null`,
  youtube: (q) => q`youtube_url is not null`,
  linkedin: (q) => q`linkedin_url is not null`,
  twitter: (q) => q`twitter_url is not null`,
  pinterest: (q) => q`pinterest_url is not null`,
};

/**
 * One condition per part of the filter over the `store` table's columns (unqualified), each able to
 * use the table's indexes: (platform, id), lower(category), the GIN indexes on technologies and apps,
 * visits and sales. Technology and app names must already be stored spellings (an empty list matches nothing).
 */
export function storeConditions<F>(q: SqlTemplate<F>, f: StoreFilter): F[] {
  const c: F[] = [];
  if (f.platforms) c.push(q`platform = any(${q.array(f.platforms)}::text[])`);
  if (f.countryCodes) c.push(q`country_code = any(${q.array(f.countryCodes)}::text[])`);
  if (f.categories) c.push(q`lower(category) = any(${q.array(f.categories)}::text[])`);
  if (f.cities) c.push(q`lower(city) = any(${q.array(f.cities)}::text[])`);
  if (f.states) c.push(q`lower(state) = any(${q.array(f.states)}::text[])`);
  if (f.technologies) c.push(q`technologies && ${q.array(f.technologies)}::text[]`);
  if (f.apps) c.push(q`apps && ${q.array(f.apps)}::text[]`);
  if (f.planExclude) c.push(q`(plan_tier is null or lower(plan_tier) <> all(${q.array(f.planExclude)}::text[]))`);
  if (f.emails) c.push(q`cardinality(emails) > 0`);
  if (f.phones) c.push(q`cardinality(phones) > 0`);
  for (const social of f.socials) c.push(SOCIAL_PRESENT[social](q));
  if (f.visits.min !== undefined) c.push(q`estimated_monthly_visits >= ${f.visits.min}`);
  if (f.visits.max !== undefined) c.push(q`estimated_monthly_visits <= ${f.visits.max}`);
  if (f.sales.min !== undefined) c.push(q`estimated_monthly_sales >= ${f.sales.min}`);
  if (f.sales.max !== undefined) c.push(q`estimated_monthly_sales <= ${f.sales.max}`);
  if (f.employees.min !== undefined) c.push(q`employee_count >= ${f.employees.min}`);
  if (f.employees.max !== undefined) c.push(q`employee_count <= ${f.employees.max}`);
  return c;
}
