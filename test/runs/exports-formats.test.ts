import { buffer, text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '../../db/tables/runs.ts';
import { AppError } from '../../src/shared/errors.ts';
import { assertDownloadable, downloadParams, escapeFormula, exportRun, toCell } from '../../src/runs/exports.ts';
import type { Column } from '../../src/tools/types.ts';
import { openDirectDb, type DirectDb } from '../helpers/direct-db.ts';

let d: DirectDb;
let accountId: string;

beforeAll(async () => {
  d = await openDirectDb();
  accountId = await d.account();
});
afterAll(() => d?.close());

const COLUMNS: Column[] = [
  { key: 'name', header: 'Name', description: '' },
  { key: 'phone', header: 'Phone number', description: '' },
  { key: 'tags', header: 'Tags', description: '' },
];

/** A finished run with `rows` stored as the worker stores them. */
async function runWith(rows: Record<string, unknown>[], values: Partial<Run> = {}): Promise<Run> {
  const run = await d.insertRun({ accountId, status: 'SUCCEEDED', itemCount: rows.length, ...values });
  for (const [seq, data] of rows.entries())
    await d.sql`insert into run_item (run_id, seq, data) values (${run.id}, ${seq}, ${JSON.stringify(data)}::json)`;
  return run;
}

const ROWS = [
  { name: 'Acme Dental', phone: '+1 303-555-0100', tags: ['a', 'b'] },
  { name: '=HYPERLINK("http://x")', phone: null, tags: [] },
  { name: 'Zed, "the" dentist', phone: '-12', tags: { min: 1, max: 2 } },
];

describe('exportRun: a run’s rows as a file', () => {
  let run: Run;
  beforeAll(async () => {
    run = await runWith(ROWS);
  });

  it('writes CSV with a header of the tool’s columns, cells escaped', async () => {
    const file = exportRun(d.sql, run, COLUMNS, 'csv');
    expect(file.contentType).toBe('text/csv; charset=utf-8');
    expect(file.fileName).toBe(`maps-${run.id}.csv`);
    expect(await text(file.body)).toBe(
      [
        'Name,Phone number,Tags',
        'Acme Dental,+1 303-555-0100,a; b',
        `"'=HYPERLINK(""http://x"")",,`,
        '"Zed, ""the"" dentist",-12,min: 1; max: 2',
        '',
      ].join('\n'),
    );
  });

  it('writes CSV without a byte-order mark', async () => {
    const bytes = await buffer(exportRun(d.sql, run, COLUMNS, 'csv').body);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('Name');
  });

  it('writes JSON as an array, one row per line', async () => {
    const file = exportRun(d.sql, run, COLUMNS, 'json');
    expect(file.contentType).toBe('application/json; charset=utf-8');
    expect(file.fileName).toBe(`maps-${run.id}.json`);
    const body = await text(file.body);
    expect(body).toBe(`[\n${ROWS.map((r) => JSON.stringify(r)).join(',\n')}\n]\n`);
    expect(JSON.parse(body)).toEqual(ROWS);
  });

  it('writes NDJSON, one row per line', async () => {
    const file = exportRun(d.sql, run, COLUMNS, 'ndjson');
    expect(file.contentType).toBe('application/x-ndjson; charset=utf-8');
    expect(file.fileName).toBe(`maps-${run.id}.ndjson`);
    expect(await text(file.body)).toBe(ROWS.map((r) => `${JSON.stringify(r)}\n`).join(''));
  });

  it('writes a range of rows: offset, limit, or both', async () => {
    const json = async (range: { offset: number; limit?: number }) =>
      JSON.parse(await text(exportRun(d.sql, run, COLUMNS, 'json', range).body));
    expect(await json({ offset: 1 })).toEqual(ROWS.slice(1));
    expect(await json({ offset: 0, limit: 1 })).toEqual(ROWS.slice(0, 1));
    expect(await json({ offset: 1, limit: 1 })).toEqual(ROWS.slice(1, 2));
    expect(await json({ offset: 2, limit: 5 })).toEqual(ROWS.slice(2));
    const csv = await text(exportRun(d.sql, run, COLUMNS, 'csv', { offset: 2, limit: 1 }).body);
    expect(csv).toBe('Name,Phone number,Tags\n"Zed, ""the"" dentist",-12,min: 1; max: 2\n');
  });

  it('writes valid empty files past the last row', async () => {
    expect(await text(exportRun(d.sql, run, COLUMNS, 'json', { offset: 3 }).body)).toBe('[]\n');
    expect(await text(exportRun(d.sql, run, COLUMNS, 'ndjson', { offset: 3 }).body)).toBe('');
    expect(await text(exportRun(d.sql, run, COLUMNS, 'csv', { offset: 3 }).body)).toBe('Name,Phone number,Tags\n');
  });

  it('reads only this run’s rows', async () => {
    const other = await runWith([{ name: 'Other run', phone: null, tags: [] }]);
    expect(JSON.parse(await text(exportRun(d.sql, other, COLUMNS, 'json').body))).toEqual([
      { name: 'Other run', phone: null, tags: [] },
    ]);
    expect(JSON.parse(await text(exportRun(d.sql, run, COLUMNS, 'json').body))).toHaveLength(3);
  });

  it('names the file after the run’s fileName, made safe for a header', async () => {
    const named = await runWith([], { fileName: 'my leads/2024 (final)?.v2' });
    expect(exportRun(d.sql, named, COLUMNS, 'csv').fileName).toBe('my_leads_2024_final_.v2.csv');
    const plain = await runWith([], { fileName: 'Leads-2024_Q1.x' });
    expect(exportRun(d.sql, plain, COLUMNS, 'ndjson').fileName).toBe('Leads-2024_Q1.x.ndjson');
  });
});

describe('assertDownloadable', () => {
  const base = { id: 'run1', status: 'SUCCEEDED', expiresAt: null } as unknown as Run;
  const refusal = (run: Run, now?: Date) => {
    try {
      assertDownloadable(run, now);
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      return err as AppError;
    }
    return undefined;
  };

  it('refuses a run that has not ended, saying how to wait for it', () => {
    for (const status of ['READY', 'RUNNING', 'ABORTING']) {
      const err = refusal({ ...base, status } as Run);
      expect(err?.status).toBe(409);
      expect(err?.code).toBe('run_not_finished');
      expect(err?.message).toBe(
        `Run run1 is ${status}; poll GET /api/v1/scrape/status/run1 until it is SUCCEEDED, then download.`,
      );
    }
  });

  it('lets every ended run be downloaded until it expires, and not from that instant on', () => {
    const expiresAt = new Date('2030-01-03T00:00:00.000Z');
    for (const status of ['SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED-OUT'])
      expect(refusal({ ...base, status } as Run)).toBeUndefined();
    expect(refusal({ ...base, expiresAt }, new Date(expiresAt.getTime() - 1))).toBeUndefined();
    const err = refusal({ ...base, expiresAt }, expiresAt);
    expect(err?.status).toBe(410);
    expect(err?.code).toBe('results_expired');
    expect(err?.message).toBe(
      'Results of run run1 expired at 2030-01-03T00:00:00.000Z; results are kept for 48 hours.',
    );
    expect(refusal({ ...base, expiresAt }, new Date(expiresAt.getTime() + 1))?.code).toBe('results_expired');
    expect(refusal({ ...base, expiresAt: new Date(Date.now() - 1000) })?.code).toBe('results_expired');
    expect(refusal({ ...base, expiresAt: new Date(Date.now() + 60_000) })).toBeUndefined();
  });
});

describe('downloadParams', () => {
  it('defaults to all rows as CSV and reads the format in any case', () => {
    expect(downloadParams.parse({})).toEqual({ format: 'csv', offset: 0 });
    expect(downloadParams.parse({ format: 'JSON', offset: '5', limit: '10' })).toEqual({
      format: 'json',
      offset: 5,
      limit: 10,
    });
    expect(downloadParams.parse({ format: 'NdJson', offset: '0', limit: '1' })).toEqual({
      format: 'ndjson',
      offset: 0,
      limit: 1,
    });
    expect(downloadParams.parse({ format: 'csv', clean: 'true' })).toMatchObject({ format: 'csv', offset: 0 });
  });

  it('refuses other formats and bad ranges, naming the field', () => {
    const issues = (raw: unknown) => {
      const parsed = downloadParams.safeParse(raw);
      expect(parsed.success).toBe(false);
      return parsed.error!.issues.map((i) => [i.path.join('.'), i.message]);
    };
    expect(issues({ format: 'xls' })).toEqual([['format', 'format must be one of csv, json, ndjson, xlsx']]);
    expect(issues({ format: 5 })).toEqual([['format', 'format must be one of csv, json, ndjson, xlsx']]);
    expect(issues({ offset: '-1' })).toEqual([['offset', 'must be at least 0']]);
    expect(issues({ offset: '1.5' })).toEqual([['offset', 'must be a whole number']]);
    expect(issues({ limit: '0' })).toEqual([['limit', 'must be at least 1']]);
    expect(issues({ limit: '2.5' })).toEqual([['limit', 'must be a whole number']]);
  });
});

describe('CSV cells', () => {
  it.each([
    ['-', '-'],
    ['+', '+'],
    ['=', `'=`],
    ['@', `'@`],
    ['-1 =2', `'-1 =2`],
    ['+1a', `'+1a`],
    ['+(303) 555-0100', '+(303) 555-0100'],
    ['\t', `'\t`],
    ['x=1', 'x=1'],
    [' =1', ' =1'],
  ])('escapeFormula(%j) = %j', (input, expected) => expect(escapeFormula(input)).toBe(expected));

  it('renders every kind of value', () => {
    expect(toCell(0)).toBe('0');
    expect(toCell(true)).toBe('true');
    expect(toCell(false)).toBe('false');
    expect(toCell(12n)).toBe('12');
    expect(toCell(-3)).toBe('-3');
    // Numbers are written as they are, even when their text starts with a sign and holds a letter.
    expect(toCell(Number.NEGATIVE_INFINITY)).toBe('-Infinity');
    expect(toCell(-1e21)).toBe('-1e+21');
    expect(toCell('')).toBe('');
    expect(toCell('=1+1')).toBe(`'=1+1`);
    expect(toCell([1, 'a', null, { b: 2 }])).toBe('1; a; null; {"b":2}');
    expect(toCell([])).toBe('');
    expect(toCell({ a: null, b: { c: 1 }, d: [1, 2], e: 'x' })).toBe('a: null; b: {"c":1}; d: [1,2]; e: x');
    expect(toCell({ '=cmd': 1 })).toBe(`'=cmd: 1`);
    expect(toCell({})).toBe('');
  });
});
