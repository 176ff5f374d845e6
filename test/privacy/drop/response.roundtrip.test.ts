import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readResponseCsv,
  type ResponseRow,
  responseFileName,
  responseFileNameFor,
  writeResponseCsv,
} from '../../../src/privacy/drop/response.ts';
import { DropFormatError, parseDropFileName, STATUS, type StatusCode } from '../../../src/privacy/drop/spec.ts';

const FIXTURE = new URL('../../fixtures/drop/response/20260312_4821_Email.csv', import.meta.url);
const vectors = JSON.parse(readFileSync(new URL('../../fixtures/drop/vectors.json', import.meta.url), 'utf8')) as {
  fileNames: string[];
  rows: { upload: string };
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'drop-response-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function written(rows: ResponseRow[]): Promise<string> {
  const out = new PassThrough();
  const text = (async () => {
    let all = '';
    for await (const chunk of out) all += chunk;
    return all;
  })();
  const [, all] = await Promise.all([writeResponseCsv(rows, out), text]);
  return all;
}

async function read(text: string): Promise<ResponseRow[]> {
  const rows: ResponseRow[] = [];
  for await (const row of readResponseCsv(Readable.from([text]))) rows.push(row);
  return rows;
}

describe('response file names: <YYYYMMDD>_<DataBrokerId>_<DataType>[_<OptionalSuffix>].csv', () => {
  it('reads the specification example names', () => {
    expect(vectors.fileNames.map((name) => parseDropFileName(name))).toEqual([
      { date: '20260312', dataBrokerId: '4821', dataType: 'NDZ', extension: 'csv' },
      { date: '20260312', dataBrokerId: '4821', dataType: 'Email', extension: 'csv' },
      { date: '20260312', dataBrokerId: '4821', dataType: 'Email', suffix: 'part01', extension: 'csv' },
      { date: '20260312', dataBrokerId: '4821', dataType: 'Removed', extension: 'csv' },
      { date: '20260312', dataBrokerId: '4821', dataType: 'DROP', extension: 'zip' },
    ]);
  });

  it('names a response after the downloaded list it answers, with an optional suffix', () => {
    expect(responseFileName({ date: '20260312', dataBrokerId: '4821', listType: 'Email' })).toBe(
      '20260312_4821_Email.csv',
    );
    expect(responseFileNameFor('20260312_4821_Email.csv', 'part01')).toBe('20260312_4821_Email_part01.csv');
    expect(responseFileNameFor('20260312_4821_NameVIN.csv')).toBe('20260312_4821_NameVIN.csv');
  });

  it.each([
    () => responseFileNameFor('20260312_4821_Removed.csv'),
    () => responseFileNameFor('20260312_4821_DROP.zip'),
    () => responseFileNameFor('20260312_4821_Email.csv', 'part_01'),
    () => responseFileNameFor('20260312_4821_Email.csv', 'a'.repeat(11)),
    () => responseFileNameFor('20260312_4821_Email.csv', ''),
    () => responseFileName({ date: '20260230', dataBrokerId: '4821', listType: 'Email' }),
    () => responseFileName({ date: '20260312', dataBrokerId: '482', listType: 'Email' }),
    () => responseFileName({ date: '20260312', dataBrokerId: '4821', listType: 'SSN' as 'Email' }),
  ])('refuses %s', (name) => expect(name).toThrow(DropFormatError));
});

describe('the response CSV: header Id,Status, one row per work item, statuses 2 to 5', () => {
  it('writes the specification example byte for byte (test/fixtures/drop/response)', async () => {
    const text = await written([{ workItemId: 'A7kP2xQ9Lm4R', status: STATUS.exempted }]);
    expect(text).toBe(await readFile(FIXTURE, 'utf8'));
    expect(text.trimEnd()).toBe(vectors.rows.upload);
  });

  it('round-trips every status through a file', async () => {
    const rows = ([2, 3, 4, 5] as StatusCode[]).map((status, i) => ({ workItemId: `A7kP2xQ9Lm4${i}`, status }));
    expect(await read(await written(rows))).toEqual(rows);
  });

  it('streams 200,000 rows to disk and back', async () => {
    const file = path.join(dir, '20260312_4821_Phone.csv');
    function* rows(): Generator<ResponseRow> {
      for (let i = 0; i < 200_000; i++) yield { workItemId: i.toString(36).padStart(12, 'x'), status: STATUS.notFound };
    }
    expect(await writeResponseCsv(rows(), createWriteStream(file))).toBe(200_000);
    let count = 0;
    for await (const row of readResponseCsv(createReadStream(file))) if (row.status === 5) count++;
    expect(count).toBe(200_000);
  });

  it.each([
    [{ workItemId: 'A7kP2xQ9Lm4R', status: 1 }, 'Status must be 2, 3, 4 or 5'],
    [{ workItemId: 'A7kP2xQ9Lm4R', status: 6 }, 'Status must be 2, 3, 4 or 5'],
    [{ workItemId: 'A7kP2xQ9Lm4', status: 3 }, 'Id must be 12 letters or digits'],
    [{ workItemId: 'A7kP2xQ9Lm4R,', status: 3 }, 'Id must be 12 letters or digits'],
  ])('the writer refuses %j', async (row, message) => {
    await expect(written([row as ResponseRow])).rejects.toThrow(message);
  });

  it.each([
    ['ID,Status\nA7kP2xQ9Lm4R,2\n', 'Invalid CSV header. Expected: Id,Status.'],
    ['Id,Status,Note\nA7kP2xQ9Lm4R,2,x\n', 'Invalid CSV header. Expected: Id,Status.'],
    ['', 'Invalid CSV header. Expected: Id,Status.'],
    ['Id,Status\nA7kP2xQ9Lm4R,7\n', 'line 2: Status must be 2, 3, 4 or 5'],
    ['Id,Status\nA7kP2xQ9Lm4R,3.0\n', 'line 2: Status must be 2, 3, 4 or 5'],
    ['Id,Status\nA7kP2xQ9Lm4R\n', 'line 2: expected 2 columns'],
  ])('the reader refuses %j', async (text, message) => {
    await expect(read(text)).rejects.toThrow(message);
  });

  it('the reader takes CRLF, a byte-order mark and quoted cells', async () => {
    expect(await read('\uFEFFId,Status\r\n"A7kP2xQ9Lm4R","4"\r\n')).toEqual([
      { workItemId: 'A7kP2xQ9Lm4R', status: 4 },
    ]);
  });
});
