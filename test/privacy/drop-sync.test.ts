import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DropConfig } from '../../src/config/drop.ts';
import { dropHash } from '../../src/privacy/drop/hash.ts';
import { standardizeEmail } from '../../src/privacy/drop/standardize.ts';
import { syncWithDrop } from '../../src/privacy/drop-sync.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { createFakeDrop, type FakeDrop } from './drop/fake-drop.ts';

/**
 * The scheduled DROP cycle against a strict local DROP (fake-drop.ts, served on a real port): the
 * worker's job downloads the archive once DROP has prepared it, deletes the person a list names,
 * uploads the statuses; an upload that failed is sent before anything else on the next call; with
 * nothing new, DROP's "no new data" ends the call.
 */

const API_KEY = 'drop-test-key';
let fake: FakeDrop;
let server: Server;
let t: TestApp;
let drop: DropConfig;
let dir: string;

/** Serves a fetch handler over HTTP, as DROP is reached. */
function serve(handler: typeof fetch): Promise<{ server: Server; url: string }> {
  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    const headers = Object.entries(req.headers).flatMap(([k, v]) =>
      v === undefined ? [] : [[k, Array.isArray(v) ? v.join(', ') : v] as [string, string]],
    );
    const answer = await handler(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  return new Promise((resolve) =>
    http.listen(0, '127.0.0.1', () =>
      resolve({ server: http, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}` }),
    ),
  );
}

const emailHash = (email: string) => dropHash(standardizeEmail(email) as string);

beforeAll(async () => {
  fake = createFakeDrop({ apiKey: API_KEY, selectedLists: ['Email', 'Phone', 'NDZ'] });
  let url: string;
  ({ server, url } = await serve((input, init) => fake.fetch(input, init)));
  dir = await mkdtemp(path.join(tmpdir(), 'drop-sync-'));
  drop = { apiKey: API_KEY, baseUrl: url, dir };
  t = await startTestApp({ config: { drop } });
});
afterAll(async () => {
  await t?.stop();
  server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the scheduled DROP cycle', () => {
  it('waits while DROP prepares, then processes the archive in the worker and uploads every status', async () => {
    const [person] = await t.app.core.sql<{ id: number; email: string }[]>`
      select id::int, email from person where email is not null order by id desc limit 1`;
    if (!person) throw new Error('the catalog has no person with an email');
    fake.queueBatch({
      lists: {
        Email: [
          { id: 'SyncEm000001', hash: emailHash(person.email) },
          { id: 'SyncEm000002', hash: emailHash('not-held@sync.example') },
        ],
      },
    });
    expect(await syncWithDrop(t.app.core.db, drop)).toEqual({ kind: 'preparing', retryAfterSeconds: 60 });

    await t.app.core.sql`select graphile_worker.add_job('drop_cycle', '{}'::json)`;
    // Done once DROP holds every status and the cycle records it as accepted.
    const state = async () =>
      (await t.app.core.sql`select state from drop_cycle where file_name = '20260312_4821'`)[0]?.state;
    await waitFor(state, (s) => s === 'uploaded', { timeoutMs: 30_000, what: 'the cycle accepted by DROP' });
    expect(Object.fromEntries(fake.statuses)).toEqual({ SyncEm000001: 3, SyncEm000002: 5 });
    expect(fake.rowErrors).toEqual([]);
    expect(fake.outstanding()).toEqual([]);
    expect(await t.app.core.sql`select id from person where id = ${person.id}`).toEqual([]);
    const [cycle] = await t.app.core
      .sql`select state, deleted, not_found from drop_cycle where file_name = '20260312_4821'`;
    expect(cycle).toEqual({ state: 'uploaded', deleted: 1, not_found: 1 });

    expect(await syncWithDrop(t.app.core.db, drop)).toEqual({ kind: 'no-data', uploaded: [] });
  });

  it('sends an upload that failed before it asks for anything new', async () => {
    const next = createFakeDrop({ apiKey: API_KEY, date: '20260426', selectedLists: ['Email'], preparingCalls: 0 });
    next.queueBatch({ lists: { Email: [{ id: 'SyncEm000003', hash: emailHash('gone@sync.example') }] } });
    let failUpload = true;
    const flaky: typeof fetch = async (input, init) => {
      if (init?.method === 'POST' && failUpload) {
        failUpload = false;
        return new Response(JSON.stringify({ message: 'Internal server error' }), { status: 500 });
      }
      return next.fetch(input, init);
    };
    await expect(syncWithDrop(t.app.core.db, drop, { fetch: flaky })).rejects.toMatchObject({ httpStatus: 500 });
    const [waiting] = await t.app.core.sql`select state from drop_cycle where file_name = '20260426_4821'`;
    expect(waiting?.state).toBe('answered');
    expect(next.statuses.size).toBe(0);

    const again = await syncWithDrop(t.app.core.db, drop, { fetch: flaky });
    expect(again).toEqual({ kind: 'no-data', uploaded: ['20260426_4821'] });
    expect(Object.fromEntries(next.statuses)).toEqual({ SyncEm000003: 5 });
    // An acceptance that was not recorded: DROP has nothing open, and the cycle counts as sent.
    await t.app.core.sql`update drop_cycle set state = 'answered' where file_name = '20260426_4821'`;
    expect(await syncWithDrop(t.app.core.db, drop, { fetch: flaky })).toEqual({
      kind: 'no-data',
      uploaded: ['20260426_4821'],
    });
  });
});
