import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDUSTRY_TAG_IDS } from '../../src/catalog/leads/vocabulary.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let key: string;

interface P {
  id: number;
  title: string | null;
  seniority: string;
  department: string;
  email: string | null;
  email_status: string | null;
  phone: string | null;
  mobile: string | null;
  linkedin_url: string;
  city: string;
  state: string;
  country: string;
  c_name: string;
  domain: string;
  industry: string;
  employees: number;
  revenue: number;
  c_city: string;
  c_state: string;
  c_country: string;
  keywords: string[];
  technologies: string[];
}
let people: P[];

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account({ plan: 'growth' }));
  people = (await t.app.core.sql`
    select p.id::int, p.title, p.seniority, p.department, p.email, p.email_status, p.phone, p.mobile, p.linkedin_url, p.city, p.state, p.country,
           c.name as c_name, c.domain, c.industry, c.employees_count as employees, c.annual_revenue::float8 as revenue,
           c.city as c_city, c.state as c_state, c.country as c_country, c.keywords, c.technologies
    from person p join company c on c.id = p.company_id order by p.id`) as unknown as P[];
});
afterAll(() => t?.stop());

const get = (query: string, k = key) => t.request('GET', `/api/v1/database/leads?${query}`, { key: k });
const has = (text: string | null, part: string) => (text ?? '').toLowerCase().includes(part.toLowerCase());
const word = (list: string[], w: string) => list.some((k) => new RegExp(`\\b${w}\\b`, 'i').test(k));

/** The API's total and first page agree with the same filter applied to every person in memory. */
async function expectSearch(query: string, keep: (p: P) => boolean) {
  const expected = people.filter(keep);
  const res = await get(`${query}&limit=100`);
  expect(res.status, res.text).toBe(200);
  expect(res.body.pagination.total).toBe(expected.length);
  expect(res.body.leads.map((l: { id: number }) => l.id)).toEqual(expected.slice(0, 100).map((p) => p.id));
  return { expected, res };
}

describe('GET /api/v1/database/leads filters', () => {
  it('title partial, industry, country alias', async () => {
    const { expected } = await expectSearch(
      'title=vp&industry=Computer%20Software&country=USA',
      (p) => has(p.title, 'vp') && p.industry === 'Computer Software' && p.country === 'United States',
    );
    expect(expected.length).toBeGreaterThan(5);
  });

  it.each([
    ['UK', 'United Kingdom'],
    ['UAE', 'United Arab Emirates'],
    ['us', 'United States'],
    ['Canada', 'Canada'],
  ])('country %s', async (alias, name) => {
    await expectSearch(`country=${alias}`, (p) => p.country === name);
  });

  it('state by name or abbreviation, city partial', async () => {
    const byAbbr = await expectSearch('state=CO', (p) => p.state === 'CO');
    const byName = await get('state=Colorado&limit=100');
    expect(byName.body.pagination.total).toBe(byAbbr.expected.length);
    await expectSearch('city=san', (p) => has(p.city, 'san'));
  });

  it('company name and several company domains (comma or space separated)', async () => {
    await expectSearch('companyName=acme', (p) => has(p.c_name, 'acme'));
    const [d1, d2] = [people[0]!.domain, people[500]!.domain];
    const { expected } = await expectSearch(
      `companyDomain=${encodeURIComponent(`${d1} ,${d2}`)}`,
      (p) => has(p.domain, d1) || has(p.domain, d2),
    );
    expect(expected.length).toBeGreaterThanOrEqual(2);
    const spaced = await get(`companyDomain=${encodeURIComponent(`${d1} ${d2}`)}&limit=100`);
    expect(spaced.body.pagination.total).toBe(expected.length);
    // Partial across the dot; and the whole value must match, not only its longest word (which the index is asked for).
    const tail = (d1 as string).slice(2);
    await expectSearch(`companyDomain=${encodeURIComponent(tail)}`, (p) => has(p.domain, tail));
    const otherSuffix = `${(d1 as string).split('.')[0]}.zzz`;
    expect((await get(`companyDomain=${encodeURIComponent(otherSuffix)}`)).body.pagination.total).toBe(0);
  });

  it('seniority and department, repeated or comma separated', async () => {
    const { expected } = await expectSearch(
      'seniority=c_suite,vp&department=sales',
      (p) => ['c_suite', 'vp'].includes(p.seniority) && p.department === 'sales',
    );
    const repeated = await get('seniority=C-Suite&seniority=VP&department=Sales&limit=100');
    expect(repeated.body.pagination.total).toBe(expected.length);
  });

  it('email status: the database’s words, and the email validator’s read as them', async () => {
    const verified = await expectSearch('emailStatus=verified', (p) => p.email_status === 'verified');
    expect(verified.expected.length).toBeGreaterThan(5);
    expect((await get('emailStatus=Valid&limit=100')).body.pagination.total).toBe(verified.expected.length);
    const guessed = await expectSearch('emailStatus=guessed', (p) => p.email_status === 'guessed');
    expect(guessed.expected.length).toBeGreaterThan(5);
    expect((await get('emailStatus=catch-all,unknown')).body.pagination.total).toBe(guessed.expected.length);
    await expectSearch('emailStatus=valid,unavailable', (p) =>
      ['verified', 'unavailable'].includes(p.email_status ?? ''),
    );
    // A word that matched nothing before is refused, naming what the filter takes.
    for (const [value, why] of [
      ['invalid', ' (the lead database keeps no address known to be invalid)'],
      ['bounced', ''],
    ]) {
      const refused = await get(`emailStatus=verified,${value}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error.details).toEqual([
        {
          path: 'emailStatus.1',
          message: `unknown email status "${value}"${why}: one of verified, guessed, unavailable, valid, catch-all or unknown`,
        },
      ]);
    }
  });

  it('hasEmail and hasPhone', async () => {
    await expectSearch(
      'hasEmail=true&hasPhone=true',
      (p) => p.email !== null && (p.phone !== null || p.mobile !== null),
    );
  });

  it('employee and revenue bounds', async () => {
    await expectSearch('minEmployees=50&maxEmployees=200', (p) => p.employees >= 50 && p.employees <= 200);
    await expectSearch(
      'revenueMin=1000000&revenueMax=5000000',
      (p) => p.revenue >= 1_000_000 && p.revenue <= 5_000_000,
    );
  });

  it('socialUrl matches however the URL is written', async () => {
    const target = people[42]!;
    const messy = `${target.linkedin_url.replace('https://www.', 'HTTP://').toUpperCase()}/`;
    const res = await get(`socialUrl=${encodeURIComponent(messy)}`);
    expect(res.body.leads.map((l: { id: number }) => l.id)).toEqual([target.id]);
  });

  it('keywords are whole words, any of', async () => {
    const { expected } = await expectSearch(
      'keywords=cloud,fintech',
      (p) => word(p.keywords, 'cloud') || word(p.keywords, 'fintech'),
    );
    expect(expected.length).toBeGreaterThan(0);
    expect((await get('keywords=clou')).body.pagination.total).toBe(0);
    await expectSearch('keywords=marketing', (p) => word(p.keywords, 'marketing'));
  });

  it('exclusions: notTitle, notKeywords, notIndustry', async () => {
    await expectSearch(
      'notTitle=manager,director&notIndustry=Retail,Insurance',
      (p) => !has(p.title, 'manager') && !has(p.title, 'director') && !['Retail', 'Insurance'].includes(p.industry),
    );
    await expectSearch('notKeywords=saas', (p) => !word(p.keywords, 'saas'));
  });

  it('technologies ANY, technologiesAll ALL, notTechnologies', async () => {
    await expectSearch(
      'technologies=Stripe&technologies=Klaviyo',
      (p) => p.technologies.includes('Stripe') || p.technologies.includes('Klaviyo'),
    );
    const all = await expectSearch(
      'technologiesAll=Stripe&technologiesAll=google_analytics',
      (p) => p.technologies.includes('Stripe') && p.technologies.includes('Google Analytics'),
    );
    expect(all.expected.length).toBeGreaterThan(0);
    await expectSearch(
      'notTechnologies=Stripe',
      (p) => p.technologies.length > 0 && !p.technologies.includes('Stripe'),
    );
  });

  it('company headquarters apart from the person’s location', async () => {
    const { expected } = await expectSearch(
      'companyCountry=Canada&companyCity=toronto',
      (p) => p.c_country === 'Canada' && has(p.c_city, 'toronto'),
    );
    expect(expected.some((p) => p.country !== 'Canada')).toBe(true);
    await expectSearch('companyState=TX&state=CO', (p) => p.c_state === 'TX' && p.state === 'CO');
  });

  it('POST takes the same parameters as JSON', async () => {
    const get1 = await get('title=engineer&country=US&limit=20');
    const post = await t.request('POST', '/api/v1/database/leads', {
      key,
      body: { title: 'engineer', country: ['US'], limit: 20 },
    });
    expect(post.body.pagination.total).toBe(get1.body.pagination.total);
    expect(post.body.leads.map((l: { id: number }) => l.id)).toEqual(get1.body.leads.map((l: { id: number }) => l.id));
  });

  it('returns the spec’s lead record fields from the company', async () => {
    const res = await get('limit=1');
    const p = people[0]!;
    expect(res.body.leads[0]).toMatchObject({
      id: p.id,
      company_industry: p.industry,
      employees_count: p.employees,
      company_website: `https://${p.domain}`,
      company_annual_revenue: p.revenue,
      company_city: p.c_city,
      company_country: p.c_country,
      keywords: p.keywords,
    });
    expect(res.body.leads[0].company_size).toMatch(/^\d+(-\d+|\+)$/);
  });
});

describe('paging', () => {
  it('page/limit and the cursor return the same leads in id order', async () => {
    const query = 'department=engineering';
    const byPage: number[] = [];
    for (let page = 1; page <= 3; page++)
      byPage.push(...(await get(`${query}&page=${page}&limit=25`)).body.leads.map((l: { id: number }) => l.id));
    const byCursor: number[] = [];
    let after = '0';
    for (let i = 0; i < 3; i++) {
      const res = await get(`${query}&after=${after}&limit=25`);
      byCursor.push(...res.body.leads.map((l: { id: number }) => l.id));
      expect(res.body.pagination.total).toBeGreaterThan(75);
      after = res.body.pagination.next_after;
    }
    expect(byCursor).toEqual(byPage);
    expect(byPage).toEqual([...byPage].sort((a, b) => a - b));
  });

  it('ends with next_after null', async () => {
    const target = people[7]!;
    const res = await get(`socialUrl=${encodeURIComponent(target.linkedin_url)}&after=0`);
    expect(res.body.pagination).toMatchObject({ total: 1, next_after: null, has_more: false });
  });

  it('refuses bad paging', async () => {
    for (const q of ['limit=101', 'limit=0', 'page=0', 'after=abc', 'page=2&after=0']) {
      const res = await get(q);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });
});

describe('deliveries and the daily allowance', () => {
  it('saves returned leads to the account; excludeDelivered skips them; they never count twice', async () => {
    const { accountId, apiKey } = await t.account({ plan: 'scale' });
    const first = await get('department=finance&limit=10', apiKey);
    const ids = first.body.leads.map((l: { id: number }) => l.id);
    expect(first.body.daily_allowance.remaining).toBe(100_000 - 10);
    const again = await get('department=finance&limit=10', apiKey);
    expect(again.body.leads.map((l: { id: number }) => l.id)).toEqual(ids);
    expect(again.body.daily_allowance.remaining).toBe(100_000 - 10);
    const fresh = await get('department=finance&limit=10&excludeDelivered=true', apiKey);
    const freshIds = fresh.body.leads.map((l: { id: number }) => l.id);
    expect(freshIds.some((id: number) => ids.includes(id))).toBe(false);
    expect(fresh.body.pagination.total).toBe(first.body.pagination.total - 10);
    const [row] = await t.app.core.sql`select count(*)::int as n from delivered_lead where account_id = ${accountId}`;
    expect(row!.n).toBe(20);
  });

  it('cuts the last page to what is left of the day, then answers 429', async () => {
    const small = await startTestApp({ worker: false, config: { dailyDatabaseRecords: 15 } });
    try {
      const { apiKey } = await small.account({ plan: 'growth' });
      const a = await small.request('GET', '/api/v1/database/leads?limit=10', { key: apiKey });
      expect(a.body.leads).toHaveLength(10);
      const b = await small.request('GET', '/api/v1/database/leads?limit=10&page=2', { key: apiKey });
      expect(b.body.leads).toHaveLength(5);
      expect(b.body.pagination.has_more).toBe(true);
      const c = await small.request('GET', '/api/v1/database/leads?limit=10&page=3', { key: apiKey });
      expect(c.status).toBe(429);
      expect(c.body.error.code).toBe('daily_limit_reached');
      expect(Number(c.headers.get('retry-after'))).toBeGreaterThan(0);
      // Leads already delivered stay free.
      expect((await small.request('GET', '/api/v1/database/leads?limit=10', { key: apiKey })).status).toBe(200);
    } finally {
      await small.stop();
    }
  });
});

describe('people-search URLs', () => {
  const base = 'https://app.apollo.io/#/people';
  it('turns the URL into filters and reports what it applied, broadened or could not use', async () => {
    const tag = [...INDUSTRY_TAG_IDS.entries()].find(([, name]) => name === 'Computer Software')![0];
    const url = `${base}?personTitles[]=engineer&personLocations[]=United%20States&organizationNumEmployeesRanges[]=11,50&organizationNumEmployeesRanges[]=51,200&organizationIndustryTagIds[]=${tag}&sortByField=name&uniqueUrlId=abc&personNotLocations[]=Texas&qOrganizationKeywordTags[]=saas`;
    const viaUrl = await get(`url=${encodeURIComponent(url)}&limit=100`);
    expect(viaUrl.status, viaUrl.text).toBe(200);
    const explicit = await expectSearch(
      'title=engineer&country=US&minEmployees=11&maxEmployees=200&industry=Computer%20Software&keywords=saas',
      (p) =>
        has(p.title, 'engineer') &&
        p.country === 'United States' &&
        p.employees >= 11 &&
        p.employees <= 200 &&
        p.industry === 'Computer Software' &&
        word(p.keywords, 'saas'),
    );
    expect(viaUrl.body.pagination.total).toBe(explicit.expected.length);
    const tr = viaUrl.body.search_translation;
    expect(tr.applied.map((e: { parameter: string }) => e.parameter)).toEqual([
      'personTitles[]',
      'personLocations[]',
      'qOrganizationKeywordTags[]',
    ]);
    expect(tr.broadened.map((e: { parameter: string }) => e.parameter).sort()).toEqual([
      'organizationIndustryTagIds[]',
      'organizationNumEmployeesRanges[]',
    ]);
    expect(tr.unsupported).toEqual([{ parameter: 'personNotLocations[]', value: 'Texas', note: expect.any(String) }]);
    expect(tr.ignored).toEqual(['sortByField']);
  });

  it('lets an explicit filter replace the URL’s', async () => {
    const url = `${base}?personTitles[]=engineer&personLocations[]=United%20States`;
    const res = await get(`url=${encodeURIComponent(url)}&country=Canada&limit=100`);
    await expectSearch('title=engineer&country=Canada', (p) => has(p.title, 'engineer') && p.country === 'Canada').then(
      ({ expected }) => expect(res.body.pagination.total).toBe(expected.length),
    );
  });

  it('refuses the newer format and URLs without usable filters', async () => {
    const newer = await get(`url=${encodeURIComponent(`${base}?personTitles=ceo&page=1`)}`);
    expect(newer.status).toBe(400);
    expect(newer.body.error.code).toBe('unsupported_url_format');
    expect(newer.body.error.message).toMatch(/personTitles\[\]=/);
    const nothing = await get(`url=${encodeURIComponent(`${base}?sortByField=name&page=2&foo[]=bar`)}`);
    expect(nothing.status).toBe(400);
    expect(nothing.body.error.code).toBe('no_usable_filters');
  });
});

describe('refusals', () => {
  it('403 plan_required on starter', async () => {
    const { apiKey } = await t.account({ plan: 'starter' });
    const res = await get('limit=1', apiKey);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'plan_required' });
    expect(res.body.error.message).toContain('growth plan');
  });

  it('409 filters_not_applied_yet for company filters while companies are being prepared, counting nothing', async () => {
    const { accountId, apiKey } = await t.account({ plan: 'growth' });
    await t.app.core.sql`update dataset_state set ready = false where dataset = 'companies'`;
    try {
      const res = await get('keywords=saas&revenueMin=1000&companyCountry=Canada&title=ceo', apiKey);
      expect(res.status).toBe(409);
      expect(res.body.filters_not_applied_yet).toEqual(['keywords', 'revenueMin', 'companyCountry']);
      expect(res.body.error.code).toBe('filters_not_applied_yet');
      const [used] = await t.app.core.sql`select count(*)::int as n from daily_usage where account_id = ${accountId}`;
      expect(used!.n).toBe(0);
      expect((await get('title=ceo&limit=1', apiKey)).status).toBe(200);
    } finally {
      await t.app.core.sql`update dataset_state set ready = true where dataset = 'companies'`;
    }
  });

  it('414 for a query string over 16 KB, telling the caller to POST', async () => {
    const res = await get(`title=${'a'.repeat(17_000)}`);
    expect(res.status).toBe(414);
    expect(res.body.error.code).toBe('query_string_too_long');
    expect(res.body.error.message).toMatch(/POST/);
  });

  it('503 query_timeout when the search takes too long', async () => {
    const slow = await startTestApp({ worker: false, config: { leadQueryTimeoutMs: 1 } });
    try {
      const { apiKey } = await slow.account({ plan: 'growth' });
      const res = await slow.request('GET', '/api/v1/database/leads?notTitle=a,b,c,d,e,f&keywords=cloud', {
        key: apiKey,
      });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('query_timeout');
      expect(res.body.error.message).toMatch(/Narrow it/);
    } finally {
      await slow.stop();
    }
  });

  it('400 for unknown parameters and bad values', async () => {
    const res = await get('titel=ceo&seniority=emperor&minEmployees=5&maxEmployees=2&hasEmail=maybe');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('unknown field titel; did you mean title?');
    const bad = await get('seniority=emperor&department=sales_ops,astrology');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([
      {
        path: 'seniority.0',
        message: expect.stringMatching(/^unknown seniority "emperor": one of owner, founder, .* or intern$/),
      },
      {
        path: 'department.1',
        message: expect.stringMatching(/^unknown department "astrology": one of executive, .* or medical$/),
      },
    ]);
  });
});

describe('GraphQL leads', () => {
  it('answers the same search as REST, with companies and the total', async () => {
    const rest = await get('title=engineer&country=US&limit=5');
    const gql = await t.graphql(
      key,
      `query($f: LeadFilter) { leads(filter: $f, first: 5) { totalCount edges { cursor node { id databaseId fullName company { domain industry employeesCount } } } pageInfo { hasNextPage endCursor } } }`,
      { f: { title: 'engineer', country: ['US'] } },
    );
    expect(gql.body.errors).toBeUndefined();
    const leads = gql.body.data.leads;
    expect(leads.totalCount).toBe(rest.body.pagination.total);
    expect(leads.edges.map((e: { node: { databaseId: string } }) => Number(e.node.databaseId))).toEqual(
      rest.body.leads.map((l: { id: number }) => l.id),
    );
    // Global ids: unique across types, and node(id:) refetches a lead the account has received.
    expect(leads.edges[0].node.id).toBe(`lead_${rest.body.leads[0].id}`);
    const refetched = await t.graphql(key, 'query($id: ID!) { node(id: $id) { id ... on Lead { fullName } } }', {
      id: leads.edges[0].node.id,
    });
    expect(refetched.body.data.node).toEqual({ id: leads.edges[0].node.id, fullName: leads.edges[0].node.fullName });
    expect(leads.edges[0].node.company).toEqual({
      domain: rest.body.leads[0].company_domain,
      industry: rest.body.leads[0].company_industry,
      employeesCount: rest.body.leads[0].employees_count,
    });
    const next = await t.graphql(
      key,
      `query($f: LeadFilter, $a: String) { leads(filter: $f, first: 5, after: $a) { edges { node { databaseId } } } }`,
      {
        f: { title: 'engineer', country: ['US'] },
        a: leads.pageInfo.endCursor,
      },
    );
    const page2 = await get('title=engineer&country=US&limit=5&page=2');
    expect(next.body.data.leads.edges.map((e: { node: { databaseId: string } }) => Number(e.node.databaseId))).toEqual(
      page2.body.leads.map((l: { id: number }) => l.id),
    );
  });

  it('uses the same error codes', async () => {
    const { apiKey } = await t.account({ plan: 'starter' });
    // Only the field a plan refuses is null: the rest of the document is answered.
    const res = await t.graphql(apiKey, '{ viewer { plan } leads(first: 1) { totalCount } }');
    expect(res.body.data).toEqual({ viewer: { plan: 'STARTER' }, leads: null });
    expect(res.body.errors).toEqual([
      expect.objectContaining({ path: ['leads'], extensions: expect.objectContaining({ code: 'PLAN_REQUIRED' }) }),
    ]);
    const bad = await t.graphql(key, '{ leads(first: 500) { totalCount } }');
    expect(bad.body.errors[0].extensions.code).toMatch(/VALIDATION_FAILED|QUERY_TOO_COMPLEX/);
  });
});
