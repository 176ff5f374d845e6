import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '../../db/client.ts';
import { HOME_SERVICE_CATEGORIES } from '../../db/tables/home-services.ts';
import { STORE_PLATFORMS } from '../../db/tables/stores.ts';
import { copyRows } from '../../db/seed/copy.ts';
import { seedCatalog } from '../../db/seed/index.ts';
import {
  DEPARTMENT_ROLES,
  EUROPEAN_CITIES,
  STORE_PLATFORM_INFO,
  US_CITIES,
  WORLD_CITIES,
} from '../../db/seed/reference.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const TABLES = [
  'company',
  'person',
  'local_business',
  'local_business_review',
  'store',
  'property',
  'real_estate_agent',
  'business_listing',
  'commercial_property',
  'rental_host',
  'rental_listing',
  'home_service_pro',
  'criminal_record',
];

async function checksums(sql: Sql): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of TABLES) {
    const [row] =
      await sql`select count(*)::int as n, md5(coalesce(string_agg(t::text, E'\n' order by id), '')) as sum from ${sql(table)} t`;
    out[table] = `${row!.n}:${row!.sum}`;
  }
  return out;
}

async function emptyCatalog(sql: Sql) {
  await sql.unsafe(`truncate ${TABLES.join(', ')} restart identity cascade`);
}

let template: TestDatabase;
let fresh: TestDatabase;
let seeded: Sql;
let reseeded: Sql;

beforeAll(async () => {
  // `seeded` is a clone of the template that global setup seeded (seed 1, small) in another process.
  template = await createTestDatabase();
  fresh = await createTestDatabase();
  seeded = connect(template.url, { max: 2 }).sql;
  reseeded = connect(fresh.url, { max: 2 }).sql;
});
afterAll(async () => {
  await seeded?.end();
  await reseeded?.end();
  await template?.drop();
  await fresh?.drop();
});

describe('the generator', () => {
  it('is deterministic: the same seed gives byte-identical rows in another process and database', async () => {
    await emptyCatalog(reseeded);
    const report = await seedCatalog(reseeded, { scale: 'small', seed: 1 });
    expect(report.skipped).toEqual([]);
    expect(await checksums(reseeded)).toEqual(await checksums(seeded));
  });

  it('gives other rows for another seed', async () => {
    await emptyCatalog(reseeded);
    await seedCatalog(reseeded, { scale: 'small', seed: 2 });
    const [a, b] = [await checksums(reseeded), await checksums(seeded)];
    for (const table of TABLES) expect(a[table], table).not.toBe(b[table]);
  });

  it('leaves datasets that hold rows alone, and marks every dataset ready with its row count', async () => {
    const before = await checksums(seeded);
    const report = await seedCatalog(seeded, { scale: 'small', seed: 3 });
    expect(Object.values(report.inserted).every((n) => n === 0)).toBe(true);
    expect(report.skipped).toHaveLength(13);
    expect(await checksums(seeded)).toEqual(before);
    const states = await seeded`select dataset, ready, row_count::int as n from dataset_state order by dataset`;
    expect(states).toHaveLength(13);
    for (const s of states) expect(s.ready).toBe(true);
    const [people] = await seeded`select count(*)::int as n from person`;
    expect(states.find((s) => s.dataset === 'people')!.n).toBe(people!.n);
  });

  it('seeds small with the promised sizes', async () => {
    const [counts] =
      await seeded`select (select count(*)::int from person) as people, (select count(*)::int from company) as companies`;
    expect(counts).toEqual({ people: 10_000, companies: 1_000 });
  });
});

describe('consistency of the generated catalog', () => {
  it('gives people emails on their company’s domain', async () => {
    const [row] = await seeded`
      select count(*)::int as bad from person p join company c on c.id = p.company_id
      where p.email is not null and split_part(p.email, '@', 2) <> c.domain`;
    expect(row!.bad).toBe(0);
    const [withEmail] = await seeded`select count(*)::int as n from person where email is not null`;
    expect(withEmail!.n).toBeGreaterThan(8_000);
  });

  it('maps titles to seniority and department', async () => {
    const rows = await seeded`select title, seniority, department from person`;
    const labelOf = Object.fromEntries(Object.entries(DEPARTMENT_ROLES).map(([dept, r]) => [dept, r]));
    for (const { title, seniority, department } of rows) {
      const r = labelOf[department];
      const expected: Record<string, (t: string) => boolean> = {
        owner: (t) => t === 'Owner' && department === 'executive',
        founder: (t) => /^(Co-)?Founder$/.test(t) && department === 'executive',
        c_suite: (t) => /^(CEO|C[A-Z]O|Chief .+ Officer)$/.test(t),
        partner: (t) => t === 'Partner',
        vp: (t) => t === `VP of ${r?.label}`,
        head: (t) => t === `Head of ${r?.label}`,
        director: (t) => t === `Director of ${r?.label}`,
        manager: (t) => t === `${r?.label} Manager`,
        senior: (t) => t === `Senior ${r?.role}`,
        entry: (t) => t === r?.role,
        intern: (t) => t === `${r?.label} Intern`,
      };
      expect(expected[seniority]!(title), `${title} / ${seniority} / ${department}`).toBe(true);
    }
    const [leaders] = await seeded`
      select count(*)::int as missing from company c
      where not exists (select 1 from person p where p.company_id = c.id and p.seniority in ('owner', 'founder', 'c_suite'))`;
    expect(leaders!.missing).toBe(0);
  });

  it('places cities in their real state and country, with coordinates near them', async () => {
    const known = new Set([...US_CITIES, ...WORLD_CITIES].map((c) => `${c.city}|${c.state}|${c.country}`));
    for (const table of ['company', 'person']) {
      const places = await seeded`select distinct city, state, country from ${seeded(table)}`;
      for (const p of places)
        expect(known.has(`${p.city}|${p.state}|${p.country}`), `${table}: ${p.city}, ${p.state}, ${p.country}`).toBe(
          true,
        );
    }
    const centers = Object.fromEntries(US_CITIES.map((c) => [c.city, c]));
    for (const table of ['local_business', 'property', 'commercial_property']) {
      const rows = await seeded`select city, state, lat, lng from ${seeded(table)}`;
      for (const r of rows) {
        const c = centers[r.city]!;
        expect(r.state, table).toBe(c.state);
        expect(
          Math.abs(r.lat - c.lat) < 0.2 && Math.abs(r.lng - c.lng) < 0.2,
          `${table} ${r.city} ${r.lat},${r.lng}`,
        ).toBe(true);
      }
    }
    const rentals = await seeded`select distinct country_code from rental_listing`;
    const european = new Set(EUROPEAN_CITIES.map((c) => c.countryCode));
    for (const r of rentals) expect(european.has(r.country_code)).toBe(true);
  });

  it('uses at least 100 real technology names', async () => {
    const [row] = await seeded`select count(distinct t)::int as n from company, unnest(technologies) t`;
    expect(row!.n).toBeGreaterThanOrEqual(100);
  });

  it('has all ten store platforms, each with its own plan tiers, apps only on the hosted platform', async () => {
    const rows =
      await seeded`select platform, array_agg(distinct plan_tier) as tiers, bool_or(cardinality(apps) > 0) as has_apps from store group by platform`;
    expect(rows.map((r) => r.platform).sort()).toEqual([...STORE_PLATFORMS].sort());
    for (const r of rows) {
      for (const tier of r.tiers) expect(STORE_PLATFORM_INFO[r.platform]!.tiers).toContain(tier);
      expect(r.has_apps, r.platform).toBe(r.platform === 'shopify');
    }
  });

  it('has every home-service slug of the spec, and only those', async () => {
    const rows = await seeded`select distinct category from home_service_pro`;
    expect(rows.map((r) => r.category).sort()).toEqual([...HOME_SERVICE_CATEGORIES].sort());
  });

  it('keeps business-for-sale financials coherent and criminal records after the age of 18', async () => {
    const [biz] =
      await seeded`select count(*)::int as bad from business_listing where ebitda > revenue or cash_flow <= 0 or asking_price <= 0`;
    expect(biz!.bad).toBe(0);
    const [crim] =
      await seeded`select count(*)::int as bad from criminal_record where date_of_birth is not null and offense_date < date_of_birth + interval '18 years'`;
    expect(crim!.bad).toBe(0);
  });
});

describe('COPY', () => {
  it('rolls back and frees the connection when generation fails midway', async () => {
    const sql = reseeded;
    await sql`truncate criminal_record`;
    function* rows() {
      for (let i = 1; i <= 5_000; i++) {
        if (i === 4_500) throw new Error('generator broke');
        yield [i, `k${i}`, 'A', null, 'B', null, 'CO', null, 'court', null, 'Theft', null, null];
      }
    }
    const columns = [
      'id',
      'record_key',
      'first_name',
      'middle_name',
      'last_name',
      'date_of_birth',
      'state',
      'county',
      'source',
      'case_number',
      'offense',
      'offense_date',
      'disposition',
    ];
    await expect(sql.begin((tx) => copyRows(tx as unknown as Sql, 'criminal_record', columns, rows()))).rejects.toThrow(
      'generator broke',
    );
    const [row] = await sql`select count(*)::int as n from criminal_record`;
    expect(row!.n).toBe(0);
  });
});
