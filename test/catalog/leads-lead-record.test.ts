import { describe, expect, it } from 'vitest';
import { assignLeadRecord, leadRecord } from '../../src/catalog/leads/lead-record.ts';
import type { LeadRow } from '../../src/catalog/leads/query.ts';
import type { CompanyRecord } from '../../src/endpoints/lead-search.ts';

/** The rules spelled out: every field of the spec's lead record in order, then the absent ones left out. */
function expectedRecord(p: LeadRow, c: CompanyRecord | undefined): Record<string, unknown> {
  const record: Record<string, unknown> = {
    id: Number(p.id),
    first_name: p.first_name,
    last_name: p.last_name,
    full_name: `${p.first_name} ${p.last_name}`,
    title: p.title,
    seniority: p.seniority,
    department: p.department,
    email: p.email,
    email_status: p.email_status,
    phone: p.phone,
    mobile: p.mobile,
    linkedin_url: p.linkedin_url,
    city: p.city,
    state: p.state,
    country: p.country,
    company_name: c?.name,
    company_domain: c?.domain,
    company_website: c ? `https://${c.domain}` : undefined,
    company_industry: c?.industry,
    company_size: c?.sizeBand,
    employees_count: c?.employeesCount,
    company_annual_revenue: c?.annualRevenue,
    company_city: c?.city,
    company_state: c?.state,
    company_country: c?.country,
    keywords: c?.keywords.length ? c.keywords : undefined,
    company_technologies: c?.technologies.length ? c.technologies : undefined,
    company_founded: c?.founded,
    company_phone: c?.phone,
    company_linkedin_url: c?.linkedinUrl,
    company_twitter_url: c?.twitterUrl,
    company_facebook_url: c?.facebookUrl,
  };
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== null && v !== undefined));
}

/** Deterministic choices, so every combination of present and absent fields comes up. */
function* cases(count: number): Generator<{ p: LeadRow; c: CompanyRecord | undefined }> {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  const maybe = <T>(value: T): T | null => (next() % 3 === 0 ? null : value);
  for (let i = 0; i < count; i++) {
    const p: LeadRow = {
      id: String(1000 + i),
      first_name: 'Jane',
      last_name: `Smith${i}`,
      title: maybe('VP of Sales'),
      seniority: maybe('vp'),
      department: maybe('sales'),
      email: maybe(`jane${i}@acmesoft.com`),
      email_status: maybe('verified'),
      phone: maybe('+1 303-555-0100'),
      mobile: maybe('+1 303-555-0101'),
      linkedin_url: maybe(`https://www.linkedin.com/in/jane-${i}`),
      city: maybe('Denver'),
      state: maybe('CO'),
      country: maybe('United States'),
      company_id: i % 5 === 0 ? null : String(i),
    };
    const c: CompanyRecord | undefined =
      p.company_id === null
        ? undefined
        : {
            id: i,
            name: 'Acme Soft',
            domain: 'acmesoft.com',
            industry: maybe('Computer Software'),
            sizeBand: maybe('51-200'),
            employeesCount: maybe(i % 7 === 0 ? 0 : 120),
            annualRevenue: maybe(i % 11 === 0 ? 0 : 30_000_000.5),
            city: maybe('Denver'),
            state: maybe('CO'),
            country: maybe('United States'),
            keywords: next() % 2 === 0 ? [] : ['saas', 'cloud'],
            technologies: next() % 2 === 0 ? [] : ['Stripe'],
            founded: maybe(2001),
            phone: maybe('+1 303-555-0199'),
            linkedinUrl: maybe('https://www.linkedin.com/company/acmesoft'),
            twitterUrl: maybe('https://twitter.com/acmesoft'),
            facebookUrl: maybe('https://facebook.com/acmesoft'),
          };
    yield { p, c };
  }
}

describe('the lead record', () => {
  it('has the id, then every present field in the spec order', () => {
    for (const { p, c } of cases(600)) {
      const expected = expectedRecord(p, c);
      expect(leadRecord(p, c)).toEqual(expected);
      expect(Object.keys(leadRecord(p, c))).toEqual(Object.keys(expected));
    }
  });

  it('is written without the id by assignLeadRecord', () => {
    for (const { p, c } of cases(600)) {
      const { id: _id, ...expected } = expectedRecord(p, c);
      const got: Record<string, unknown> = {};
      assignLeadRecord(got, p, c);
      expect(got).toEqual(expected);
      expect(Object.keys(got)).toEqual(Object.keys(expected));
    }
  });

  it('after fields already there, like an object spread: same names keep their place and take the value unless it is absent', () => {
    for (const { p, c } of cases(200)) {
      const input = { crm_id: 'X1', title: 'from the CRM', company_name: 'Old name', match_status: 'matched' };
      const { id: _id, ...record } = expectedRecord(p, c);
      const expected = { ...input, ...record };
      const got: Record<string, unknown> = { ...input };
      assignLeadRecord(got, p, c);
      expect(got).toEqual(expected);
      expect(Object.keys(got)).toEqual(Object.keys(expected));
    }
  });
});
