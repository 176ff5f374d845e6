import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeLeadsTool } from '../../src/tools/store-leads.ts';
import type { StoreQuery } from '../../src/sources/stores.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';

const PATH = '/api/v1/scrape/store-leads';
const PRICE_MICROS = Number(storeLeadsTool.price.unitMicros);

interface Store {
  id: number;
  domain: string;
  name: string;
  platform: string;
  plan_tier: string | null;
  category: string | null;
  country_code: string | null;
  state: string | null;
  city: string | null;
  emails: string[];
  phones: string[];
  instagram_url: string | null;
  facebook_url: string | null;
  tiktok_url: string | null;
  youtube_url: string | null;
  linkedin_url: string | null;
  twitter_url: string | null;
  pinterest_url: string | null;
  technologies: string[];
  apps: string[];
  estimated_monthly_visits: number | null;
  estimated_monthly_sales: number | null;
  employee_count: number | null;
}

let t: TestApp;
let key: string;
let accountId: string;
let stores: Store[];

beforeAll(async () => {
  ({ t, key, accountId } = await appWithAccount());
  stores = (await t.app.core.sql`
    select id::int, domain, name, platform, plan_tier, category, country_code, state, city, emails, phones,
           instagram_url, facebook_url, tiktok_url, youtube_url, linkedin_url, twitter_url, pinterest_url, technologies, apps,
           estimated_monthly_visits, estimated_monthly_sales::float8 as estimated_monthly_sales, employee_count
    from store order by id`) as unknown as Store[];
});
afterAll(() => t?.stop());

/** A store as a result row: every column, in order. */
const asRow = (s: Store) => Object.fromEntries(storeLeadsTool.columns.map((c) => [c.key, s[c.key as keyof Store]]));
const domains = (list: { domain: unknown }[]) => list.map((s) => s.domain);

async function charged(runId: string) {
  const [run] = await t.app.core
    .sql`select charged_micros::text as charged, requested, status, status_message from run where id = ${runId}`;
  return {
    charged: Number(run!.charged),
    requested: run!.requested as number,
    status: run!.status as string,
    message: run!.status_message as string,
  };
}

async function walletMicros() {
  const [w] = await t.app.core
    .sql`select (plan_micros + purchased_micros)::text as total from wallet where account_id = ${accountId}`;
  return Number(w!.total);
}

const shopifyUs = (s: Store) => s.platform === 'shopify' && s.country_code === 'US' && s.emails.length > 0;

describe('store leads: happy path', () => {
  it('starts with {runId, totalLeads, estimatedCost}, delivers the first leads in id order and bills each', async () => {
    const before = await walletMicros();
    const { start, status, rows } = await t.runTool(key, PATH, {
      platform: 'Shopify',
      countryCode: 'us',
      totalLeads: 25,
    });
    expect(start).toEqual({
      runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/),
      status: 'RUNNING',
      message: 'Fetching up to 25 store leads',
      estimatedCost: 0.0975,
      totalLeads: 25,
    });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      statusMessage: 'Finished: 25 leads',
      handled: 25,
      requested: 25,
    });
    const expected = stores.filter(shopifyUs).slice(0, 25);
    expect(expected).toHaveLength(25);
    expect(rows).toEqual(expected.map(asRow));
    expect(Object.keys(rows[0])).toEqual(storeLeadsTool.columns.map((c) => c.key));
    expect((await charged(start.runId)).charged).toBe(25 * PRICE_MICROS);
    expect(before - (await walletMicros())).toBe(25 * PRICE_MICROS);
  });

  it('without offset, identical calls return the same first page (default 100 leads, emails required by default)', async () => {
    const first = await t.runTool(key, PATH, { platform: 'woocommerce' });
    const second = await t.runTool(key, PATH, { platform: 'woocommerce' });
    expect(first.start.totalLeads).toBe(100);
    expect(first.start).not.toHaveProperty('nextOffset');
    const expected = stores.filter((s) => s.platform === 'woocommerce' && s.emails.length > 0).slice(0, 100);
    expect(domains(first.rows)).toEqual(domains(expected));
    expect(domains(second.rows)).toEqual(domains(expected));
  });

  it('answers a GraphQL startStoreLeads mutation with the same start fields', async () => {
    const Start = graphql(`
      mutation StoreLeadsStart {
        startStoreLeads(input: { platform: "BigCommerce", totalLeads: 7, offset: 3, visitsMin: 2000 }) {
          run { id status } message estimatedCost totalLeads resumeFromLead nextOffset
        }
      }
    `);
    const res = await t.graphql(key, Start);
    expect(res.body.errors).toBeUndefined();
    const payload = res.body.data!.startStoreLeads;
    expect(payload).toMatchObject({
      run: { status: 'RUNNING' },
      message: 'Fetching up to 7 store leads, after the first 3 matching stores',
      estimatedCost: '0.0273',
    });
    expect(payload).toMatchObject({ totalLeads: 7, resumeFromLead: null, nextOffset: 10 });
    await t.waitForRun(key, payload.run!.id);
    const download = await t.request('GET', `/api/downloads/${payload.run!.id}?format=json`, { key });
    const expected = stores
      .filter((s) => s.platform === 'bigcommerce' && s.emails.length > 0 && (s.estimated_monthly_visits ?? 0) >= 2000)
      .slice(3, 10);
    expect(domains(download.body)).toEqual(domains(expected));
  });
});

describe('store leads: paging', () => {
  it('pages with offset: nextOffset = offset + totalLeads, pages follow each other without gaps', async () => {
    const body = { platform: 'shopify', countryCode: 'US' };
    const page1 = await t.runTool(key, PATH, { ...body, offset: 0, totalLeads: 10 });
    expect(page1.start.nextOffset).toBe(10);
    const page2 = await t.runTool(key, PATH, { ...body, offset: page1.start.nextOffset, totalLeads: 10 });
    expect(page2.start.nextOffset).toBe(20);
    const expected = stores.filter(shopifyUs);
    expect(domains(page1.rows)).toEqual(domains(expected.slice(0, 10)));
    expect(domains(page2.rows)).toEqual(domains(expected.slice(10, 20)));
  });

  it('an offset past the last matching store delivers nothing and bills nothing', async () => {
    const matching = stores.filter((s) => s.platform === 'salesforce_commerce_cloud' && s.emails.length > 0).length;
    const { start, status, rows } = await t.runTool(key, PATH, {
      platform: 'salesforce commerce cloud',
      offset: matching,
      totalLeads: 5,
    });
    expect(start.nextOffset).toBe(matching + 5);
    expect(status.status).toBe('SUCCEEDED');
    expect(rows).toEqual([]);
    expect((await charged(start.runId)).charged).toBe(0);
  });

  it('a last page shorter than totalLeads bills only the leads delivered', async () => {
    const matching = stores.filter((s) => s.platform === 'opencart' && s.emails.length > 0);
    const offset = matching.length - 4;
    const before = await walletMicros();
    const { start, rows } = await t.runTool(key, PATH, { platform: 'OPENCART', offset, totalLeads: 50 });
    expect(domains(rows)).toEqual(domains(matching.slice(offset)));
    expect((await charged(start.runId)).charged).toBe(4 * PRICE_MICROS);
    expect(before - (await walletMicros())).toBe(4 * PRICE_MICROS);
  });
});

describe('store leads: cancel and resume', () => {
  it('a cancelled job keeps and bills its partial results; resumeFromLead delivers the rest of the same job', async () => {
    const job = { offset: 5, totalLeads: 1200 };
    const expected = stores.filter((s) => s.emails.length > 0).slice(5, 1205);
    expect(expected).toHaveLength(1200);

    // Cancel the job while its second page (of three) is being read.
    const source = t.app.core.sources.stores;
    const original = source.searchStores;
    let runId = '';
    let calls = 0;
    source.searchStores = async (query: StoreQuery) => {
      const page = await original(query);
      calls += 1;
      if (calls === 2) {
        const cancel = await t.request('POST', `/api/v1/scrape/cancel/${runId}`, { key });
        expect(cancel.status, cancel.text).toBe(200);
      }
      return page;
    };
    let cancelled: Awaited<ReturnType<TestApp['waitForRun']>>;
    try {
      const start = await t.request('POST', PATH, { key, body: job });
      expect(start.status, start.text).toBe(200);
      runId = start.body.runId;
      cancelled = await t.waitForRun(key, runId);
    } finally {
      source.searchStores = original;
    }
    expect(cancelled.status).toBe('ABORTED');
    const partial = (await t.request('GET', `/api/downloads/${runId}?format=json`, { key })).body as {
      domain: string;
    }[];
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(1200);
    expect(domains(partial)).toEqual(domains(expected.slice(0, partial.length)));
    expect((await charged(runId)).charged).toBe(partial.length * PRICE_MICROS);

    const resumed = await t.runTool(key, PATH, { ...job, resumeFromLead: partial.length });
    expect(resumed.start).toMatchObject({ totalLeads: 1200, resumeFromLead: partial.length, nextOffset: 1205 });
    expect(resumed.start.estimatedCost).toBeCloseTo(((1200 - partial.length) * PRICE_MICROS) / 1e6, 6);
    expect(resumed.status).toMatchObject({ status: 'SUCCEEDED', requested: 1200 - partial.length });
    expect(domains([...partial, ...resumed.rows])).toEqual(domains(expected));
    expect((await charged(resumed.start.runId)).charged).toBe((1200 - partial.length) * PRICE_MICROS);
  });
});

describe('store leads: filters', () => {
  it('applies every server-side filter with aliases, case-insensitively; filtered-out stores are neither returned nor billed', async () => {
    const body = {
      platform: 'Shopify, WooCommerce',
      emails: false,
      phones: true,
      instagram: true,
      visitsMin: 1500,
      maxEstimatedMonthlyVisits: 200_000,
      salesMin: 1000.5,
      employeesMax: 40,
      planExclude: ['PLUS', 'Self Hosted'],
      totalLeads: 1000,
    };
    const expected = stores.filter(
      (s) =>
        ['shopify', 'woocommerce'].includes(s.platform) &&
        s.phones.length > 0 &&
        s.instagram_url !== null &&
        s.estimated_monthly_visits! >= 1500 &&
        s.estimated_monthly_visits! <= 200_000 &&
        s.estimated_monthly_sales! >= 1001 &&
        s.employee_count! <= 40 &&
        !['plus', 'self_hosted'].includes(s.plan_tier ?? ''),
    );
    expect(expected.length).toBeGreaterThan(5);
    expect(expected.length).toBeLessThan(1000);
    expect(expected.some((s) => s.emails.length === 0)).toBe(true);
    const { start, status, rows } = await t.runTool(key, PATH, body);
    expect(rows).toEqual(expected.map(asRow));
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      statusMessage: `Finished: ${expected.length} leads`,
      requested: 1000,
    });
    expect((await charged(start.runId)).charged).toBe(expected.length * PRICE_MICROS);
  });

  it('matches category, city and state case-insensitively, a US state by name', async () => {
    const target = stores.find((s) => s.country_code === 'US' && s.state === 'TX' && s.emails.length > 0)!;
    const { rows } = await t.runTool(key, PATH, {
      category: target.category!.toUpperCase(),
      city: target.city!.toLowerCase(),
      state: 'texas',
      totalLeads: 500,
    });
    const expected = stores.filter(
      (s) => s.category === target.category && s.city === target.city && s.state === 'TX' && s.emails.length > 0,
    );
    expect(domains(rows)).toEqual(domains(expected));
    expect(domains(rows)).toContain(target.domain);
  });

  it('matches technologies and apps ignoring case and spacing; several names match any of them', async () => {
    const tech = await t.runTool(key, PATH, {
      technologies: 'google analytics, TIKTOK-pixel',
      countryCode: 'GB',
      totalLeads: 500,
    });
    const expectedTech = stores.filter(
      (s) =>
        s.country_code === 'GB' &&
        s.emails.length > 0 &&
        (s.technologies.includes('Google Analytics') || s.technologies.includes('TikTok Pixel')),
    );
    expect(expectedTech.length).toBeGreaterThan(0);
    expect(domains(tech.rows)).toEqual(domains(expectedTech));

    const apps = await t.runTool(key, PATH, { apps: 'judge.me product-reviews', platform: 'shopify', totalLeads: 500 });
    const expectedApps = stores.filter((s) => s.apps.includes('Judge.me Product Reviews') && s.emails.length > 0);
    expect(expectedApps.length).toBeGreaterThan(0);
    expect(domains(apps.rows)).toEqual(domains(expectedApps));
  });

  it('requires each social profile asked for; a technology no store uses matches nothing and costs nothing', async () => {
    const socials = await t.runTool(key, PATH, {
      tiktok: true,
      youtube: true,
      pinterest: true,
      linkedin: false,
      totalLeads: 500,
    });
    const expected = stores.filter((s) => s.emails.length > 0 && s.tiktok_url && s.youtube_url && s.pinterest_url);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.some((s) => s.linkedin_url === null)).toBe(true);
    expect(domains(socials.rows)).toEqual(domains(expected));

    const none = await t.runTool(key, PATH, { technologies: 'Quantum Checkout' });
    expect(none.status.status).toBe('SUCCEEDED');
    expect(none.rows).toEqual([]);
    expect((await charged(none.start.runId)).charged).toBe(0);
  });
});

describe('store leads: refusals', () => {
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    [
      'an unknown platform',
      { platform: 'shopify, ebay' },
      'platform',
      /unknown platform "ebay"; one of shopify, woocommerce/,
    ],
    ['a three-letter country code', { countryCode: 'USA' }, 'countryCode', /two-letter country code/],
    ['no leads', { totalLeads: 0 }, 'totalLeads', /at least 1/],
    ['too many leads', { totalLeads: 50_001 }, 'totalLeads', /at most 50000/],
    ['a fractional count', { totalLeads: 10.5 }, 'totalLeads', /whole number/],
    [
      'a resume point past the job',
      { totalLeads: 100, resumeFromLead: 100 },
      'resumeFromLead',
      /less than totalLeads \(100\)/,
    ],
    ['a negative offset', { offset: -1 }, 'offset', /0 or more/],
    [
      'an alias disagreeing with its long name',
      { visitsMin: 100, minEstimatedMonthlyVisits: 200 },
      'visitsMin',
      /alias of minEstimatedMonthlyVisits/,
    ],
    ['a minimum above its maximum', { salesMin: 5000, salesMax: 100 }, 'salesMax', /at least the minimum \(5000\)/],
    ['apps with a platform list without shopify', { apps: 'Vitals', platform: 'wix' }, 'apps', /only for shopify/],
    ['planExclude as a string', { planExclude: 'plus' }, 'planExclude', /list of plan tiers/],
    ['a non-boolean social flag', { instagram: 'yes' }, 'instagram', /true or false/],
    ['a long file name', { fileName: 'x'.repeat(51) }, 'fileName', /at most 50 characters/],
  ];
  it.each(cases)('refuses %s with 400 validation_failed naming the field', async (_, body, field, message) => {
    const res = await t.request('POST', PATH, { key, body });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toContainEqual({ path: field, message: expect.stringMatching(message) });
  });
});
