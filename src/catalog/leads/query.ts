import type { MaybeRow, PendingQuery } from 'postgres';
import type { Sql } from '../../../db/client.ts';
import { and, likePattern, type Fragment } from '../sql.ts';
import type { LeadFilters } from './filters.ts';
import { stateVariants } from './vocabulary.ts';

/** Whole words: not preceded or followed by a word character (so "c++" and "e-commerce" match too). */
const wordsRegex = (words: string[]) => `(?<!\\w)(${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+')).join('|')})(?!\\w)`;
const lower = (values: string[]) => values.map((v) => v.trim().toLowerCase());

/** "https://www.linkedin.com/in/Jane-Doe/" → "https://www.linkedin.com/in/jane-doe" (the stored form, lower case). */
export function normaliseSocialUrl(url: string): string {
  const path = url.trim().toLowerCase().replace(/^https?:\/\//, '').replace(/^www\./, '').replace(/[?#].*$/, '').replace(/\/+$/, '');
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

function any(sql: Sql, parts: Fragment[]): Fragment {
  return parts.slice(1).reduce((acc, part) => sql`${acc} or ${part}`, parts[0]!);
}

/** One WHERE fragment per filter; every filter is combined with AND. */
export function leadConditions(sql: Sql, f: LeadFilters, options: { accountId?: string; excludeDelivered?: boolean } = {}): Fragment[] {
  const c: Fragment[] = [];
  if (f.titles) c.push(sql`(${any(sql, f.titles.map((t) => sql`p.title ilike ${likePattern(t)}`))})`);
  if (f.notTitles) c.push(sql`not (${any(sql, f.notTitles.map((t) => sql`coalesce(p.title, '') ilike ${likePattern(t)}`))})`);
  // The person's copy of its company's industry (lower case; null without a company), so industry
  // and person filters meet in one bitmap scan of person.
  if (f.industries) c.push(sql`p.company_industry = any(${lower(f.industries)})`);
  if (f.notIndustries) c.push(sql`(p.company_industry is null or p.company_industry <> all(${lower(f.notIndustries)}))`);
  if (f.countries) c.push(sql`lower(p.country) = any(${lower(f.countries)})`);
  if (f.states) c.push(sql`lower(p.state) = any(${f.states.flatMap(stateVariants)})`);
  if (f.city) c.push(sql`p.city ilike ${likePattern(f.city)}`);
  if (f.companyName) c.push(sql`c.name ilike ${likePattern(f.companyName)}`);
  if (f.companyDomains) c.push(sql`(${any(sql, f.companyDomains.map((d) => sql`c.domain ilike ${likePattern(d)}`))})`);
  if (f.seniorities) c.push(sql`p.seniority = any(${f.seniorities})`);
  if (f.departments) c.push(sql`p.department = any(${f.departments})`);
  if (f.emailStatuses) c.push(sql`p.email_status = any(${f.emailStatuses})`);
  if (f.hasEmail) c.push(sql`p.email is not null`);
  if (f.hasPhone) c.push(sql`(p.phone is not null or p.mobile is not null)`);
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
        ? [sql`(${any(sql, f.keywords.map((w) => sql`c.keyword_words @> company_keyword_words(array[${w}]::text[])`))})`]
        : [];
      c.push(...words, keywordsJoinable(f.keywords) ? joined : sql`${joined} and exists (select 1 from unnest(c.keywords) k where k ~* ${regex})`);
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
  if (f.notTechnologies) c.push(sql`cardinality(c.technologies) > 0 and not (c.technologies && ${f.notTechnologies}::text[])`);
  if (f.companyCountries) c.push(sql`lower(c.country) = any(${lower(f.companyCountries)})`);
  if (f.companyStates) c.push(sql`lower(c.state) = any(${f.companyStates.flatMap(stateVariants)})`);
  if (f.companyCity) c.push(sql`c.city ilike ${likePattern(f.companyCity)}`);
  if (options.excludeDelivered && options.accountId) {
    c.push(sql`not exists (select 1 from delivered_lead d where d.account_id = ${options.accountId} and d.person_id = p.id)`);
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

/**
 * Sends a search as an unnamed statement, so Postgres plans it for its own values every time.
 * postgres.js makes every tagged query a named prepared statement, and after five runs Postgres
 * switches such a statement to a generic plan whenever that plan looks cheaper. For the lead search
 * it nearly always does: with the values unknown every filter looks selective, so the generic page
 * plan gathers and sorts all matches where the right plan walks the primary key (a keywords search
 * with 24,787 matches: 100 ms instead of 5), and the generic count may start from the wrong index.
 * Replanning costs about a millisecond and one more round trip. postgres.js has no per-query switch
 * for tagged templates; `options.prepare` is the flag sql.unsafe sets, read when the query is sent
 * (if a later version ignores it, the query is simply prepared again).
 */
function plannedPerCall<T extends readonly MaybeRow[]>(query: PendingQuery<T>): PendingQuery<T> {
  (query as unknown as { options: { prepare?: boolean } }).options.prepare = false;
  return query;
}

/** A page of people in id order: by offset, or after an id (keyset). One extra row tells if more follow. */
export function selectLeadPage(sql: Sql, whereClause: Fragment, paging: { limit: number; offset?: number; afterId?: bigint }) {
  const keyset = paging.afterId !== undefined ? sql`and p.id > ${paging.afterId.toString()}::bigint` : sql``;
  return plannedPerCall(sql<LeadRow[]>`
    select p.id, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status, p.phone, p.mobile,
           p.linkedin_url, p.city, p.state, p.country, p.company_id
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
 * Every row carries `total`; a page past the end is one row with `total` and a null id.
 */
export function selectLeadSearch(sql: Sql, whereClause: Fragment, paging: { limit: number; offset?: number; afterId?: bigint }) {
  const keyset = paging.afterId !== undefined ? sql`where id > ${paging.afterId.toString()}::bigint` : sql``;
  return plannedPerCall(sql<(Omit<LeadRow, 'id'> & { id: string | null; total: number })[]>`
    with matches as materialized (
      select p.id from person p left join company c on c.id = p.company_id where ${whereClause}
    ), page as (
      select id from matches ${keyset} order by id limit ${paging.limit + 1} offset ${paging.offset ?? 0}
    )
    select t.total, p.id, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status, p.phone, p.mobile,
           p.linkedin_url, p.city, p.state, p.country, p.company_id
    from (select count(*)::int as total from matches) t
    left join (page join person p on p.id = page.id) on true
    order by p.id`);
}

export function countLeads(sql: Sql, whereClause: Fragment) {
  return plannedPerCall(sql<{ total: number }[]>`select count(*)::int as total from person p left join company c on c.id = p.company_id where ${whereClause}`);
}
