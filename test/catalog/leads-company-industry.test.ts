import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFile } from '../../db/import/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { importSuppression } from '../../src/privacy/imports.ts';

/**
 * `person.company_industry` is a copy of `lower(company.industry)` that the lead search filters on
 * (migration 0013). The seeder and the importer write it with the row; triggers keep it right for
 * every other write. Each case checks the whole table, not only the rows it touched.
 */
let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account({ plan: 'growth' }));
});
afterAll(() => t?.stop());

/** People whose copy differs from their company's industry (null without a company). */
async function stale(): Promise<number> {
  const [row] = await t.app.core.sql<{ n: number }[]>`
    select count(*)::int as n from person p left join company c on c.id = p.company_id
    where p.company_industry is distinct from lower(c.industry)`;
  return row!.n;
}

async function company(domain: string, industry: string | null): Promise<number> {
  const [row] = await t.app.core.sql<{ id: number }[]>`
    insert into company (domain, name, industry) values (${domain}, ${domain}, ${industry}) returning id::int`;
  return row!.id;
}

async function person(companyId: number | null, email: string): Promise<number> {
  const [row] = await t.app.core.sql<{ id: number }[]>`
    insert into person (company_id, first_name, last_name, email) values (${companyId}, 'Copy', 'Check', ${email}) returning id::int`;
  return row!.id;
}

const industryOf = async (personId: number) =>
  (
    await t.app.core.sql<
      { industry: string | null }[]
    >`select company_industry as industry from person where id = ${personId}`
  )[0]!.industry;

describe('person.company_industry follows the company', () => {
  it('is written by the seeder for every person', async () => {
    const [{ n } = { n: 0 }] = await t.app.core.sql<
      { n: number }[]
    >`select count(*)::int as n from person where company_industry is not null`;
    expect(n).toBeGreaterThan(100);
    expect(await stale()).toBe(0);
  });

  it('is filled for a person written without it, and follows a move to another company', async () => {
    const a = await company('copy-a.test', 'Biotechnology');
    const b = await company('copy-b.test', 'Retail');
    const p = await person(a, 'one@copy-a.test');
    expect(await industryOf(p)).toBe('biotechnology');
    await t.app.core.sql`update person set company_id = ${b} where id = ${p}`;
    expect(await industryOf(p)).toBe('retail');
    await t.app.core.sql`update person set company_id = null where id = ${p}`;
    expect(await industryOf(p)).toBeNull();
    expect(await stale()).toBe(0);
  });

  it('follows the company when its industry changes or is cleared, and when the company is deleted', async () => {
    const c = await company('copy-c.test', 'Insurance');
    const people = [await person(c, 'one@copy-c.test'), await person(c, 'two@copy-c.test')];
    await t.app.core.sql`update company set industry = 'Legal Services' where id = ${c}`;
    for (const p of people) expect(await industryOf(p)).toBe('legal services');
    await t.app.core.sql`update company set industry = null where id = ${c}`;
    for (const p of people) expect(await industryOf(p)).toBeNull();
    await t.app.core.sql`update company set industry = 'Insurance' where id = ${c}`;
    await t.app.core.sql`delete from company where id = ${c}`;
    for (const p of people) expect(await industryOf(p)).toBeNull();
    expect(await stale()).toBe(0);
  });

  it('is written by the importer from the company a row names, and follows a company import that changes the industry', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'leadgate-industry-'));
    const file = async (name: string, lines: string[]) => {
      const at = path.join(dir, name);
      await writeFile(at, `${lines.join('\n')}\n`);
      return at;
    };
    const companies = await file('companies.csv', [
      'domain,name,industry',
      'copy-import-a.test,A,Hospital & Health Care',
      'copy-import-b.test,B,',
    ]);
    const people = await file('people.csv', [
      'company_domain,first_name,last_name,email',
      'copy-import-a.test,Ada,One,ada@copy-import-a.test',
      'copy-import-b.test,Bob,Two,bob@copy-import-b.test',
      ',Cy,Three,cy@nowhere-import.test',
    ]);
    await importFile(t.app.core.sql, { dataset: 'companies', file: companies, suppressed: importSuppression });
    await importFile(t.app.core.sql, { dataset: 'people', file: people, suppressed: importSuppression });
    const industries = async () =>
      Object.fromEntries(
        (
          await t.app.core.sql<{ email: string; industry: string | null }[]>`
          select email, company_industry as industry from person where email like '%import%' order by email`
        ).map((r) => [r.email, r.industry]),
      );
    expect(await industries()).toEqual({
      'ada@copy-import-a.test': 'hospital & health care',
      'bob@copy-import-b.test': null,
      'cy@nowhere-import.test': null,
    });
    const changed = await file('companies-2.csv', [
      'domain,name,industry',
      'copy-import-a.test,A,Medical Devices',
      'copy-import-b.test,B,Retail',
    ]);
    await importFile(t.app.core.sql, { dataset: 'companies', file: changed, suppressed: importSuppression });
    expect(await industries()).toEqual({
      'ada@copy-import-a.test': 'medical devices',
      'bob@copy-import-b.test': 'retail',
      'cy@nowhere-import.test': null,
    });
    // Importing the same people again changes nothing.
    const again = await importFile(t.app.core.sql, { dataset: 'people', file: people, suppressed: importSuppression });
    expect(again.summary).toMatchObject({ inserted: 0, updated: 0, unchanged: 3 });
    expect(await stale()).toBe(0);
  });

  it('is what the industry filter of the lead database reads', async () => {
    const c = await company('copy-d.test', 'Aerospace Engineering');
    const p = await person(c, 'one@copy-d.test');
    const search = (industry: string) =>
      t.request('GET', `/api/v1/database/leads?industry=${encodeURIComponent(industry)}&limit=100`, { key });
    let res = await search('aerospace engineering');
    expect(res.status, res.text).toBe(200);
    expect(res.body.leads.map((l: { id: number }) => l.id)).toEqual([p]);
    await t.app.core.sql`update company set industry = 'Space Tourism' where id = ${c}`;
    expect((await search('Aerospace Engineering')).body.pagination.total).toBe(0);
    res = await search('Space Tourism');
    expect(res.body.leads.map((l: { id: number; company_industry: string }) => [l.id, l.company_industry])).toEqual([
      [p, 'Space Tourism'],
    ]);
  });
});
