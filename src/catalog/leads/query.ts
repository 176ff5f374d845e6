import type { Sql } from '../../../db/client.ts';
import { oneRow } from '../../../db/rows.ts';
import { and, estimateMatches, EXACT_TOTAL_LIMIT, likePattern, plannedPerCall, type Fragment } from '../sql.ts';
import { isSet } from './filters.ts';
import type { LeadFilters } from '../../sources/leads.ts';
import { stateVariants } from './vocabulary.ts';

/** Whole words: not preceded or followed by a word character (so "c++" and "e-commerce" match too). */
const wordsRegex = (words: string[]) =>
  `(?<!\\w)(${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+')).join('|')})(?!\\w)`;
const lower = (values: string[]) => values.map((v) => v.trim().toLowerCase());

/** "https://www.linkedin.com/in/Jane-Doe/" → "https://www.linkedin.com/in/jane-doe" (the stored form, lower case). */
export function normaliseSocialUrl(url: string): string {
  const path = url
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/^www\./, '')
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '');
  return `https://www.${path}`;
}

/**
 * Whole-word keyword matches run on `company_keywords_text(keywords)`, the keywords joined by "|"
 * (trigram-indexed). A match inside one keyword is a match in the joined text at the same word
 * boundaries ("|" is neither a word nor a space character); the reverse holds unless a searched word
 * itself contains "|", the only way a match could span two keywords. Such searches keep the
 * per-keyword test (after the joined one, which stays a necessary condition).
 */
const keywordsJoinable = (words: string[]) => !words.some((w) => w.includes('|'));

/**
 * A keyword that is one plain word (ASCII letters and digits) matches whole-word exactly when it is
 * one of the company's `keyword_words` (migration 0014: the keywords split at the same word
 * boundaries the regex uses), so such searches need no regex at all. Other keywords ("supply chain",
 * "e-commerce", "café") keep the regex, after their words as a necessary, indexed condition.
 */
const plainWord = (word: string) => /^[a-z0-9]+$/i.test(word.trim());

/** The conditions joined with OR. An empty list (a list filter sent as []) has no such condition: an error. */
function any(sql: Sql, [first, ...rest]: Fragment[]): Fragment {
  if (!first) throw new Error('a list filter without values');
  return rest.reduce((acc, part) => sql`${acc} or ${part}`, first);
}

/**
 * The filters on the person's coarse facets, which `person_facet_count` counts (migration 0022):
 * a search on these alone is counted there.
 */
export const FACET_FILTERS = [
  'countries',
  'seniorities',
  'departments',
  'industries',
  'notIndustries',
  'emailStatuses',
  'hasEmail',
  'hasPhone',
] as const satisfies readonly (keyof LeadFilters)[];

/**
 * Where each facet is: on a person (`p`), or a row of `person_facet_count`
 * (`f`), which stores them as the search compares them.
 */
interface FacetColumns {
  country: Fragment;
  seniority: Fragment;
  department: Fragment;
  industry: Fragment;
  emailStatus: Fragment;
  hasEmail: Fragment;
  hasPhone: Fragment;
}

const personFacets = (sql: Sql): FacetColumns => ({
  country: sql`lower(p.country)`,
  seniority: sql`p.seniority`,
  department: sql`p.department`,
  // The person's copy of its company's industry (lower case; null without a company), so industry
  // and person filters meet in one bitmap scan of person.
  industry: sql`p.company_industry`,
  emailStatus: sql`p.email_status`,
  hasEmail: sql`p.email is not null`,
  hasPhone: sql`(p.phone is not null or p.mobile is not null)`,
});

const countedFacets = (sql: Sql): FacetColumns => ({
  country: sql`f.country`,
  seniority: sql`f.seniority`,
  department: sql`f.department`,
  industry: sql`f.company_industry`,
  emailStatus: sql`f.email_status`,
  hasEmail: sql`f.has_email`,
  hasPhone: sql`f.has_phone`,
});

/** The conditions of the facet filters (FACET_FILTERS), on a person or on the facet counts. */
function facetConditions(sql: Sql, f: LeadFilters, col: FacetColumns): Fragment[] {
  const c: Fragment[] = [];
  if (f.industries) c.push(sql`${col.industry} = any(${lower(f.industries)})`);
  if (f.notIndustries) c.push(sql`(${col.industry} is null or ${col.industry} <> all(${lower(f.notIndustries)}))`);
  if (f.countries) c.push(sql`${col.country} = any(${lower(f.countries)})`);
  if (f.seniorities) c.push(sql`${col.seniority} = any(${f.seniorities})`);
  if (f.departments) c.push(sql`${col.department} = any(${f.departments})`);
  if (f.emailStatuses) c.push(sql`${col.emailStatus} = any(${f.emailStatuses})`);
  if (f.hasEmail) c.push(col.hasEmail);
  if (f.hasPhone) c.push(col.hasPhone);
  return c;
}

/** The search is on facets alone (and leaves nobody out per account), so person_facet_count counts it. */
export const countedByFacets = (f: LeadFilters, options: { excludeDelivered?: boolean } = {}) =>
  !options.excludeDelivered &&
  (Object.keys(f) as (keyof LeadFilters)[]).every(
    (k) => !isSet(f[k]) || (FACET_FILTERS as readonly string[]).includes(k),
  );

/** The size of a search on facets alone (countedByFacets): a sum over person_facet_count, exact. */
export function countByFacets(sql: Sql, f: LeadFilters) {
  return sql<{ total: number }[]>`select coalesce(sum(f.people), 0)::int as total from person_facet_count f
    where ${and(sql, facetConditions(sql, f, countedFacets(sql)))}`;
}

/**
 * A company domain, partial and case-insensitive, through the trigram index: the index is asked for
 * the value's longest word only ("summitoutfitters" of "summitoutfitters.com"), and the whole value
 * is checked on the companies found (`|| ''` keeps that test out of the index). The trigrams of a
 * public suffix ("com", "net") are in nearly every domain, and reading their lists was most of the
 * scan: 23–67 ms a domain at 1M companies, a quarter of that without them. A match of the value is a
 * match of its word, so the answer is the same.
 */
function domainMatch(sql: Sql, domain: string): Fragment {
  const words = domain.match(/[\p{L}\p{N}]+/gu) ?? [];
  const longest = words.reduce((a, w) => (w.length > a.length ? w : a), '');
  if (words.length < 2 || longest.length < 3) return sql`c.domain ilike ${likePattern(domain)}`;
  return sql`(c.domain ilike ${likePattern(longest)} and (c.domain || '') ilike ${likePattern(domain)})`;
}

/** One WHERE fragment per filter; every filter is combined with AND. */
export function leadConditions(
  sql: Sql,
  f: LeadFilters,
  options: { accountId?: string; excludeDelivered?: boolean } = {},
): Fragment[] {
  const c: Fragment[] = facetConditions(sql, f, personFacets(sql));
  if (f.titles)
    c.push(
      sql`(${any(
        sql,
        f.titles.map((t) => sql`p.title ilike ${likePattern(t)}`),
      )})`,
    );
  if (f.notTitles)
    c.push(
      sql`not (${any(
        sql,
        f.notTitles.map((t) => sql`coalesce(p.title, '') ilike ${likePattern(t)}`),
      )})`,
    );
  if (f.states) c.push(sql`lower(p.state) = any(${f.states.flatMap(stateVariants)})`);
  if (f.city) c.push(sql`p.city ilike ${likePattern(f.city)}`);
  if (f.companyName) c.push(sql`c.name ilike ${likePattern(f.companyName)}`);
  if (f.companyDomains)
    c.push(
      sql`(${any(
        sql,
        f.companyDomains.map((d) => domainMatch(sql, d)),
      )})`,
    );
  if (f.minEmployees !== undefined) c.push(sql`c.employees_count >= ${f.minEmployees}`);
  if (f.maxEmployees !== undefined) c.push(sql`c.employees_count <= ${f.maxEmployees}`);
  if (f.revenueMin !== undefined) c.push(sql`c.annual_revenue >= ${f.revenueMin}`);
  if (f.revenueMax !== undefined) c.push(sql`c.annual_revenue <= ${f.revenueMax}`);
  if (f.socialUrl) c.push(sql`lower(p.linkedin_url) = ${normaliseSocialUrl(f.socialUrl)}`);
  if (f.keywords) {
    if (f.keywords.every(plainWord)) {
      c.push(sql`c.keyword_words && ${lower(f.keywords)}::text[]`);
    } else {
      const regex = wordsRegex(f.keywords);
      const joined = sql`company_keywords_text(c.keywords) ~* ${regex}`;
      const words = f.keywords.every((w) => /[\p{L}\p{N}]/u.test(w))
        ? [
            sql`(${any(
              sql,
              f.keywords.map((w) => sql`c.keyword_words @> company_keyword_words(array[${w}]::text[])`),
            )})`,
          ]
        : [];
      c.push(
        ...words,
        keywordsJoinable(f.keywords)
          ? joined
          : sql`${joined} and exists (select 1 from unnest(c.keywords) k where k ~* ${regex})`,
      );
    }
  }
  if (f.notKeywords) {
    if (f.notKeywords.every(plainWord)) {
      c.push(sql`not coalesce(c.keyword_words && ${lower(f.notKeywords)}::text[], false)`);
    } else {
      const regex = wordsRegex(f.notKeywords);
      c.push(
        keywordsJoinable(f.notKeywords)
          ? sql`not (company_keywords_text(coalesce(c.keywords, '{}')) ~* ${regex})`
          : sql`not exists (select 1 from unnest(coalesce(c.keywords, '{}')) k where k ~* ${regex})`,
      );
    }
  }
  if (f.technologies) c.push(sql`c.technologies && ${f.technologies}::text[]`);
  if (f.technologiesAll) c.push(sql`c.technologies @> ${f.technologiesAll}::text[]`);
  if (f.notTechnologies)
    c.push(sql`cardinality(c.technologies) > 0 and not (c.technologies && ${f.notTechnologies}::text[])`);
  if (f.companyCountries) c.push(sql`lower(c.country) = any(${lower(f.companyCountries)})`);
  if (f.companyStates) c.push(sql`lower(c.state) = any(${f.companyStates.flatMap(stateVariants)})`);
  if (f.companyCity) c.push(sql`c.city ilike ${likePattern(f.companyCity)}`);
  if (options.excludeDelivered && options.accountId) {
    c.push(
      sql`not exists (select 1 from delivered_lead d where d.account_id = ${options.accountId} and d.person_id = p.id)`,
    );
  }
  return c;
}

/** The lead conditions joined with AND. */
export const where = and;

export interface LeadRow {
  id: string;
  first_name: string;
  last_name: string;
  title: string | null;
  seniority: string | null;
  department: string | null;
  email: string | null;
  email_status: string | null;
  phone: string | null;
  mobile: string | null;
  linkedin_url: string | null;
  city: string | null;
  state: string | null;
  country: string | null;
  company_id: string | null;
}

/** A page of people in id order: by offset, or after an id (keyset). One extra row tells if more follow. */
export function selectLeadPage(
  sql: Sql,
  whereClause: Fragment,
  paging: { limit: number; offset?: number; afterId?: bigint },
) {
  const keyset = paging.afterId !== undefined ? sql`and p.id > ${paging.afterId.toString()}::bigint` : sql``;
  return plannedPerCall(sql<LeadRow[]>`
    select p.id, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status, p.phone,
           p.mobile, p.linkedin_url, p.city, p.state, p.country, p.company_id
    from person p left join company c on c.id = p.company_id
    where ${whereClause} ${keyset}
    order by p.id
    limit ${paging.limit + 1} offset ${paging.offset ?? 0}`);
}

/**
 * A search's page and the size of the whole search in one statement: the matching ids are found
 * once (planned for all of them, as a count is), counted, and the page is cut from them in id order
 * (after an id, or at an offset) and joined to its people. Apart, the page and the count each found
 * the matches again, and the page was planned for its LIMIT, which walks the primary key through
 * every non-match when the matches are few (title + industry + country: 150 ms instead of 15).
 * At most `exactTotalLimit` + 1 matches are gathered: a `total` past the limit means "more than the
 * limit", and its page is not the search's (the matches gathered are not the first ones in id order).
 * Every row carries `total`; a page past the end is one row with `total` and a null id.
 */
export function selectLeadSearch(
  sql: Sql,
  whereClause: Fragment,
  paging: { limit: number; offset?: number; afterId?: bigint },
  exactTotalLimit = EXACT_TOTAL_LIMIT,
) {
  const keyset = paging.afterId !== undefined ? sql`where id > ${paging.afterId.toString()}::bigint` : sql``;
  return plannedPerCall(sql<(Omit<LeadRow, 'id'> & { id: string | null; total: number })[]>`
    with matches as materialized (
      select p.id from person p left join company c on c.id = p.company_id where ${whereClause}
        limit ${exactTotalLimit + 1}
    ), page as (
      select id from matches ${keyset} order by id limit ${paging.limit + 1} offset ${paging.offset ?? 0}
    )
    select t.total, p.id, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status,
           p.phone, p.mobile, p.linkedin_url, p.city, p.state, p.country, p.company_id
    from (select count(*)::int as total from matches) t
    left join (page join person p on p.id = page.id) on true
    order by p.id`);
}

export function countLeads(sql: Sql, whereClause: Fragment) {
  return plannedPerCall(
    sql<
      { total: number }[]
    >`select count(*)::int as total from person p left join company c on c.id = p.company_id where ${whereClause}`,
  );
}

/** Filters on the person alone; any other reads the company (`c`). */
const PERSON_FILTERS: readonly (keyof LeadFilters)[] = [
  ...FACET_FILTERS,
  'titles',
  'notTitles',
  'states',
  'city',
  'socialUrl',
];

/** Whether a search's conditions read the company. */
export const readsCompany = (f: LeadFilters) =>
  (Object.keys(f) as (keyof LeadFilters)[]).some((k) => isSet(f[k]) && !PERSON_FILTERS.includes(k));

/** The planner's estimate of how many people match: EXPLAIN, nothing executed (about a millisecond). */
export async function plannedMatches(sql: Sql, whereClause: Fragment): Promise<number> {
  const rows = await plannedPerCall(sql<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }[]>`
    explain (format json) select p.id from person p left join company c on c.id = p.company_id where ${whereClause}`);
  return oneRow(rows, 'explain of a lead search')['QUERY PLAN'][0].Plan['Plan Rows'];
}

/**
 * An estimate of how many people match (estimateMatches). A search that reads the company joins it
 * per sampled person (the lateral subquery is fenced with OFFSET 0 so it stays one): planned for the
 * whole table, a join to all companies would cost more than the sample.
 */
export function estimateLeads(sql: Sql, whereClause: Fragment, joinCompany: boolean) {
  return estimateMatches(
    sql,
    'person',
    (sample) =>
      joinCompany
        ? sql`from person p ${sample}
            left join lateral (select * from company c where c.id = p.company_id offset 0) c on true`
        : sql`from person p ${sample}`,
    whereClause,
  );
}
