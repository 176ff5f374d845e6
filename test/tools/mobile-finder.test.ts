import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyContactInput } from '../../src/catalog/leads/contact-inputs.ts';
import { capForTrial, MOBILE_FINDER_COLUMNS } from '../../src/tools/mobile-finder.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';

let t: TestApp;
let key: string;

interface Person {
  id: number;
  first_name: string;
  last_name: string;
  title: string | null;
  email: string | null;
  mobile: string | null;
  linkedin_url: string;
  city: string | null;
  state: string | null;
  country: string | null;
  company_name: string | null;
  company_domain: string | null;
}
/** People with a mobile and an email; one with an email but no mobile. */
let withMobile: Person[];
let withoutMobile: Person;

const PATH = '/api/v1/scrape/mobile-finder';
const slug = (p: Person) => p.linkedin_url.replace('https://www.linkedin.com/in/', '');

beforeAll(async () => {
  ({ t, key } = await appWithAccount());
  const select = (condition: string) =>
    t.app.core.sql.unsafe(`
      select p.id::int, p.first_name, p.last_name, p.title, p.email, p.mobile, p.linkedin_url, p.city, p.state, p.country,
             c.name as company_name, c.domain as company_domain
      from person p left join company c on c.id = p.company_id where ${condition} order by p.id limit 4`) as unknown as Promise<
      Person[]
    >;
  withMobile = await select('p.mobile is not null and p.email is not null');
  [withoutMobile] = (await select('p.mobile is null and p.email is not null')) as [Person];
  expect(withMobile).toHaveLength(4);
});
afterAll(() => t?.stop());

const found = (p: Person, input: string, inputType: 'email' | 'social_url') => ({
  input,
  input_type: inputType,
  status: 'found',
  reason: null,
  mobile: p.mobile,
  full_name: `${p.first_name} ${p.last_name}`,
  first_name: p.first_name,
  last_name: p.last_name,
  title: p.title,
  company_name: p.company_name,
  company_domain: p.company_domain,
  email: p.email,
  linkedin_url: p.linkedin_url,
  city: p.city,
  state: p.state,
  country: p.country,
});

const blank = Object.fromEntries(MOBILE_FINDER_COLUMNS.map((c) => [c.key, null]));
const notFound = (input: string, inputType: string | null, status: string, reason: string) => ({
  ...blank,
  input,
  input_type: inputType,
  status,
  reason,
});

const charge = async (runId: string) => {
  const [row] = await t.app.core
    .sql`select charged_micros::bigint as charged, billed_units from run where id = ${runId}`;
  return { charged: BigInt(row!.charged), units: row!.billed_units as number };
};

describe('a mobile lookup through the real worker', () => {
  it('detects each input’s type, answers one row per input in order, and bills only the numbers found', async () => {
    const [a, b, c, d] = withMobile as [Person, Person, Person, Person];
    const inputs = [
      `  ${a.email!.toUpperCase()} `,
      `linkedin.com/in/${slug(b)}/`,
      `https://uk.linkedin.com/in/${slug(c).toUpperCase()}?trk=public_profile`,
      `mailto:${d.email}`,
      withoutMobile.email!,
      'nobody@nowhere.example.org',
      'https://www.linkedin.com/in/nobody-at-all-zz',
      'call me maybe',
      'jane@',
      'https://example.com/about',
      '',
      a.email!,
    ];
    const { start, status, rows } = await t.runTool(key, PATH, { inputs });
    expect(start).toEqual({
      runId: expect.any(String),
      status: 'RUNNING',
      message:
        'Looking up mobile numbers for 7 inputs (4 email addresses, 3 social profile URLs); 4 inputs were not recognised and are reported in their rows, free; 1 repeated input points at the first row with the same lookup, free.',
      estimatedCost: 3,
    });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      statusMessage: 'Finished: 12 inputs; 4 mobile numbers found and billed',
      handled: 12,
      requested: 12,
    });
    expect(rows).toEqual([
      found(a, inputs[0]!, 'email'),
      found(b, inputs[1]!, 'social_url'),
      found(c, inputs[2]!, 'social_url'),
      found(d, inputs[3]!, 'email'),
      notFound(inputs[4]!, 'email', 'not_found', 'the person with this email address has no known mobile number'),
      notFound(inputs[5]!, 'email', 'not_found', 'no person with this email address in the lead database'),
      notFound(inputs[6]!, 'social_url', 'not_found', 'no person with this social profile in the lead database'),
      notFound('call me maybe', null, 'unrecognised_input', 'neither an email address nor a social profile URL'),
      notFound('jane@', null, 'unrecognised_input', 'contains "@" but is not a valid email address'),
      notFound(
        'https://example.com/about',
        null,
        'unrecognised_input',
        'a URL, but not a social profile link (expected a profile path such as linkedin.com/in/<name>)',
      ),
      notFound('', null, 'unrecognised_input', 'empty input'),
      notFound(a.email!, 'email', 'duplicate', 'same lookup as input 1; its row has the result'),
    ]);
    expect(Object.keys(rows[0])).toEqual(MOBILE_FINDER_COLUMNS.map((c) => c.key));
    expect(await charge(start.runId)).toEqual({ charged: 4n * 250_000n, units: 4 });
  });

  it('stops billing at the hold: free rows pass, a number past it is not delivered', async () => {
    const { apiKey } = await t.account({ creditsMicros: 500_000n }); // 0.50 USD: two numbers
    const [a, b, c] = withMobile as [Person, Person, Person];
    const inputs = ['??', a.email!, 'nobody@nowhere.example.org', b.email!, c.email!];
    const { start, status, rows } = await t.runTool(apiKey, PATH, { inputs });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      statusMessage:
        'Stopped after 4 inputs; 2 mobile numbers found and billed: the 0.50 USD held for this run is used up. Buy credits to get more.',
    });
    expect(rows.map((r) => r.status)).toEqual(['unrecognised_input', 'found', 'not_found', 'found']);
    expect(await charge(start.runId)).toEqual({ charged: 500_000n, units: 2 });
  });

  it('refuses to start when the wallet cannot pay for one number', async () => {
    const { apiKey } = await t.account({ creditsMicros: 100_000n });
    const res = await t.request('POST', PATH, { key: apiKey, body: { inputs: [withMobile[0]!.email] } });
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('insufficient_funds');
  });
});

describe('the trial cap', () => {
  const fakes = Array.from({ length: 3_600 }, (_, i) => `lookup${i}@nowhere.example.org`);

  it('looks up at most 3,500 inputs per search for trial accounts, says so and drops the rest', async () => {
    const { apiKey } = await t.account({ subscriptionStatus: 'TRIAL' });
    const inputs = ['not an input', withMobile[0]!.email!, ...fakes];
    const { start, status, rows } = await t.runTool(apiKey, PATH, { inputs }, 30_000);
    expect(start.message).toMatch(
      /^Trial accounts can look up 3500 inputs per search: the first 3501 inputs \(3500 lookups\) are searched, the last 101 inputs were left out and will not be billed\./,
    );
    expect(start.trialCap).toEqual({ lookups: 3500, inputsAccepted: 3501, inputsDropped: 101 });
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 3501, handled: 3501 });
    expect(rows).toHaveLength(3501);
    expect(rows.at(-1).input).toBe(fakes[3498]);
    expect(rows.filter((r) => r.status === 'found')).toHaveLength(1);
    expect((await charge(start.runId)).charged).toBe(250_000n);
  });

  it('does not cap other accounts', async () => {
    const inputs = ['not an input', ...fakes];
    const res = await t.request('POST', PATH, { key, body: { inputs } });
    expect(res.status).toBe(200);
    expect(res.body.trialCap).toBeUndefined();
    expect(await t.waitForRun(key, res.body.runId, 30_000)).toMatchObject({
      status: 'SUCCEEDED',
      requested: 3601,
      handled: 3601,
    });
  });

  it('counts lookups, not unrecognised or repeated inputs', () => {
    const exactly = [...fakes.slice(0, 3_500), 'junk', fakes[0]!];
    expect(capForTrial(exactly)).toEqual({ inputs: exactly, dropped: 0 });
    expect(capForTrial([...exactly, 'one-more@nowhere.example.org', 'x'])).toEqual({ inputs: exactly, dropped: 2 });
  });
});

describe('input detection', () => {
  it.each([
    ['Jane.Doe@Example.COM', { kind: 'email', key: 'jane.doe@example.com' }],
    ['mailto:jane@example.com', { kind: 'email', key: 'jane@example.com' }],
    ['https://www.linkedin.com/in/jane-doe', { kind: 'social_url', key: 'https://www.linkedin.com/in/jane-doe' }],
    ['http://LinkedIn.com/in/Jane-Doe/?trk=x#top', { kind: 'social_url', key: 'https://www.linkedin.com/in/jane-doe' }],
    ['de.linkedin.com/in/jane-doe', { kind: 'social_url', key: 'https://www.linkedin.com/in/jane-doe' }],
    ['https://m.linkedin.com/in/j%C3%BCrgen', { kind: 'social_url', key: 'https://www.linkedin.com/in/jürgen' }],
    ['https://network.example/in/jane', { kind: 'social_url', key: 'https://www.network.example/in/jane' }],
    [
      'https://www.linkedin.com/company/acme',
      { kind: 'unrecognised', reason: expect.stringMatching(/not a social profile link/) },
    ],
    ['jane doe', { kind: 'unrecognised', reason: 'neither an email address nor a social profile URL' }],
    ['a@b', { kind: 'unrecognised', reason: 'contains "@" but is not a valid email address' }],
    ['   ', { kind: 'unrecognised', reason: 'empty input' }],
  ])('%j', (input, expected) => {
    expect(classifyContactInput(input)).toEqual(expected);
  });
});

describe('bad requests', () => {
  it.each([
    [{}, 'inputs', 'inputs is required: email addresses and social profile URLs'],
    [{ inputs: 'jane@example.com' }, 'inputs', 'must be an array of strings'],
    [{ inputs: [] }, 'inputs', 'send at least one email address or social profile URL'],
    [
      { inputs: ['jane@example.com', 5] },
      'inputs.1',
      'each input must be a string: an email address or a social profile URL',
    ],
    [
      { inputs: Array.from({ length: 10_001 }, (_, i) => `${i}@x.io`) },
      'inputs',
      'at most 10000 inputs per request; split the list',
    ],
  ])('refuses %# naming the field', async (body, path, message) => {
    const res = await t.request('POST', PATH, { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', details: [{ path, message }] });
  });
});

describe('GraphQL', () => {
  it('startMobileFinder starts the same lookup', async () => {
    const p = withMobile[0]!;
    const Start = graphql(`
      mutation MobileFinderStart($input: StartMobileFinderInput!) {
        startMobileFinder(input: $input) { run { id status } message estimatedCost trialCap { lookups } }
      }
    `);
    const res = await t.graphql(key, Start, { input: { inputs: [p.linkedin_url, 'junk'] } });
    expect(res.body.errors).toBeUndefined();
    const payload = res.body.data!.startMobileFinder;
    expect(payload).toMatchObject({
      run: { status: 'RUNNING' },
      estimatedCost: '0.50',
      trialCap: null,
      message: expect.stringMatching(
        /^Looking up mobile numbers for 1 input \(0 email addresses, 1 social profile URL\)/,
      ),
    });
    await t.waitForRun(key, payload.run!.id);
    const items = await t.request('GET', `/api/downloads/${payload.run!.id}?format=json`, { key });
    expect(items.body).toEqual([
      found(p, p.linkedin_url, 'social_url'),
      notFound('junk', null, 'unrecognised_input', 'neither an email address nor a social profile URL'),
    ]);
    expect((await charge(payload.run!.id)).charged).toBe(250_000n);
  });
});
