import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskEmail, maskPhone, maskProfileUrl } from '../../src/endpoints/masking.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';

/**
 * An enrichment preview hands no contact data out: it says how many rows match and shows the first
 * matched rows with their emails, phone numbers and profile URLs masked, and counts nothing. The same
 * on REST, GraphQL and MCP.
 */

let t: TestApp;
let key: string;
let accountId: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key, accountId } = await t.account({ plan: 'scale' }));
});
afterAll(() => t?.stop());

const EnrichLeadsPreview = graphql(`
  mutation EnrichmentPreviewLeads($rows: [LeadEnrichmentInput!]!) {
    enrichLeads(rows: $rows, preview: true) {
      preview
      rows { matchStatus }
      summary { matched }
      sample { matchStatus lead { email mobile phone companyPhone linkedinUrl firstName } }
    }
  }
`);
const EnrichLocalBusinessesPreview = graphql(`
  mutation EnrichmentPreviewLocalBusinesses($rows: [LocalBusinessEnrichmentInput!]!) {
    enrichLocalBusinesses(rows: $rows, preview: true) { sample { business { phone emails website } } }
  }
`);

const used = async () =>
  (
    await t.app.core
      .sql`select coalesce(sum(used), 0)::int as n from daily_usage where account_id = ${accountId} and kind = 'enrichment'`
  )[0]!.n as number;
const digits = (text: string) => text.replace(/\D/g, '');
const mcpCall = async (name: string, args: unknown) =>
  (
    await t.request('POST', '/mcp?tools=all', {
      key,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    })
  ).body.result;

/** A person with every contact value, and five more people with an email. */
async function people() {
  const [full] = await t.app.core.sql`
    select p.*, c.phone as company_phone from person p join company c on c.id = p.company_id
    where p.email is not null and p.mobile is not null and p.phone is not null and p.linkedin_url is not null and c.phone is not null
    order by p.id limit 1`;
  const others = await t.app.core
    .sql`select email from person where email is not null and id <> ${full!.id} order by id limit 5`;
  return { full: full!, others: others.map((o) => o.email as string) };
}

describe('masking: the one rule of what a preview shows', () => {
  it('keeps the first character of an email and its domain', () => {
    expect(maskEmail('jane.doe@acme.com')).toBe('j***@acme.com');
    expect(maskEmail('J@x.io')).toBe('J***@x.io');
    expect(maskEmail('not an email')).toBe('n***');
  });

  it('keeps the country code and the last 4 digits of a phone number, grouped as the number is', () => {
    expect(maskPhone('+1 303-555-0142')).toBe('+1 ***-***-0142');
    expect(maskPhone('(303) 555-0142')).toBe('+1 ***-***-0142');
    expect(maskPhone('3035550142')).toBe('+1 ***-***-0142');
    expect(maskPhone('+44 20 7946 0958')).toBe('+44 **-****-0958');
    expect(maskPhone('020 7946 0958', 'GB')).toBe('+44 **-****-0958');
    expect(maskPhone('+1 303-555-0142 ext. 77')).toBe('+1 ***-***-0142');
    // Text that is no phone number keeps its layout, and never more than half its digits.
    expect(maskPhone('12-34')).toBe('**-34');
  });

  it('keeps a profile URL’s site and the first character of its handle', () => {
    expect(maskProfileUrl('https://www.linkedin.com/in/jane-doe-16')).toBe('https://www.linkedin.com/in/j***');
    expect(maskProfileUrl('https://www.linkedin.com/in/jane-doe-16/?trk=x#top')).toBe(
      'https://www.linkedin.com/in/j***',
    );
    expect(maskProfileUrl('linkedin/jane')).toBe('l***');
  });
});

describe('lead enrichment preview', () => {
  it('answers the match count and 5 matched rows with contact values masked, counting nothing', async () => {
    const { full, others } = await people();
    const rows = [
      { social: full.linkedin_url, crm_id: 'A' },
      { email: 'nobody@nowhere.example', crm_id: 'B' },
      ...others.map((email, i) => ({ email, crm_id: `C${i}` })),
    ];
    const before = await used();
    const res = await t.request('POST', '/api/v1/enrich', { key, body: { rows, preview: true } });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['preview', 'sample', 'summary']);
    expect(res.body.preview).toBe(true);
    expect(res.body.summary).toEqual({
      total: 7,
      matched: 6,
      not_found: 1,
      by: { email: 5, social: 1, mobile: 0, domain: 0 },
    });
    expect(res.body.sample).toHaveLength(5);
    expect(await used()).toBe(before);

    const [first] = res.body.sample;
    // The caller's own fields as sent; who matched in the clear; how to reach them masked.
    expect(first).toMatchObject({
      social: full.linkedin_url,
      crm_id: 'A',
      match_status: 'matched',
      matched_by: 'social',
      first_name: full.first_name,
      last_name: full.last_name,
      title: full.title,
    });
    expect(first.email).toBe(`${full.email[0]}***@${full.email.split('@')[1]}`);
    for (const field of ['mobile', 'phone', 'company_phone'] as const) {
      const value = { mobile: full.mobile, phone: full.phone, company_phone: full.company_phone }[field] as string;
      expect(first[field], field).toMatch(/^\+\d+ [*-]+\d{4}$/);
      expect(first[field].endsWith(digits(value).slice(-4)), field).toBe(true);
      expect(digits(first[field]).length, field).toBeLessThan(digits(value).length - 4);
    }
    expect(first.linkedin_url).toBe(maskProfileUrl(full.linkedin_url));
    expect(first.linkedin_url).not.toBe(full.linkedin_url);
    // No contact value found is anywhere in the answer.
    for (const secret of [full.email, ...others.slice(0, 4)]) expect(res.text).not.toContain(secret);
    for (const row of res.body.sample.slice(1)) expect(row.email).toMatch(/^.\*\*\*@/);

    // The same rows for real: the values a preview hides, and the matches counted.
    const real = await t.request('POST', '/api/v1/enrich', { key, body: { rows } });
    expect(real.body.rows[0]).toMatchObject({
      email: full.email,
      mobile: full.mobile,
      linkedin_url: full.linkedin_url,
    });
    expect(await used()).toBe(before + 6);
  });

  it('is the same over GraphQL and MCP', async () => {
    const { full } = await people();
    const rows = [{ social: full.linkedin_url }];
    const rest = await t.request('POST', '/api/v1/enrich', { key, body: { rows, preview: true } });
    expect(await mcpCall('enrich_leads', { rows, preview: true })).toMatchObject({ structuredContent: rest.body });

    const gql = await t.graphql(key, EnrichLeadsPreview, { rows });
    expect(gql.body.errors).toBeUndefined();
    const answer = gql.body.data!.enrichLeads;
    expect(answer).toMatchObject({ preview: true, rows: null, summary: { matched: 1 } });
    const [sample] = rest.body.sample;
    expect(answer.sample).toEqual([
      {
        matchStatus: 'MATCHED',
        lead: {
          email: sample.email,
          mobile: sample.mobile,
          phone: sample.phone,
          companyPhone: sample.company_phone,
          linkedinUrl: sample.linkedin_url,
          firstName: full.first_name,
        },
      },
    ]);
    expect(answer.sample![0]!.lead!.email).not.toBe(full.email);
  });
});

describe('local-business enrichment preview', () => {
  it('masks the phone and the emails found, keeps the listing, counts nothing', async () => {
    const [place] = await t.app.core
      .sql`select * from local_business where phone is not null and cardinality(emails) > 0 and website is not null order by id limit 1`;
    const rows = [{ name: place!.name, city: place!.city, state: place!.state, ref: 7 }, { phone: '+1 999 000 0000' }];
    const before = await used();
    const res = await t.request('POST', '/api/v1/enrich/local-businesses', { key, body: { rows, preview: true } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.summary).toEqual({ total: 2, matched: 1, not_found: 1, by: { phone: 0, name: 1, website: 0 } });
    const [row] = res.body.sample;
    expect(row).toMatchObject({
      ref: 7,
      matched_by: 'name',
      business_name: place!.name,
      website: place!.website,
      category: place!.category,
    });
    expect(row.phone).toBe(maskPhone(place!.phone, place!.country_code));
    expect(row.phone.endsWith(digits(place!.phone).slice(-4))).toBe(true);
    expect(row.emails).toEqual((place!.emails as string[]).map(maskEmail));
    for (const email of place!.emails as string[]) expect(res.text).not.toContain(email);
    expect(res.text).not.toContain(place!.phone);
    expect(await used()).toBe(before);

    expect(await mcpCall('enrich_local_businesses', { rows, preview: true })).toMatchObject({
      structuredContent: res.body,
    });
    const gql = await t.graphql(key, EnrichLocalBusinessesPreview, {
      rows: [{ name: place!.name, city: place!.city, state: place!.state }],
    });
    expect(gql.body.data!.enrichLocalBusinesses.sample).toEqual([
      { business: { phone: row.phone, emails: row.emails, website: place!.website } },
    ]);
  });
});
