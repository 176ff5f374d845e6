import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkScore } from '../../src/tools/lib/email/crawl.ts';
import {
  decodeCloudflareEmail,
  emailsInText,
  extractPage,
  looksLikePersonName,
} from '../../src/tools/lib/email/extract.ts';
import { matchTitle } from '../../src/tools/lib/email/titles.ts';
import { WEBSITE_FINDER_COLUMNS } from '../../src/tools/website-finder.ts';
import { LOOPBACK, mxTo, type LocalWeb, type MailboxMode, type Sites, type Zone } from '../fixtures/net.ts';
import { cloudflareEncode, companySite, OTHER_SITES } from '../fixtures/sites.ts';
import type { TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';
import { startNetworkedTestApp, type NetworkedTestApp } from '../helpers/network.ts';
import { gate, waitFor } from '../helpers/wait.ts';

const PATH = '/api/v1/scrape/website-finder';

let t: NetworkedTestApp<LocalWeb>;
let key: string;
let web: LocalWeb;
const zone: Zone = {};
const sites: Sites = { ...OTHER_SITES };
const mailboxes: Record<string, MailboxMode> = {};
/** Holds slow-site.test's home page until the cancel test lets it go. */
const slowHome = gate();

/** The CEO of a seeded company, with an email and a mobile number, and ASCII names. */
interface Ceo {
  domain: string;
  first_name: string;
  last_name: string;
  email: string;
  mobile: string;
  linkedin_url: string;
}
let ceo: Ceo;

beforeAll(async () => {
  // A held page must outlast the cancel test however slow the machine: no web timeout can end it first.
  t = await startNetworkedTestApp({ zone, mailboxes, sites }, { webTimeoutMs: 120_000 });
  ({ web } = t);
  ({ apiKey: key } = await t.account());

  const ceos = (await t.app.core.sql`
    select c.domain, p.first_name, p.last_name, p.email, p.mobile, p.linkedin_url from company c join person p on p.company_id = c.id
    where p.title = 'CEO' and p.email is not null and p.mobile is not null and p.first_name ~ '^[A-Za-z]+$' and p.last_name ~ '^[A-Za-z]+$'
      and (select count(*) from person p2 where p2.company_id = c.id and p2.title = 'CEO') = 1
    order by c.id limit 1`) as unknown as Ceo[];
  ceo = ceos[0]!;
  Object.assign(sites, {
    [ceo.domain]: companySite({ domain: ceo.domain, ceo: { first: ceo.first_name, last: ceo.last_name } }),
  });
  Object.assign(zone, {
    [ceo.domain]: { ...LOOPBACK, ...mxTo('mx.shared.test') },
    'mx.shared.test': LOOPBACK,
    'robots-all.test': LOOPBACK,
    'broken.test': LOOPBACK,
    'nomatch.test': LOOPBACK,
    'intranet-site.test': { A: ['10.0.0.8'] },
    'slow-site.test': LOOPBACK,
  });
  sites['slow-site.test'] = { '/robots.txt': { status: 404 }, '/': { body: '<p>slow</p>', until: slowHome.promise } };
  mailboxes[ceo.domain] = { mode: 'list', users: [ceo.email.split('@')[0]!.toLowerCase(), 'zora'] };
});
afterAll(async () => {
  slowHome.open();
  await t?.stop();
});

describe('the domain email finder over REST', () => {
  let result: Awaited<ReturnType<TestApp['runTool']>>;
  const rowsOf = (domain: string) => result.rows.filter((r) => r.domain === domain);

  beforeAll(async () => {
    result = await t.runTool(
      key,
      PATH,
      {
        domains: [
          ceo.domain,
          'robots-all.test',
          'nx-site.test',
          'intranet-site.test',
          'broken.test',
          'nomatch.test',
          `https://www.${ceo.domain}/`,
        ],
        jobTitle: 'CEO',
        autoValidateEmails: true,
        autoFindMobiles: true,
      },
      20_000,
    );
  });

  it('starts with the domains deduplicated and holds the most the run can cost', () => {
    expect(result.start).toEqual({
      runId: expect.any(String),
      status: 'RUNNING',
      message: 'Searching 6 domains for "CEO", up to 5 pages each (1 repeated domain removed)',
      estimatedCost: 1.497,
    });
    expect(result.status).toMatchObject({ status: 'SUCCEEDED', handled: 6, requested: 6 });
    for (const row of result.rows) expect(Object.keys(row)).toEqual(WEBSITE_FINDER_COLUMNS.map((c) => c.key));
  });

  it('crawls at most 5 pages: the home page, then the likeliest links, and nothing robots.txt disallows', () => {
    const paths = web.requests.filter((r) => r.startsWith(`${ceo.domain} `)).map((r) => r.split(' ')[1]);
    expect(paths).toEqual(['/robots.txt', '/', '/team', '/leadership', '/about', '/contact']);
    expect(rowsOf(ceo.domain).every((r) => r.pages_crawled === 5 && r.site_status === 'ok')).toBe(true);
  });

  it('merges the site’s people with the catalog’s and matches the title loosely', () => {
    const rows = rowsOf(ceo.domain);
    expect(rows.map((r) => [r.full_name, r.title, r.title_match, r.source])).toEqual([
      [`${ceo.first_name} ${ceo.last_name}`, 'Chief Executive Officer', 100, 'website+catalog'],
      ['Omar Reyes', 'Chief Executive Officer, EMEA', 75, 'website'],
      ['Zora Vance', 'Co-Founder & CEO', 60, 'website'],
    ]);
    expect(rows[0]).toMatchObject({
      status: 'found',
      first_name: ceo.first_name,
      last_name: ceo.last_name,
      email: ceo.email.toLowerCase(),
      email_source: 'catalog',
      page_url: `http://${ceo.domain}:${web.port}/team`,
      linkedin_url: ceo.linkedin_url,
      mobile: ceo.mobile,
      email_status: 'valid',
    });
    expect(rows[1]).toMatchObject({
      email: null,
      email_status: null,
      mobile: null,
      page_url: `http://${ceo.domain}:${web.port}/leadership`,
    });
    expect(rows[2]).toMatchObject({
      email: `zora@${ceo.domain}`,
      email_source: 'website',
      email_status: 'valid',
      mobile: null,
    });
  });

  it('extracts every form of address on the pages it read', () => {
    const other = rowsOf(ceo.domain)[0]!.domain_emails as string[];
    expect([...other].sort()).toEqual(
      [
        `hello@${ceo.domain}`,
        `info@${ceo.domain}`,
        `lena.ortiz@${ceo.domain}`,
        `press@${ceo.domain}`,
        `sales@${ceo.domain}`,
      ].sort(),
    );
  });

  it('reports each domain it could not read, without failing the run', () => {
    expect(rowsOf('robots-all.test')).toEqual([
      expect.objectContaining({
        status: 'blocked_by_robots',
        reason: 'robots.txt disallows the home page',
        pages_crawled: 0,
      }),
    ]);
    expect(web.requests.filter((r) => r.startsWith('robots-all.test '))).toEqual(['robots-all.test /robots.txt']);
    expect(rowsOf('nx-site.test')).toEqual([
      expect.objectContaining({
        status: 'unreachable',
        reason: 'nx-site.test does not resolve: no such domain (NXDOMAIN)',
        email: null,
      }),
    ]);
    expect(rowsOf('intranet-site.test')).toEqual([
      expect.objectContaining({
        status: 'refused',
        site_status: 'refused',
        reason: 'intranet-site.test resolves to private address (RFC 1918) 10.0.0.8',
      }),
    ]);
    expect(rowsOf('broken.test')).toEqual([
      expect.objectContaining({ status: 'unreachable', reason: 'the home page answered HTTP 500', pages_crawled: 1 }),
    ]);
    expect(rowsOf('nomatch.test')).toEqual([
      expect.objectContaining({
        status: 'no_match',
        site_status: 'ok',
        reason: 'nobody with a title matching "CEO" on the site or in the lead database',
        pages_crawled: 2,
      }),
    ]);
    expect(result.rows.map((r) => r.domain)).toEqual([
      ceo.domain,
      ceo.domain,
      ceo.domain,
      'robots-all.test',
      'nx-site.test',
      'intranet-site.test',
      'broken.test',
      'nomatch.test',
    ]);
  });

  it('bills 0.0499 USD per contact found, nothing for domain rows', async () => {
    const [run] = await t.app.core.sql`select charged_micros, billed_units from run where id = ${result.start.runId}`;
    expect(run).toEqual({ charged_micros: String(3 * 49_900), billed_units: 3 });
  });
});

describe('catalog people without the site', () => {
  it('returns the catalog’s matches when the title is only in the lead database, in catalog order', async () => {
    const expected = (await t.app.core.sql`
      select p.first_name, p.last_name, p.email from person p join company c on c.id = p.company_id
      where c.domain = ${ceo.domain} and p.title = 'VP of Sales' order by (p.email is null), p.id`) as unknown as {
      first_name: string;
      last_name: string;
      email: string | null;
    }[];
    const { rows } = await t.runTool(key, PATH, { domains: [ceo.domain], jobTitle: 'VP Sales' });
    const fromCatalog = expected.map((p) => [
      `${p.first_name} ${p.last_name}`,
      'catalog',
      p.email?.toLowerCase() ?? null,
    ]);
    expect(rows.map((r) => [r.full_name, r.source, r.email])).toEqual(
      [['Max Pine', 'website', null], ...fromCatalog].slice(0, 5),
    );
    expect(rows[0]).toMatchObject({
      linkedin_url: 'https://www.linkedin.com/in/max-pine',
      email_status: null,
      mobile: null,
    });
  });
});

describe('refusals, cancel and GraphQL', () => {
  it.each([
    [{ jobTitle: 'CEO' }, 'domains', 'domains is required: company root domains such as ["acme.com"]'],
    [{ domains: [], jobTitle: 'CEO' }, 'domains', 'send at least one domain'],
    [{ domains: ['acme.test', 'not a domain'], jobTitle: 'CEO' }, 'domains.1', '"not a domain" is not a domain'],
    [{ domains: ['acme.test'] }, 'jobTitle', 'jobTitle is required'],
    [{ domains: ['acme.test'], jobTitle: ['CEO', 'CTO'] }, 'jobTitle', 'must be a string: one job title per request'],
    [{ domains: ['acme.test'], jobTitle: '&&' }, 'jobTitle', 'must contain a word to match'],
    [{ domains: ['acme.test'], jobTitle: 'CEO', autoValidateEmails: 'yes' }, 'autoValidateEmails', expect.any(String)],
  ])('400 for %j', async (body, path, message) => {
    const res = await t.request('POST', PATH, { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toContainEqual({ path, message });
  });

  it('can be cancelled while it crawls, keeping and billing the contacts found so far', async () => {
    const start = await t.request('POST', PATH, {
      key,
      body: { domains: [ceo.domain, 'slow-site.test'], jobTitle: 'CEO' },
    });
    expect(start.status).toBe(200);
    const runId = start.body.runId as string;
    // The first domain is done at once; the second one's home page is held until after the cancel.
    await waitFor(
      () => t.request('GET', `/api/v1/scrape/status/${runId}`, { key }),
      (s) => s.body.handled >= 1,
      { what: 'the first domain to be handled' },
    );
    await waitFor(
      () => web.held,
      (n) => n === 1,
      { what: "slow-site.test's home page to be asked for" },
    );
    const cancel = await t.request('POST', `/api/v1/scrape/cancel/${runId}`, { key });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ runId, status: 'ABORTING' });
    const done = await t.waitForRun(key, runId);
    expect(web.held).toBe(1); // the run ended while the page was still held
    slowHome.open();
    expect(done).toMatchObject({ status: 'ABORTED', handled: 1 });
    const rows = (await t.request('GET', `/api/downloads/${runId}?format=json`, { key })).body as {
      domain: string;
      status: string;
    }[];
    expect(rows.map((r) => [r.domain, r.status])).toEqual([
      [ceo.domain, 'found'],
      [ceo.domain, 'found'],
      [ceo.domain, 'found'],
    ]);
    const [run] = await t.app.core.sql`select charged_micros from run where id = ${runId}`;
    expect(run!.charged_micros).toBe(String(3 * 49_900));
  });

  it('starts through GraphQL', async () => {
    const Start = graphql(`
      mutation WebsiteFinderStart($input: StartWebsiteFinderInput!) { startWebsiteFinder(input: $input) { run { id status } message estimatedCost } }
    `);
    const res = await t.graphql(key, Start, { input: { domains: ['nomatch.test'], jobTitle: 'VP of Sales' } });
    expect(res.body.errors).toBeUndefined();
    const payload = res.body.data!.startWebsiteFinder;
    expect(payload).toMatchObject({
      run: { status: 'RUNNING' },
      message: 'Searching 1 domain for "VP of Sales", up to 5 pages each',
      estimatedCost: '0.2495',
    });
    expect((await t.waitForRun(key, payload.run!.id)).status).toBe('SUCCEEDED');
    const rows = (await t.request('GET', `/api/downloads/${payload.run!.id}?format=json`, { key })).body;
    expect(rows).toEqual([
      expect.objectContaining({
        domain: 'nomatch.test',
        status: 'found',
        full_name: 'Ada Byrne',
        title: 'VP of Sales',
        source: 'website',
      }),
    ]);
  });
});

describe('extraction and matching rules', () => {
  it('reads obfuscated addresses', () => {
    expect(
      emailsInText(
        'jane [at] acme [dot] com, bob(at)acme.co.uk, carl {at} acme {dot} io, dee at acme dot com, eve@acme.com.',
      ),
    ).toEqual(['eve@acme.com', 'jane@acme.com', 'bob@acme.co.uk', 'carl@acme.io', 'dee@acme.com']);
    // Block boundaries end an address: "acme.com." then "General" is not acme.com.general.
    expect(
      extractPage('<p>Write: press (at) acme.com.</p><p>General enquiries</p>', 'https://acme.com/').emails,
    ).toEqual(['press@acme.com']);
    expect(emailsInText('Contact us at acme.com or see logo@2x.png')).toEqual([]);
    expect(decodeCloudflareEmail(cloudflareEncode('info@acme.com', 0x33))).toBe('info@acme.com');
  });

  it('reads people from JSON-LD @graph, microdata and team cards', () => {
    const html = `
      <script type="application/ld+json">{"@graph":[{"@type":["Person"],"givenName":"Ann","familyName":"Lee","jobTitle":"CFO","sameAs":["https://www.linkedin.com/in/ann-lee"]}]}</script>
      <script type="application/ld+json">{broken</script>
      <div itemscope itemtype="http://schema.org/Person"><meta itemprop="name" content="Bo Chan"><a itemprop="email" href="mailto:bo@acme.com">mail</a><span itemprop="jobTitle">COO</span></div>
      <ul><li class="staff-card"><strong>Cy Dunn</strong><em>Head of Engineering</em><a href="mailto:cy@acme.com">cy</a></li></ul>
      <div class="profile"><h4>Read More</h4><p>Manager</p></div>`;
    const facts = extractPage(html, 'https://acme.com/team');
    expect(facts.people).toEqual([
      {
        name: 'Ann Lee',
        title: 'CFO',
        email: null,
        linkedinUrl: 'https://www.linkedin.com/in/ann-lee',
        via: 'json-ld',
      },
      { name: 'Bo Chan', title: 'COO', email: 'bo@acme.com', linkedinUrl: null, via: 'microdata' },
      { name: 'Cy Dunn', title: 'Head of Engineering', email: 'cy@acme.com', linkedinUrl: null, via: 'team-card' },
    ]);
  });

  it('matches job titles loosely', () => {
    expect(matchTitle('CEO', 'Co-Founder & Chief Executive Officer')).toBeGreaterThan(0);
    expect(matchTitle('VP Sales', 'Vice President of Sales')).toBe(1);
    expect(matchTitle('Marketing Director', 'Director of Digital Marketing')).toBeGreaterThan(0);
    expect(matchTitle('Head of Engineering', 'Engineering Manager')).toBe(0);
    expect(matchTitle('CTO', 'CEO')).toBe(0);
    expect(matchTitle('Founder', 'Co-Founder')).toBeGreaterThan(0);
  });

  it('tells names and likely team pages apart', () => {
    expect(looksLikePersonName('Mary-Ann van der Berg')).toBe(true);
    expect(looksLikePersonName('Meet The Team')).toBe(false);
    expect(looksLikePersonName('Call 555 1234')).toBe(false);
    expect(linkScore(new URL('https://acme.com/our-team'), '')).toBe(10);
    expect(linkScore(new URL('https://acme.com/company/about-us'), 'About')).toBe(6);
    expect(linkScore(new URL('https://acme.com/x'), 'Contact us')).toBe(5);
    expect(linkScore(new URL('https://acme.com/team.pdf'), 'Team')).toBe(0);
    expect(linkScore(new URL('https://acme.com/pricing'), 'Pricing')).toBe(0);
  });
});
