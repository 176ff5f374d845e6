import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashRecord } from '../../../src/privacy/drop/hash.ts';
import { type DropItem, listDropArchive, readDropArchive } from '../../../src/privacy/drop/lists.ts';
import { DropFormatError } from '../../../src/privacy/drop/spec.ts';
import { writeZipFile, zipSync } from './zip-writer.ts';

const FIXTURES = new URL('../../fixtures/drop/download/', import.meta.url);
const EMAIL = 'ID,Hash\nA7kP2xQ9Lm4R,KA18MT/ph6IHYjzT9zwETySDQyvSh87YuoSBpOQtkhE=\n';

let dir: string;
let fixtures: { name: string; data: Buffer }[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'drop-lists-'));
  const names = (await readdir(FIXTURES)).filter((name) => name.endsWith('.csv')).sort();
  fixtures = await Promise.all(names.map(async (name) => ({ name, data: await readFile(new URL(name, FIXTURES)) })));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function archive(name: string, bytes: Buffer): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, bytes);
  return file;
}

async function readAll(zipPath: string): Promise<DropItem[]> {
  const items: DropItem[] = [];
  for await (const item of readDropArchive(zipPath)) items.push(item);
  return items;
}

describe('a DROP download built from the fixture CSVs (test/fixtures/drop/download)', () => {
  it('lists one CSV per list and the Removed file, named as the specification names them', async () => {
    const files = await listDropArchive(await archive('20260312_4821_DROP.zip', zipSync(fixtures)));
    expect(files.map((f) => [f.name, f.date, f.dataBrokerId, f.dataType])).toEqual([
      ['20260312_4821_CTVID.csv', '20260312', '4821', 'CTVID'],
      ['20260312_4821_Email.csv', '20260312', '4821', 'Email'],
      ['20260312_4821_MAID.csv', '20260312', '4821', 'MAID'],
      ['20260312_4821_NDZ.csv', '20260312', '4821', 'NDZ'],
      ['20260312_4821_NameVIN.csv', '20260312', '4821', 'NameVIN'],
      ['20260312_4821_Phone.csv', '20260312', '4821', 'Phone'],
      ['20260312_4821_Removed.csv', '20260312', '4821', 'Removed'],
    ]);
  });

  it('yields every work item with its list, and the removed ones with the list the Removed file names', async () => {
    const items = await readAll(await archive('all.zip', zipSync(fixtures)));
    expect(items.filter((i) => i.listType === 'CTVID')).toEqual([]); // header only: nothing new on that list
    expect(items.map((i) => `${i.kind} ${i.listType} ${i.workItemId}`)).toEqual([
      'request Email A7kP2xQ9Lm4R',
      'request Email Mx3Lq8Zt2Wc5',
      'request MAID M7aI3dG5hJ0k',
      'request NDZ N1dZ5kL8mB3v',
      'request NameVIN V6nV2cX9zA4s',
      'request Phone P4hN8sK2dF6j',
      'request Phone Q9wE3rT7yU1i',
      'removed Email A7kP2xQ9Lm4R',
    ]);
    expect(items[0]).toEqual({
      kind: 'request',
      listType: 'Email',
      workItemId: 'A7kP2xQ9Lm4R',
      hash: 'KA18MT/ph6IHYjzT9zwETySDQyvSh87YuoSBpOQtkhE=',
      file: '20260312_4821_Email.csv',
      line: 2,
    });
  });

  it('the worked examples, hashed from our side, match the rows', async () => {
    const items = await readAll(await archive('match.zip', zipSync(fixtures)));
    const ours = {
      ...hashRecord({ email: 'Anna.Smith@Domain.com', phone: '+1(415)555-9317' }),
      ...hashRecord({ firstName: 'Danielle', lastName: 'Johnson', dob: '1985-07-04', zip: '91790' }),
      ...hashRecord({ firstName: 'Eve', lastName: 'Genesis', vin: '1HGCM82633A004352' }),
      ...hashRecord({ maid: 'a3f1c2d4-5678-90ab-cdef-1234567890ab' }),
    };
    const matched = items.filter((i) => i.kind === 'request' && ours[i.listType] === i.hash).map((i) => i.workItemId);
    expect(matched.sort()).toEqual(['A7kP2xQ9Lm4R', 'M7aI3dG5hJ0k', 'N1dZ5kL8mB3v', 'P4hN8sK2dF6j', 'V6nV2cX9zA4s']);
  });

  it('reads stored entries, ZIP64 records, folders, CRLF line ends and a byte-order mark alike', async () => {
    const expected = await readAll(await archive('plain.zip', zipSync(fixtures)));
    const variants = [
      zipSync(fixtures, { store: true }),
      zipSync(fixtures, { zip64: true }),
      zipSync([{ name: 'export/', data: '' }, ...fixtures.map((f) => ({ ...f, name: `export/${f.name}` }))]),
      zipSync(fixtures.map((f) => ({ ...f, data: Buffer.from(`\uFEFF${f.data.toString().replace(/\n/g, '\r\n')}`) }))),
    ];
    for (const [i, bytes] of variants.entries()) {
      const items = await readAll(await archive(`variant-${i}.zip`, bytes));
      expect(items.map(({ line: _, ...item }) => item)).toEqual(expected.map(({ line: _, ...item }) => item));
    }
  });

  it('only: reads the data types asked for', async () => {
    const zip = await archive('only.zip', zipSync(fixtures));
    const removed: DropItem[] = [];
    for await (const item of readDropArchive(zip, { only: ['Removed'] })) removed.push(item);
    expect(removed.map((i) => i.kind)).toEqual(['removed']);
  });
});

describe('what does not follow the specification stops the read, with the file and line', () => {
  const bad = async (name: string, csv: string) => {
    const zip = await archive(`bad-${Math.random()}.zip`, zipSync([{ name, data: csv }]));
    return readAll(zip).then(
      () => undefined,
      (err: unknown) => err,
    );
  };

  it.each([
    ['20260312_4821_Email.csv', 'Id,Status\nA7kP2xQ9Lm4R,2\n', 'line 1: header must be ID,Hash'],
    ['20260312_4821_Email.csv', 'ID,Hash\nA7kP2xQ9Lm4,KA18MT/ph6IHYjzT9zwETySDQyvSh87YuoSBpOQtkhE=\n', 'line 2: ID'],
    ['20260312_4821_Email.csv', 'ID,Hash\nA7kP2xQ9Lm4R,anna.smith@domain.com\n', 'line 2: Hash'],
    ['20260312_4821_Email.csv', `${EMAIL}B7kP2xQ9Lm4R\n`, 'line 3: expected 2 columns'],
    ['20260312_4821_Removed.csv', `ID,Hash,ListType\n${EMAIL.split('\n')[1]},SSN\n`, 'unknown list type "SSN"'],
    ['20260312_4821_Email.csv', 'id,hash\nA7kP2xQ9Lm4R,KA18MT/ph6IHYjzT9zwETySDQyvSh87YuoSBpOQtkhE=', undefined],
    ['20260312_4821_CTVID.csv', '', undefined],
    ['20260312_4821_SSN.csv', 'ID,Hash\n', 'not a DROP list file'],
    ['notes.txt', 'hello', 'not a DROP list file'],
  ])('%s %j', async (name, csv, message) => {
    const err = await bad(name, csv);
    if (message === undefined) return expect(err).toBeUndefined();
    expect(err).toBeInstanceOf(DropFormatError);
    expect((err as Error).message).toContain(message);
  });

  it('a damaged entry (CRC-32) and a file that is no ZIP', async () => {
    const bytes = zipSync([{ name: '20260312_4821_Email.csv', data: EMAIL }], { store: true });
    bytes[bytes.indexOf('A7kP2x')] = 'B'.charCodeAt(0);
    await expect(readAll(await archive('damaged.zip', bytes))).rejects.toThrow(/damaged/);
    await expect(readAll(await archive('text.zip', Buffer.from(EMAIL)))).rejects.toThrow(/not a readable ZIP/);
  });
});

describe('a list of a million work items streams', () => {
  it('reads 1,000,000 rows without holding them', async () => {
    const rows = 1_000_000;
    const hash = 'KA18MT/ph6IHYjzT9zwETySDQyvSh87YuoSBpOQtkhE=';
    function* csv() {
      yield 'ID,Hash\n';
      for (let start = 0; start < rows; start += 10_000) {
        let chunk = '';
        for (let i = start; i < start + 10_000; i++) chunk += `${i.toString(36).padStart(12, '0')},${hash}\n`;
        yield chunk;
      }
    }
    const zip = path.join(dir, 'million.zip');
    await writeZipFile(zip, [{ name: '20260312_4821_Email.csv', chunks: csv() }]);

    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let count = 0;
    let last = '';
    for await (const item of readDropArchive(zip)) {
      count++;
      last = item.workItemId;
      if (count % 50_000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    expect(count).toBe(rows);
    expect(last).toBe((rows - 1).toString(36).padStart(12, '0'));
    // A million DropItems kept would take hundreds of MB; streaming stays within a few chunks' worth.
    expect(peak - before).toBeLessThan(96 * 1024 * 1024);
  });
});
