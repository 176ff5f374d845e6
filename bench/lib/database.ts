/**
 * The lead database at scale: `searchLeads`, `enrichLeads` and `enrichLocalBusinesses` on a catalog
 * seeded at `large` (1,000,000 people, 100,000 companies, about 96,000 local businesses; `xlarge`
 * ten times that), warm, each beside the same SQL sent directly.
 *
 *   1. Four typical filter combinations and three broad ones (hundreds of thousands of matches at
 *      large, millions at xlarge) through `searchLeads` (a growth account's principal,
 *      authenticated with core.auth), beside the catalog queries it issues (findLeads: the page and
 *      the total, in one statement or side by side as the search needs) sent through the same
 *      postgres.js pool without a transaction, deliveries or the allowance. The service is timed twice: with an
 *      account that already received the page (the steady state of a repeated search: no delivery
 *      insert), and with a new account for every call (every lead new: allowance taken, 100
 *      delivered_lead rows inserted). Goals: service p95 ≤ 50 ms; at xlarge ≤ 100 ms, broad ≤ 300 ms.
 *   2. Paging deep on a broad filter: page 1 and page 1,000 (limit 100) by cursor (`after` = the id
 *      999 pages in, computed with SQL) and by offset (page=1000). Goal: cursor page 1,000 ≤ 1.5×
 *      page 1.
 *   3. Enrichment of 1,000 catalog rows (emails, social URLs, mobiles, domains) through
 *      `enrichLeads` (four lookup queries in all) against one query per row in priority order, sent
 *      one after another and producing the very same output rows (checked). Goals: ≤ 300 ms and
 *      ≥ 10× faster than per row.
 *   4. Local-business enrichment of 1,000 rows taken from the places (phones, names with a city or
 *      postal code, websites) through `enrichLocalBusinesses` (a scale account's principal) against
 *      one query per row, the same way and with the same goals (bench/lib/places-enrichment.ts).
 *   5. Disk and memory after the parts: the database, each catalog table with its indexes, the
 *      Postgres server's processes (when it runs on this machine) and this process.
 *
 * Calls of the variants being compared alternate within every iteration (rotating order), so the
 * drift of a shared machine falls on all of them alike. The embedded Postgres runs with
 * shared_buffers = 1GB (see `sharedBuffers`), so the warmed lead tables stay in its cache.
 */
import os from 'node:os';
import type postgres from 'postgres';
import type { Sql } from '../../db/client.ts';
import type { Plan } from '../../db/tables/accounts.ts';
import { contactRankSql, personByEmailSql } from '../../db/tables/leads.ts';
import type { Scale } from '../../db/seed/index.ts';
import { loopbackConfig } from '../../src/config.ts';
import type { Core } from '../../src/core.ts';
import { createCore } from '../../src/create-core.ts';
import { createLogger } from '../../src/logger.ts';
import { createAccount, type Principal } from '../../src/accounts/accounts.ts';
import { enrichLeads } from '../../src/endpoints/enrich-leads.ts';
import { filtersOf, parseLeadSearch } from '../../src/catalog/leads/params.ts';
import {
  countLeads,
  leadConditions,
  normaliseSocialUrl,
  selectLeadPage,
  where,
  type LeadRow,
} from '../../src/catalog/leads/query.ts';
import { findLeads } from '../../src/catalog/leads/search.ts';
import { leadRecord } from '../../src/catalog/leads/lead-record.ts';
import { searchLeads, type CompanyRecord } from '../../src/endpoints/lead-search.ts';
import { compareEnrichment, type EnrichComparison, type EnrichComparisonOptions } from './enrich-compare.ts';
import {
  benchPlacesEnrichment,
  PLACE_ROW_KINDS,
  type PlaceRowKind,
  type PlacesEnrichFigures,
} from './places-enrichment.ts';
import {
  catalogHeading,
  footprint,
  footprintLines,
  n,
  pad,
  peopleAndCompanies,
  progress,
  round,
  seededCatalog,
  serverSettings,
  timeAlternately,
  timing,
  verdict,
  type CatalogOptions,
  type CatalogRunHeader,
  type Footprint,
  type Suite,
  type Timing,
} from './harness.ts';

/** The four parts of the benchmark, in the order they run. */
export const DATABASE_PARTS = ['searches', 'paging', 'enrichment', 'places'] as const;
export type DatabasePart = (typeof DATABASE_PARTS)[number];

export interface DatabaseOptions extends CatalogOptions {
  /** The parts to run. Default all of them. */
  parts?: readonly DatabasePart[];
  /** Timed calls per search variant (after the warm-ups). Default 50. */
  iterations?: number;
  warmups?: number;
  /** Timed enrichLeads and enrichLocalBusinesses calls (and per-row baselines: `baselineIterations`). Defaults 30 and 5. */
  enrichIterations?: number;
  baselineIterations?: number;
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
}

export interface SearchFigures {
  key: string;
  label: string;
  /** Hundreds of thousands of matches or more: its own goal. */
  broad: boolean;
  /** The request as a REST caller sends it. */
  params: Record<string, unknown>;
  /** pagination.total. */
  total: number;
  /** The service's word that `total` is an estimate, when it gives one. */
  totalIsEstimate?: boolean;
  returned: number;
  /** searchLeads, an account that already received these leads. */
  service: Timing;
  /** searchLeads, a new account every call (every lead new: allowance and delivery insert). */
  serviceNewLeads: Timing;
  /** findLeads (the page and the total), sent directly. */
  direct: Timing;
  /** Service ÷ direct, of the p50s and of the p95s (repeat account). */
  ratioP50: number;
  ratioP95: number;
  /** Worst service p95 (of the two accounts) ≤ the goal of its kind (typical or broad). */
  met: boolean;
}

export interface PageFigures {
  label: string;
  params: Record<string, unknown>;
  service: Timing;
  /** Page query and count query, sent directly. */
  direct: Timing;
  /** The page query alone, sent directly. */
  pageQuery: Timing;
}

export interface PagingFigures {
  params: Record<string, unknown>;
  total: number;
  /** 1,000 (less only on catalogs too small for it). */
  deepPage: number;
  /** The id of the 99,900th match: `after` for page 1,000. */
  afterId: string;
  first: PageFigures;
  cursor: PageFigures;
  offset: PageFigures;
  /** Cursor page 1,000 ÷ page 1, service p50s; the same for the page query alone. */
  cursorRatio: number;
  cursorPageQueryRatio: number;
  offsetRatio: number;
  offsetPageQueryRatio: number;
  met: boolean;
}

export interface EnrichFigures extends EnrichComparison {
  /** Rows by the key they carry (email rows may also carry a domain, which email outranks). */
  mix: Record<'email' | 'social' | 'mobile' | 'domain', number>;
}

export interface DatabaseResult extends CatalogRunHeader {
  /** The server settings that shape these figures. */
  settings: Record<string, string>;
  options: { iterations: number; warmups: number; enrichIterations: number; baselineIterations: number };
  goals: DatabaseGoals;
  /** The parts this run measured; the figures of the others are absent (`search` empty). */
  parts: DatabasePart[];
  search: SearchFigures[];
  paging?: PagingFigures;
  enrichment?: EnrichFigures;
  placesEnrichment?: PlacesEnrichFigures;
  /** Disk and memory once the parts have run. */
  footprint: Footprint;
  /** Goals of the parts run (the places part has the enrichment goals). */
  met: {
    search?: boolean;
    broadSearch?: boolean;
    paging?: boolean;
    enrichTime?: boolean;
    enrichSpeedup?: boolean;
    placesTime?: boolean;
    placesSpeedup?: boolean;
  };
}

export interface DatabaseGoals {
  searchP95Ms: number;
  broadSearchP95Ms: number;
  cursorRatio: number;
  enrichMs: number;
  enrichSpeedup: number;
}

const DATABASE_GOALS: DatabaseGoals = {
  searchP95Ms: 50,
  broadSearchP95Ms: 50,
  cursorRatio: 1.5,
  enrichMs: 300,
  enrichSpeedup: 10,
};

/** At 10 million people a search reads ten times the index entries: the goals of the issue that asked for that scale. */
const goalsAt = (scale: Scale): DatabaseGoals =>
  scale === 'xlarge' ? { ...DATABASE_GOALS, searchP95Ms: 100, broadSearchP95Ms: 300 } : DATABASE_GOALS;

// ---------------------------------------------------------------------------------------------
// Searches

type Params = Record<string, unknown>;

export interface SearchCase {
  key: string;
  label: string;
  broad: boolean;
  params: Params;
}

/** Four typical combinations, (d)'s domains taken from the catalog; then three broad ones. */
export async function searchCases(sql: Sql): Promise<SearchCase[]> {
  // Four companies spread over the id range (at large: ids 1,201, 23,407, 48,811 and 77,003).
  const [{ max } = { max: 0 }] = await sql<{ max: number }[]>`select coalesce(max(id), 0)::int as max from company`;
  const picks = [0.01201, 0.23407, 0.48811, 0.77003].map((f) => Math.max(1, Math.round(f * max)));
  const domains = await sql<
    { domain: string }[]
  >`select domain from company where id = any(${picks}::bigint[]) order by id`;
  return [
    {
      key: 'a',
      broad: false,
      label: 'title partial + industry + country',
      params: { title: 'sales', industry: ['Computer Software'], country: ['United States'], limit: 100 },
    },
    {
      key: 'b',
      broad: false,
      label: 'keywords any-of + employee range',
      params: { keywords: ['saas', 'fintech', 'logistics'], minEmployees: 51, maxEmployees: 500, limit: 100 },
    },
    {
      key: 'c',
      broad: false,
      label: 'technologies ALL (3)',
      params: { technologiesAll: ['Salesforce', 'Slack', 'Stripe'], limit: 100 },
    },
    {
      key: 'd',
      broad: false,
      label: `company domains (${domains.length})`,
      params: { companyDomain: domains.map((d) => d.domain), limit: 100 },
    },
    // 222,662 matches at large: the whole count is the cost, not the page.
    { key: 'e', broad: true, label: 'broad: country + seniority (paging filter)', params: { ...PAGING_PARAMS } },
    // A sales team's territory: about 74,000 matches at large.
    {
      key: 'f',
      broad: true,
      label: 'broad: department + country + has email',
      params: { department: ['sales'], country: ['United States'], hasEmail: true, limit: 100 },
    },
    // Not on the facets alone (a title is free text): counted up to the exact-count limit, then estimated.
    {
      key: 'g',
      broad: true,
      label: 'broad: title partial (estimated total)',
      params: { title: 'manager', limit: 100 },
    },
  ];
}

/** The catalog queries searchLeads sends for `params` (findLeads: the page and the total), sent directly on the pool. */
function directSearch(sql: Sql, principal: Principal, params: Params) {
  const p = parseLeadSearch(params);
  const filters = filtersOf(p);
  const limit = p.limit ?? 50;
  const page = p.after === undefined ? (p.page ?? 1) : null;
  const afterId = p.after === undefined ? undefined : BigInt(p.after);
  const whereOf = () =>
    where(sql, leadConditions(sql, filters, { accountId: principal.accountId, excludeDelivered: p.excludeDelivered }));
  return {
    both: () =>
      findLeads(
        sql,
        filters,
        { limit, offset: page ? (page - 1) * limit : 0, afterId },
        { accountId: principal.accountId, excludeDelivered: p.excludeDelivered },
      ),
    async page() {
      return selectLeadPage(sql, whereOf(), { limit, offset: page ? (page - 1) * limit : 0, afterId });
    },
  };
}

interface Accounts {
  /** A new account's principal, authenticated through core.auth; plan `growth` unless given. */
  fresh(plan?: Plan): Promise<Principal>;
}

function accounts(core: Core): Accounts {
  let count = 0;
  return {
    async fresh(plan = 'growth') {
      const { apiKey } = await createAccount(core.db, { name: `bench database ${++count}`, plan });
      return core.auth.authenticate(`Bearer ${apiKey}`);
    },
  };
}

/** `totalIsEstimate` of a search answer, when the service gives it. */
const estimateOf = (answer: object): boolean | undefined =>
  'totalIsEstimate' in answer ? Boolean(answer.totalIsEstimate) : undefined;

async function benchSearch(
  core: Core,
  acc: Accounts,
  c: SearchCase,
  goals: DatabaseGoals,
  iterations: number,
  warmups: number,
): Promise<SearchFigures> {
  const principal = await acc.fresh();
  const direct = directSearch(core.sql, principal, c.params);
  // The answers agree before anything is timed (an estimated total need not equal the statement's).
  const first = await searchLeads(core, principal, c.params);
  const totalIsEstimate = estimateOf(first);
  const plain = await direct.both();
  const ids = first.rows.map((r) => r.id);
  const directIds = plain.rows.slice(0, c.params.limit as number).map((r) => r.id);
  if ((!totalIsEstimate && first.total !== plain.total) || ids.join() !== directIds.join()) {
    throw new Error(`(${c.key}) searchLeads and the direct queries disagree: total ${first.total} vs ${plain.total}`);
  }
  let newcomer: Principal | undefined;
  const samples = await timeAlternately(
    {
      service: { run: () => searchLeads(core, principal, c.params) },
      serviceNewLeads: {
        prepare: async () => {
          newcomer = await acc.fresh();
        },
        run: () => searchLeads(core, newcomer!, c.params),
      },
      direct: { run: () => direct.both() },
    },
    iterations,
    warmups,
  );
  const service = timing(samples.service);
  const serviceNewLeads = timing(samples.serviceNewLeads);
  const directTiming = timing(samples.direct);
  return {
    key: c.key,
    label: c.label,
    broad: c.broad,
    params: c.params,
    total: first.total,
    ...(totalIsEstimate === undefined ? {} : { totalIsEstimate }),
    returned: first.rows.length,
    service,
    serviceNewLeads,
    direct: directTiming,
    ratioP50: round(service.p50 / directTiming.p50, 2),
    ratioP95: round(service.p95 / directTiming.p95, 2),
    met: Math.max(service.p95, serviceNewLeads.p95) <= (c.broad ? goals.broadSearchP95Ms : goals.searchP95Ms),
  };
}

// ---------------------------------------------------------------------------------------------
// Paging

/** A broad filter: enough matches for 1,000 pages of 100. */
const PAGING_PARAMS: Params = { country: ['United States'], seniority: ['manager', 'director'], limit: 100 };
/** Page 1,000 of 100; smaller catalogs (quick checks) page as deep as their matches allow. */
const DEEP_PAGE = 1000;

async function benchPaging(
  core: Core,
  acc: Accounts,
  goals: DatabaseGoals,
  iterations: number,
  warmups: number,
): Promise<PagingFigures> {
  const principal = await acc.fresh();
  const sql = core.sql;
  const limit = PAGING_PARAMS.limit as number;
  // The id reached after deepPage − 1 pages: the last id of that page, by the same filters and order.
  const filters = filtersOf(parseLeadSearch(PAGING_PARAMS));
  const whereClause = where(sql, leadConditions(sql, filters));
  const [counted] = await countLeads(sql, whereClause);
  const deepPage = Math.min(DEEP_PAGE, Math.floor(counted!.total / limit));
  if (deepPage < 2) throw new Error(`the paging filter matches only ${counted!.total} people`);
  const [reached] = await sql<{ id: string }[]>`
    select p.id from person p left join company c on c.id = p.company_id where ${where(sql, leadConditions(sql, filters))}
    order by p.id offset ${(deepPage - 1) * limit - 1} limit 1`;
  const afterId = reached!.id;

  const variants = {
    first: { label: 'page 1', params: { ...PAGING_PARAMS } },
    cursor: {
      label: `page ${deepPage.toLocaleString('en-US')} by cursor (after)`,
      params: { ...PAGING_PARAMS, after: afterId },
    },
    offset: {
      label: `page ${deepPage.toLocaleString('en-US')} by offset (page=${deepPage})`,
      params: { ...PAGING_PARAMS, page: deepPage },
    },
  };
  const directs = {
    first: directSearch(sql, principal, variants.first.params),
    cursor: directSearch(sql, principal, variants.cursor.params),
    offset: directSearch(sql, principal, variants.offset.params),
  };
  // Cursor and offset land on the same page.
  const byCursor = await searchLeads(core, principal, variants.cursor.params);
  const byOffset = await searchLeads(core, principal, variants.offset.params);
  if (
    byCursor.rows.map((r) => r.id).join() !== byOffset.rows.map((r) => r.id).join() ||
    byCursor.rows.length !== limit
  ) {
    throw new Error('page 1,000 by cursor and by offset differ');
  }
  const total = byCursor.total;

  const samples = await timeAlternately(
    {
      firstService: { run: () => searchLeads(core, principal, variants.first.params) },
      cursorService: { run: () => searchLeads(core, principal, variants.cursor.params) },
      offsetService: { run: () => searchLeads(core, principal, variants.offset.params) },
      firstDirect: { run: () => directs.first.both() },
      cursorDirect: { run: () => directs.cursor.both() },
      offsetDirect: { run: () => directs.offset.both() },
      firstPage: { run: () => directs.first.page() },
      cursorPage: { run: () => directs.cursor.page() },
      offsetPage: { run: () => directs.offset.page() },
    },
    iterations,
    warmups,
  );
  const figures = (key: 'first' | 'cursor' | 'offset'): PageFigures => ({
    label: variants[key].label,
    params: variants[key].params,
    service: timing(samples[`${key}Service`]),
    direct: timing(samples[`${key}Direct`]),
    pageQuery: timing(samples[`${key}Page`]),
  });
  const first = figures('first');
  const cursor = figures('cursor');
  const offset = figures('offset');
  const cursorRatio = round(cursor.service.p50 / first.service.p50, 2);
  return {
    params: PAGING_PARAMS,
    total,
    deepPage,
    afterId,
    first,
    cursor,
    offset,
    cursorRatio,
    cursorPageQueryRatio: round(cursor.pageQuery.p50 / first.pageQuery.p50, 2),
    offsetRatio: round(offset.service.p50 / first.service.p50, 2),
    offsetPageQueryRatio: round(offset.pageQuery.p50 / first.pageQuery.p50, 2),
    met: cursorRatio <= goals.cursorRatio,
  };
}

// ---------------------------------------------------------------------------------------------
// Enrichment

type Kind = 'email' | 'social' | 'mobile' | 'domain';
const KINDS: Kind[] = ['email', 'social', 'mobile', 'domain'];

/** 1,000 rows from the catalog, 250 per kind, interleaved; half the email rows also carry a (lower-priority) domain. */
async function enrichRows(sql: Sql): Promise<Record<string, string>[]> {
  const per = 250;
  /** `per` rows evenly spread (by id) over what `inner` selects, `phase` rows into each stretch. */
  const spread = <T extends postgres.Row>(inner: string, phase: number) =>
    sql.unsafe<T[]>(`
      select * from (select t.*, row_number() over (order by t.id) as rn, count(*) over () as cnt from (${inner}) t) s
      where (rn - 1) % greatest(cnt / ${per}, 1) = ${phase} % greatest(cnt / ${per}, 1) order by rn limit ${per}`);
  const emails = await spread<{ email: string; domain: string }>(
    'select p.id, p.email, c.domain from person p join company c on c.id = p.company_id where p.email is not null',
    17,
  );
  const socials = await spread<{ url: string }>(
    'select id, linkedin_url as url from person where linkedin_url is not null',
    1303,
  );
  const mobiles = await spread<{ mobile: string }>('select id, mobile from person where mobile is not null', 611);
  const domains = await spread<{ domain: string }>('select id, domain from company', 101);
  if ([emails, socials, mobiles, domains].some((list) => list.length < per))
    throw new Error('the catalog is too small for 250 enrichment rows of each kind');
  const rows: Record<string, string>[] = [];
  for (let i = 0; i < per; i++) {
    const e = emails[i]!;
    rows.push(
      i % 2 === 0
        ? { email: e.email, domain: e.domain, crm_id: `E${i}` }
        : { email: e.email.toUpperCase(), crm_id: `E${i}` },
    );
    // Social URLs as people paste them: sometimes without www, with a trailing slash.
    const url = socials[i]!.url;
    rows.push({ linkedin_url: i % 2 === 0 ? url : `${url.replace('https://www.', 'http://')}/`, crm_id: `S${i}` });
    const digits = mobiles[i]!.mobile.replace(/\D/g, '').slice(-10);
    rows.push({
      mobile: i % 3 === 0 ? `+1 (${digits.slice(0, 3)}) ${digits.slice(3, 6)}-${digits.slice(6)}` : mobiles[i]!.mobile,
      crm_id: `M${i}`,
    });
    rows.push({ website: i % 2 === 0 ? domains[i]!.domain : `https://www.${domains[i]!.domain}/`, crm_id: `D${i}` });
  }
  return rows;
}

const PERSON =
  'p.id, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status, p.phone, p.mobile, p.linkedin_url, p.city, p.state, p.country, p.company_id';

/**
 * The naive baseline: each row on its own, its keys in priority order (email, social URL, mobile,
 * domain), one query per key until one matches (so one query per row here), the person's company
 * joined in the same query; then the same output row as enrichLeads (leadRecord). The same matching
 * rules as enrichLeads: keys normalised alike, the first person by id for an email, social URL or
 * mobile, the most senior for a domain. Only the allowance is left out.
 */
function perRowBaseline(sql: Sql, rows: Record<string, string>[]) {
  const company = `c.id::int as c_id, c.name as c_name, c.domain as c_domain, c.industry as c_industry, c.size_band as c_size_band,
    c.employees_count as c_employees, c.annual_revenue::float8 as c_revenue, c.city as c_city, c.state as c_state, c.country as c_country,
    c.keywords as c_keywords, c.technologies as c_technologies, c.founded as c_founded, c.phone as c_phone,
    c.linkedin_url as c_linkedin, c.twitter_url as c_twitter, c.facebook_url as c_facebook`;
  const person = `select ${PERSON}, ${company} from person p left join company c on c.id = p.company_id`;
  const keysOf = (row: Record<string, string>) => {
    const email = row.email?.trim().toLowerCase();
    const social = row.linkedin_url ?? row.social;
    const mobile = (row.mobile ?? '').replace(/\D/g, '').slice(-10);
    const domain = (row.domain ?? row.website)
      ?.trim()
      .toLowerCase()
      .replace(/^[a-z]+:\/\//, '')
      .replace(/^www\./, '')
      .replace(/[/?#:].*$/, '');
    return {
      email: email && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) ? email : undefined,
      social: social ? normaliseSocialUrl(social) : undefined,
      mobile: mobile.length === 10 ? mobile : undefined,
      domain: domain?.includes('.') ? domain : undefined,
    };
  };
  type Found = LeadRow & Record<`c_${string}`, unknown>;
  const one = (text: string, value: string) => sql.unsafe<Found[]>(text, [value], { prepare: true });
  const lookups: Record<Kind, (value: string) => Promise<Found[]>> = {
    email: (v) => one(`${person} where ${personByEmailSql('p.', '$1')}`, v),
    social: (v) => one(`${person} where lower(p.linkedin_url) = $1 order by p.id limit 1`, v),
    mobile: (v) =>
      one(`${person} where right(regexp_replace(p.mobile, '\\D', '', 'g'), 10) = $1 order by p.id limit 1`, v),
    domain: (v) =>
      one(
        `select ${PERSON}, ${company} from company c join person p on p.company_id = c.id
         where c.domain = $1
         order by ${contactRankSql('p.')}, p.id
         limit 1`,
        v,
      ),
  };
  const companyOf = (f: Found): CompanyRecord | undefined =>
    f.c_id === null
      ? undefined
      : {
          id: f.c_id as number,
          name: f.c_name as string,
          domain: f.c_domain as string,
          industry: f.c_industry as string | null,
          sizeBand: f.c_size_band as string | null,
          employeesCount: f.c_employees as number | null,
          annualRevenue: f.c_revenue as number | null,
          city: f.c_city as string | null,
          state: f.c_state as string | null,
          country: f.c_country as string | null,
          keywords: f.c_keywords as string[],
          technologies: f.c_technologies as string[],
          founded: f.c_founded as number | null,
          phone: f.c_phone as string | null,
          linkedinUrl: f.c_linkedin as string | null,
          twitterUrl: f.c_twitter as string | null,
          facebookUrl: f.c_facebook as string | null,
        };
  return async () => {
    let queries = 0;
    const out: Record<string, unknown>[] = [];
    for (const row of rows) {
      const keys = keysOf(row);
      let enriched: Record<string, unknown> = { ...row, match_status: 'not_found', matched_by: null };
      for (const kind of KINDS) {
        const value = keys[kind];
        if (!value) continue;
        queries += 1;
        const [found] = await lookups[kind](value);
        if (found) {
          const { id: _id, ...record } = leadRecord(found, companyOf(found));
          enriched = { ...row, match_status: 'matched', matched_by: kind, ...record };
          break;
        }
      }
      out.push(enriched);
    }
    return { queries, rows: out };
  };
}

async function benchEnrichment(
  core: Core,
  principal: Principal,
  options: EnrichComparisonOptions,
): Promise<EnrichFigures> {
  const rows = await enrichRows(core.sql);
  const mix = { email: 0, social: 0, mobile: 0, domain: 0 };
  for (const r of rows) mix[r.email ? 'email' : r.linkedin_url ? 'social' : r.mobile ? 'mobile' : 'domain'] += 1;
  const comparison = await compareEnrichment(
    () => enrichLeads(core, principal, { rows }),
    perRowBaseline(core.sql, rows),
    options,
  );
  return { ...comparison, mix };
}

// ---------------------------------------------------------------------------------------------

export async function benchDatabase(options: DatabaseOptions = {}): Promise<DatabaseResult> {
  const scale = options.scale ?? 'large';
  const parts = DATABASE_PARTS.filter((part) => (options.parts ?? DATABASE_PARTS).includes(part));
  const iterations = options.iterations ?? 50;
  const warmups = options.warmups ?? 5;
  const enrichIterations = options.enrichIterations ?? 30;
  const baselineIterations = options.baselineIterations ?? 5;
  const log = options.log ?? progress;
  const goals = goalsAt(scale);
  const loadBefore = os.loadavg().map((x) => round(x, 2));
  const seeded = await seededCatalog({ ...options, scale }, log);
  let core: Core | undefined;
  try {
    // The allowances are raised so that no number of iterations runs them out; they are still taken.
    const config = loopbackConfig(seeded.url, 0, {
      dailyDatabaseRecords: 2_000_000_000,
      dailyEnrichmentMatches: 2_000_000_000,
      authCacheSecs: 3600,
    });
    core = await createCore(config, seeded.url, createLogger('silent'));
    const acc = accounts(core);
    const { people, companies } = await peopleAndCompanies(core.sql);
    const { version, settings } = await serverSettings(core.sql, [
      'shared_buffers',
      'work_mem',
      'effective_cache_size',
      'max_parallel_workers_per_gather',
      'jit',
    ]);

    // Warm: every table and index the benchmark touches is read once before anything is timed.
    log('warming the caches…');
    await core.sql`select count(*) from person`;
    await core.sql`select count(*) from company`;
    if (parts.includes('places')) {
      await core.sql`select count(*) from local_business`;
      await core.sql`select count(*) from local_business_review`;
    }

    const search: SearchFigures[] = [];
    if (parts.includes('searches')) {
      for (const c of await searchCases(core.sql)) {
        log(`search (${c.key}) ${c.label}…`);
        search.push(await benchSearch(core, acc, c, goals, iterations, warmups));
      }
    }
    let paging: PagingFigures | undefined;
    if (parts.includes('paging')) {
      log('paging…');
      paging = await benchPaging(core, acc, goals, iterations, warmups);
    }
    const enrichOptions = { iterations: enrichIterations, baselineIterations, warmups, goals };
    let enrichment: EnrichFigures | undefined;
    if (parts.includes('enrichment')) {
      log('enrichment…');
      enrichment = await benchEnrichment(core, await acc.fresh(), enrichOptions);
    }
    let placesEnrichment: PlacesEnrichFigures | undefined;
    if (parts.includes('places')) {
      log('local-business enrichment…');
      placesEnrichment = await benchPlacesEnrichment(core, await acc.fresh('scale'), enrichOptions);
    }
    log('disk and memory…');
    const used = await footprint(core.sql);
    const typical = search.filter((s) => !s.broad);
    const broad = search.filter((s) => s.broad);
    return {
      date: new Date().toISOString(),
      database: seeded.kind,
      postgres: version,
      settings,
      node: process.version,
      cpus: os.cpus().length,
      loadAverage: { before: loadBefore, after: os.loadavg().map((x) => round(x, 2)) },
      scale,
      people,
      companies,
      seedSeconds: seeded.seedSeconds,
      options: { iterations, warmups, enrichIterations, baselineIterations },
      goals,
      parts,
      search,
      paging,
      enrichment,
      placesEnrichment,
      footprint: used,
      met: {
        ...(parts.includes('searches')
          ? { search: typical.every((s) => s.met), broadSearch: broad.every((s) => s.met) }
          : {}),
        ...(paging ? { paging: paging.met } : {}),
        ...(enrichment ? { enrichTime: enrichment.timeMet, enrichSpeedup: enrichment.speedupMet } : {}),
        ...(placesEnrichment
          ? { placesTime: placesEnrichment.timeMet, placesSpeedup: placesEnrichment.speedupMet }
          : {}),
      },
    };
  } finally {
    await core?.close().catch(() => {});
    await seeded.close().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// The table

const ms = (value: number) => value.toFixed(1);

function formatDatabase(result: DatabaseResult): string {
  const o = result.options;
  const g = result.goals;
  const lines = [
    `Lead database at ${result.scale}: ${n(result.people)} people, ${n(result.companies)} companies (${catalogHeading(result)})`,
    `   ${Object.entries(result.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}; load ${result.loadAverage.before.join(' ')} → ${result.loadAverage.after.join(' ')}`,
    '',
    `1. Searches, limit 100: ${o.iterations} calls per variant after ${o.warmups} warm-ups, alternated; ms`,
    `   service = searchLeads, account that already received the page; new leads = searchLeads, a new account per call;`,
    `   direct = the catalog queries it sends (findLeads: page and total), straight through postgres.js;`,
    `   goals: service p95 ≤ ${g.searchP95Ms} ms, broad searches ≤ ${g.broadSearchP95Ms} ms; "est." marks a total the service gives as an estimate`,
  ];
  const sw = [46, 16, 15, 15, 15, 9, 11];
  lines.push(pad(['search', 'matches', 'service', 'new leads', 'direct', 'svc/dir', 'goal'], sw));
  lines.push(pad(['', '', 'p50 / p95', 'p50 / p95', 'p50 / p95', 'p50', 'p95'], sw));
  for (const s of result.search) {
    lines.push(
      pad(
        [
          `(${s.key}) ${s.label}`,
          `${n(s.total)}${s.totalIsEstimate ? ' est.' : ''}`,
          `${ms(s.service.p50)} / ${ms(s.service.p95)}`,
          `${ms(s.serviceNewLeads.p50)} / ${ms(s.serviceNewLeads.p95)}`,
          `${ms(s.direct.p50)} / ${ms(s.direct.p95)}`,
          `${s.ratioP50.toFixed(2)}×`,
          `≤${s.broad ? g.broadSearchP95Ms : g.searchP95Ms} ${verdict(s.met)}`,
        ],
        sw,
      ),
    );
  }
  for (const s of result.search) lines.push(`   (${s.key}) ${JSON.stringify(s.params)}`);
  // A run without the searches (--parts) keeps only the two heading lines above them.
  if (!result.parts.includes('searches')) lines.splice(2);
  if (result.paging) formatPaging(lines, result.paging, g);
  const e = result.enrichment;
  if (e) {
    const heading = `3. Enrichment of ${n(e.rows)} catalog rows (${KINDS.map((k) => `${e.mix[k]} ${k}`).join(', ')}): ${e.matched} matched (${KINDS.map((k) => `${k} ${e.by[k] ?? 0}`).join(', ')}); ms`;
    formatEnrichment(lines, heading, 'enrichLeads (4 lookups at once + allowance)', e, g);
  }
  const p = result.placesEnrichment;
  if (p) {
    const heading = `4. Local-business enrichment of ${n(p.rows)} rows from ${n(p.places)} places (${PLACE_ROW_KINDS.map((k) => `${p.mix[k]} ${PLACE_ROW_LABELS[k]}`).join(', ')}): ${p.matched} matched (${Object.entries(
      p.by,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}); ms`;
    formatEnrichment(lines, heading, 'enrichLocalBusinesses (3 lookups at once, reviews, allowance)', p, g);
  }
  // Results saved before the footprint was measured have none.
  if (result.footprint) lines.push('', '5. Disk and memory after the run', ...footprintLines(result.footprint));
  return lines.join('\n');
}

function formatPaging(lines: string[], p: PagingFigures, g: DatabaseResult['goals']) {
  lines.push(
    '',
    `2. Paging, limit 100, ${JSON.stringify({ ...p.params, limit: undefined })}: ${n(p.total)} matches; after=${p.afterId} for page ${n(p.deepPage)}; ms`,
  );
  const pw = [36, 15, 15, 15, 9];
  lines.push(pad(['page', 'service', 'direct', 'page query', '×page 1'], pw));
  lines.push(pad(['', 'p50 / p95', 'p50 / p95', 'p50 / p95', 'service'], pw));
  for (const [f, ratio] of [
    [p.first, 1],
    [p.cursor, p.cursorRatio],
    [p.offset, p.offsetRatio],
  ] as const) {
    lines.push(
      pad(
        [
          f.label,
          `${ms(f.service.p50)} / ${ms(f.service.p95)}`,
          `${ms(f.direct.p50)} / ${ms(f.direct.p95)}`,
          `${ms(f.pageQuery.p50)} / ${ms(f.pageQuery.p95)}`,
          `${ratio.toFixed(2)}×`,
        ],
        pw,
      ),
    );
  }
  lines.push(
    `   cursor page ${n(p.deepPage)} = ${p.cursorRatio.toFixed(2)}× page 1 (page query alone ${p.cursorPageQueryRatio.toFixed(2)}×)   goal ≤ ${g.cursorRatio}×: ${verdict(p.met)}`,
    `   offset page ${n(p.deepPage)} = ${p.offsetRatio.toFixed(2)}× page 1 (page query alone ${p.offsetPageQueryRatio.toFixed(2)}×)`,
  );
}

/** An enrichment section: `heading`, then the tool against its per-row baseline. */
function formatEnrichment(
  lines: string[],
  heading: string,
  tool: string,
  e: EnrichComparison,
  g: DatabaseResult['goals'],
) {
  lines.push('', heading);
  const ew = [Math.max(50, tool.length + 2), 9, 9, 9];
  lines.push(pad(['', 'p50', 'p95', 'runs'], ew));
  lines.push(pad([tool, ms(e.bulk.p50), ms(e.bulk.p95), e.bulk.n], ew));
  lines.push(
    pad(
      [
        `per row, priority order (${n(e.perRowQueries)} queries, same rows)`,
        ms(e.perRow.p50),
        ms(e.perRow.p95),
        e.perRow.n,
      ],
      ew,
    ),
  );
  const name = tool.split(' ')[0];
  lines.push(
    `   ${name} p95 ${ms(e.bulk.p95)} ms   goal ≤ ${g.enrichMs} ms: ${verdict(e.timeMet)}`,
    `   per row ÷ ${name} = ${e.speedup.toFixed(1)}× (p50s)   goal ≥ ${g.enrichSpeedup}×: ${verdict(e.speedupMet)}${e.sameMatches ? '   (identical output rows)' : '   (WARNING: the baseline produced other rows)'}`,
  );
}

const PLACE_ROW_LABELS: Record<PlaceRowKind, string> = {
  phone: 'phone',
  nameCity: 'name + city',
  namePostal: 'name + postal code',
  website: 'website',
};

export const database: Suite<DatabaseResult> = {
  name: 'database',
  key: 'databaseApis',
  run: () => benchDatabase(),
  format: formatDatabase,
  goals: (r) => ({ ...r.goals, met: r.met }),
};
