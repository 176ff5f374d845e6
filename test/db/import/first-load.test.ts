import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DATASETS,
  ImportAborted,
  ImportRejected,
  importFile,
  type Dataset,
  type ImportOptions,
  type ImportSummary,
} from '../../../db/import/index.ts';
import { importFixture, type ImportFixture } from '../../helpers/import.ts';
import { importSuppression } from '../../../src/privacy/imports.ts';

/**
 * A first load (the table empty): the importer drops the secondary indexes, the natural-key index
 * and the foreign keys, copies the rows straight into the table while reading the file, and builds
 * them again after. It must load exactly what the upsert loads.
 */
let f: ImportFixture;
let domains: string[];

beforeAll(async () => {
  f = await importFixture();
  domains = (await f.sql<{ domain: string }[]>`select domain from company order by id limit 5`).map((r) => r.domain);
});
afterAll(() => f?.close());

const run = (options: Omit<ImportOptions, 'suppressed'>) =>
  importFile(f.sql, { suppressed: importSuppression, ...options });

/**
 * `work`, or a failure naming `what` and every session of the test's database (state, wait, query)
 * when it has not settled within 40 seconds: a hang says where it hangs instead of timing the test out.
 */
async function within<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(async () => {
      const sessions = await f.sql`select pid, state, wait_event_type, wait_event, left(query, 120) as query
        from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`.catch(() => []);
      reject(new Error(`${what} did not settle within 40 s; sessions: ${JSON.stringify(sessions)}`));
    }, 40_000);
  });
  try {
    return await Promise.race([work, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

function summary(counts: Partial<ImportSummary>): ImportSummary {
  return {
    dataset: 'people',
    rows: 0,
    inserted: 0,
    updated: 0,
    unchanged: 0,
    invalid: 0,
    duplicatesInFile: 0,
    suppressed: 0,
    ...counts,
  };
}

/** `rows` people over the first companies; every 10th row repeats the key of the row before (its email in another case), with other values. */
function peopleCsv(rows: number): string {
  const lines = ['company_domain,first_name,last_name,title,seniority,email,linkedin_url,city,mobile'];
  for (let i = 1; i <= rows; i++) {
    const domain = i % 7 === 0 ? '' : domains[i % domains.length]!;
    const n = i % 10 === 0 ? i - 1 : i;
    const email = n % 3 === 0 ? '' : `${i % 10 === 0 ? 'First' : 'first'}.${n}@first-load.test`;
    lines.push(
      `${domain},First${i},Last${i},"Head of Sales, EMEA",head,${email},https://www.linkedin.com/in/first-load-${n},Denver,+1 303-555-${String(i % 10000).padStart(4, '0')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

const indexes = () => f.sql`select indexname, indexdef from pg_indexes where tablename = 'person' order by indexname`;
/**
 * A table's rows without their ids, in any order: the upsert numbers rows in the order its join
 * returns them, a first load in file order (skipping the ids of rows a later one replaced).
 */
const rowsWithoutIds = async (table: string) =>
  (
    await f.sql.unsafe(
      `select count(*)::int as rows, coalesce(md5(string_agg(r, '|' order by r)), '') as md5 from (select (to_jsonb(t) - 'id')::text as r from "${table}" t) t`,
    )
  )[0];
const constraints = () =>
  f.sql`select conname, contype, convalidated, pg_get_constraintdef(oid) as definition from pg_constraint where conrelid = 'person'::regclass order by conname`;
const empty = () => f.sql`truncate person restart identity cascade`;
/** The foreign key's oid: a first load drops and adds it back, the upsert leaves it. */
const foreignKeyOid = async () =>
  (await f.sql`select oid::int from pg_constraint where conrelid = 'person'::regclass and contype = 'f'`)[0]!
    .oid as number;

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
    const upsertedRows = await rowsWithoutIds('person');
    expect(await foreignKeyOid()).toBe(oid);

    await empty();
    const phases = new Set<string>();
    const loaded = await run({ dataset: 'people', file, rebuildIndexes: true, onProgress: (p) => phases.add(p.phase) });
    expect([...phases]).toEqual(['reading', 'rebuilding indexes', 'removing duplicates']);
    expect(await foreignKeyOid()).not.toBe(oid);
    oid = await foreignKeyOid();
    expect(loaded.summary).toEqual(summary({ rows: 500, inserted: 450, duplicatesInFile: 50 }));
    expect(loaded.summary).toEqual(upserted.summary);
    expect(await rowsWithoutIds('person')).toEqual(upsertedRows);
    expect(await indexes()).toEqual(indexesBefore);
    expect(await constraints()).toEqual(constraintsBefore);
    expect(await f.state('people')).toEqual({ ready: true, row_count: 450 });
    // Ids follow the file; those of the rows replaced by a later one are skipped.
    expect(await f.sql`select min(id)::int, max(id)::int from person`).toEqual([{ min: 1, max: 500 }]);

    // The rebuilt natural key and foreign key still hold.
    await expect(
      f.sql`insert into person (first_name, last_name, email) values ('A', 'B', 'FIRST.1@first-load.test')`,
    ).rejects.toThrow(/person_key/);
    await expect(
      f.sql`insert into person (first_name, last_name, email, company_id) values ('A', 'B', 'fk@first-load.test', -1)`,
    ).rejects.toThrow(/foreign key/);

    // The last row of a key wins, as with the upsert.
    expect(await f.sql`select first_name, email from person where person_key = 'first.19@first-load.test'`).toEqual([
      { first_name: 'First20', email: 'First.19@first-load.test' },
    ]);

    // Importing it again goes through the upsert: all unchanged.
    const before = await f.checksum('person');
    expect((await run({ dataset: 'people', file, rebuildIndexes: true })).summary).toEqual(
      summary({ rows: 500, unchanged: 450, duplicatesInFile: 50 }),
    );
    expect(await f.checksum('person')).toEqual(before);
    expect(await foreignKeyOid()).toBe(oid);
  });

  it('numbers the rows in file order, from where the identity stood', async () => {
    // Every tenth row repeats its predecessor's key; leave those out.
    const text = peopleCsv(300)
      .split('\n')
      .filter((_, i) => i === 0 || i % 10 !== 0)
      .join('\n');
    const file = await f.write('first-load-distinct.csv', text);
    await empty();
    const upserted = await run({ dataset: 'people', file, rebuildIndexes: false });
    const upsertedRows = await rowsWithoutIds('person');
    await empty();
    await f.sql`select setval(pg_get_serial_sequence('person', 'id'), 41)`;
    const phases = new Set<string>();
    const loaded = await run({ dataset: 'people', file, onProgress: (p) => phases.add(p.phase) });
    expect([...phases]).toEqual(['reading', 'rebuilding indexes']);
    expect(loaded.summary).toEqual(summary({ rows: 270, inserted: 270 }));
    expect(loaded.summary).toEqual(upserted.summary);
    expect(await rowsWithoutIds('person')).toEqual(upsertedRows);
    const names = (
      await f.sql<{ id: number; first_name: string }[]>`select id::int, first_name from person order by id`
    ).map((r) => `${r.id}:${r.first_name}`);
    const inFile = text
      .split('\n')
      .slice(1)
      .filter((line) => line !== '')
      .map((line, i) => `${42 + i}:${line.split(',')[1]}`);
    expect(names).toEqual(inFile);
  });

  it('is taken by default for a large file into an empty table', async () => {
    await empty();
    const oid = await foreignKeyOid();
    const file = await f.write('first-load-large.csv', peopleCsv(12_000));
    const result = await run({ dataset: 'people', file });
    expect(await foreignKeyOid()).not.toBe(oid);
    expect(result.summary).toEqual(summary({ rows: 12_000, inserted: 10_800, duplicatesInFile: 1_200 }));
    const [counts] =
      await f.sql`select count(*)::int as n, count(company_id)::int as with_company, max(id)::int as max_id from person`;
    // Rows 7, 14, … have no company; of those, the ones ending in 9 were replaced by the next row.
    // Ids follow the file (row 12,000 replaced row 11,999 and kept its own id).
    expect(counts).toEqual({ n: 10_800, with_company: 10_800 - (1_714 - 171), max_id: 12_000 });
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

describe('importFile: bad rows and failures in a first load', () => {
  /** Good rows around bad ones: a bad value, a missing name, an unknown company, a bad count of fields. */
  const badCsv = () =>
    [
      'company_domain,first_name,last_name,email,seniority',
      `${domains[0]},Good,One,good.one@first-load-bad.test,head`,
      `${domains[1]},Bad,Seniority,bad.seniority@first-load-bad.test,boss`,
      `${domains[2]},,Nameless,nameless@first-load-bad.test,`,
      `nowhere-first-load.test,Lost,Company,lost@first-load-bad.test,`,
      `${domains[3]},Short`,
      `,Good,Two,good.two@first-load-bad.test,`,
    ].join('\n');

  it('reports the bad rows the upsert reports, by line; loads nothing, or the good rows with skipInvalid', async () => {
    const file = await f.write('first-load-bad.csv', badCsv());
    const indexesBefore = await indexes();
    const constraintsBefore = await constraints();
    await empty();
    const staged = await run({ dataset: 'people', file, rebuildIndexes: false }).catch((e: ImportRejected) => e);
    expect(staged).toBeInstanceOf(ImportRejected);

    const err = await run({ dataset: 'people', file }).catch((e: ImportRejected) => e);
    expect(err).toBeInstanceOf(ImportRejected);
    expect(err.errors).toEqual(staged.errors);
    expect(err.errors.map((e) => e.line)).toEqual([3, 4, 5, 6]);
    expect(err.errors[2]).toEqual({
      line: 5,
      reason: 'company_domain: no company has domain "nowhere-first-load.test"',
    });
    expect(err.summary).toEqual(staged.summary);
    expect(await f.errorsIn(`${file}.errors.csv`)).toEqual(
      err.errors.map((e) => ({ line: String(e.line), reason: e.reason })),
    );
    expect(await f.checksum('person')).toEqual({ rows: 0, md5: '' });
    expect(await indexes()).toEqual(indexesBefore);
    expect(await constraints()).toEqual(constraintsBefore);

    await empty();
    const upserted = await run({ dataset: 'people', file, rebuildIndexes: false, skipInvalid: true });
    const upsertedRows = await f.checksum('person');
    await empty();
    const loaded = await run({ dataset: 'people', file, skipInvalid: true });
    expect(loaded).toEqual(upserted);
    expect(loaded.summary).toEqual(summary({ rows: 6, inserted: 2, invalid: 4 }));
    expect(await f.checksum('person')).toEqual(upsertedRows);
  });

  it('an abort while reading, or a row the database refuses halfway through the copy, leaves the table empty and whole', async () => {
    const file = await f.write('first-load-halfway.csv', peopleCsv(40_000));
    const indexesBefore = await indexes();
    const constraintsBefore = await constraints();
    await empty();

    const controller = new AbortController();
    let readBeforeAbort = 0;
    const aborted = await within(
      'the aborted import',
      run({
        dataset: 'people',
        file,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.phase === 'reading' && p.rows > 0 && !controller.signal.aborted) {
            readBeforeAbort = p.rows;
            controller.abort();
          }
        },
      }).catch((e: Error) => e),
    );
    expect(aborted).toBeInstanceOf(ImportAborted);
    expect(readBeforeAbort).toBeGreaterThan(0);
    expect(readBeforeAbort).toBeLessThan(40_000);

    // A check the reader knows nothing of, broken by row 30,000 only.
    await within(
      'adding the check',
      f.sql`alter table person add constraint first_load_refused check (first_name <> 'First30000')`,
    );
    try {
      const refused = await within(
        'the refused import',
        run({ dataset: 'people', file }).catch((e: Error) => e),
      );
      expect((refused as Error).message).toBe('the database refused the rows copied into the person table');
    } finally {
      await f.sql`alter table person drop constraint first_load_refused`;
    }

    expect(await f.checksum('person')).toEqual({ rows: 0, md5: '' });
    expect(await indexes()).toEqual(indexesBefore);
    expect(await constraints()).toEqual(constraintsBefore);
    expect(await f.state('people')).toEqual({ ready: true, row_count: 0 });
    expect((await run({ dataset: 'people', file })).summary).toEqual(
      summary({ rows: 40_000, inserted: 36_000, duplicatesInFile: 4_000 }),
    );
  });
});

describe('importFile: first loads of every dataset', () => {
  /** A table's rows as an NDJSON import file: every import column, references by their natural key. */
  async function exportNdjson(dataset: Dataset): Promise<string> {
    const joins: string[] = [];
    const select = dataset.columns.map((c, i) => {
      if (!c.reference) return `t."${c.target}" as "${c.name}"`;
      joins.push(`left join "${c.reference.table}" r${i} on r${i}."${c.reference.id}" = t."${c.target}"`);
      return `r${i}."${c.reference.column}" as "${c.name}"`;
    });
    const rows = await f.sql.unsafe<{ line: string }[]>(
      `select row_to_json(x)::text as line from (select ${select.join(', ')} from "${dataset.table}" t ${joins.join(' ')} order by t.id) x`,
    );
    return rows.map((r) => r.line).join('\n');
  }
  const tableIndexes = (table: string) =>
    f.sql`select indexname, indexdef from pg_indexes where tablename = ${table} order by indexname`;

  it('load what the upsert loads, row for row, with the same reports', async () => {
    // Datasets that reference others first: emptying a table empties the tables that reference it.
    const ordered = [...DATASETS].sort(
      (a, b) => Number(b.columns.some((c) => c.reference)) - Number(a.columns.some((c) => c.reference)),
    );
    for (const dataset of ordered) {
      const file = await f.write(`every-${dataset.name}.ndjson`, await exportNdjson(dataset));
      const truncate = () => f.sql.unsafe(`truncate "${dataset.table}" restart identity cascade`);
      const indexesBefore = await tableIndexes(dataset.table);
      await truncate();
      const upserted = await run({ dataset: dataset.name, file, rebuildIndexes: false, skipInvalid: true });
      const upsertedRows = await rowsWithoutIds(dataset.table);
      await truncate();
      const phases = new Set<string>();
      const loaded = await run({
        dataset: dataset.name,
        file,
        skipInvalid: true,
        onProgress: (p) => phases.add(p.phase),
      });
      expect({ dataset: dataset.name, phases: [...phases] }).toEqual({
        dataset: dataset.name,
        phases: ['reading', 'rebuilding indexes'],
      });
      expect(loaded).toEqual(upserted);
      expect(loaded.summary.inserted).toBeGreaterThan(0);
      expect(await rowsWithoutIds(dataset.table)).toEqual(upsertedRows);
      expect(await tableIndexes(dataset.table)).toEqual(indexesBefore);
    }
  });
});
