import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMAIL_FINDER_COLUMNS } from '../../src/tools/email-finder.ts';
import { LOOPBACK, mxTo, type MailboxMode, type Zone } from '../fixtures/net.ts';
import type { TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';
import { startNetworkedTestApp, type NetworkedTestApp } from '../helpers/network.ts';

const PATH = '/api/v1/scrape/email-finder';

let t: NetworkedTestApp;
let key: string;
const zone: Zone = {};
const mailboxes: Record<string, MailboxMode> = {};

/** A company of the seeded catalog whose known addresses all follow one pattern, measured in SQL. */
interface PatternCompany {
  domain: string;
  name: string;
  /** Addresses at the domain with ASCII names. */
  n: number;
  first_last: number;
  flast: number;
}
let flastCo: PatternCompany;
let dottedCo: PatternCompany;
let member: { first_name: string; last_name: string; email: string };

beforeAll(async () => {
  t = await startNetworkedTestApp({ zone, mailboxes }, { smtpTimeoutMs: 500 });
  ({ apiKey: key } = await t.account());

  const companies = (await t.app.core.sql`
    with e as (
      select c.id, c.domain, c.name, p.first_name, p.last_name, regexp_replace(lower(split_part(p.email, '@', 1)), '\\d+$', '') as local
      from company c join person p on p.company_id = c.id
      where p.email is not null and lower(p.email) like '%@' || c.domain
    ), s as (
      select id, domain, name, count(*)::int as n,
        (count(*) filter (where local = lower(first_name || '.' || last_name)))::int as first_last,
        (count(*) filter (where local = lower(left(first_name, 1) || last_name)))::int as flast,
        bool_and(first_name ~ '^[A-Za-z]+$' and last_name ~ '^[A-Za-z]+$') as ascii
      from e group by id, domain, name
    )
    select domain, name, n, first_last, flast from s
    where ascii and n >= 3 and (flast = n or first_last = n)
      and (select count(*) from company c2 where lower(c2.name) = lower(s.name)) = 1
    order by id`) as unknown as PatternCompany[];
  flastCo = companies.find((c) => c.flast === c.n)!;
  dottedCo = companies.find((c) => c.first_last === c.n)!;
  const members = (await t.app.core.sql`
    select p.first_name, p.last_name, p.email from person p join company c on c.id = p.company_id
    where c.domain = ${flastCo.domain} and p.email is not null order by p.id limit 1`) as unknown as (typeof member)[];
  member = members[0]!;

  Object.assign(zone, {
    [flastCo.domain]: mxTo('mx.shared.test'),
    [dottedCo.domain]: mxTo('mx.shared.test'),
    'fresh.test': mxTo('mx.shared.test'),
    'grey.test': mxTo('mx.shared.test'),
    'mx.shared.test': LOOPBACK,
  });
  const memberLocal = member.email.split('@')[0]!;
  Object.assign(mailboxes, {
    // Both zquorn and zelda.quorn exist: the learned pattern (flast) decides.
    [flastCo.domain]: { mode: 'list', users: ['zquorn', 'zelda.quorn', memberLocal.toLowerCase()] },
    [dottedCo.domain]: { mode: 'catch-all' },
    'fresh.test': { mode: 'list', users: ['ivo.marsh', 'imarsh'] },
    'grey.test': { mode: 'greylist-forever' },
  } satisfies Record<string, MailboxMode>);
});
afterAll(async () => {
  await t?.stop();
});

describe('the email finder over REST', () => {
  let result: Awaited<ReturnType<TestApp['runTool']>>;
  const contacts = () => [
    { first_name: 'Zelda', last_name: 'Quorn', domain: flastCo.domain },
    { first_name: 'Ivo', last_name: 'Marsh', domain: dottedCo.domain },
    { first_name: member.first_name, last_name: member.last_name, domain: flastCo.domain },
    { first_name: 'Ivo', last_name: 'Marsh', domain: 'fresh.test' },
    { first_name: 'Nobody', last_name: 'Here', domain: 'fresh.test' },
    { first_name: 'Zelda', last_name: 'Quorn', company_name: `  ${flastCo.name.toUpperCase()} ` },
    { first_name: 'Zelda', last_name: 'Quorn', company_name: 'Qqxz Nonexistent Vrrbl Holdings' },
    { first_name: 'Ivo', last_name: 'Marsh', domain: 'nx-company.test' },
    { first_name: 'Ivo', last_name: 'Marsh', domain: 'grey.test' },
    { full_name: 'Dr. Ivo Marsh Jr.', domain: 'https://www.fresh.test/about' },
  ];

  beforeAll(async () => {
    result = await t.runTool(key, PATH, { contacts: contacts() }, 20_000);
  });

  it('starts with a message and the most the run can cost, and succeeds', () => {
    expect(result.start).toEqual({
      runId: expect.any(String),
      status: 'RUNNING',
      message: 'Finding emails for 10 contacts (2 by company name); 0.05 USD per email found, free if not found',
      estimatedCost: 0.5,
    });
    expect(result.status).toMatchObject({ status: 'SUCCEEDED', handled: 10, requested: 10 });
    expect(result.rows).toHaveLength(10);
    for (const row of result.rows) expect(Object.keys(row)).toEqual(EMAIL_FINDER_COLUMNS.map((c) => c.key));
  });

  it('tries the pattern learned from the catalog first and validates what it finds', () => {
    expect(flastCo.flast).toBe(flastCo.n);
    expect(result.rows[0]).toMatchObject({
      first_name: 'Zelda',
      last_name: 'Quorn',
      domain: flastCo.domain,
      company_name: flastCo.name,
      email: `zquorn@${flastCo.domain}`,
      status: 'found',
      confidence: 95,
      pattern: 'flast',
      pattern_source: 'catalog_pattern',
      known_emails: flastCo.n,
      candidates_checked: 13,
      email_status: 'valid',
      mx_host: 'mx.shared.test',
      is_role_account: false,
      is_free_webmail: false,
      best_guess: null,
    });
  });

  it('returns the best pattern on a catch-all domain, marked as such, with a confidence from the evidence', () => {
    // Every known address follows first.last: share 1, full weight from three addresses.
    const expected = Math.round(
      Math.min(95, 40 + 50 * (dottedCo.first_last / dottedCo.n) * Math.min(1, dottedCo.n / 3)),
    );
    expect(result.rows[1]).toMatchObject({
      email: `ivo.marsh@${dottedCo.domain}`,
      status: 'catch-all',
      confidence: expected,
      pattern: 'first.last',
      pattern_source: 'catalog_pattern',
      known_emails: dottedCo.n,
      email_status: 'catch-all',
      reason: `the mail server accepts any address at ${dottedCo.domain}; this is the most likely pattern (learned from ${dottedCo.n} known addresses)`,
    });
  });

  it('puts a person’s own catalog address first', () => {
    expect(result.rows[2]).toMatchObject({
      email: member.email.toLowerCase(),
      status: 'found',
      pattern_source: 'catalog_person',
      pattern: 'flast',
    });
  });

  it('falls back to the usual order where the catalog knows nothing', () => {
    expect(result.rows[3]).toMatchObject({
      email: 'ivo.marsh@fresh.test',
      status: 'found',
      pattern: 'first.last',
      pattern_source: 'default',
      known_emails: 0,
      company_name: null,
    });
    expect(result.rows[4]).toMatchObject({
      email: null,
      status: 'not_found',
      reason: 'the mail server refused all 13 candidate addresses',
      best_guess: null,
    });
  });

  it('resolves a company name through the catalog, and says when it cannot', () => {
    expect(result.rows[5]).toMatchObject({
      domain: flastCo.domain,
      company_name: flastCo.name,
      email: `zquorn@${flastCo.domain}`,
      status: 'found',
    });
    expect(result.rows[6]).toMatchObject({
      domain: null,
      email: null,
      status: 'company_not_found',
      reason: 'no company named "Qqxz Nonexistent Vrrbl Holdings" in the lead database; send its domain instead',
    });
  });

  it('reports a domain without mail and a server that will not answer, with a best guess', () => {
    expect(result.rows[7]).toMatchObject({
      domain: 'nx-company.test',
      email: null,
      status: 'no_mail_server',
      reason: 'the domain does not exist (NXDOMAIN)',
    });
    expect(result.rows[8]).toMatchObject({
      domain: 'grey.test',
      email: null,
      status: 'unknown',
      best_guess: 'ivo.marsh@grey.test',
      reason: expect.stringMatching(/^temporarily refused twice/),
    });
  });

  it('reads a full name and a domain given as a URL', () => {
    expect(result.rows[9]).toMatchObject({
      first_name: 'Ivo',
      last_name: 'Marsh',
      full_name: 'Dr. Ivo Marsh Jr.',
      domain: 'fresh.test',
      email: 'ivo.marsh@fresh.test',
      status: 'found',
    });
  });

  it('bills 0.05 USD per email found (catch-all included), nothing for the rest', async () => {
    const billed = result.rows.filter((r) => r.email).length;
    expect(billed).toBe(6);
    const [run] = await t.app.core.sql`select charged_micros, billed_units from run where id = ${result.start.runId}`;
    expect(run).toEqual({ charged_micros: String(billed * 50_000), billed_units: billed });
  });

  it('is free when nothing is found', async () => {
    const { start, rows } = await t.runTool(key, PATH, {
      contacts: [{ first_name: 'Nobody', last_name: 'Here', domain: 'fresh.test' }],
    });
    expect(rows[0]).toMatchObject({ status: 'not_found' });
    const [run] = await t.app.core.sql`select charged_micros from run where id = ${start.runId}`;
    expect(run!.charged_micros).toBe('0');
  });
});

describe('refusals and the other faces', () => {
  it('names each bad contact by its index', async () => {
    const res = await t.request('POST', PATH, {
      key,
      body: {
        contacts: [
          { first_name: 'Ann', domain: 'fresh.test' },
          { last_name: 'Lee', domain: 'fresh.test' },
          { first_name: 'Cy' },
          { full_name: 'Di Eve', domain: 'not a domain!' },
          { first_name: '123', domain: 'fresh.test' },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual([
      { path: 'contacts.1', message: 'needs a name: first_name or full_name' },
      { path: 'contacts.2', message: 'needs a company: domain or company_name' },
      { path: 'contacts.3.domain', message: '"not a domain!" is not a domain' },
      { path: 'contacts.4', message: 'the name has no letters to build an address from' },
    ]);
  });

  it.each([
    [{}, 'contacts', 'contacts is required: a list of {first_name, last_name, domain} objects'],
    [{ contacts: [] }, 'contacts', 'send at least one contact'],
    [{ contacts: ['Ann Lee'] }, 'contacts.0', expect.any(String)],
  ])('400 for %j', async (body, path, message) => {
    const res = await t.request('POST', PATH, { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toContainEqual({ path, message });
  });

  it('starts through GraphQL', async () => {
    const Start = graphql(`
      mutation EmailFinderStart($input: StartEmailFinderInput!) { startEmailFinder(input: $input) { run { id status } message estimatedCost } }
    `);
    const res = await t.graphql(key, Start, {
      input: { contacts: [{ firstName: 'Ivo', lastName: 'Marsh', domain: 'fresh.test' }] },
    });
    expect(res.body.errors).toBeUndefined();
    const payload = res.body.data!.startEmailFinder;
    expect(payload).toMatchObject({
      run: { status: 'RUNNING' },
      message: expect.stringMatching(/^Finding emails for 1 contact;/),
      estimatedCost: '0.05',
    });
    expect((await t.waitForRun(key, payload.run!.id)).status).toBe('SUCCEEDED');
    const rows = (await t.request('GET', `/api/downloads/${payload.run!.id}?format=json`, { key })).body;
    expect(rows[0]).toMatchObject({ email: 'ivo.marsh@fresh.test', status: 'found' });
  });
});
