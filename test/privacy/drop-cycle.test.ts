import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropHash } from '../../src/privacy/drop/hash.ts';
import { standardizeEmail, standardizePhone } from '../../src/privacy/drop/standardize.ts';
import { importFile } from '../../db/import/index.ts';
import { runDropCycle } from '../../src/privacy/drop-cycle.ts';
import { importSuppression } from '../../src/privacy/imports.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { leadgate } from '../helpers/process.ts';
import { zipSync } from './drop/zip-writer.ts';

/**
 * A DROP cycle against the catalog and stored runs: each work item matched through the identifier index,
 * the person found deleted (or opted out when several people share the identifier), every identifier
 * suppressed for good, a response per list; the same archive again changes nothing and answers the same;
 * a later archive's withdrawn identifier is lifted. The command does the same from a shell.
 */

interface Person {
  id: number;
  first_name: string;
  last_name: string;
  email: string | null;
  phone: string | null;
  mobile: string | null;
}

let t: TestApp;
let key: string;
let dir: string;
const emailHash = (email: string) => dropHash(standardizeEmail(email) as string);
const phoneHash = (phone: string) => dropHash(standardizePhone(phone) as string);

/** Writes a DROP archive of `lists` (list type → [work item ID, hash] rows) and returns its path. */
async function archive(
  date: string,
  lists: Record<string, [string, string][]>,
  removed: [string, string, string][] = [],
) {
  const entries = Object.entries(lists).map(([listType, rows]) => ({
    name: `${date}_4821_${listType}.csv`,
    data: ['ID,Hash', ...rows.map((r) => r.join(','))].join('\n'),
  }));
  if (removed.length > 0)
    entries.push({
      name: `${date}_4821_Removed.csv`,
      data: ['ID,Hash,ListType', ...removed.map((r) => r.join(','))].join('\n'),
    });
  const file = path.join(dir, `${date}_4821_DROP.zip`);
  await writeFile(file, zipSync(entries));
  return file;
}

const people = (where: string) =>
  t.app.core.sql.unsafe<Person[]>(`select id::int, first_name, last_name, email, phone, mobile from person ${where}`);

beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key } = await t.account({ plan: 'scale', creditsMicros: 20_000_000n }));
  dir = await mkdtemp(path.join(tmpdir(), 'drop-cycle-'));
});
afterAll(async () => {
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the identifier index', () => {
  it('hashes in the database exactly as the DROP library does', async () => {
    const vectors = JSON.parse(await readFile('test/fixtures/drop/vectors.json', 'utf8')) as {
      fields: { field: string; input: string; hash: string }[];
    };
    const cases = vectors.fields.filter((v) => v.field === 'email' || v.field === 'phone');
    expect(cases.length).toBeGreaterThan(2);
    const odd = [
      '  Anna.Smith@Domain.COM\u00a0',
      'x\u3000Y@b.c',
      '+84(90)123 4567',
      '１２３-４５６-７８９０ ext 12',
      '',
      ' ',
    ];
    for (const input of [...cases.map((c) => c.input), ...odd]) {
      const [row] = await t.app.core.sql`select drop_email_hash(${input}) as email, drop_phone_hash(${input}) as phone`;
      const js = (s: string | undefined) => (s === undefined ? null : dropHash(s));
      expect(row, input).toEqual({ email: js(standardizeEmail(input)), phone: js(standardizePhone(input)) });
    }
    for (const v of cases) {
      const [row] = await t.app.core
        .sql`select drop_email_hash(${v.input}) as email, drop_phone_hash(${v.input}) as phone`;
      expect(row?.[v.field as 'email' | 'phone']).toBe(v.hash);
    }
  });
});

describe('a run’s rows in the index', () => {
  it('are indexed once, also when a batch is stored again', async () => {
    const { indexRunRows } = await import('../../src/privacy/identifier-index.ts');
    const { accountId } = await t.account();
    const runId = `IndexOnce${accountId.slice(-8)}`;
    await t.app.core.sql`insert into run (id, account_id, tool, status, input, item_count, handled, requested)
      values (${runId}, ${accountId}, 'maps', 'RUNNING', '{}', 0, 0, 3)`;
    const rows = [
      { name: 'A', email: 'ann@indexonce.test', phone: '+1 303 555 0101' },
      { name: 'B', emails: ['bo@indexonce.test'] },
    ];
    const entries = async () =>
      (
        await t.app.core.sql`select seq, list_type from identifier_hash where run_id = ${runId} order by seq, list_type`
      ).map((e) => `${e.seq}:${e.list_type}`);
    await t.app.core.db.transaction((tx) => indexRunRows(tx, runId, 0, rows, 0) as Promise<unknown>);
    const once = await entries();
    expect(once).toEqual(['0:email', '0:phone', '1:email']);
    // The same batch again, and one that overlaps it by a row and adds one, as a worker that took the run
    // over stores them (the run holds 2 rows): only the new row's entries.
    await t.app.core.db.transaction((tx) => indexRunRows(tx, runId, 0, rows, 2) as Promise<unknown>);
    await t.app.core.db.transaction(
      (tx) => indexRunRows(tx, runId, 1, [rows[1]!, { email: 'cy@indexonce.test' }], 2) as Promise<unknown>,
    );
    expect(await entries()).toEqual([...once, '2:email']);
  });
});

describe('a DROP cycle', () => {
  it('deletes the people it finds, opts out a shared identifier, suppresses every one, and answers each list', async () => {
    const sql = t.app.core.sql;
    const [a, b, c, d] = [
      ...(await people(`where email is not null and phone is null and mobile is null order by id limit 1`)),
      ...(await people(`where phone is not null and email is not null order by id limit 2`)),
      ...(await people(`where mobile is not null and phone is null and email is not null order by id limit 1`)),
    ] as [Person, Person, Person, Person];
    expect(b.last_name + b.first_name).not.toBe(c.last_name + c.first_name);
    // Two people behind one number: the index follows the update (its trigger).
    await sql`update person set phone = ${b.phone} where id = ${c.id}`;
    const enrich = async (email: string) =>
      (
        (await t.request('POST', '/api/v1/enrich', { key, body: { rows: [{ email }] } })).body as {
          rows: { match_status: string }[];
        }
      ).rows[0]?.match_status;
    expect(await enrich(b.email as string)).toBe('matched');

    // A business's address in a stored run's row: the run's copy is indexed as the batch is stored.
    const maps = await t.runTool(key, '/api/v1/scrape/maps', {
      searchStringsArray: ['dentist'],
      locationQuery: 'Denver, CO',
      maxCrawledPlacesPerSearch: 40,
    });
    const place = maps.rows.find((r) => (r.emails as string[]).length > 0) as { emails: string[]; name: string };
    const runId = maps.start.runId as string;

    const zip = await archive('20260312', {
      Email: [
        ['EmA000000001', emailHash(a.email as string)],
        ['EmU000000002', emailHash('nobody-held@example.org')],
        ['EmR000000003', emailHash(place.emails[0] as string)],
        // Named on both lists: deleted by its address, its mobile on the Phone list is answered deleted too.
        ['EmD000000004', emailHash(d.email as string)],
      ],
      Phone: [
        ['PhB000000001', phoneHash(b.phone as string)],
        ['PhD000000002', phoneHash(d.mobile as string)],
      ],
      NDZ: [],
    });
    const out = path.join(dir, 'answers');
    const summary = await runDropCycle(t.app.core.db, zip, { out: `${out}/` });
    expect(summary).toMatchObject({ name: '20260312_4821', repeated: false, workItems: 6 });
    expect(summary).toMatchObject({ deleted: 4, optedOut: 1, notFound: 1, removed: 0 });
    expect(summary.responses.map((r) => [r.file, r.rows])).toEqual([
      ['20260312_4821_Email.csv', 4],
      ['20260312_4821_Phone.csv', 2],
    ]);
    expect(await readFile(path.join(out, '20260312_4821_Email.csv'), 'utf8')).toBe(
      'Id,Status\nEmA000000001,3\nEmU000000002,5\nEmR000000003,3\nEmD000000004,3\n',
    );
    expect(await readFile(path.join(out, '20260312_4821_Phone.csv'), 'utf8')).toBe(
      'Id,Status\nPhB000000001,4\nPhD000000002,3\n',
    );
    expect((await readdir(out)).sort()).toEqual(['20260312_4821_Email.csv', '20260312_4821_Phone.csv']);

    // Deleted: the people and the run's row, with their index entries.
    expect(await people(`where id in (${a.id}, ${d.id})`)).toEqual([]);
    const [held] = await sql`select count(*)::int as n from identifier_hash
      where (source = 'person' and record_id in (${a.id}, ${d.id})) or hash = ${emailHash(place.emails[0] as string)}`;
    expect(held?.n).toBe(0);
    const stored = await t.request('GET', `/api/v1/runs/${runId}/results?format=json`, { key });
    expect(JSON.stringify(stored.body)).not.toContain(place.emails[0]);
    // Opted out: kept, but never leaves.
    expect((await people(`where id in (${b.id}, ${c.id})`)).length).toBe(2);
    expect(await enrich(b.email as string)).toBe('not_found');
    // Every identifier is on the deployment's list, also the one no record held.
    const [listed] = await sql`select count(*)::int as n from suppression
      where account_id is null and kind = 'hash' and source = 'drop'`;
    expect(listed?.n).toBe(6);
    // The business whose address was listed no longer leaves in a later run either.
    const again = await t.runTool(key, '/api/v1/scrape/maps', {
      searchStringsArray: ['dentist'],
      locationQuery: 'Denver, CO',
      maxCrawledPlacesPerSearch: 40,
    });
    expect(again.rows.map((r) => r.name)).not.toContain(place.name);
    expect(again.status.suppressed).toBeGreaterThanOrEqual(1);

    // A later catalog import that brings the deleted person and the opted-out number back leaves them out.
    const csv = path.join(dir, 'people.csv');
    await writeFile(
      csv,
      [
        'first_name,last_name,email,phone',
        `${a.first_name},${a.last_name},${a.email},`,
        `Other,Person,other.person@drop-import.test,${b.phone}`,
        'Kept,Person,kept.person@drop-import.test,',
      ].join('\n'),
    );
    const imported = await importFile(sql, { dataset: 'people', file: csv, suppressed: importSuppression });
    expect(imported.summary).toMatchObject({ rows: 3, inserted: 1, suppressed: 2 });
    expect(await people(`where email in ('${a.email}', 'other.person@drop-import.test')`)).toEqual([]);
    expect((await people(`where email = 'kept.person@drop-import.test'`)).length).toBe(1);

    // The same archive again: the same answers, nothing done twice.
    const repeated = await runDropCycle(t.app.core.db, zip, { out: `${out}/` });
    expect(repeated).toMatchObject({ ...summary, repeated: true, responses: summary.responses });
    expect(await readFile(path.join(out, '20260312_4821_Email.csv'), 'utf8')).toContain('EmU000000002,5');
    const [twice] = await sql`select count(*)::int as n from suppression where source = 'drop'`;
    expect(twice?.n).toBe(6);
    // The operator's audit log holds the cycle once, with its counts and no identifier.
    const logged = await sql`select account_id, actor_type, target_type, details from audit_event
      where action = 'privacy.drop_cycle'`;
    expect(logged).toEqual([
      {
        account_id: null,
        actor_type: 'operator',
        target_type: 'drop_cycle',
        details: {
          fileName: '20260312_4821',
          workItems: 6,
          deleted: 4,
          optedOut: 1,
          exempted: 0,
          notFound: 1,
          recordsDeleted: summary.recordsDeleted,
        },
      },
    ]);
  });

  it('lifts a withdrawn identifier in a later archive, from the command line', async () => {
    const unknown = emailHash('nobody-held@example.org');
    const zip = await archive('20260426', { Email: [['EmN000000001', emailHash('someone-else@example.org')]] }, [
      ['EmU000000002', unknown, 'Email'],
    ]);
    const answer = path.join(dir, 'email-answer.csv');
    const done = await leadgate(['privacy', 'drop', 'import', zip, '--out', answer, '--json'], {
      DATABASE_URL: t.database.url,
    });
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ workItems: 1, notFound: 1, removed: 1 });
    expect(await readFile(answer, 'utf8')).toBe('Id,Status\nEmN000000001,5\n');
    const values = await t.app.core
      .sql`select value from suppression where source = 'drop' and value = ${`email:${unknown}`}`;
    expect(values).toEqual([]);

    // A file for one list cannot hold two: the command says to give a folder, and writes nothing.
    const two = await archive('20260610', { Email: [['EmZ000000001', unknown]], Phone: [['PhZ000000001', unknown]] });
    const refused = await leadgate(['privacy', 'drop', 'import', two, '--out', path.join(dir, 'one.csv')], {
      DATABASE_URL: t.database.url,
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('give --out a folder');
  });
});
