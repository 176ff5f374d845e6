import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailValidatorTool } from '../../src/tools/email-validator.ts';
import { LOOPBACK, mxTo, type LocalDns, type LocalSmtp, type MailboxMode, type Zone } from '../fixtures/net.ts';
import type { TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';
import { startNetworkedTestApp, type NetworkedTestApp } from '../helpers/network.ts';
import { gate } from '../helpers/wait.ts';

/** slow.test's mail server holds its RCPT reply until the file is done. */
const stalled = gate();

const PATH = '/api/v1/scrape/email-validator';

let t: NetworkedTestApp;
let key: string;
let dns: LocalDns;
let smtp: LocalSmtp;
const zone: Zone = {};
const mailboxes: Record<string, MailboxMode> = {};

interface CompanyRow {
  domain: string;
  name: string;
  industry: string | null;
  size_band: string | null;
  employees_count: number | null;
  founded: number | null;
  city: string | null;
  state: string | null;
  country: string | null;
  linkedin_url: string | null;
  twitter_url: string | null;
  facebook_url: string | null;
}
let acme: CompanyRow;
let globex: CompanyRow;

beforeAll(async () => {
  t = await startNetworkedTestApp({ zone, mailboxes }, { smtpTimeoutMs: 500 });
  ({ dns, smtp } = t);
  ({ apiKey: key } = await t.account());

  // Two companies of the seeded lead database, reachable through the local DNS and SMTP servers.
  const companies = (await t.app.core.sql`
    select domain, name, industry, size_band, employees_count, founded, city, state, country, linkedin_url, twitter_url, facebook_url
    from company where twitter_url is not null and facebook_url is not null order by id limit 2`) as unknown as CompanyRow[];
  acme = companies[0]!;
  globex = companies[1]!;
  Object.assign(zone, {
    // acme: two MX records, the preferred one answers.
    [acme.domain]: {
      MX: [
        { exchange: `mx1.${acme.domain}`, priority: 10 },
        { exchange: `mx2.${acme.domain}`, priority: 20 },
      ],
    },
    [`mx1.${acme.domain}`]: LOOPBACK,
    // globex: no MX, only an A record (the implicit MX of RFC 5321 §5.1).
    [globex.domain]: LOOPBACK,
    'greylist.test': mxTo('mx.shared.test'),
    'greyforever.test': mxTo('mx.shared.test'),
    'slow.test': mxTo('mx.shared.test'),
    'policy.test': mxTo('mx.shared.test'),
    'mx.shared.test': LOOPBACK,
    'nullmx.test': { MX: [{ exchange: '', priority: 0 }] },
    'nomail.test': {},
    'private-mx.test': mxTo('mx.private-mx.test'),
    'mx.private-mx.test': { A: ['10.0.0.25'] },
    // A public address: the test allow-list keeps the run from ever connecting to it.
    'public-mx.test': mxTo('mx.public-mx.test'),
    'mx.public-mx.test': { A: ['93.184.216.34'] },
    'google-hosted.test': mxTo('aspmx.l.google.com'),
    'aspmx.l.google.com': LOOPBACK,
    'm365.test': mxTo('m365-test.mail.protection.outlook.com'),
    'm365-test.mail.protection.outlook.com': LOOPBACK,
    'gmail.com': mxTo('gmail-smtp-in.l.google.com'),
    'gmail-smtp-in.l.google.com': LOOPBACK,
    'mailinator.com': mxTo('mail.mailinator.com'),
    'mail.mailinator.com': LOOPBACK,
  });
  Object.assign(mailboxes, {
    [acme.domain]: { mode: 'list', users: ['jane.doe'] },
    [globex.domain]: { mode: 'catch-all' },
    'greylist.test': { mode: 'greylist', users: ['bob'] },
    'greyforever.test': { mode: 'greylist-forever' },
    'slow.test': { mode: 'held', until: stalled.promise },
    'policy.test': { mode: 'policy' },
    'google-hosted.test': { mode: 'list', users: ['ceo'] },
    'm365.test': { mode: 'list', users: [] },
    'gmail.com': { mode: 'list', users: ['someone'] },
    'mailinator.com': { mode: 'catch-all' },
  } satisfies Record<string, MailboxMode>);
});
afterAll(async () => {
  stalled.open();
  await t?.stop();
});

const companyOf = (c: CompanyRow) => ({
  company_name: c.name,
  company_industry: c.industry,
  company_size: c.size_band,
  company_employees: c.employees_count,
  company_founded: c.founded,
  company_location: [c.city, c.state, c.country].filter(Boolean).join(', '),
  company_linkedin_url: c.linkedin_url,
  company_twitter_url: c.twitter_url,
  company_facebook_url: c.facebook_url,
});
const noCompany = companyOf({} as CompanyRow);
Object.assign(noCompany, Object.fromEntries(Object.keys(noCompany).map((k) => [k, null])));

describe('the email validator over REST', () => {
  let result: Awaited<ReturnType<TestApp['runTool']>>;
  let emails: string[];
  /** RCPT replies the stalling server still held when the run had ended. */
  let heldAtEnd: number;

  beforeAll(async () => {
    emails = [
      `jane.doe@${acme.domain}`,
      `nobody@${acme.domain}`,
      `anyone@${globex.domain}`,
      'bob@greylist.test',
      'x@greyforever.test',
      'x@slow.test',
      'x@policy.test',
      'x@nullmx.test',
      'x@nomail.test',
      'x@nx-domain.test',
      'not-an-email',
      `a..b@${acme.domain}`,
      'x@private-mx.test',
      'ceo@google-hosted.test',
      'someone@gmail.com',
      'temp@mailinator.com',
      `sales@${acme.domain}`,
      'x@m365.test',
      'x@public-mx.test',
      // Repeats: the same address with the domain in capitals, and an exact repeat.
      `jane.doe@${acme.domain.toUpperCase()}`,
      `nobody@${acme.domain}`,
    ];
    result = await t.runTool(key, PATH, { emails }, 20_000);
    heldAtEnd = smtp.held;
  });

  it('answers {runId, message, emailCount, estimatedCost} with the duplicates removed', () => {
    expect(result.start).toEqual({
      runId: expect.any(String),
      status: 'RUNNING',
      message: 'Validating 19 emails (2 duplicates removed)',
      emailCount: 19,
      estimatedCost: 0.1368,
    });
    expect(result.status).toMatchObject({
      status: 'SUCCEEDED',
      handled: 19,
      requested: 19,
      statusMessage: 'Finished: 19 emails',
    });
  });

  it('returns one row per address, in order, with every column', () => {
    expect(result.rows.map((r) => r.email)).toEqual(emails.slice(0, 19));
    for (const row of result.rows) expect(Object.keys(row)).toEqual(emailValidatorTool.columns.map((c) => c.key));
  });

  it('gives each status from the mail server’s answers', () => {
    const by = (email: string) => result.rows.find((r) => r.email === email)!;
    expect(by(`jane.doe@${acme.domain}`)).toEqual({
      email: `jane.doe@${acme.domain}`,
      status: 'valid',
      reason: 'the mail server accepts this address (250 Accepted)',
      domain: acme.domain,
      syntax_valid: true,
      mx_found: true,
      mx_fallback: false,
      mx_host: `mx1.${acme.domain}`,
      provider: null,
      smtp_code: 250,
      is_disposable: false,
      is_role_account: false,
      is_free_webmail: false,
      ...companyOf(acme),
    });
    expect(by(`nobody@${acme.domain}`)).toMatchObject({
      status: 'invalid',
      reason: 'the mailbox does not exist (550 5.1.1 User unknown)',
      smtp_code: 550,
      ...companyOf(acme),
    });
    expect(by(`sales@${acme.domain}`)).toMatchObject({ status: 'invalid', is_role_account: true });
    expect(by(`anyone@${globex.domain}`)).toMatchObject({
      status: 'catch-all',
      reason: expect.stringMatching(/^the domain accepts any address/),
      mx_found: false,
      mx_fallback: true,
      mx_host: globex.domain,
      ...companyOf(globex),
    });
    expect(by('x@policy.test')).toMatchObject({
      status: 'unknown',
      reason: expect.stringMatching(/policy reasons \(554 5\.7\.1/),
      smtp_code: 554,
      ...noCompany,
    });
  });

  it('retries a greylisted address once, later, and gives up on one greylisted twice', () => {
    const bob = result.rows.find((r) => r.email === 'bob@greylist.test')!;
    expect(bob).toMatchObject({
      status: 'valid',
      smtp_code: 250,
      reason: 'the mail server accepts this address (250 Accepted)',
    });
    expect(result.rows.find((r) => r.email === 'x@greyforever.test')).toMatchObject({
      status: 'unknown',
      reason: 'temporarily refused twice, e.g. greylisting (451 4.7.1 Greylisted, please try again later)',
      smtp_code: 451,
    });
    const rcpts = smtp.sessions.flatMap((s) => s.commands).filter((c) => c === 'RCPT TO:<bob@greylist.test>');
    expect(rcpts).toHaveLength(2);
  });

  it('bounds a mail server that stalls by the timeout', () => {
    expect(result.rows.find((r) => r.email === 'x@slow.test')).toMatchObject({
      status: 'unknown',
      reason: 'the mail server timed out (rcpt): no reply within 500 ms',
      smtp_code: null,
    });
    // The run ended while the stalled server still held its reply: it did not wait for it.
    expect(heldAtEnd).toBe(1);
  });

  it('reads the DNS: null MX, no mail records, no domain, MX fallback, and refuses a private mail server', () => {
    const by = (email: string) => result.rows.find((r) => r.email === email)!;
    expect(by('x@nullmx.test')).toMatchObject({
      status: 'invalid',
      reason: 'the domain accepts no mail (null MX record)',
      mx_found: true,
      mx_host: null,
    });
    expect(by('x@nomail.test')).toMatchObject({
      status: 'invalid',
      reason: 'no MX and no A/AAAA record: the domain cannot receive mail',
      mx_found: false,
    });
    expect(by('x@nx-domain.test')).toMatchObject({ status: 'invalid', reason: 'the domain does not exist (NXDOMAIN)' });
    expect(by('x@private-mx.test')).toMatchObject({
      status: 'unknown',
      reason:
        'the mail server may not be contacted: mx.private-mx.test resolves to private address (RFC 1918) 10.0.0.25',
    });
    expect(by('x@public-mx.test')).toMatchObject({
      status: 'unknown',
      reason: `the mail server may not be contacted: mx.public-mx.test resolves to 93.184.216.34:${smtp.port} is not on the outbound allow-list`,
    });
  });

  it('checks syntax before anything else', () => {
    expect(result.rows.find((r) => r.email === 'not-an-email')).toMatchObject({
      status: 'invalid',
      reason: 'syntax: no @',
      syntax_valid: false,
      domain: null,
      mx_host: null,
    });
    expect(result.rows.find((r) => r.email === `a..b@${acme.domain}`)).toMatchObject({
      status: 'invalid',
      reason: 'syntax: two dots in a row',
      syntax_valid: false,
    });
  });

  it('recognises the provider from MX and flags free webmail and disposable domains', () => {
    const by = (email: string) => result.rows.find((r) => r.email === email)!;
    expect(by('ceo@google-hosted.test')).toMatchObject({
      status: 'valid',
      provider: 'Google Workspace',
      mx_host: 'aspmx.l.google.com',
    });
    expect(by('x@m365.test')).toMatchObject({ status: 'invalid', provider: 'Microsoft 365' });
    expect(by('someone@gmail.com')).toMatchObject({
      status: 'valid',
      provider: 'Gmail',
      is_free_webmail: true,
      is_disposable: false,
      ...noCompany,
    });
    expect(by('temp@mailinator.com')).toMatchObject({ status: 'catch-all', is_disposable: true });
  });

  it('asks each domain once per run: one MX lookup and one session with one random address', () => {
    expect(dns.queries.filter((q) => q.name === acme.domain && q.type === 15)).toHaveLength(1);
    const acmeSessions = smtp.sessions.filter((s) => s.commands.some((c) => c.endsWith(`@${acme.domain}>`)));
    expect(acmeSessions).toHaveLength(1);
    const rcpts = acmeSessions[0]!.commands.filter((c) => c.startsWith('RCPT TO:'));
    expect(rcpts).toEqual([
      expect.stringMatching(new RegExp(`^RCPT TO:<lg-[0-9a-f]{16}@${acme.domain.replace(/\./g, '\\.')}>$`)),
      `RCPT TO:<jane.doe@${acme.domain}>`,
      `RCPT TO:<nobody@${acme.domain}>`,
      `RCPT TO:<sales@${acme.domain}>`,
    ]);
    expect(smtp.sessions.flatMap((s) => s.commands).some((c) => /^DATA/i.test(c))).toBe(false);
  });

  it('bills 0.0072 USD per email after deduplication, whatever the status', async () => {
    const [run] = await t.app.core.sql`select charged_micros, billed_units from run where id = ${result.start.runId}`;
    expect(run).toEqual({ charged_micros: String(19 * 7200), billed_units: 19 });
  });
});

describe('refusals and the other faces', () => {
  it.each([
    [{}, 'emails', 'emails is required: a list of email addresses'],
    [{ emails: [] }, 'emails', 'send at least one email address'],
    [{ emails: 'a@b.com' }, 'emails', 'must be an array of strings'],
    [{ emails: ['a@b.com', 42] }, 'emails.1', 'each email must be a string'],
    [{ emails: ['  '] }, 'emails.0', 'must not be empty'],
  ])('400 for %j', async (body, path, message) => {
    const res = await t.request('POST', PATH, { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toContainEqual({ path, message });
  });

  it('refuses more than 10,000 emails', async () => {
    const res = await t.request('POST', PATH, {
      key,
      body: { emails: Array.from({ length: 10_001 }, (_, i) => `u${i}@x.test`) },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { path: 'emails', message: 'at most 10000 emails per request; split the list' },
    ]);
  });

  it('is not cancellable', async () => {
    const { start } = await t.runTool(key, PATH, { emails: ['x@nx-domain.test'] });
    const res = await t.request('POST', `/api/v1/scrape/cancel/${start.runId}`, { key });
    expect(res.status).toBe(409);
  });

  it('starts through GraphQL with the same details', async () => {
    const Start = graphql(`
      mutation EmailValidatorStart($input: StartEmailValidatorInput!) { startEmailValidator(input: $input) { run { id status } message estimatedCost emailCount } }
    `);
    const res = await t.graphql(key, Start, {
      input: { emails: [`jane.doe@${acme.domain}`, `Jane.Doe@${acme.domain}`, 'x@nx-domain.test'] },
    });
    expect(res.body.errors).toBeUndefined();
    const payload = res.body.data!.startEmailValidator;
    expect(payload).toMatchObject({
      run: { status: 'RUNNING' },
      message: 'Validating 2 emails (1 duplicate removed)',
      emailCount: 2,
      estimatedCost: '0.0144',
    });
    const done = await t.waitForRun(key, payload.run!.id);
    expect(done.status).toBe('SUCCEEDED');
    const rows = (await t.request('GET', `/api/downloads/${payload.run!.id}?format=json`, { key })).body;
    expect(rows.map((r: { email: string; status: string }) => [r.email, r.status])).toEqual([
      // Jane.Doe is jane.doe in another case: one address, answered as first written.
      [`jane.doe@${acme.domain}`, 'valid'],
      ['x@nx-domain.test', 'invalid'],
    ]);
  });
});
