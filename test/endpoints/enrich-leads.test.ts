import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrichLeads } from '../../src/endpoints/enrich-leads.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { getWithBody } from '../helpers/get-with-body.ts';

let t: TestApp;
let key: string;
let accountId: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key, accountId } = await t.account({ plan: 'growth' }));
});
afterAll(() => t?.stop());

const enrich = (body: unknown, k = key) => t.request('POST', '/api/v1/enrich', { key: k, body });
const person = async (where: string) =>
  (
    await t.app.core.sql.unsafe(
      `select p.*, c.domain from person p join company c on c.id = p.company_id where ${where} order by p.id limit 1`,
    )
  )[0]!;
const used = async () =>
  (
    await t.app.core
      .sql`select coalesce(sum(used), 0)::int as n from daily_usage where account_id = ${accountId} and kind = 'enrichment'`
  )[0]!.n as number;

describe('POST /api/v1/enrich', () => {
  it('matches by email, social URL, mobile and domain, in that priority, keeping the input', async () => {
    const a = await person(`p.email is not null`);
    const b = await person(`p.linkedin_url is not null and p.id > ${a.id}`);
    const c = await person(`p.mobile is not null and p.email is null`);
    const res = await enrich({
      rows: [
        { email: a.email.toUpperCase(), crm_id: 'A1', domain: 'no-such-domain.example' },
        { social: `${b.linkedin_url.replace('https://www.', 'http://')}/`, crm_id: 'B2' },
        {
          mobile: `+1 (${c.mobile.replace(/\D/g, '').slice(-10, -7)}) ${c.mobile.replace(/\D/g, '').slice(-7)}`,
          crm_id: 'C3',
        },
        { email: 'nobody@nowhere.example', crm_id: 'D4' },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const [ra, rb, rc, rd] = res.body.rows;
    expect(ra).toMatchObject({
      crm_id: 'A1',
      match_status: 'matched',
      matched_by: 'email',
      email: a.email,
      title: a.title,
      company_domain: a.domain,
    });
    expect(rb).toMatchObject({ crm_id: 'B2', matched_by: 'social', linkedin_url: b.linkedin_url });
    expect(rc).toMatchObject({ crm_id: 'C3', matched_by: 'mobile', mobile: c.mobile });
    expect(rd).toEqual({ email: 'nobody@nowhere.example', crm_id: 'D4', match_status: 'not_found', matched_by: null });
    expect(res.body.summary).toEqual({
      total: 4,
      matched: 3,
      not_found: 1,
      by: { email: 1, social: 1, mobile: 1, domain: 0 },
    });
  });

  it('prefers email over a domain that would match someone else', async () => {
    const a = await person(`p.email is not null and p.seniority = 'entry'`);
    const res = await enrich({ rows: [{ email: a.email, domain: a.domain }] });
    expect(res.body.rows[0]).toMatchObject({ matched_by: 'email', email: a.email });
  });

  it('falls back on the domain when the email, social URL or mobile finds nobody', async () => {
    const a = await person(`p.email is not null`);
    const b = await person(`p.company_id <> ${a.company_id}`);
    const res = await enrich({
      rows: [
        { email: 'nobody@nowhere.example', domain: a.domain },
        { social: 'https://www.linkedin.com/in/nobody-at-all', mobile: '+1 000 000 0000', domain: b.domain },
        { domain: a.domain },
        { email: a.email, domain: b.domain },
      ],
    });
    expect(res.body.rows.map((r: { matched_by: string }) => r.matched_by)).toEqual([
      'domain',
      'domain',
      'domain',
      'email',
    ]);
    expect(res.body.rows[0].company_domain).toBe(a.domain);
    expect(res.body.rows[1].company_domain).toBe(b.domain);
    expect(res.body.rows[2]).toMatchObject({ company_domain: a.domain, linkedin_url: res.body.rows[0].linkedin_url });
    expect(res.body.summary).toEqual({
      total: 4,
      matched: 4,
      not_found: 0,
      by: { email: 1, social: 0, mobile: 0, domain: 3 },
    });
  });

  it('keeps the input fields first and in place; a lead field of the same name takes the found value, the input id stays', async () => {
    const a = await person(`p.email is not null and p.title is not null`);
    const res = await enrich({ rows: [{ id: 'crm-7', title: 'from the CRM', email: a.email, note: 'x' }] });
    const row = res.body.rows[0];
    expect(Object.keys(row).slice(0, 7)).toEqual([
      'id',
      'title',
      'email',
      'note',
      'match_status',
      'matched_by',
      'first_name',
    ]);
    expect(row).toMatchObject({
      id: 'crm-7',
      title: a.title,
      email: a.email,
      note: 'x',
      matched_by: 'email',
      company_domain: a.domain,
    });
    // The HTTP faces refuse bodies with a __proto__ key; the service itself keeps one as a plain field.
    const body = JSON.parse(
      `{"rows": [{"__proto__": {"polluted": true}, "email": ${JSON.stringify(a.email)}}, {"__proto__": 1, "email": "nobody@nowhere.example"}]}`,
    );
    const result = await enrichLeads(t.app.core, await t.app.core.auth.authenticate(`Bearer ${key}`), body);
    const [matched, missing] = result.rows as Record<string, unknown>[];
    expect(Object.keys(matched!).slice(0, 4)).toEqual(['__proto__', 'email', 'match_status', 'matched_by']);
    expect(Object.getPrototypeOf(matched)).toBe(Object.prototype);
    expect(matched).toMatchObject({ matched_by: 'email', title: a.title });
    expect(Object.keys(missing!)).toEqual(['__proto__', 'email', 'match_status', 'matched_by']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('ignores country codes and keeps the last 10 digits of mobiles', async () => {
    const c = await person(`p.mobile is not null`);
    const digits = c.mobile.replace(/\D/g, '').slice(-10);
    for (const mobile of [`00 44 ${digits}`, digits, `+91-${digits.slice(0, 5)}-${digits.slice(5)}`]) {
      const res = await enrich({ rows: [{ mobile }] });
      expect(res.body.rows[0].matched_by, mobile).toBe('mobile');
      expect(res.body.rows[0].mobile.replace(/\D/g, '').slice(-10)).toBe(digits);
    }
  });

  it('returns the most senior person for a domain: CEO, other C-suite, VP, Director, then others', async () => {
    const companies = await t.app.core.sql`
      select c.domain, array_agg(p.seniority order by p.id) as seniorities, array_agg(p.title order by p.id) as titles, array_agg(p.id order by p.id) as ids
      from company c join person p on p.company_id = c.id group by c.domain having count(*) >= 4 limit 25`;
    const rank = (title: string, seniority: string) =>
      /^(ceo|chief executive officer)$/i.test(title)
        ? 0
        : seniority === 'c_suite'
          ? 1
          : seniority === 'vp'
            ? 2
            : ['director', 'head'].includes(seniority)
              ? 3
              : 4;
    const res = await enrich({ rows: companies.map((c) => ({ domain: `https://www.${c.domain}/about` })) });
    companies.forEach((c, i) => {
      const ranks = c.titles.map((title: string, j: number) => rank(title, c.seniorities[j]));
      const best = Math.min(...ranks);
      const expectedId = c.ids[ranks.indexOf(best)];
      expect(res.body.rows[i].matched_by).toBe('domain');
      expect(res.body.rows[i].company_domain).toBe(c.domain);
      expect(res.body.rows[i].full_name, c.domain).toBeDefined();
      expect(res.body.rows[i].linkedin_url).toMatch(new RegExp(`-${Number(expectedId).toString(36)}$`));
    });
  });

  it('counts matches against the daily allowance; a preview does not', async () => {
    const a = await person(`p.email is not null`);
    const before = await used();
    const preview = await enrich({ rows: [{ email: a.email }, { email: 'x@y.example' }], preview: true });
    expect(preview.body).toMatchObject({ preview: true, summary: { total: 2, matched: 1 } });
    expect(preview.body.sample).toHaveLength(1);
    expect(preview.body.rows).toBeUndefined();
    expect(await used()).toBe(before);
    await enrich({ rows: [{ email: a.email }, { email: 'x@y.example' }] });
    expect(await used()).toBe(before + 1);
  });

  it('takes 1,000 rows and refuses 1,001', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ email: `person${i}@nowhere.example` }));
    expect((await enrich({ rows })).body.summary.total).toBe(1000);
    const over = await enrich({ rows: [...rows, { email: 'one@more.example' }] });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toMatch(/at most 1000 rows/);
  });

  it('lists every row it cannot match on, by index, and writes nothing', async () => {
    const before = await used();
    const res = await enrich({
      rows: [{ email: 'ok@x.example' }, { name: 'Jane' }, 'text', { mobile: '123' }, { domain: 'nodot' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([
      'rows.1',
      'rows.2',
      'rows.3',
      'rows.4',
    ]);
    expect(await used()).toBe(before);
    for (const body of [{}, { rows: [] }, { rows: {} }, { rows: [{ email: 'a@b.co' }], preview: 'yes' }])
      expect((await enrich(body)).status).toBe(400);
  });

  it('answers GET with the same body as POST (the spec heading says GET), and needs the growth plan', async () => {
    const get = await getWithBody(t.url, '/api/v1/enrich', { key, body: { rows: [{ email: 'nobody@nowhere.test' }] } });
    expect(get.status, get.text).toBe(200);
    expect(get.body.summary).toMatchObject({ total: 1, not_found: 1 });
    const starter = await t.account({ plan: 'starter' });
    expect((await enrich({ rows: [{ email: 'a@b.co' }] }, starter.apiKey)).body.error.code).toBe('plan_required');
  });
});
