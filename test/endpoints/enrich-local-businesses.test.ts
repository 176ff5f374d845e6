import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { getWithBody } from '../helpers/get-with-body.ts';

let t: TestApp;
let key: string;
let accountId: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key, accountId } = await t.account({ plan: 'scale' }));
});
afterAll(() => t?.stop());

const enrich = (body: unknown, k = key) => t.request('POST', '/api/v1/enrich/local-businesses', { key: k, body });
const place = async (where: string) =>
  (await t.app.core.sql.unsafe(`select * from local_business where ${where} order by id limit 1`))[0]!;

describe('POST /api/v1/enrich/local-businesses', () => {
  it('matches by phone (as US or Canadian without a country), name with city or postal code, then website', async () => {
    const byPhone = await place(`phone is not null`);
    const digits = byPhone.phone.replace(/\D/g, '').slice(-10);
    const byName = await place(`id > ${byPhone.id} and phone is null`);
    const byZip = await place(`id > ${byName.id}`);
    const byWeb = await place(`website is not null and phone is null and id <> ${byName.id}`);
    const res = await enrich({
      rows: [
        { phone: `(${digits.slice(0, 3)}) ${digits.slice(3, 6)}-${digits.slice(6)}`, ref: 1 },
        { name: byName.name.toUpperCase(), city: byName.city, state: byName.state, ref: 2 },
        { name: byZip.name, postal_code: byZip.postal_code, ref: 3 },
        { website: `${byWeb.website.replace('https://www.', 'http://')}/contact`, ref: 4 },
        { phone: '+1 999 000 0000', ref: 5 },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const [a, b, c, d, e] = res.body.rows;
    expect(a).toMatchObject({
      ref: 1,
      matched_by: 'phone',
      business_name: byPhone.name,
      phone: byPhone.phone,
      category: byPhone.category,
    });
    expect(b).toMatchObject({ ref: 2, matched_by: 'name', business_name: byName.name, city: byName.city });
    expect(c).toMatchObject({ ref: 3, matched_by: 'name', postal_code: byZip.postal_code });
    expect(d).toMatchObject({ ref: 4, matched_by: 'website', website: byWeb.website });
    expect(e).toMatchObject({ ref: 5, match_status: 'not_found' });
    expect(a.address).toContain(byPhone.city);
    expect(Array.isArray(a.reviews)).toBe(true);
    expect(a.review_count).toBe(byPhone.review_count);
    expect(Object.keys(a)).toEqual(expect.arrayContaining(['website', 'emails', 'rating', 'contact_person']));
  });

  it('finds a website however it is written, with the three latest reviews, newest first', async () => {
    const web = await place(
      `website is not null and review_count > 3 and id in (select business_id from local_business_review group by 1 having count(*) > 3)`,
    );
    const host = web.website
      .toLowerCase()
      .replace(/^https?:\/\/(www\.)?/, '')
      .replace(/\/.*$/, '');
    const res = await enrich({
      rows: [
        { website: host },
        { website: ` WWW.${host.toUpperCase()}:443/about?x=1 ` },
        { url: `https://${host}#top` },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const latest = await t.app.core.sql`select author, rating, text, published_at::text from local_business_review
      where business_id = ${web.id} order by published_at desc, id desc limit 3`;
    for (const row of res.body.rows) {
      expect(row).toMatchObject({ matched_by: 'website', business_name: web.name, website: web.website });
      expect(row.reviews).toEqual(latest);
    }
  });

  it('prefers the phone over the name when both are given', async () => {
    const a = await place(`phone is not null`);
    const other = await place(`id > ${a.id} and city <> '${a.city}'`);
    const res = await enrich({ rows: [{ phone: a.phone, name: other.name, city: other.city }] });
    expect(res.body.rows[0]).toMatchObject({ matched_by: 'phone', business_name: a.name });
  });

  it('uses the state to separate same-name places', async () => {
    const [dup] = await t.app.core.sql`
      select name, array_agg(distinct state) as states from local_business group by name having count(distinct state) > 1 limit 1`;
    const cityOf = async (state: string) =>
      (await t.app.core.sql`select city from local_business where name = ${dup!.name} and state = ${state} limit 1`)[0]!
        .city;
    const [s1, s2] = dup!.states;
    const res = await enrich({
      rows: [
        { name: dup!.name, city: await cityOf(s1), state: s1 },
        { name: dup!.name, city: await cityOf(s2), state: s2 },
      ],
    });
    expect(res.body.rows.map((r: { state: string }) => r.state)).toEqual([s1, s2]);
  });

  it('reads a country by ISO code or name for numbers outside the US and Canada', async () => {
    const res = await enrich({
      rows: [
        { phone: '020 7946 0958', country: 'United Kingdom' },
        { phone: '020 7946 0958', country: 'GB' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.rows.map((r: { match_status: string }) => r.match_status)).toEqual(['not_found', 'not_found']);
  });

  it('needs a phone, a name with city or postal code, or a website; lists bad rows by index', async () => {
    const used = async () =>
      (
        await t.app.core.sql<
          { used: number }[]
        >`select coalesce(sum(used), 0)::int as used from daily_usage where account_id = ${accountId} and kind = 'enrichment'`
      )[0]!.used;
    const before = await used();
    const res = await enrich({
      rows: [
        { name: 'Only a name' },
        { city: 'Denver' },
        { phone: '12' },
        { website: 'https://ok.example.com' },
        'a string',
        { phone: '(303) 555-0100x', name: 'Cafe' },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([
      'rows.0',
      'rows.1',
      'rows.2',
      'rows.4',
    ]);
    expect(res.body.error.details[3].message).toBe('must be an object');
    // Nothing was taken from the allowance.
    expect(await used()).toBe(before);
  });

  it('does not count previews; counts matches', async () => {
    const a = await place(`phone is not null`);
    const used = async () =>
      (
        await t.app.core.sql`select coalesce(sum(used), 0)::int as n from daily_usage where account_id = ${accountId}`
      )[0]!.n;
    const before = await used();
    const preview = await enrich({ rows: [{ phone: a.phone }], preview: true });
    expect(preview.body).toMatchObject({ preview: true, summary: { matched: 1 } });
    expect(await used()).toBe(before);
    await enrich({ rows: [{ phone: a.phone }] });
    expect(await used()).toBe(before + 1);
  });

  it('needs the scale plan; GET answers as POST does', async () => {
    const growth = await t.account({ plan: 'growth' });
    const res = await enrich({ rows: [{ phone: '3035550100' }] }, growth.apiKey);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('scale plan');
    const byGet = await getWithBody(t.url, '/api/v1/enrich/local-businesses', {
      key,
      body: { rows: [{ phone: '3035550100' }], preview: true },
    });
    expect(byGet.status, byGet.text).toBe(200);
    expect(byGet.body).toEqual((await enrich({ rows: [{ phone: '3035550100' }], preview: true })).body);
  });
});
