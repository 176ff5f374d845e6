/**
 * The catalog tools at scale: one realistic run of every catalog tool on a catalog seeded at `large`,
 * timed from `startRun` to SUCCEEDED, beside the same rows selected directly in SQL.
 *
 * For every tool (`CASES`: one input chosen by querying the seeded catalog so that it really matches
 * rows, thousands where the tool allows) three things are timed, alternating in rotating order:
 *
 *   tool    startRun (the real service: a scale-plan account, enforceLimits on as in production, so
 *           the account lock, hold, ledger entry, run row, its graphile-worker job and event) and then
 *           executeRun(core, runId) in this process (the engine a worker calls, driven directly so
 *           that no worker poll latency is measured) until it returns with the run SUCCEEDED: every
 *           batch stored in its own transaction (run_item insert, run update, NOTIFY), billed, and the
 *           run settled. A linked run (property lookup's owner contact) is executed right after its
 *           parent and timed on its own.
 *   runner  the tool's runner alone (`tool.run(ctx)` with the same sources and the run's stored
 *           input), its rows built but not stored: where the time goes between source and engine.
 *   sql     the baseline: the same rows selected directly in SQL, through the same postgres.js pool,
 *           fetching the same columns, in as few statements as the rows allow (one, usually; the
 *           equivalent of the source's queries without paging, per-batch round trips or any run
 *           bookkeeping).
 *
 * Before anything is timed, each case runs once through the service and once as SQL, and both must
 * yield the same rows (compared by a key per row: place id, lead id, listing URL…; for lookup tools
 * the rows where something was found); any difference fails the benchmark. Every timed run is checked
 * again (SUCCEEDED, same item count, not stopped by its hold) and each SQL pass must return as many
 * rows. A second untimed pass runs the tool, the runner and the baseline on a client that counts the
 * statements each sends.
 *
 * The catalog is the `database` suite's (`seededCatalog` in bench/lib/harness.ts): seeded once (`reuse`: an embedded Postgres kept
 * in `.data/bench-database`, or `bench_leads_<scale>` on DATABASE_URL's server), shared_buffers 1GB.
 * Runs, their items and jobs are deleted after each timed run, and the bench account at the end.
 */
import os from 'node:os';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Database, Sql } from '../../db/client.ts';
import * as schema from '../../db/tables/index.ts';
import { loopbackConfig } from '../../src/config.ts';
import type { Core } from '../../src/core.ts';
import { createCore } from '../../src/create-core.ts';
import { createLogger } from '../../src/logger.ts';
import { createAccount, type Principal } from '../../src/accounts/accounts.ts';
import { createAccountWrites } from '../../src/accounts/writes.ts';
import { createEventBus } from '../../src/events/bus.ts';
import { parsePlace, US_STATES } from '../../src/shared/geo.ts';
import { classifyContactInput } from '../../src/catalog/leads/contact-inputs.ts';
import { leadConditions, where } from '../../src/catalog/leads/query.ts';
import { stateVariants } from '../../src/catalog/leads/vocabulary.ts';
import { parseBusinessLink } from '../../src/tools/lib/listings/business-links.ts';
import { parseCommercialLink } from '../../src/tools/lib/listings/commercial-links.ts';
import { placeLink } from '../../src/tools/lib/map-links.ts';
import { parseFullName } from '../../src/catalog/people/names.ts';
import { executeRun } from '../../src/runs/engine/index.ts';
import { runStore } from '../../src/runs/store.ts';
import { startRun } from '../../src/runs/start.ts';
import { rootDomain } from '../../src/catalog/stores/domains.ts';
import { storeConditions } from '../../src/catalog/stores/filters.ts';
import { postgresTemplate } from '../../src/catalog/sql.ts';
import { technologyKey } from '../../src/catalog/stores/technologies.ts';
import { createCatalogSources } from '../../src/catalog/table-sources/index.ts';
import type { Sources } from '../../src/sources/types.ts';
import { getTool } from '../../src/tools/index.ts';
import { planLeadSearch } from '../../src/tools/lead-scraper.ts';
import { parseCity } from '../../src/tools/rental-hosts.ts';
import { storeLeadsFilter, storeLeadsInput } from '../../src/tools/store-leads.ts';
import type { Row } from '../../src/tools/types.ts';
import {
  alternate,
  catalogHeading,
  measure,
  median,
  n,
  pad,
  progress,
  round,
  seededCatalog,
  serverSettings,
  type CatalogOptions,
  type DatabaseKind,
  type Suite,
} from './harness.ts';
import type { Scale } from '../../db/seed/index.ts';

export interface ToolsOptions extends CatalogOptions {
  /** Timed runs per variant (tool, runner, SQL), alternated. Default 5. */
  repetitions?: number;
  /** Case keys or tool names to run (default: all). */
  only?: string[];
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
}

/** Milliseconds. */
export interface Timing {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

export interface ToolFigures {
  /** Case key: the tool name, or the tool and what distinguishes a second case of it. */
  key: string;
  tool: string;
  label: string;
  /** The input sent, long lists cut to their first entries and their length. */
  input: Record<string, unknown>;
  /** Rows the run stores (its item count). */
  rows: number;
  /** Rows compared with the baseline (found rows for lookup tools; every row otherwise). */
  compared: number;
  /** Batches the runner yields: one engine transaction each. */
  batches: number;
  /** Statements sent by one tool run (start, engine and source), by the runner alone, and by the baseline. */
  statements: { tool: number; runner: number; sql: number };
  /** startRun → SUCCEEDED. */
  service: Timing;
  runner: Timing;
  sql: Timing;
  /** rows ÷ service median, per second. */
  rowsPerSec: number;
  /** service ÷ sql and runner ÷ sql, medians. */
  ratio: number;
  runnerRatio: number;
}

export interface ToolsResult {
  date: string;
  database: DatabaseKind;
  postgres: string;
  settings: Record<string, string>;
  node: string;
  cpus: number;
  scale: Scale;
  seedSeconds: number | null;
  /** How runs are executed: the engine in this process, no worker. */
  engine: string;
  options: { repetitions: number };
  /**
   * Milliseconds one empty write transaction takes to commit (median of 20: `begin; select
   * txid_current(); commit`), i.e. one WAL flush at this synchronous_commit: what every stored batch pays.
   */
  commitMs: number;
  /** 1-minute load average when the suite started and ended (the machines are shared). */
  load: { start: number; end: number };
  tools: ToolFigures[];
  /** Wall-clock seconds of the suite after seeding. */
  seconds: number;
}

// ---------------------------------------------------------------------------------------------
// Cases

type Baseline = postgres.Row;

interface Measured {
  tool: string;
  /** Key of a stored row to compare, or undefined for rows the baseline has no counterpart of. */
  toolKey: (row: Row) => string | undefined;
  /** The same rows straight from SQL. */
  baseline: (sql: Sql) => Promise<Baseline[]>;
  baselineKey: (row: Baseline) => string | undefined;
  /** Compare the tool's keys with the distinct baseline keys (the tool merges rows, e.g. by root domain). */
  distinct?: boolean;
}

interface Case extends Measured {
  key: string;
  label: string;
  input: Record<string, unknown>;
  /** Untimed, before every tool run and runner pass (e.g. empty a cache the run would answer from). */
  prepare?: (sql: Sql) => Promise<void>;
  /** A run started with this one (property lookup's owner contact): executed after it, timed alone. */
  linked?: Measured & { key: string; label: string; field: string };
}

/** Lists in an input shown by their first entries and length. */
function summarise(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(input).map(([k, v]) => [
      k,
      Array.isArray(v) && v.length > 3 ? [...v.slice(0, 2), `… ${v.length} in all`] : v,
    ]),
  );
}

/** Sends a query built from fragments unprepared, so it is planned for its values (as query.ts's lead search). */
function plannedPerCall<T extends postgres.PendingQuery<postgres.Row[]>>(query: T): T {
  (query as unknown as { options: { prepare?: boolean } }).options.prepare = false;
  return query;
}

const one = <T>(rows: T[], what: string): T => {
  if (!rows[0]) throw new Error(`the catalog has no ${what}`);
  return rows[0];
};

const US_COUNTRY = ['united states', 'us', 'usa', 'united states of america'];

/**
 * One input per catalog tool, read from the seeded catalog so that it matches rows: the broadest
 * realistic search the tool takes, or a list of a few hundred to a few thousand for lookup tools.
 */
async function buildCases(sql: Sql): Promise<Case[]> {
  const q = <T extends postgres.Row>(text: string, params: unknown[] = []) => sql.unsafe<T[]>(text, params as never[]);
  const cases: Case[] = [];

  // Map listings: a broad term, nationwide, 10,000 places (pages of 50).
  {
    const term = 'shop';
    const limit = 10_000;
    cases.push({
      key: 'maps',
      tool: 'maps',
      label: `"${term}" nationwide, ${limit.toLocaleString('en-US')} places`,
      input: { searchStringsArray: [term], maxCrawledPlacesPerSearch: limit },
      toolKey: (r) => r.place_id as string,
      baseline: (s) =>
        s.unsafe(
          `select place_id, id, name, category, street, city, state, postal_code, country_code, lat, lng, phone, website, emails, rating, review_count, opening_hours
           from local_business where search_text @@ plainto_tsquery('english', $1) order by id limit $2`,
          [term, limit],
        ),
      baselineKey: (r) => r.place_id as string,
    });
  }

  // Lead scraper: US managers and directors at 51–500-employee companies, 10,000 leads.
  {
    const url =
      'https://app.apollo.io/#/people?personLocations[]=United%20States&personSeniorities[]=manager&personSeniorities[]=director&organizationNumEmployeesRanges[]=51,200&organizationNumEmployeesRanges[]=201,500';
    const count = 10_000;
    const { filters } = planLeadSearch(url);
    cases.push({
      key: 'lead-scraper',
      tool: 'lead-scraper',
      label: `US managers and directors, 51–500 employees, ${count.toLocaleString('en-US')} leads`,
      input: { url, count },
      toolKey: (r) => String(r.id),
      // One query: the people and their companies, joined (the source reads 1,000 people per query, then their companies).
      baseline: (s) =>
        plannedPerCall(s`
          select p.id, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status, p.phone, p.mobile,
                 p.linkedin_url, p.city, p.state, p.country, p.company_id,
                 c.name as c_name, c.domain as c_domain, c.industry as c_industry, c.size_band as c_size_band, c.employees_count as c_employees,
                 c.annual_revenue::float8 as c_revenue, c.city as c_city, c.state as c_state, c.country as c_country, c.keywords as c_keywords,
                 c.technologies as c_technologies, c.founded as c_founded, c.phone as c_phone, c.linkedin_url as c_linkedin,
                 c.twitter_url as c_twitter, c.facebook_url as c_facebook
          from person p left join company c on c.id = p.company_id
          where ${where(s, leadConditions(s, filters))}
          order by p.id
          limit ${count}`),
      baselineKey: (r) => String(r.id),
    });
  }

  // Store leads: shopify stores in the US with an email (the default), 5,000 leads.
  {
    const input = { platform: 'shopify', countryCode: 'US', totalLeads: 5_000 };
    const filter = storeLeadsFilter(storeLeadsInput.parse(input));
    cases.push({
      key: 'store-leads',
      tool: 'store-leads',
      label: 'shopify, US, with email, 5,000 leads',
      input,
      toolKey: (r) => r.domain as string,
      baseline: (s) => {
        const conditions = storeConditions(postgresTemplate(s), filter);
        const whereClause = conditions.slice(1).reduce((acc, c) => s`${acc} and ${c}`, conditions[0]!);
        return plannedPerCall(s`
          select domain, id, name, platform, plan_tier, country_code, city, state, category, technologies, apps, instagram_url, facebook_url,
                 tiktok_url, youtube_url, linkedin_url, twitter_url, pinterest_url, emails, phones, estimated_monthly_visits,
                 estimated_monthly_sales, employee_count
          from store where ${whereClause} order by id limit ${input.totalLeads}`);
      },
      baselineKey: (r) => r.domain as string,
    });
  }

  // Home services: the largest category nationwide, every listing (maxItems 0).
  {
    const { category, n } = one(
      await q<{ category: string; n: number }>(
        `select category, count(*)::int as n from home_service_pro group by 1 order by 2 desc, 1 limit 1`,
      ),
      'home-service pros',
    );
    cases.push({
      key: 'home-services',
      tool: 'home-services',
      label: `"${category}" nationwide, every listing (${n})`,
      input: { keyword: category, maxItems: 0 },
      toolKey: (r) => r.profile_url as string,
      baseline: (s) =>
        s.unsafe(
          `select profile_url, id, name, category, grade, phone, email, website, street, city, state, zip, hours, licensed, insured,
                  years_in_business, service_zips, rating, review_count
           from home_service_pro where category = $1 order by id`,
          [category],
        ),
      baselineKey: (r) => r.profile_url as string,
    });
  }

  // Businesses for sale: the two states with most listings, all available (maxItems 99999).
  {
    const states = await q<{ state: string }>(
      `select state from business_listing group by 1 order by count(*) desc, 1 limit 2`,
    );
    const urls = states.map(
      ({ state }) =>
        `https://www.bizlistings.net/businesses-for-sale/${US_STATES[state]!.toLowerCase().replace(/\s+/g, '-')}`,
    );
    for (const [i, url] of urls.entries()) {
      const link = parseBusinessLink(url);
      if (link.kind !== 'search' || link.filters.state !== states[i]!.state || Object.keys(link.filters).length !== 1)
        throw new Error(`${url} is not read as a search of ${states[i]!.state}`);
    }
    cases.push({
      key: 'business-for-sale',
      tool: 'business-for-sale',
      label: `2 state search pages (${states.map((s) => s.state).join(', ')}), all available`,
      input: { startUrls: urls, maxItems: 99_999 },
      toolKey: (r) => r.listing_url as string,
      baseline: (s) =>
        s.unsafe(
          `select listing_url, id, title, category, city, state, country, asking_price, revenue, ebitda, cash_flow, established, employees,
                  description, broker_name, broker_company, broker_phone, broker_email, listed_at
           from business_listing where state = any($1::text[]) order by array_position($1::text[], state), id`,
          [states.map((s) => s.state)],
        ),
      baselineKey: (r) => r.listing_url as string,
    });
  }

  // Tech stack: the technology with most websites among the stores and companies running it.
  {
    const { name } = one(
      await q<{ name: string }>(`
        with s as (select t, count(*) as n from store, unnest(technologies) t group by 1),
             c as (select t, count(*) as n from company, unnest(technologies) t group by 1)
        select s.t as name from s join c using (t) order by s.n + c.n desc, 1 limit 1`),
      'technology used by stores and companies',
    );
    // The stored spellings the tool matches: every name with the same key, in either dataset.
    const key = technologyKey(name);
    const spellings = (
      await q<{ name: string }>(
        `select distinct unnest(technologies) as name from store union select distinct unnest(technologies) from company`,
      )
    )
      .map((r) => r.name)
      .filter((n) => technologyKey(n) === key);
    const apps = (await q<{ name: string }>(`select distinct unnest(apps) as name from store`)).filter(
      (r) => technologyKey(r.name) === key,
    );
    if (apps.length > 0) throw new Error(`"${name}" is also a store app; pick a technology only`);
    const matched = (column: string) =>
      `array_remove(array[${spellings.map((_, i) => `case when ${column} @> array[$${i + 2}::text] then $${i + 2}::text end`).join(', ')}]::text[], null)`;
    cases.push({
      key: 'tech-stack',
      tool: 'tech-stack',
      label: `"${name}" (lookup, cache emptied before each run)`,
      input: { technology: name },
      prepare: async (s) => {
        await s`delete from tool_cache where tool = 'tech-stack'`;
      },
      toolKey: (r) => r.domain as string,
      // Stores and companies running it; the tool then merges them by root domain (not SQL: the public suffix list).
      baseline: async (s) => {
        const stores = await s.unsafe(
          `select domain, id, name, platform, category, country_code, null::text as country, city, state, ${matched('technologies')} as matched
           from store where technologies && $1::text[] order by id`,
          [spellings, ...spellings],
        );
        const companies = await s.unsafe(
          `select domain, id, name, null::text as platform, industry as category, null::text as country_code, country, city, state, ${matched('technologies')} as matched
           from company where technologies && $1::text[] order by id`,
          [spellings, ...spellings],
        );
        return [...stores, ...companies];
      },
      baselineKey: (r) => rootDomain(r.domain as string) ?? (r.domain as string).trim().toLowerCase(),
      distinct: true,
    });
  }

  // Commercial properties: 48 market searches (24 markets, for sale and for lease), 200 properties each.
  {
    const markets = await q<{ market: string }>(
      `select market from commercial_property group by 1 order by count(*) desc, 1 limit 24`,
    );
    const searches = markets.flatMap(({ market }) =>
      (['sale', 'lease'] as const).map((type) => ({
        market,
        type,
        url: `https://www.crelistings.net/search/for-${type}?market=${encodeURIComponent(market)}`,
      })),
    );
    for (const s of searches) {
      const { filters } = parseCommercialLink(s.url);
      if (
        filters.market !== s.market.toLowerCase() ||
        filters.listingType !== s.type ||
        Object.keys(filters).length !== 2
      ) {
        throw new Error(`${s.url} is read as ${JSON.stringify(filters)}`);
      }
    }
    const perUrl = 200;
    cases.push({
      key: 'commercial-property',
      tool: 'commercial-property',
      label: `${searches.length} market searches (${markets.length} markets × sale/lease), ${perUrl} each`,
      input: { startUrls: searches.map((s) => s.url) },
      toolKey: (r) => r.listing_url as string,
      baseline: (s) =>
        s.unsafe(
          `select p.* from unnest($1::text[], $2::text[]) with ordinality as q(market, type, n)
           cross join lateral (
             select listing_url, id, title, property_type, listing_type, street, city, state, zip, market, lat, lng, price, size_sqft,
                    broker_name, broker_company, broker_phone, broker_email, broker_licence
             from commercial_property c where lower(c.market) = q.market and c.listing_type = q.type order by c.id limit ${perUrl}
           ) p order by q.n, p.id`,
          [searches.map((x) => x.market.toLowerCase()), searches.map((x) => x.type)],
        ),
      baselineKey: (r) => r.listing_url as string,
    });
  }

  // Realty agents: the city with most agents, the maximum of 500.
  {
    const { city, state } = one(
      await q<{ city: string; state: string }>(
        `select min(city) as city, state from real_estate_agent group by state, lower(city) order by count(*) desc, 1 limit 1`,
      ),
      'agents',
    );
    cases.push({
      key: 'realty-agents',
      tool: 'realty-agents',
      label: `${city}, ${state}, 500 agents`,
      input: { location: `${city}, ${state}`, searchLimit: 500 },
      toolKey: (r) => r.profile_url as string,
      baseline: (s) =>
        s.unsafe(
          `select profile_url, id, name, brokerage, license_number, phone, email, city, state, zip, specialties, languages, years_experience,
                  rating, review_count, sales_last_12_months, price_range_min, price_range_max
           from real_estate_agent where state = $1 and lower(city) = lower($2) order by id limit 500`,
          [state, city],
        ),
      baselineKey: (r) => r.profile_url as string,
    });
  }

  // Local reviews, searched: the two largest categories in every city of the catalog, 50 businesses each.
  const reviewColumns = `r.review_key, r.author, r.rating, r.text, r.published_at::text as date,
    b.place_id, b.name, b.category, b.street, b.city, b.state, b.postal_code, b.phone, b.website, b.rating as business_rating, b.review_count`;
  const latestReviews = (perPlace: number) => `cross join lateral (
      select review_key, author, rating, text, published_at, id from local_business_review r
      where r.business_id = b.id order by r.published_at desc, r.id desc limit ${perPlace}) r`;
  {
    const terms = ['gym', 'veterinarian'];
    const cities = await q<{ city: string; state: string }>(
      `select city, state from local_business group by 1, 2 order by count(*) desc, 1`,
    );
    const locations = cities.map((c) => `${c.city}, ${c.state}`);
    const combos = terms.flatMap((term) =>
      locations.map((location) => {
        const area = parsePlace(location);
        if (area.kind !== 'place' || !area.city || !area.state || area.postalCode)
          throw new Error(`"${location}" is not read as a city and state`);
        return { term, city: area.city, state: area.state };
      }),
    );
    const searchLimit = 50;
    const perPlace = 20;
    cases.push({
      key: 'local-reviews',
      tool: 'local-reviews',
      label: `${terms.length} terms × ${locations.length} cities, ${searchLimit} businesses each, ≤ ${perPlace} reviews`,
      input: { searchTerms: terms, locations, searchLimit, maxReviewsPerBusiness: perPlace },
      toolKey: (r) => r.review_id as string,
      baseline: (s) =>
        s.unsafe(
          `select ${reviewColumns}
           from unnest($1::text[], $2::text[], $3::text[]) with ordinality as q(term, city, state, n)
           cross join lateral (
             select * from local_business b
             where b.search_text @@ plainto_tsquery('english', q.term) and lower(b.city) = lower(q.city) and b.state = q.state
             order by b.id limit ${searchLimit}) b
           ${latestReviews(perPlace)}
           order by q.n, b.id, r.published_at desc, r.id desc`,
          [combos.map((c) => c.term), combos.map((c) => c.city), combos.map((c) => c.state)],
        ),
      baselineKey: (r) => r.review_key as string,
    });
  }

  // Local reviews by business URL: 500 place links (the most one request takes), spread over the catalog.
  {
    const places = await q<{ place_id: string }>(`
      select place_id from (select place_id, row_number() over (order by id) as rn, count(*) over () as cnt from local_business where review_count > 0) t
      where (rn - 1) % greatest(cnt / 500, 1) = 0 order by rn limit 500`);
    const perPlace = 20;
    cases.push({
      key: 'local-reviews (urls)',
      tool: 'local-reviews',
      label: `${places.length} place links, ≤ ${perPlace} reviews each`,
      input: { directUrls: places.map((p) => placeLink(p.place_id)), maxReviewsPerBusiness: perPlace },
      toolKey: (r) => r.review_id as string,
      baseline: (s) =>
        s.unsafe(
          `select ${reviewColumns}
           from unnest($1::text[]) with ordinality as q(place_id, n)
           join local_business b on b.place_id = q.place_id
           ${latestReviews(perPlace)}
           order by q.n, r.published_at desc, r.id desc`,
          [places.map((p) => p.place_id)],
        ),
      baselineKey: (r) => r.review_key as string,
    });
  }

  // Rental hosts: the five cities with most listings, 100 pages of 20 each.
  {
    const regions = new Intl.DisplayNames(['en'], { type: 'region' });
    const cities = await q<{ city: string; country_code: string }>(
      `select city, country_code from rental_listing group by 1, 2 order by count(*) desc, 1 limit 5`,
    );
    const texts = cities.map((c) => `${c.city}, ${regions.of(c.country_code) ?? c.country_code}`);
    for (const [i, text] of texts.entries()) {
      const parsed = parseCity(text);
      if (parsed.countryCode !== cities[i]!.country_code) throw new Error(`"${text}" is read as ${parsed.countryCode}`);
    }
    const maxPages = 100;
    cases.push({
      key: 'rental-hosts',
      tool: 'rental-hosts',
      label: `${texts.length} cities, ${maxPages} pages of 20 each`,
      input: { city: texts, maxPages },
      toolKey: (r) => r.listing_url as string,
      baseline: (s) =>
        s.unsafe(
          `select l.* from unnest($1::text[], $2::text[]) with ordinality as q(city, country_code, n)
           cross join lateral (
             select l.listing_url, l.id, l.title, l.city, l.country, l.country_code, l.lat, l.lng, l.price_per_night, l.currency, l.amenities,
                    l.bedrooms, l.guests, l.rating, l.review_count,
                    h.host_key, h.name as host_name, h.email as host_email, h.phone as host_phone, h.is_pro, h.is_superhost, h.listings_count
             from rental_listing l join rental_host h on h.id = l.host_id
             where lower(l.city) = lower(q.city) and l.country_code = q.country_code
             order by l.id limit ${maxPages * 20}
           ) l order by q.n, l.id`,
          [cities.map((c) => c.city), cities.map((c) => c.country_code)],
        ),
      baselineKey: (r) => r.listing_url as string,
    });
  }

  // Property lookup: 1,000 addresses (the maximum), 900 written in full and 100 as "street, zip" only
  // (each the only such street number in its zip), with the owner contact run.
  {
    const properties = await q<{
      id: string;
      address_key: string;
      street: string;
      city: string;
      state: string;
      zip: string;
      unique_in_zip: boolean;
    }>(`
      select id, address_key, street, city, state, zip, unique_in_zip from (
        select p.*, row_number() over (order by id) as rn, count(*) over () as cnt,
               count(*) over (partition by zip, split_part(street, ' ', 1)) = 1 as unique_in_zip
        from property p) t
      where (rn - 1) % greatest(cnt / 1000, 1) = 7 % greatest(cnt / 1000, 1) order by rn limit 1000`);
    let partial = 0;
    const addresses = properties.map((p, i) => {
      if (partial < 100 && p.unique_in_zip && i % 9 === 4) {
        partial += 1;
        return `${p.street}, ${p.zip}`;
      }
      return `${p.street}, ${p.city}, ${p.state} ${p.zip}`;
    });
    const keys = properties.map((p) => p.address_key);
    const addressKey = (r: Row | Baseline) =>
      r.status === undefined || r.status === 'found' ? `${r.street}|${r.city}|${r.state}|${r.zip}` : undefined;
    cases.push({
      key: 'property-lookup',
      tool: 'property-lookup',
      label: `${addresses.length} addresses (${addresses.length - partial} full, ${partial} street and zip), with owner contact`,
      input: { addresses, includeOwnerContact: true },
      toolKey: addressKey,
      baseline: (s) =>
        s.unsafe(
          `select id, address_key, street, city, state, zip, lat, lng, property_type, beds, baths, sqft, lot_sqft, year_built, estimated_value,
                  listing_status, list_price, days_on_market, last_sold_date, last_sold_price, price_history, tax_history, comparables, schools,
                  owner_name, owner_mailing_address
           from property where address_key = any($1::text[])`,
          [keys],
        ),
      baselineKey: addressKey,
      linked: {
        key: 'property-owner-contact',
        tool: 'property-owner-contact',
        label: 'the linked owner-contact run of the same 1,000 addresses',
        field: 'ownerContactRunId',
        toolKey: addressKey,
        baseline: (s) =>
          s.unsafe(
            `select id, address_key, street, city, state, zip, owner_name, owner_mailing_address, owner_phones, owner_emails
             from property where address_key = any($1::text[])`,
            [keys],
          ),
        baselineKey: addressKey,
      },
    });
  }

  // Criminal records: the most frequent name, all states.
  {
    const { first_name, last_name, n } = one(
      await q<{ first_name: string; last_name: string; n: number }>(`
        select min(first_name) as first_name, min(last_name) as last_name, count(*)::int as n from criminal_record
        group by lower(last_name), lower(first_name) order by 3 desc, 1, 2 limit 1`),
      'criminal records',
    );
    const name = `${first_name} ${last_name}`;
    const parsed = parseFullName(name)!;
    cases.push({
      key: 'criminal-records',
      tool: 'criminal-records',
      label: `"${name}", all states (${n} records)`,
      input: { name },
      toolKey: (r) => r.record_id as string,
      baseline: (s) =>
        s.unsafe(
          `select record_key, id, first_name, middle_name, last_name, date_of_birth, state, county, source, case_number, offense, offense_date, disposition
           from criminal_record where lower(last_name) = $1 and lower(first_name) = $2 order by id`,
          [parsed.last, parsed.first],
        ),
      baselineKey: (r) => r.record_key as string,
    });
  }

  // Mobile finder: 5,000 inputs, 2,500 work emails and 2,500 profile URLs of other people, spread over the catalog.
  {
    const people = await q<{ id: string; email: string | null; linkedin_url: string | null }>(`
      select id, email, linkedin_url from (
        select id, email, linkedin_url, row_number() over (order by id) as rn, count(*) over () as cnt
        from person where email is not null and linkedin_url is not null) t
      where (rn - 1) % greatest(cnt / 5000, 1) = 3 % greatest(cnt / 5000, 1) order by rn limit 5000`);
    const inputs = people.map((p, i) => (i % 2 === 0 ? p.email! : p.linkedin_url!.replace('https://www.', 'https://')));
    const keys = inputs.map(classifyContactInput);
    const emails = keys.flatMap((k) => (k.kind === 'email' ? [k.key] : []));
    const socials = keys.flatMap((k) => (k.kind === 'social_url' ? [k.key] : []));
    if (emails.length + socials.length !== inputs.length)
      throw new Error('some mobile finder inputs are not recognised');
    const contactsBy = (s: Sql, column: 'email' | 'linkedin_url', values: string[]) =>
      s.unsafe(
        `select distinct on (lower(p.${column})) lower(p.${column}) as k,
                p.id::int as id, p.first_name, p.last_name, p.title, p.email, p.mobile, p.linkedin_url, p.city, p.state, p.country,
                c.name as company_name, c.domain as company_domain
         from person p left join company c on c.id = p.company_id
         where lower(p.${column}) = any($1::text[])
         order by lower(p.${column}), p.mobile is null, p.id`,
        [values],
      );
    cases.push({
      key: 'mobile-finder',
      tool: 'mobile-finder',
      label: `${inputs.length.toLocaleString('en-US')} inputs (${emails.length} emails, ${socials.length} profile URLs)`,
      input: { inputs },
      // Rows of people found with a mobile number (the billed rows).
      toolKey: (r) => (r.status === 'found' ? `${r.full_name}|${r.mobile}` : undefined),
      baseline: async (s) => [
        ...(await contactsBy(s, 'email', emails)),
        ...(await contactsBy(s, 'linkedin_url', socials)),
      ],
      baselineKey: (r) => (r.mobile ? `${r.first_name} ${r.last_name}|${r.mobile}` : undefined),
    });
  }

  // People finder: the most frequent name in one state of the lead database, 100 results at most.
  {
    const { first, last, state } = one(
      await q<{ first: string; last: string; state: string }>(
        `
        select min(first_name) as first, min(last_name) as last, upper(state) as state from person
        where lower(country) = any($1::text[]) and length(state) = 2
        group by lower(first_name), lower(last_name), upper(state) order by count(*) desc, 1, 2, 3 limit 1`,
        [US_COUNTRY],
      ),
      'people in the US',
    );
    const name = parseFullName(`${first} ${last}`)!;
    const maxResults = 100;
    const likeEscape = (text: string) => text.replace(/[\\%_]/g, '\\$&');
    const regexEscape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const entity = String.raw`\m(llc|inc|corp|corporation|company|ltd|lp|llp|trust|holdings|properties|partners|partnership|bank|group)\M`;
    cases.push({
      key: 'people-finder',
      tool: 'people-finder',
      label: `"${first} ${last}" in ${state}, ≤ ${maxResults} results`,
      input: { name: `${first} ${last}`, state, maxResults },
      toolKey: (r) => r.person_id as string,
      // The source's two searches, each in one statement: property owners (its query, with this name and state), then lead database people.
      baseline: async (s) => {
        const owners = await s.unsafe(
          `with matched as materialized (
             select distinct p.owner_name, coalesce(p.owner_mailing_address, '') as mailing from property p
             where p.owner_name is not null and lower(p.owner_name) like $1 and lower(p.owner_name) like $2
               and ((p.state = $3) or (p.owner_mailing_address ~ $4))
               and regexp_replace(regexp_replace(lower(p.owner_name), '[.,]', '', 'g'), '\\s+', ' ', 'g') ~ $5
           ),
           page as (
             select p.owner_name, m.mailing, min(p.id) as id,
                    jsonb_agg(jsonb_build_object('address', p.street || ', ' || p.city || ', ' || p.state || ' ' || p.zip,
                                                 'phones', p.owner_phones, 'emails', p.owner_emails) order by p.id) as holdings
             from property p join matched m on p.owner_name = m.owner_name and coalesce(p.owner_mailing_address, '') = m.mailing
             where m.owner_name !~* $6
             group by p.owner_name, m.mailing order by min(p.id) limit $7
           ),
           kin as (
             select g.id, array_agg(distinct r.owner_name order by r.owner_name) filter (
                      where lower(r.owner_name) <> lower(g.owner_name)
                        and lower(substring(r.owner_name from '(\\S+)\\s*$')) = lower(substring(g.owner_name from '(\\S+)\\s*$'))
                        and r.owner_name !~* $6) as relatives
             from page g join property r on lower(r.owner_mailing_address) = lower(g.mailing)
             where g.mailing <> '' group by g.id
           )
           select 'owner-' || g.id as person_id, g.owner_name, g.mailing, g.holdings, coalesce(k.relatives, '{}') as relatives
           from page g left join kin k on k.id = g.id order by g.id`,
          [
            `${likeEscape(name.first)} %`,
            `%${likeEscape(name.last)}%`,
            state,
            `, ${state}( \\d{5}(-\\d{4})?)?$`,
            `^${regexEscape(name.first)}( \\S+)* ${regexEscape(name.last)}( (jr|sr|ii|iii|iv|v))?$`,
            entity,
            maxResults,
          ],
        );
        const leads = await s.unsafe(
          `select 'lead-' || p.id as person_id, p.first_name, p.last_name, p.email, p.mobile, p.city, p.state, p.title, c.name as employer
           from person p left join company c on c.id = p.company_id
           where lower(p.first_name) = $1 and lower(p.last_name) = $2 and lower(p.country) = any($3::text[]) and lower(p.state) = any($4::text[])
           order by p.id limit $5`,
          [name.first, name.last, US_COUNTRY, stateVariants(US_STATES[state] ?? state), maxResults - owners.length],
        );
        return [...owners, ...leads];
      },
      baselineKey: (r) => r.person_id as string,
    });
  }

  // Deal finder: the state with most homes for sale at least 5 % below their estimate, every deal.
  {
    const minDiscountPercent = 5;
    const { state, n } = one(
      await q<{ state: string; n: number }>(
        `select state, count(*)::int as n from property
         where listing_status = 'for_sale' and estimated_value > 0 and list_price * 100 <= estimated_value * (100 - $1::numeric)
         group by 1 order by 2 desc, 1 limit 1`,
        [minDiscountPercent],
      ),
      'homes for sale',
    );
    const maxItems = 10_000;
    cases.push({
      key: 'deal-finder',
      tool: 'deal-finder',
      label: `${US_STATES[state]}, ≥ ${minDiscountPercent} % below estimate, every deal (${n})`,
      input: { location: US_STATES[state]!, minDiscountPercent, maxItems },
      toolKey: (r) => `${r.street}|${r.city}|${r.state}|${r.zip}`,
      baseline: (s) =>
        s.unsafe(
          `select id, address_key, street, city, state, zip, lat, lng, property_type, beds, baths, sqft, year_built, list_price, estimated_value,
                  ((estimated_value - list_price)::numeric / estimated_value)::text as discount, days_on_market, last_sold_date, last_sold_price
           from property
           where listing_status = 'for_sale' and state = $1 and estimated_value > 0 and list_price * 100 <= estimated_value * (100 - $2::numeric)
           order by (estimated_value - list_price)::numeric / estimated_value desc, id limit $3`,
          [state, minDiscountPercent, maxItems],
        ),
      baselineKey: (r) => `${r.street}|${r.city}|${r.state}|${r.zip}`,
    });
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
// Running

/** The engine's dependencies on a client that counts the statements it sends (for the untimed counting pass). */
interface Counting {
  deps: Pick<Core, 'db' | 'events' | 'logger' | 'sources' | 'config' | 'accountWrites' | 'network'>;
  sql: Sql;
  count<T>(fn: () => Promise<T>): Promise<{ value: T; statements: number }>;
  close(): Promise<void>;
}

async function countingDeps(url: string, core: Core): Promise<Counting> {
  let statements = 0;
  const sql = postgres(url, {
    max: 4,
    onnotice: () => {},
    debug: () => {
      statements += 1;
    },
  });
  const db = drizzle(sql, { schema });
  const events = createEventBus(sql);
  await events.ready;
  return {
    deps: {
      db,
      events,
      logger: core.logger,
      sources: createCatalogSources(db, core.network),
      config: core.config,
      accountWrites: createAccountWrites(db, { group: core.config.enforceLimits }),
      network: core.network,
    },
    sql,
    async count(fn) {
      const before = statements;
      const value = await fn();
      return { value, statements: statements - before };
    },
    async close() {
      await events.close().catch(() => {});
      await sql.end({ timeout: 5 });
    },
  };
}

interface ToolRun {
  /** The run (and its linked run) as stored. */
  runs: { id: string; tool: string; status: string; item_count: number; status_message: string; input: unknown }[];
  /** Milliseconds: start and the run; the linked run alone. */
  ms: number;
  linkedMs?: number;
}

async function startAndExecute(
  deps: Pick<Core, 'db' | 'events' | 'logger' | 'sources' | 'config' | 'accountWrites' | 'network'>,
  sql: Sql,
  principal: Principal,
  c: Case,
): Promise<ToolRun> {
  const t0 = performance.now();
  const started = await startRun(deps, principal, c.tool, c.input);
  await executeRun(deps, started.run.id);
  const ms = performance.now() - t0;
  const ids = [started.run.id];
  let linkedMs: number | undefined;
  if (c.linked) {
    const linkedId = started.start.extra?.[c.linked.field] as string | undefined;
    if (!linkedId) throw new Error(`${c.key}: the start response has no ${c.linked.field}`);
    const t1 = performance.now();
    await executeRun(deps, linkedId);
    linkedMs = performance.now() - t1;
    ids.push(linkedId);
  }
  const runs = await sql<
    ToolRun['runs']
  >`select id, tool, status, item_count, status_message, input from run where id = any(${ids}) order by array_position(${ids}::text[], id)`;
  for (const run of runs) {
    if (run.status !== 'SUCCEEDED' || run.status_message.startsWith('Stopped after'))
      throw new Error(`${c.key}: run ${run.id} (${run.tool}) ended ${run.status}: ${run.status_message}`);
  }
  return { runs, ms, linkedMs };
}

/** Deletes runs (their items and linked runs cascade) and their worker jobs. */
async function removeRuns(sql: Sql, ids: string[]) {
  await sql`select graphile_worker.remove_job(id) from unnest(${ids}::text[]) id`;
  await sql`delete from run where id = any(${ids})`;
}

async function storedRows(sql: Sql, runId: string): Promise<Row[]> {
  return (await sql<{ data: Row }[]>`select data from run_item where run_id = ${runId} order by seq`).map(
    (r) => r.data,
  );
}

/** The runner alone, as the engine calls it, with the run's stored input; rows built, not stored. */
async function runRunner(sources: Sources, db: Database, accountId: string, toolName: string, storedInput: unknown) {
  const tool = getTool(toolName);
  const input = tool.input.parse(storedInput);
  const runId = `bench-runner-${toolName}`;
  let rows = 0;
  let batches = 0;
  const signal = new AbortController().signal;
  for await (const batch of tool.run({
    runId,
    accountId,
    input,
    sources,
    store: runStore(db, accountId, runId, tool),
    startedAt: new Date(),
    startAt: 0,
    signal,
  })) {
    rows += batch.rows.length;
    batches += 1;
  }
  return { rows, batches };
}

function compareKeys(
  what: string,
  toolKeys: (string | undefined)[],
  baselineKeys: (string | undefined)[],
  distinct: boolean,
): number {
  const a = toolKeys.filter((k): k is string => k !== undefined).sort();
  let b = baselineKeys.filter((k): k is string => k !== undefined);
  if (distinct) b = [...new Set(b)];
  b.sort();
  if (a.length !== b.length || a.some((k, i) => k !== b[i])) {
    const missing = b.filter((k) => !new Set(a).has(k)).slice(0, 3);
    const extra = a.filter((k) => !new Set(b).has(k)).slice(0, 3);
    throw new Error(
      `${what}: the tool produced ${a.length} rows to compare, the SQL baseline ${b.length}; only in SQL: ${JSON.stringify(missing)}, only in the run: ${JSON.stringify(extra)}`,
    );
  }
  return a.length;
}

const timing = (samples: number[]): Timing => ({
  median: round(median(samples), 1),
  min: round(Math.min(...samples), 1),
  max: round(Math.max(...samples), 1),
  samples: samples.map((s) => round(s, 1)),
});

async function benchCase(
  core: Core,
  counting: Counting,
  principal: Principal,
  c: Case,
  repetitions: number,
  log: (line: string) => void,
): Promise<ToolFigures[]> {
  const sql = core.sql;
  // Verification (and warm-up): the run's rows and the baseline's are the same rows.
  await c.prepare?.(sql);
  const check = await startAndExecute(core, sql, principal, c);
  const [main, linked] = check.runs;
  const mainRows = await storedRows(sql, main!.id);
  const linkedRows = linked ? await storedRows(sql, linked.id) : [];
  await removeRuns(
    sql,
    check.runs.map((r) => r.id),
  );
  const baseline = await c.baseline(sql);
  const compared = compareKeys(c.key, mainRows.map(c.toolKey), baseline.map(c.baselineKey), c.distinct ?? false);
  let linkedCompared = 0;
  let linkedBaseline: Baseline[] = [];
  if (c.linked && linked) {
    linkedBaseline = await c.linked.baseline(sql);
    linkedCompared = compareKeys(
      c.linked.key,
      linkedRows.map(c.linked.toolKey),
      linkedBaseline.map(c.linked.baselineKey),
      c.linked.distinct ?? false,
    );
  }
  const runner = await runRunner(core.sources, core.db, principal.accountId, c.tool, main!.input);
  if (runner.rows !== main!.item_count)
    throw new Error(`${c.key}: the runner alone produced ${runner.rows} rows, the run ${main!.item_count}`);
  const linkedRunner = c.linked
    ? await runRunner(core.sources, core.db, principal.accountId, c.linked.tool, linked!.input)
    : undefined;
  if (linkedRunner && linkedRunner.rows !== linked!.item_count)
    throw new Error(
      `${c.linked!.key}: the runner alone produced ${linkedRunner.rows} rows, the run ${linked!.item_count}`,
    );
  log(
    `  ${c.key}: ${main!.item_count} rows (${compared} compared with SQL${linked ? `; linked ${linked.item_count}, ${linkedCompared} compared` : ''}), ${Math.round(check.ms)} ms`,
  );

  // Statements, counted on a client of their own (untimed).
  await c.prepare?.(counting.sql);
  const countedRun = await counting.count(() => startAndExecute(counting.deps, counting.sql, principal, c));
  await removeRuns(
    sql,
    countedRun.value.runs.map((r) => r.id),
  );
  await c.prepare?.(counting.sql);
  const countedRunner = await counting.count(() =>
    runRunner(counting.deps.sources, counting.deps.db, principal.accountId, c.tool, main!.input),
  );
  const countedSql = await counting.count(() => c.baseline(counting.sql));
  const countedLinkedRunner = c.linked
    ? await counting.count(() =>
        runRunner(counting.deps.sources, counting.deps.db, principal.accountId, c.linked!.tool, linked!.input),
      )
    : undefined;
  const countedLinkedSql = c.linked ? await counting.count(() => c.linked!.baseline(counting.sql)) : undefined;

  // Timed: tool, runner, SQL (and the linked run's runner and SQL), alternating in rotating order.
  const samples: Record<'tool' | 'runner' | 'sql' | 'linked' | 'linkedRunner' | 'linkedSql', number[]> = {
    tool: [],
    runner: [],
    sql: [],
    linked: [],
    linkedRunner: [],
    linkedSql: [],
  };
  const variants: Record<string, () => Promise<void>> = {
    tool: async () => {
      await c.prepare?.(sql);
      const run = await startAndExecute(core, sql, principal, c);
      await removeRuns(
        sql,
        run.runs.map((r) => r.id),
      );
      if (run.runs[0]!.item_count !== main!.item_count || (linked && run.runs[1]!.item_count !== linked.item_count))
        throw new Error(`${c.key}: a timed run stored another number of rows`);
      samples.tool.push(run.ms);
      if (run.linkedMs !== undefined) samples.linked.push(run.linkedMs);
    },
    runner: async () => {
      await c.prepare?.(sql);
      const { ms, value } = await measure(() =>
        runRunner(core.sources, core.db, principal.accountId, c.tool, main!.input),
      );
      if (value.rows !== main!.item_count) throw new Error(`${c.key}: the runner produced ${value.rows} rows`);
      samples.runner.push(ms);
    },
    sql: async () => {
      const { ms, value } = await measure(() => c.baseline(sql));
      if (value.length !== baseline.length)
        throw new Error(`${c.key}: the baseline returned ${value.length} rows, first ${baseline.length}`);
      samples.sql.push(ms);
    },
  };
  if (c.linked) {
    variants.linkedRunner = async () => {
      const { ms, value } = await measure(() =>
        runRunner(core.sources, core.db, principal.accountId, c.linked!.tool, linked!.input),
      );
      if (value.rows !== linked!.item_count)
        throw new Error(`${c.linked!.key}: the runner produced ${value.rows} rows`);
      samples.linkedRunner.push(ms);
    };
    variants.linkedSql = async () => {
      const { ms, value } = await measure(() => c.linked!.baseline(sql));
      if (value.length !== linkedBaseline.length)
        throw new Error(`${c.linked!.key}: the baseline returned ${value.length} rows`);
      samples.linkedSql.push(ms);
    };
  }
  await alternate(Object.keys(variants), repetitions, (key) => variants[key]!());

  const out = [
    figures(
      { ...c, rows: main!.item_count, compared, batches: runner.batches },
      { tool: countedRun.statements, runner: countedRunner.statements, sql: countedSql.statements },
      [samples.tool, samples.runner, samples.sql],
    ),
  ];
  if (c.linked) {
    // The linked run is started with its parent: its statements are counted in the parent's.
    const statements = { tool: 0, runner: countedLinkedRunner!.statements, sql: countedLinkedSql!.statements };
    out.push(
      figures(
        { ...c.linked, input: {}, rows: linked!.item_count, compared: linkedCompared, batches: linkedRunner!.batches },
        statements,
        [samples.linked, samples.linkedRunner, samples.linkedSql],
      ),
    );
  }
  return out;
}

/** A case's (or its linked run's) figures from its samples: tool run, runner alone, SQL. */
function figures(
  part: Pick<ToolFigures, 'key' | 'tool' | 'label' | 'input' | 'rows' | 'compared' | 'batches'>,
  statements: ToolFigures['statements'],
  [t, r, s]: number[][],
): ToolFigures {
  return {
    key: part.key,
    tool: part.tool,
    label: part.label,
    input: summarise(part.input),
    rows: part.rows,
    compared: part.compared,
    batches: part.batches,
    statements,
    service: timing(t!),
    runner: timing(r!),
    sql: timing(s!),
    rowsPerSec: Math.round(part.rows / (median(t!) / 1000)),
    ratio: round(median(t!) / median(s!), 1),
    runnerRatio: round(median(r!) / median(s!), 1),
  };
}

export async function benchTools(options: ToolsOptions = {}): Promise<ToolsResult> {
  const scale = options.scale ?? 'large';
  const repetitions = options.repetitions ?? 5;
  const log = options.log ?? progress;
  const seeded = await seededCatalog({ ...options, scale }, log);
  let core: Core | undefined;
  let counting: Counting | undefined;
  let accountId: string | undefined;
  const began = performance.now();
  try {
    core = await createCore(loopbackConfig(seeded.url, 0, { authCacheSecs: 3600 }), seeded.url, createLogger('silent'));
    if (!core.config.enforceLimits) throw new Error('the tools benchmark runs with enforceLimits on, as in production');
    const sql = core.sql;
    // Statistics and the visibility map of every catalog table the tools read (seededCatalog did the lead tables).
    await sql`vacuum (analyze) local_business, local_business_review, store, home_service_pro, business_listing, commercial_property,
              real_estate_agent, rental_listing, rental_host, property, criminal_record, run, run_item, tool_cache`;
    const { version, settings } = await serverSettings(sql, [
      'shared_buffers',
      'work_mem',
      'synchronous_commit',
      'max_parallel_workers_per_gather',
      'jit',
    ]);

    const commits: number[] = [];
    for (let i = 0; i < 20; i++) commits.push((await measure(() => sql.begin((tx) => tx`select txid_current()`))).ms);
    const commitMs = round(median(commits), 1);
    const loadStart = round(os.loadavg()[0]!, 1);

    // A scale-plan account with 1,000,000 USD of credits: no hold ever caps a run here.
    const account = await createAccount(core.db, {
      name: 'bench tools',
      plan: 'scale',
      creditsMicros: 1_000_000_000_000n,
    });
    accountId = account.account.id;
    const principal = await core.auth.authenticate(`Bearer ${account.apiKey}`);
    counting = await countingDeps(seeded.url, core);

    const only = options.only?.length ? new Set(options.only) : undefined;
    const cases = (await buildCases(sql)).filter(
      (c) => !only || only.has(c.key) || only.has(c.tool) || (c.linked && only.has(c.linked.key)),
    );
    if (only && cases.length === 0) throw new Error(`--only matches no case: ${[...only].join(', ')}`);
    const tools: ToolFigures[] = [];
    for (const c of cases) {
      log(`${c.key}: ${c.label}…`);
      tools.push(...(await benchCase(core, counting, principal, c, repetitions, log)));
    }
    return {
      date: new Date().toISOString(),
      database: seeded.kind,
      postgres: version,
      settings,
      node: process.version,
      cpus: os.cpus().length,
      scale,
      seedSeconds: seeded.seedSeconds,
      engine: 'executeRun(core, runId) in this process right after startRun (no worker, no poll latency)',
      options: { repetitions },
      commitMs,
      load: { start: loadStart, end: round(os.loadavg()[0]!, 1) },
      tools,
      seconds: round((performance.now() - began) / 1000, 0),
    };
  } finally {
    await counting?.close().catch(() => {});
    if (core && accountId) {
      // The account's runs, items, ledger and wallet go with it; jobs of runs a failure left behind too.
      await core.sql`select graphile_worker.remove_job(id) from run where account_id = ${accountId}`.catch(() => {});
      await core.sql`delete from account where id = ${accountId}`.catch(() => {});
      await core.sql`delete from tool_cache where tool = 'tech-stack'`.catch(() => {});
    }
    await core?.close().catch(() => {});
    await seeded.close().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// The table

const ms = (value: number) => (value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(1));

function formatTools(result: ToolsResult): string {
  const w = [24, 7, 8, 8, 8, 8, 8, 7, 7, 14];
  const lines = [
    `7. Catalog tools at ${result.scale} (${catalogHeading(result)}; ${result.seconds} s)`,
    `   ${Object.entries(result.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}; one commit ${result.commitMs} ms; load average ${result.load.start} → ${result.load.end}`,
    `   tool = startRun → SUCCEEDED (${result.engine}); runner = the tool's runner alone; sql = the same rows selected directly;`,
    `   medians of ${result.options.repetitions} alternated runs after a verified warm-up; ms`,
    pad(['tool', 'rows', 'tool', 'runner', 'sql', 'rows/s', 'batches', '×sql', 'run×sql', 'statements'], w),
    pad(['', '', '', '', '', '', '', 'tool', 'runner', 'tool/run/sql'], w),
  ];
  for (const t of result.tools) {
    lines.push(
      pad(
        [
          t.key,
          n(t.rows),
          ms(t.service.median),
          ms(t.runner.median),
          ms(t.sql.median),
          n(t.rowsPerSec),
          n(t.batches),
          `${t.ratio.toFixed(1)}×`,
          `${t.runnerRatio.toFixed(1)}×`,
          `${t.statements.tool || '–'}/${t.statements.runner}/${t.statements.sql}`,
        ],
        w,
      ),
    );
  }
  lines.push('   inputs:');
  for (const t of result.tools)
    lines.push(`   ${t.key}: ${t.label}${t.compared !== t.rows ? ` (${n(t.compared)} found rows compared)` : ''}`);
  return lines.join('\n');
}

export const tools: Suite<ToolsResult> = {
  name: 'tools',
  key: 'tools',
  run: () => benchTools(),
  format: formatTools,
};
