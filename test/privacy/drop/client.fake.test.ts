import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDropClient,
  DROP_SANDBOX_URL,
  DropApiError,
  type DropClient,
  isAlreadyUploaded,
} from '../../../src/privacy/drop/client.ts';
import { hashRecord } from '../../../src/privacy/drop/hash.ts';
import { type DropItem, readDropArchive } from '../../../src/privacy/drop/lists.ts';
import { type ResponseRow, responseFileNameFor, writeResponseCsv } from '../../../src/privacy/drop/response.ts';
import { STATUS } from '../../../src/privacy/drop/spec.ts';
import { createFakeDrop, type FakeBatch, MESSAGES } from './fake-drop.ts';

const KEY = 'test-api-key';
const BASE = 'https://drop.test';
const ANNA = 'KA18MT/ph6IHYjzT9zwETySDQyvSh87YuoSBpOQtkhE=';
const PHONE = 'vGM7y5n+hBXRSEAklhHDPCbysyNgYTmXdMcagGUOY8E=';
const OTHER = 'mKDnDvwF2inxrKcK1hJN2TRkxPfL6kzNNTtU12eH8Bw=';
const BATCH: FakeBatch = {
  lists: {
    Email: [
      { id: 'A7kP2xQ9Lm4R', hash: ANNA },
      { id: 'Mx3Lq8Zt2Wc5', hash: OTHER },
    ],
    Phone: [{ id: 'P4hN8sK2dF6j', hash: PHONE }],
  },
  removed: [{ id: 'Zz9Yy8Xx7Ww6', hash: OTHER, listType: 'Email' }],
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'drop-client-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function setup(options: Partial<Parameters<typeof createFakeDrop>[0]> = {}, base = BASE) {
  const fake = createFakeDrop({ apiKey: KEY, selectedLists: ['Email', 'Phone'], ...options });
  fake.queueBatch(BATCH);
  const client = createDropClient({ apiKey: KEY, baseUrl: base, fetch: fake.fetch });
  return { fake, client };
}

async function csv(rows: ResponseRow[]): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await writeResponseCsv(rows, out);
  return Buffer.concat(chunks).toString();
}

async function downloadZip(client: DropClient): Promise<string> {
  const first = await client.download(dir);
  expect(first).toEqual({ kind: 'preparing', message: MESSAGES.preparing, retryAfterSeconds: 60 });
  const ready = await client.download(dir);
  if (ready.kind !== 'zip') throw new Error(`expected the ZIP, got ${ready.kind}`);
  return ready.path;
}

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a DropApiError');
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(DropApiError);
      return err as DropApiError;
    },
  );

describe('one DROP cycle against the fake: download, match, answer, next download', () => {
  it('downloads once the ZIP is ready, answers every list, and then has nothing new', async () => {
    const { fake, client } = setup();
    const zip = await downloadZip(client);
    expect(path.basename(zip)).toBe('20260312_4821_DROP.zip');
    expect(fake.requests[0]).toEqual({
      method: 'GET',
      path: '/data/download',
      accept: 'application/zip, application/json',
    });

    const ours = hashRecord({ email: 'anna.smith@DOMAIN.com', phone: '415-555-9317' });
    const answers = new Map<string, ResponseRow[]>();
    const items: DropItem[] = [];
    for await (const item of readDropArchive(zip)) {
      items.push(item);
      if (item.kind !== 'request') continue;
      const status = ours[item.listType] === item.hash ? STATUS.deleted : STATUS.notFound;
      answers.set(item.file, [...(answers.get(item.file) ?? []), { workItemId: item.workItemId, status }]);
    }
    expect(items.filter((i) => i.kind === 'removed').map((i) => i.workItemId)).toEqual(['Zz9Yy8Xx7Ww6']);

    const files = await Promise.all(
      [...answers].map(async ([file, rows]) => ({ name: responseFileNameFor(file), content: await csv(rows) })),
    );
    const result = await client.upload(files);
    expect(result).toMatchObject({ message: MESSAGES.uploadAccepted, acceptedCount: 2, rejectedCount: 0 });
    expect(result.accepted.map((f) => f.fileName).sort()).toEqual([
      '20260312_4821_Email.csv',
      '20260312_4821_Phone.csv',
    ]);
    expect(Object.fromEntries(fake.statuses)).toEqual({ A7kP2xQ9Lm4R: 3, Mx3Lq8Zt2Wc5: 5, P4hN8sK2dF6j: 3 });
    expect(fake.rowErrors).toEqual([]);

    expect(await client.download(dir)).toEqual({ kind: 'no-data', message: MESSAGES.noNewData });
  });

  it('refuses a new download while the batch has work items without a status (409)', async () => {
    const { client } = setup({ preparingCalls: 0 });
    expect((await client.download(dir)).kind).toBe('zip');
    const err = await rejection(client.download(dir));
    expect(err).toMatchObject({ httpStatus: 409, code: 'drop_conflict', retryable: false });
    expect(err.message).toContain(MESSAGES.batchOpen);
  });

  it('answers a list in parts with suffixes, and a row DROP does not know stays a row error', async () => {
    const { fake, client } = setup({ preparingCalls: 0 });
    await client.download(dir);
    const part1 = await csv([{ workItemId: 'A7kP2xQ9Lm4R', status: 2 }]);
    const part2 = await csv([
      { workItemId: 'Mx3Lq8Zt2Wc5', status: 4 },
      { workItemId: 'NotInBatch01', status: 5 },
    ]);
    const result = await client.upload([
      { name: '20260312_4821_Email_part01.csv', content: part1 },
      { name: '20260312_4821_Email_part02.csv', content: new TextEncoder().encode(part2) },
    ]);
    expect(result.acceptedCount).toBe(2);
    expect(fake.rowErrors).toEqual(['20260312_4821_Email_part02.csv row 3: unknown work item NotInBatch01']);
    expect(fake.outstanding()).toEqual(['P4hN8sK2dF6j']);
  });
});

describe('what DROP refuses, and how the client reports it', () => {
  async function opened() {
    const context = setup({ preparingCalls: 0 });
    await context.client.download(dir);
    return context;
  }
  const good = async () => csv([{ workItemId: 'A7kP2xQ9Lm4R', status: 3 }]);

  it('rejects files before validation: header, type, name (400 when none is accepted)', async () => {
    const { client } = await opened();
    const err = await rejection(
      client.upload([
        { name: '20260312_4821_Email.csv', content: 'ID,Status\nA7kP2xQ9Lm4R,3\n' },
        { name: 'notes.txt', content: 'hello' },
        { name: '20260312_4821_MAID.csv', content: await good() },
        { name: '20260312_4821_Email_part_1.csv', content: await good() },
        { name: '20260312_4821_Phone.csv', content: new Uint8Array([0x49, 0x64, 0xff, 0xfe]) },
      ]),
    );
    expect(err).toMatchObject({ httpStatus: 400, code: 'drop_upload_rejected' });
    expect(err.message).toContain(MESSAGES.uploadInvalid);
    expect(err.rejected).toEqual([
      { fileName: '20260312_4821_Email.csv', message: MESSAGES.invalidHeader },
      { fileName: 'notes.txt', message: MESSAGES.onlyCsv },
      { fileName: '20260312_4821_MAID.csv', message: MESSAGES.badName },
      { fileName: '20260312_4821_Email_part_1.csv', message: MESSAGES.badName },
      { fileName: '20260312_4821_Phone.csv', message: MESSAGES.notUtf8 },
    ]);
  });

  it('accepts what it can (202 mixed) and refuses a file name already uploaded in the batch', async () => {
    const { client } = await opened();
    const mixed = await client.upload([
      { name: '20260312_4821_Email.csv', content: await good() },
      { name: 'notes.txt', content: 'hello' },
    ]);
    expect(mixed).toMatchObject({ message: MESSAGES.uploadMixed, acceptedCount: 1, rejectedCount: 1 });
    expect(mixed.accepted[0]).toEqual({ fileName: '20260312_4821_Email.csv', fileSizeBytes: (await good()).length });

    const again = await rejection(client.upload([{ name: '20260312_4821_Email.csv', content: await good() }]));
    expect(again.rejected).toEqual([{ fileName: '20260312_4821_Email.csv', message: MESSAGES.duplicate }]);
    expect(again.rejected.every(isAlreadyUploaded)).toBe(true);
  });

  it('upload without an open batch and amend before any upload: 409', async () => {
    const { client } = setup();
    const upload = await rejection(client.upload([{ name: '20260312_4821_Email.csv', content: await good() }]));
    expect(upload.message).toContain(MESSAGES.noActiveDownload);
    const amend = await rejection(client.amend([{ name: '20260312_4821_Email.csv', content: await good() }]));
    expect(amend).toMatchObject({ httpStatus: 409 });
    expect(amend.message).toContain(MESSAGES.amendState);
  });

  it('amends a status already sent', async () => {
    const { fake, client } = await opened();
    await client.upload([{ name: '20260312_4821_Email.csv', content: await good() }]);
    const amended = await client.amend([
      { name: '20260312_4821_Email.csv', content: await csv([{ workItemId: 'A7kP2xQ9Lm4R', status: 2 }]) },
    ]);
    expect(amended).toMatchObject({ message: MESSAGES.uploadAccepted, acceptedCount: 1 });
    expect(fake.statuses.get('A7kP2xQ9Lm4R')).toBe(2);
  });

  it.each([
    ['a wrong key', { apiKey: 'other' }, 401, 'drop_unauthorized', MESSAGES.unauthorized],
    ['an ineligible account', { eligible: false }, 403, 'drop_forbidden', MESSAGES.forbidden],
    ['no selected list', { selectedLists: [] }, 403, 'drop_forbidden', MESSAGES.noSelectedLists],
  ])('%s', async (_, options, status, code, message) => {
    const { client } = setup(options);
    const err = await rejection(client.download(dir));
    expect(err).toMatchObject({ httpStatus: status, code, retryable: false });
    expect(err.message).toBe(`DROP answered ${status}: ${message}`);
  });

  it('429 and 500 are retryable, 429 with its Retry-After', async () => {
    const { fake, client } = setup();
    fake.failNext(429);
    expect(await rejection(client.download(dir))).toMatchObject({
      httpStatus: 429,
      code: 'drop_rate_limited',
      retryAfterSeconds: 30,
      retryable: true,
    });
    fake.failNext(500);
    const err = await rejection(client.download(dir));
    expect(err).toMatchObject({ httpStatus: 500, code: 'drop_unavailable', retryable: true });
    expect(err.message).toContain(MESSAGES.serverError);
  });

  it('the sandbox base URL, and a wrong one (404)', async () => {
    const sandbox = setup({ prefix: '/sandbox', preparingCalls: 0 }, `${DROP_SANDBOX_URL}/`);
    expect((await sandbox.client.download(dir)).kind).toBe('zip');
    expect(sandbox.fake.requests.map((r) => r.path)).toEqual(['/sandbox/data/download']);
    const wrong = setup({ prefix: '/sandbox' }, `${BASE}/v1`);
    const err = await rejection(wrong.client.download(dir));
    expect(err).toMatchObject({ httpStatus: 404, code: 'drop_not_found' });
  });

  it('keeps nothing half-written when the download breaks', async () => {
    const broken: typeof fetch = async () =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new Uint8Array([0x50, 0x4b]));
            controller.error(new Error('connection reset'));
          },
        }),
        { headers: { 'content-type': 'application/zip', 'content-disposition': 'attachment; filename="x_DROP.zip"' } },
      );
    const client = createDropClient({ apiKey: KEY, fetch: broken });
    const target = await mkdtemp(path.join(dir, 'broken-'));
    await expect(client.download(target)).rejects.toThrow('connection reset');
    await expect(readFile(path.join(target, 'x_DROP.zip'))).rejects.toThrow();
    await expect(readFile(path.join(target, 'x_DROP.zip.part'))).rejects.toThrow();
  });
});
