import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';
import {
  countLeads,
  countedByFacets,
  leadConditions,
  plannedMatches,
  readsCompany,
  where,
} from '../../src/catalog/leads/query.ts';
import { findLeads } from '../../src/catalog/leads/search.ts';
import { estimatedTotal } from '../../src/catalog/sql.ts';
import type { LeadFilters } from '../../src/sources/leads.ts';
import { importFile } from '../../db/import/index.ts';
import { importSuppression } from '../../src/privacy/imports.ts';

/*
 * The size of a search: broad lead searches are counted exactly from person_facet_count, which every
 * write to person keeps right in its own transaction; other searches count up to the exact-count
 * limit (10 here, 50,000 by default) and estimate past it, saying so on every face.
 */

const EXACT_LIMIT = 10;
let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({
    worker: false,
    config: { searchExactTotalLimit: EXACT_LIMIT, dailyDatabaseRecords: 1_000_000 },
  });
  ({ apiKey: key } = await t.account({ plan: 'growth' }));
});
afterAll(() => t?.stop());

const counted = async (filters: LeadFilters) =>
  (await countLeads(t.app.core.sql, where(t.app.core.sql, leadConditions(t.app.core.sql, filters))))[0]!.total;

/** person_facet_count against a count of the people themselves, combination by combination. */
async function facetsDisagreeing() {
  const rows = await t.app.core.sql`
    (select lower(country), seniority, department, company_industry, email_status, email is not null, (phone is not null or mobile is not null), count(*)::int
       from person group by 1, 2, 3, 4, 5, 6, 7
     except select country, seniority, department, company_industry, email_status, has_email, has_phone, people from person_facet_count where people <> 0)
    union all
    (select country, seniority, department, company_industry, email_status, has_email, has_phone, people from person_facet_count where people <> 0
     except select lower(country), seniority, department, company_industry, email_status, email is not null, (phone is not null or mobile is not null), count(*)::int
       from person group by 1, 2, 3, 4, 5, 6, 7)`;
  return rows.length;
}

const values = async (column: string) =>
  (
    await t.app.core
      .sql`select distinct ${t.app.core.sql(column)} as v from person where ${t.app.core.sql(column)} is not null order by 1`
  ).map((r) => r.v as string);

describe('broad lead searches: exact totals from person_facet_count', () => {
  it('the facet counts equal the people after the seed', async () => {
    expect(await t.app.core.sql`select sum(people)::int as n from person_facet_count`).toEqual([
      { n: (await t.app.core.sql`select count(*)::int as n from person`)[0]!.n },
    ]);
    expect(await facetsDisagreeing()).toBe(0);
  });

  it('any combination of the broad filters has its exact total on REST, with total_is_estimate false', async () => {
    const [countries, seniorities, departments, industries] = await Promise.all([
      values('country'),
      values('seniority'),
      values('department'),
      values('company_industry'),
    ]);
    const some = (list: string[]) => fc.option(fc.subarray(list, { minLength: 1, maxLength: 3 }), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          countries: some(countries),
          seniorities: some(seniorities),
          departments: some(departments),
          industries: some(industries.map((i) => i.toUpperCase())),
          notIndustries: some(industries),
          emailStatuses: some(['verified', 'guessed', 'unavailable']),
          hasEmail: fc.option(fc.constant(true), { nil: undefined }),
          hasPhone: fc.option(fc.constant(true), { nil: undefined }),
        }),
        async (filters) => {
          expect(countedByFacets(filters)).toBe(true);
          const query = new URLSearchParams({ limit: '5' });
          const set = (name: string, list?: string[]) => list && query.set(name, list.join(','));
          set('country', filters.countries);
          set('seniority', filters.seniorities);
          set('department', filters.departments);
          set('industry', filters.industries);
          set('notIndustry', filters.notIndustries);
          set('emailStatus', filters.emailStatuses);
          if (filters.hasEmail) query.set('hasEmail', 'true');
          if (filters.hasPhone) query.set('hasPhone', 'true');
          const res = await t.request('GET', `/api/v1/database/leads?${query}`, { key });
          expect(res.status).toBe(200);
          expect(res.body.pagination).toMatchObject({ total: await counted(filters), total_is_estimate: false });
        },
      ),
      { numRuns: 40, seed: 22 },
    );
  });

  it('stays exact through inserts, updates, deletes (under replication role replica too) and a company changing industry, and a rolled-back write changes nothing', async () => {
    const sql = t.app.core.sql;
    await sql`update person set country = 'Canada', email = null, email_status = null where id % 7 = 0`;
    await sql`update person set seniority = 'vp', mobile = '+1 303 555 0199' where id % 5 = 1`;
    await sql`delete from person where id % 11 = 0 and id not in (select person_id from delivered_lead)`;
    await sql`update company set industry = 'Zoology' where id % 3 = 0`;
    await sql`insert into person (first_name, last_name, email, email_status, country, seniority, department)
              select 'New', 'Person ' || n, 'new' || n || '@example.org', 'verified', 'Germany', 'manager', 'sales' from generate_series(1, 25) n`;
    expect(await facetsDisagreeing()).toBe(0);
    // Also a write under session_replication_role = replica, which skips ordinary triggers (bulk deletes use it).
    await sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`delete from person where id % 13 = 0 and first_name <> 'New' and id not in (select person_id from delivered_lead)`;
    });
    expect(await facetsDisagreeing()).toBe(0);
    // A failed statement leaves the counts as they were.
    await expect(
      sql.begin(async (tx) => {
        await tx`update person set country = 'France' where country = 'Germany'`;
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await facetsDisagreeing()).toBe(0);
    const res = await t.request(
      'GET',
      '/api/v1/database/leads?country=Germany&seniority=manager&department=sales&emailStatus=verified&limit=1',
      { key },
    );
    expect(res.body.pagination).toMatchObject({
      total: await counted({
        countries: ['Germany'],
        seniorities: ['manager'],
        departments: ['sales'],
        emailStatuses: ['verified'],
      }),
      total_is_estimate: false,
    });
    expect(res.body.pagination.total).toBeGreaterThanOrEqual(25);
  });

  it('stays exact through an import that updates people and adds new ones', async () => {
    const existing = await t.app.core
      .sql`select email from person where email is not null and country is not null order by id limit 3`;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'facets-'));
    const file = path.join(dir, 'people.csv');
    await writeFile(
      file,
      [
        'first_name,last_name,title,seniority,department,email,email_status,country',
        // Existing people (by email) move to another country and seniority; then two new people.
        ...existing.map((p, i) => `Moved,Person${i},Head of Legal,head,legal,${p.email as string},verified,Japan`),
        'Nora,New,Director of Sales,director,sales,nora.new@facets-import.test,guessed,Japan',
        'Omar,New,,,,omar.new@facets-import.test,,',
      ].join('\n'),
    );
    const result = await importFile(t.app.core.sql, {
      dataset: 'people',
      file,
      rebuildIndexes: false,
      suppressed: importSuppression,
    });
    expect(result.summary).toMatchObject({ inserted: 2, updated: 3 });
    await rm(dir, { recursive: true });
    expect(await facetsDisagreeing()).toBe(0);
    const res = await t.request('GET', '/api/v1/database/leads?country=Japan&limit=1', { key });
    expect(res.body.pagination).toMatchObject({
      total: await counted({ countries: ['Japan'] }),
      total_is_estimate: false,
    });
  });

  it('a search with excludeDelivered or another filter is not counted from the facets', () => {
    expect(countedByFacets({ countries: ['United States'] }, { excludeDelivered: true })).toBe(false);
    expect(countedByFacets({ countries: ['United States'], titles: ['sales'] })).toBe(false);
    expect(countedByFacets({ countries: ['United States'], states: ['CO'] })).toBe(false);
    expect(countedByFacets({})).toBe(true);
  });

  it('an estimate joins the company only for a search that reads it', () => {
    expect(readsCompany({ titles: ['Manager'], countries: ['United States'], states: ['CO'], hasEmail: true })).toBe(
      false,
    );
    for (const company of [
      { minEmployees: 5 },
      { keywords: ['saas'] },
      { companyDomains: ['acme.com'] },
      { companyName: 'Acme' },
    ] satisfies LeadFilters[]) {
      expect(readsCompany({ titles: ['Manager'], ...company })).toBe(true);
    }
  });
});

const LeadTotals = graphql(`
  query SearchTotalsLeads($filter: LeadFilter) { leads(filter: $filter, first: 2) { totalCount totalCountIsEstimate pageInfo { hasNextPage } } }
`);
const StoreTotals = graphql(`
  query SearchTotalsStores { stores(first: 2) { totalCount totalCountIsEstimate } }
`);

describe('past the exact-count limit the total is an estimate, and every face says so', () => {
  it('counts exactly up to the limit', async () => {
    const [person] = await t.app.core.sql`select email from person where email is not null order by id limit 1`;
    const res = await t.request(
      'GET',
      `/api/v1/database/leads?title=${encodeURIComponent('Chief Executive')}&companyName=zzz-no-such-company`,
      { key },
    );
    expect(res.body.pagination).toMatchObject({ total: 0, total_is_estimate: false });
    const one = await t.request('POST', '/api/v1/database/leads', {
      key,
      body: { socialUrl: 'https://www.linkedin.com/in/nobody-here', limit: 1 },
    });
    expect(one.body.pagination).toMatchObject({ total: 0, total_is_estimate: false });
    expect(person).toBeDefined();
  });

  it('estimates a search past the limit from a sample, the same way every time, on REST, GraphQL and MCP', async () => {
    // A title filter is not a facet: counted up to the limit, then estimated.
    const filters = { titles: ['Manager'] };
    const exact = await counted(filters);
    expect(exact).toBeGreaterThan(EXACT_LIMIT * 10);

    const rest = await t.request('GET', '/api/v1/database/leads?title=Manager&limit=3', { key });
    expect(rest.status).toBe(200);
    expect(rest.body.pagination.total_is_estimate).toBe(true);
    // A small catalog is under the sample size, so it is read whole: the estimate is the count, rounded.
    expect(rest.body.pagination.total).toBe(estimatedTotal(exact, EXACT_LIMIT));
    expect(rest.body.leads).toHaveLength(3);
    expect(rest.body.pagination.has_more).toBe(true);

    const again = await t.request(
      'GET',
      `/api/v1/database/leads?title=Manager&limit=3&after=${rest.body.pagination.next_after}`,
      { key },
    );
    expect(again.body.pagination).toMatchObject({ total: rest.body.pagination.total, total_is_estimate: true });
    expect(again.body.leads[0].id).toBeGreaterThan(rest.body.leads[2].id);

    const gql = await t.graphql(key, LeadTotals, { filter: { title: 'Manager' } });
    expect(gql.body.data?.leads).toMatchObject({
      totalCount: rest.body.pagination.total,
      totalCountIsEstimate: true,
      pageInfo: { hasNextPage: true },
    });

    const mcp = await t.request('POST', '/mcp?tools=database', {
      key,
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'query_lead_database', arguments: { title: 'Manager', limit: 2 } },
      },
    });
    expect(mcp.body.result.structuredContent.pagination).toMatchObject({
      total: rest.body.pagination.total,
      total_is_estimate: true,
    });
  });

  it('counts first when the planner expects the search near the limit, and estimates once the count passes it', async () => {
    const sql = t.app.core.sql;
    const filters = { titles: ['Manager'] };
    const exact = await counted(filters);
    const planned = await plannedMatches(sql, where(sql, leadConditions(sql, filters)));
    // Not four times past this limit by the plan, but past it in fact: gathered, counted to the cap, then estimated.
    const limit = Math.ceil(planned / 3);
    expect(exact).toBeGreaterThan(limit);
    const found = await sql.begin((tx) =>
      findLeads(tx as unknown as typeof sql, filters, { limit: 5, offset: 0, exactTotalLimit: limit }),
    );
    expect(found).toMatchObject({ total: estimatedTotal(exact, limit), totalIsEstimate: true });
    expect(found.rows.map((r) => Number(r.id))).toEqual(
      (await sql`select id::int from person where title ilike '%Manager%' order by id limit 6`).map((r) => r.id),
    );
    // With a limit above the matches, the same search is counted exactly.
    expect(await findLeads(sql, filters, { limit: 5, offset: 0, exactTotalLimit: exact })).toMatchObject({
      total: exact,
      totalIsEstimate: false,
    });
  });

  it('estimates local-business and store searches past the limit too', async () => {
    const stores = (await t.app.core.sql`select count(*)::int as n from store`)[0]!.n;
    const rest = await t.request('GET', '/api/v1/database/stores?limit=2', { key });
    expect(rest.body.pagination).toMatchObject({ total: estimatedTotal(stores, EXACT_LIMIT), total_is_estimate: true });
    const gql = await t.graphql(key, StoreTotals);
    expect(gql.body.data?.stores).toMatchObject({ totalCount: rest.body.pagination.total, totalCountIsEstimate: true });
    const few = await t.request('GET', '/api/v1/database/local-businesses?category=dentist&city=Denver&limit=2', {
      key,
    });
    expect(few.body.pagination.total_is_estimate).toBe(few.body.pagination.total > EXACT_LIMIT);
  });

  it('counts nobody after person is truncated', async () => {
    await t.app.core.sql`truncate person cascade`;
    expect(await t.app.core.sql`select count(*)::int as n from person_facet_count`).toEqual([{ n: 0 }]);
    const res = await t.request('GET', '/api/v1/database/leads?country=United%20States', { key });
    expect(res.body.pagination).toMatchObject({ total: 0, total_is_estimate: false });
  });

  it('rounds an estimate to two significant digits, never to the limit or under it', () => {
    expect(estimatedTotal(246_118.4, 50_000)).toBe(250_000);
    expect(estimatedTotal(51_234, 50_000)).toBe(51_000);
    expect(estimatedTotal(49_000, 50_000)).toBe(50_001);
    expect(estimatedTotal(87, 10)).toBe(87);
    expect(estimatedTotal(0, 10)).toBe(11);
  });
});
