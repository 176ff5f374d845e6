import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFile, type ImportOptions, type ImportSummary } from '../db/import/index.ts';
import { importFixture, type ImportFixture } from './helpers/import.ts';

/**
 * A first load (the table empty, its indexes rebuilt): the importer drops the natural-key index and
 * the foreign keys too and applies with a plain INSERT. It must load exactly what the upsert loads.
 */
let f: ImportFixture;
let domains: string[];

beforeAll(async () => {
  f = await importFixture();
  domains = (await f.sql<{ domain: string }[]>`select domain from company order by id limit 5`).map((r) => r.domain);
});
afterAll(() => f?.close());

const run = (options: ImportOptions) => importFile(f.sql, options);

function summary(counts: Partial<ImportSummary>): ImportSummary {
  return { dataset: 'people', rows: 0, inserted: 0, updated: 0, unchanged: 0, invalid: 0, duplicatesInFile: 0, ...counts };
}

/** `rows` people over the first companies; every 10th row repeats the key of the row before (its email in another case), with other values. */
function peopleCsv(rows: number): string {
  const lines = ['company_domain,first_name,last_name,title,seniority,email,linkedin_url,city,mobile'];
  for (let i = 1; i <= rows; i++) {
    const domain = i % 7 === 0 ? '' : domains[i % domains.length]!;
    const n = i % 10 === 0 ? i - 1 : i;
    const email = n % 3 === 0 ? '' : `${i % 10 === 0 ? 'First' : 'first'}.${n}@first-load.test`;
    lines.push(`${domain},First${i},Last${i},"Head of Sales, EMEA",head,${email},https://www.linkedin.com/in/first-load-${n},Denver,+1 303-555-${String(i % 10000).padStart(4, '0')}`);
  }
  return `${lines.join('\n')}\n`;
}

const indexes = () => f.sql`select indexname, indexdef from pg_indexes where tablename = 'person' order by indexname`;
const constraints = () =>
  f.sql`select conname, contype, convalidated, pg_get_constraintdef(oid) as definition from pg_constraint where conrelid = 'person'::regclass order by conname`;
const empty = () => f.sql`truncate person restart identity cascade`;
/** The foreign key's oid: a first load drops and adds it back, the upsert leaves it. */
const foreignKeyOid = async () => (await f.sql`select oid::int from pg_constraint where conrelid = 'person'::regclass and contype = 'f'`)[0]!.oid as number;

describe('importFile: first load into an empty table', () => {
  it('loads the same rows and counts as the upsert, and leaves the same indexes and constraints', async () => {
    const file = await f.write('first-load.csv', peopleCsv(500));
    const indexesBefore = await indexes();
    const constraintsBefore = await constraints();
    expect(constraintsBefore.some((c) => c.contype === 'f')).toBe(true);
    expect(indexesBefore.some((i) => i.indexname === 'person_key')).toBe(true);

    await empty();
    let oid = await foreignKeyOid();
    const upserted = await run({ dataset: 'people', file, rebuildIndexes: false });
    const upsertedRows = await f.checksum('person');
    expect(await foreignKeyOid()).toBe(oid);

    await empty();
    const loaded = await run({ dataset: 'people', file, rebuildIndexes: true });
    expect(await foreignKeyOid()).not.toBe(oid);
    oid = await foreignKeyOid();
    expect(loaded.summary).toEqual(summary({ rows: 500, inserted: 450, duplicatesInFile: 50 }));
    expect(loaded.summary).toEqual(upserted.summary);
    expect(await f.checksum('person')).toEqual(upsertedRows);
    expect(await indexes()).toEqual(indexesBefore);
    expect(await constraints()).toEqual(constraintsBefore);
    expect(await f.state('people')).toEqual({ ready: true, row_count: 450 });

    // The rebuilt natural key and foreign key still hold.
    await expect(f.sql`insert into person (first_name, last_name, email) values ('A', 'B', 'FIRST.1@first-load.test')`).rejects.toThrow(/person_key/);
    await expect(f.sql`insert into person (first_name, last_name, email, company_id) values ('A', 'B', 'fk@first-load.test', -1)`).rejects.toThrow(/foreign key/);

    // The last row of a key wins, as with the upsert.
    expect(await f.sql`select first_name, email from person where person_key = 'first.19@first-load.test'`).toEqual([{ first_name: 'First20', email: 'First.19@first-load.test' }]);

    // Importing it again goes through the upsert: all unchanged.
    expect((await run({ dataset: 'people', file, rebuildIndexes: true })).summary).toEqual(summary({ rows: 500, unchanged: 450, duplicatesInFile: 50 }));
    expect(await f.checksum('person')).toEqual(upsertedRows);
    expect(await foreignKeyOid()).toBe(oid);
  });

  it('is taken by default for a large file into an empty table', async () => {
    await empty();
    const oid = await foreignKeyOid();
    const file = await f.write('first-load-large.csv', peopleCsv(12_000));
    const result = await run({ dataset: 'people', file });
    expect(await foreignKeyOid()).not.toBe(oid);
    expect(result.summary).toEqual(summary({ rows: 12_000, inserted: 10_800, duplicatesInFile: 1_200 }));
    const [counts] = await f.sql`select count(*)::int as n, count(company_id)::int as with_company, max(id)::int as max_id from person`;
    // Rows 7, 14, … have no company; of those, the ones ending in 9 were replaced by the next row.
    expect(counts).toEqual({ n: 10_800, with_company: 10_800 - (1_714 - 171), max_id: 10_800 });
    expect(await f.state('people')).toEqual({ ready: true, row_count: 10_800 });
  });

  it('a failure rolls the first load back: the table stays empty with all its indexes and constraints', async () => {
    await empty();
    const file = await f.write('first-load-fail.csv', peopleCsv(200));
    const indexesBefore = await indexes();
    const constraintsBefore = await constraints();
    let inside: unknown;
    const err = await run({
      dataset: 'people',
      file,
      rebuildIndexes: true,
      beforeCommit: async (tx) => {
        inside = (await tx`select count(*)::int as n from person`)[0]!.n;
        throw new Error('injected failure');
      },
    }).catch((e: Error) => e);
    expect((err as Error).message).toBe('injected failure');
    expect(inside).toBe(180);
    expect(await f.checksum('person')).toEqual({ rows: 0, md5: '' });
    expect(await indexes()).toEqual(indexesBefore);
    expect(await constraints()).toEqual(constraintsBefore);
    expect(await f.state('people')).toEqual({ ready: true, row_count: 0 });
  });
});
