import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events/topics.ts';
import { rootDomain } from '../../src/catalog/stores/domains.ts';
import { isoWeekPeriod, monthPeriod, technologyKey } from '../../src/catalog/stores/technologies.ts';
import { techStackTool } from '../../src/tools/tech-stack.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';
import { waitFor } from '../helpers/wait.ts';

const PATH = '/api/v1/scrape/techstack';
const PRICE_MICROS = Number(techStackTool.price.unitMicros);

let t: TestApp;
let key: string;
let accountId: string;

/** Status messages of each run of the account, as published while it ran. */
const progress = new Map<string, { messages: string[]; finished: boolean }>();
let events: AsyncIterableIterator<RunEvent> & { return?: () => Promise<unknown> };

beforeAll(async () => {
  ({ t, key, accountId } = await appWithAccount());
  await t.app.core.events.ready;
  events = (await t.app.core.events.subscribe('runEvents', accountId)) as typeof events;
  void (async () => {
    for await (const event of events) {
      const run = progress.get(event.run.id) ?? { messages: [], finished: false };
      run.messages.push(event.run.statusMessage);
      if (event.kind === 'finished') run.finished = true;
      progress.set(event.run.id, run);
    }
  })();
});
afterAll(async () => {
  await events?.return?.();
  await t?.stop();
});

async function messagesOf(runId: string): Promise<string[]> {
  return (await waitFor(
    () => progress.get(runId),
    (run) => !!run?.finished,
    { what: `the finished event of ${runId}` },
  ))!.messages;
}

async function charged(runId: string) {
  const [run] = await t.app.core.sql`select charged_micros::text as charged, started_at from run where id = ${runId}`;
  return { charged: Number(run!.charged), startedAt: new Date(run!.started_at) };
}

interface Website {
  domain: string;
  name: string;
  platform: string | null;
  category: string | null;
  country: string | null;
  state: string | null;
  city: string | null;
  names: string[];
  dataset: 'stores' | 'companies';
}

/** Every store and company website with its technologies (and apps), read straight from the catalog. */
async function websites(): Promise<Website[]> {
  const stores = await t.app.core
    .sql`select domain, name, platform, category, country_code, state, city, technologies, apps from store order by id`;
  const companies = await t.app.core
    .sql`select domain, name, industry, country, state, city, technologies from company order by id`;
  const country = new Intl.DisplayNames(['en'], { type: 'region' });
  return [
    ...stores.map((s) => ({
      domain: s.domain,
      name: s.name,
      platform: s.platform,
      category: s.category,
      country: s.country_code ? country.of(s.country_code)! : null,
      state: s.state,
      city: s.city,
      names: [...s.technologies, ...s.apps],
      dataset: 'stores' as const,
    })),
    ...companies.map((c) => ({
      domain: c.domain,
      name: c.name,
      platform: null,
      category: c.industry,
      country: c.country,
      state: c.state,
      city: c.city,
      names: c.technologies,
      dataset: 'companies' as const,
    })),
  ];
}

/** The root domains of websites using a name with the same key, sorted, with where each was found. */
async function expectedDomains(technology: string) {
  const found = new Map<string, Set<string>>();
  for (const w of await websites()) {
    if (!w.names.some((n) => technologyKey(n) === technologyKey(technology))) continue;
    const root = rootDomain(w.domain)!;
    found.set(root, (found.get(root) ?? new Set()).add(w.dataset));
  }
  return [...found.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([domain, datasets]) => ({ domain, found_in: [...datasets] }));
}

describe('root domains and names', () => {
  it.each([
    ['www.example.com', 'example.com'],
    ['shop.example.com', 'example.com'],
    ['https://Blog.Example.com:8443/path?q=1', 'example.com'],
    ['store.example.co.uk', 'example.co.uk'],
    ['example.co.uk', 'example.co.uk'],
    ['a.b.example.com.au', 'example.com.au'],
    ['www.example.ne.jp', 'example.ne.jp'],
    ['example.io', 'example.io'],
    ['not a domain', null],
  ])('%s → %s', (value, root) => expect(rootDomain(value)).toBe(root));

  it('compares names ignoring case, spacing and punctuation, but keeps + and #', () => {
    expect(
      new Set(['Google Analytics', 'googleanalytics', ' google-analytics ', 'GOOGLE_ANALYTICS'].map(technologyKey))
        .size,
    ).toBe(1);
    expect(technologyKey('C++')).not.toBe(technologyKey('C'));
  });

  it('names monthly periods and ISO weeks', () => {
    expect(monthPeriod(new Date('2026-11-30T23:59:59Z'))).toBe('2026-11');
    expect(isoWeekPeriod(new Date('2026-11-19T12:00:00Z'))).toBe('2026-W47');
    expect(isoWeekPeriod(new Date('2027-01-01T00:00:00Z'))).toBe('2026-W53');
    expect(isoWeekPeriod(new Date('2024-12-30T00:00:00Z'))).toBe('2025-W01');
  });
});

describe('tech stack: happy path', () => {
  it('starts with {runId, estimatedCost}, lists the deduplicated root domains running the technology and bills 4.99 flat', async () => {
    const expected = await expectedDomains('Klaviyo');
    expect(expected.some((d) => d.found_in.includes('stores'))).toBe(true);
    expect(expected.some((d) => d.found_in.includes('companies'))).toBe(true);

    const { start, status, rows } = await t.runTool(key, PATH, { technology: 'klaviyo' });
    expect(start).toEqual({
      runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/),
      status: 'RUNNING',
      message: 'Looking up the websites running "klaviyo"',
      estimatedCost: 4.99,
    });
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: 1, requested: 1 });
    expect(status.statusMessage).toMatch(
      new RegExp(`^Finished: ${expected.length} domains\\. Looked up in the \\d{4}-\\d{2} data$`),
    );
    expect(rows.map((r) => ({ domain: r.domain, found_in: r.found_in }))).toEqual(expected);
    expect(Object.keys(rows[0])).toEqual(techStackTool.columns.map((c) => c.key));

    const sites = await websites();
    const store = sites.find((w) => w.dataset === 'stores' && w.names.includes('Klaviyo'))!;
    expect(rows.find((r) => r.domain === store.domain)).toMatchObject({
      name: store.name,
      platform: store.platform,
      category: store.category,
      country: store.country,
      state: store.state,
      city: store.city,
      matched: ['Klaviyo'],
    });
    const company = sites.find(
      (w) =>
        w.dataset === 'companies' &&
        w.names.includes('Klaviyo') &&
        !sites.some((s) => s.dataset === 'stores' && s.domain === w.domain),
    )!;
    expect(rows.find((r) => r.domain === company.domain)).toMatchObject({
      name: company.name,
      platform: null,
      category: company.category,
      country: company.country,
      found_in: ['companies'],
    });

    expect((await charged(start.runId)).charged).toBe(PRICE_MICROS);
  });

  it('answers a GraphQL startTechStack mutation', async () => {
    const Start = graphql(
      `mutation TechStackStart { startTechStack(input: { technology: "Hotjar", fileName: "hotjar-sites" }) { run { id status } message estimatedCost } }`,
    );
    const res = await t.graphql(key, Start);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!.startTechStack).toMatchObject({
      run: { status: 'RUNNING' },
      message: 'Looking up the websites running "Hotjar"',
      estimatedCost: '4.99',
    });
    const runId = res.body.data!.startTechStack.run!.id;
    expect((await t.waitForRun(key, runId)).status).toBe('SUCCEEDED');
    const csv = await t.request('GET', `/api/downloads/${runId}`, { key });
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="hotjar-sites.csv"');
    expect(csv.text.trim().split('\n')).toHaveLength((await expectedDomains('Hotjar')).length + 1);
  });
});

describe('tech stack: cache', () => {
  it("matches ignoring case and spacing, answers repeated requests from the month's cache and bills each run flat", async () => {
    const expected = await expectedDomains('Google Analytics');
    const before = await t.app.core.sql`select count(*)::int as n from tool_cache where tool = 'tech-stack'`;
    const first = await t.runTool(key, PATH, { technology: 'Google Analytics' });
    const second = await t.runTool(key, PATH, { technology: 'googleanalytics' });
    const third = await t.runTool(key, PATH, { technology: ' GOOGLE-analytics ' });
    for (const run of [first, second, third]) {
      expect(run.rows.map((r) => r.domain)).toEqual(expected.map((d) => d.domain));
      expect((await charged(run.start.runId)).charged).toBe(PRICE_MICROS);
    }
    const { startedAt } = await charged(first.start.runId);
    const cache = await t.app.core
      .sql`select key, period from tool_cache where tool = 'tech-stack' and key = 'googleanalytics'`;
    expect(cache).toEqual([{ key: 'googleanalytics', period: monthPeriod(startedAt) }]);
    const after = await t.app.core.sql`select count(*)::int as n from tool_cache where tool = 'tech-stack'`;
    expect(after[0]!.n - before[0]!.n).toBe(1);

    expect((await messagesOf(first.start.runId)).some((m) => /looked up in the \d{4}-\d{2} data/.test(m))).toBe(true);
    for (const run of [second, third]) {
      const messages = await messagesOf(run.start.runId);
      expect(messages).toContainEqual(
        `${expected.length} domains of ${expected.length} running "${run.start.message.match(/"(.*)"/)![1]}" (Google Analytics): answered from the cache of the ${monthPeriod(startedAt)} data (monthly refresh)`,
      );
      expect(run.status.statusMessage).toBe(
        `Finished: ${expected.length} domains. Answered from the cache of the ${monthPeriod(startedAt)} data (monthly refresh)`,
      );
    }
  });

  it('uses a cached answer of the current period, and never one of a past period', async () => {
    const period = monthPeriod(new Date());
    // Cached rows are tuples in column order.
    const planted = {
      matched: ['Stripe'],
      rows: [['planted.example', 'Planted', null, null, null, null, null, ['Stripe'], ['stores']]],
    };
    await t.app.core
      .sql`insert into tool_cache (tool, key, period, value) values ('tech-stack', 'stripe', ${period}, ${JSON.stringify(planted)}::jsonb)`;
    await t.app.core
      .sql`insert into tool_cache (tool, key, period, value) values ('tech-stack', 'paypal', '2000-01', ${JSON.stringify({ ...planted, matched: ['PayPal'] })}::jsonb)`;

    const stripe = await t.runTool(key, PATH, { technology: 'stripe' });
    expect(stripe.rows).toEqual([
      {
        domain: 'planted.example',
        name: 'Planted',
        platform: null,
        category: null,
        country: null,
        state: null,
        city: null,
        matched: ['Stripe'],
        found_in: ['stores'],
      },
    ]);
    const paypal = await t.runTool(key, PATH, { technology: 'PayPal' });
    expect(paypal.rows.map((r) => r.domain)).toEqual((await expectedDomains('PayPal')).map((d) => d.domain));
    expect(paypal.rows.map((r) => r.domain)).not.toContain('planted.example');
  });

  it('caches a store app for the ISO week', async () => {
    const expected = await expectedDomains('Judge.me Product Reviews');
    expect(expected.length).toBeGreaterThan(0);
    const { start, rows } = await t.runTool(key, PATH, { technology: 'judge.me product reviews' });
    expect(rows.map((r) => r.domain)).toEqual(expected.map((d) => d.domain));
    expect(rows[0].matched).toEqual(['Judge.me Product Reviews']);
    const { startedAt } = await charged(start.runId);
    const cache = await t.app.core
      .sql`select period from tool_cache where tool = 'tech-stack' and key = 'judgemeproductreviews'`;
    expect(cache).toEqual([{ period: isoWeekPeriod(startedAt) }]);
    expect(
      (await messagesOf(start.runId)).some((m) => m.includes(`looked up in the ${isoWeekPeriod(startedAt)} data`)),
    ).toBe(true);
  });
});

describe('tech stack: domains', () => {
  it('reduces subdomains to one root domain across stores and companies, after a fresh import of the data', async () => {
    const sql = t.app.core.sql;
    await sql`insert into store (domain, name, platform, country_code, city, state, category, technologies) values
      ('www.acme-dedupe.co.uk', 'Acme UK', 'shopify', 'GB', 'London', 'England', 'Apparel', '{Zeta Test Pixel}'),
      ('shop.acme-dedupe.co.uk', 'Acme Shop', 'woocommerce', 'GB', 'Manchester', 'England', 'Apparel', '{zeta-test pixel,Stripe}'),
      ('blog.other-zeta.com', 'Other Zeta', 'wix', null, null, null, null, '{ZETA TEST PIXEL}')`;
    await sql`insert into company (domain, name, industry, country, technologies) values
      ('acme-dedupe.co.uk', 'Acme Dedupe Ltd', 'Retail', 'United Kingdom', '{Zeta Test Pixel}'),
      ('zeta-only.io', 'Zeta Only', 'Software', 'United States', '{Zeta-Test-Pixel}')`;
    await sql`update dataset_state set refreshed_at = now() where dataset in ('stores', 'companies')`;

    const { rows } = await t.runTool(key, PATH, { technology: 'zetatestpixel' });
    expect(rows).toEqual([
      {
        domain: 'acme-dedupe.co.uk',
        name: 'Acme UK',
        platform: 'shopify',
        category: 'Apparel',
        country: 'United Kingdom',
        state: 'England',
        city: 'London',
        matched: ['Zeta Test Pixel', 'zeta-test pixel'],
        found_in: ['stores', 'companies'],
      },
      {
        domain: 'other-zeta.com',
        name: 'Other Zeta',
        platform: 'wix',
        category: null,
        country: null,
        state: null,
        city: null,
        matched: ['ZETA TEST PIXEL'],
        found_in: ['stores'],
      },
      {
        domain: 'zeta-only.io',
        name: 'Zeta Only',
        platform: null,
        category: 'Software',
        country: 'United States',
        state: null,
        city: null,
        matched: ['Zeta-Test-Pixel'],
        found_in: ['companies'],
      },
    ]);
  });

  it('bills a technology no website runs flat too, and suggests similar names', async () => {
    const { start, status, rows } = await t.runTool(key, PATH, { technology: 'Google' });
    expect(status.status).toBe('SUCCEEDED');
    expect(rows).toEqual([]);
    expect((await charged(start.runId)).charged).toBe(PRICE_MICROS);
    const messages = await messagesOf(start.runId);
    expect(
      messages.some(
        (m) => m.startsWith('No website runs "Google"') && m.includes('similar names: Google Ads, Google Cloud'),
      ),
    ).toBe(true);
  });
});

describe('tech stack: refusals', () => {
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ['a missing technology', {}, 'technology', /required/],
    ['an empty technology', { technology: '  ' }, 'technology', /must not be empty/],
    ['punctuation only', { technology: '--' }, 'technology', /letters or digits/],
    ['a number', { technology: 42 }, 'technology', /as a string/],
    ['a long file name', { technology: 'Stripe', fileName: 'x'.repeat(51) }, 'fileName', /at most 50 characters/],
  ];
  it.each(cases)('refuses %s with 400 validation_failed naming the field', async (_, body, field, message) => {
    const res = await t.request('POST', PATH, { key, body });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toContainEqual({ path: field, message: expect.stringMatching(message) });
  });

  it('cannot be cancelled', async () => {
    const start = await t.request('POST', PATH, { key, body: { technology: 'Zendesk' } });
    const cancel = await t.request('POST', `/api/v1/scrape/cancel/${start.body.runId}`, { key });
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.code).toBe('not_cancellable');
    expect((await t.waitForRun(key, start.body.runId)).status).toBe('SUCCEEDED');
  });
});
