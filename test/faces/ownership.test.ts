import { WEBHOOK_EVENTS } from '../../db/tables/webhooks.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/accounts/accounts.ts';
import { AppError, ValidationError } from '../../src/shared/errors.ts';
import { followRunItems, runStatus, waitForRun } from '../../src/runs/follow.ts';
import { executeRun, cancelRun } from '../../src/runs/engine/index.ts';
import { decodeRunCursor, encodeRunCursor, getRun, listRunItems, listRuns, loadRuns } from '../../src/runs/read.ts';
import { startRun } from '../../src/runs/start.ts';
import {
  createWebhook,
  deleteWebhook,
  listWebhooks,
  MAX_WEBHOOKS_PER_ACCOUNT,
} from '../../src/webhooks/subscriptions.ts';
import { listDeliveries } from '../../src/webhooks/deliveries.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { failure } from '../helpers/assertions.ts';

/**
 * Every lookup by id checks the id against the caller's account: another account's run or webhook
 * answers exactly as a missing one (404), and lists never show another account's rows.
 */

let t: TestApp;
let mine: Principal;
let theirs: Principal;

beforeAll(async () => {
  t = await startTestApp({ worker: false, config: { maxRunningRuns: 2 } });
  mine = await someone();
  theirs = await someone();
});
afterAll(() => t?.stop());

const SMALL = { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 3 };
/** A new account (its own run slots), as its API key authenticates it. */
const someone = async () => t.app.core.auth.authenticate(`Bearer ${(await t.account()).apiKey}`);

async function notFound(promise: Promise<unknown>, what: string) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ status: 404, code: 'not_found', message: `${what} not found` });
}

describe('runs: looked up by id within the caller’s account', () => {
  it('getRun finds the caller’s run, and answers another account’s as not found', async () => {
    const mine = await someone();
    const { run } = await startRun(t.app.core, mine, 'maps', SMALL);
    expect((await getRun(t.app.core.db, mine.accountId, run.id)).id).toBe(run.id);
    await notFound(getRun(t.app.core.db, theirs.accountId, run.id), 'Run');
    await notFound(getRun(t.app.core.db, mine.accountId, 'noSuchRun12345678'), 'Run');
  });

  it('loadRuns keeps the order of the ids, with null for missing and foreign ones', async () => {
    const mine = await someone();
    const a = (await startRun(t.app.core, mine, 'maps', SMALL)).run;
    const b = (await startRun(t.app.core, mine, 'maps', SMALL)).run;
    const foreign = (await startRun(t.app.core, theirs, 'maps', SMALL)).run;
    const loaded = await loadRuns(t.app.core.db, mine.accountId, [b.id, foreign.id, 'missing', a.id]);
    expect(loaded.map((r) => r?.id ?? null)).toEqual([b.id, null, null, a.id]);
  });

  it('runStatus and waitForRun read only the caller’s runs', async () => {
    const mine = await someone();
    const { run } = await startRun(t.app.core, mine, 'maps', SMALL);
    expect((await runStatus(t.app.core, mine, run.id)).id).toBe(run.id);
    await notFound(runStatus(t.app.core, theirs, run.id), 'Run');
    await notFound(runStatus(t.app.core, theirs, run.id, 1), 'Run');
    await notFound(waitForRun(t.app.core, theirs, run.id, 0), 'Run');
  });

  it('waitForRun answers at once for an ended run or no wait, else when the wait passes', async () => {
    const mine = await someone();
    const { run } = await startRun(t.app.core, mine, 'maps', SMALL);
    let began = Date.now();
    expect((await waitForRun(t.app.core, mine, run.id, 0)).status).toBe('RUNNING');
    expect(Date.now() - began).toBeLessThan(900);
    began = Date.now();
    expect((await runStatus(t.app.core, mine, run.id, 1)).status).toBe('RUNNING');
    expect(Date.now() - began).toBeGreaterThanOrEqual(900);
    // A cancelled wait answers with the run as it is.
    const aborted = new AbortController();
    began = Date.now();
    const waiting = waitForRun(t.app.core, mine, run.id, 30, aborted.signal);
    setTimeout(() => aborted.abort(), 100);
    expect((await waiting).status).toBe('RUNNING');
    expect(Date.now() - began).toBeLessThan(10_000);
    await executeRun(t.app.core, run.id);
    began = Date.now();
    expect((await waitForRun(t.app.core, mine, run.id, 30)).status).toBe('SUCCEEDED');
    expect(Date.now() - began).toBeLessThan(10_000);
  });

  it('waitForRun answers as soon as the run ends', async () => {
    const mine = await someone();
    const { run } = await startRun(t.app.core, mine, 'maps', SMALL);
    const began = Date.now();
    let answered = false;
    const waiting = waitForRun(t.app.core, mine, run.id, 30).finally(() => (answered = true));
    // A status read after the wait began: the wait has read the run too, found it RUNNING, and waits.
    expect((await runStatus(t.app.core, mine, run.id)).status).toBe('RUNNING');
    expect(answered).toBe(false);
    await executeRun(t.app.core, run.id);
    expect((await waiting).status).toBe('SUCCEEDED');
    expect(Date.now() - began).toBeLessThan(20_000);
  });

  it('followRunItems refuses another account’s run, and streams the caller’s', async () => {
    const mine = await someone();
    const { run } = await startRun(t.app.core, mine, 'maps', SMALL);
    await executeRun(t.app.core, run.id);
    await notFound(followRunItems(t.app.core, theirs, run.id).next(), 'Run');
    const batches = [];
    for await (const batch of followRunItems(t.app.core, mine, run.id)) batches.push(batch);
    expect(batches.flatMap((b) => b.items)).toHaveLength(3);
    expect(batches[0]!.offset).toBe(0);
    const fromTwo = [];
    for await (const batch of followRunItems(t.app.core, mine, run.id, 2)) fromTwo.push(batch);
    expect(fromTwo.map((b) => [b.offset, b.items.length])).toEqual([[2, 1]]);
  });

  it('listRunItems pages a run’s rows in order', async () => {
    const mine = await someone();
    const { run } = await startRun(t.app.core, mine, 'maps', SMALL);
    await executeRun(t.app.core, run.id);
    const all = await listRunItems(t.app.core.db, run.id, { offset: 0, limit: 10 });
    expect(all).toHaveLength(3);
    expect(await listRunItems(t.app.core.db, run.id, { offset: 1, limit: 1 })).toEqual([all[1]]);
    expect(await listRunItems(t.app.core.db, run.id, { offset: 3, limit: 10 })).toEqual([]);
  });

  it('listRuns shows the caller’s runs only, newest first, by status and by cursor', async () => {
    const p = await someone();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await startRun(t.app.core, p, 'maps', SMALL)).run.id);
    await startRun(t.app.core, theirs, 'maps', SMALL);
    const page1 = await listRuns(t.app.core.db, p.accountId, { first: 2 });
    expect(page1.runs.map((r) => r.id)).toEqual([ids[2], ids[1]]);
    expect(page1.hasNextPage).toBe(true);
    const page2 = await listRuns(t.app.core.db, p.accountId, { first: 2, after: encodeRunCursor(page1.runs[1]!) });
    expect(page2.runs.map((r) => r.id)).toEqual([ids[0]]);
    expect(page2.hasNextPage).toBe(false);
    expect((await listRuns(t.app.core.db, p.accountId, { first: 3 })).hasNextPage).toBe(false);
    expect((await listRuns(t.app.core.db, p.accountId, { first: 10, status: 'READY' })).runs.map((r) => r.id)).toEqual([
      ids[2],
    ]);
    expect(
      (await listRuns(t.app.core.db, p.accountId, { first: 10, status: 'RUNNING' })).runs.map((r) => r.id),
    ).toEqual([ids[1], ids[0]]);
    // Runs created in the same millisecond are ordered by id, and the cursor splits them.
    await t.app.core
      .sql`update run set created_at = (select date_trunc('milliseconds', created_at) from run where id = ${ids[0]!}) where id in ${t.app.core.sql(ids)}`;
    const tied = [...ids].sort().reverse();
    const first = await listRuns(t.app.core.db, p.accountId, { first: 1 });
    expect(first.runs.map((r) => r.id)).toEqual([tied[0]]);
    const rest = await listRuns(t.app.core.db, p.accountId, { first: 5, after: encodeRunCursor(first.runs[0]!) });
    expect(rest.runs.map((r) => r.id)).toEqual(tied.slice(1));
    // Runs written together differ below the millisecond (the cursor's precision): paging one by one still meets each once.
    await t.app.core
      .sql`update run set created_at = date_trunc('milliseconds', created_at) + array_position(${ids}::text[], id) * interval '100 microseconds' where id in ${t.app.core.sql(ids)}`;
    const seen: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 5; i++) {
      const page = await listRuns(t.app.core.db, p.accountId, { first: 1, after });
      seen.push(...page.runs.map((r) => r.id));
      if (!page.hasNextPage) break;
      after = encodeRunCursor(page.runs[0]!);
    }
    expect(seen).toEqual([ids[2], ids[1], ids[0]]);
  });

  it('refuses a cursor it did not make', () => {
    const cursor = (value: string) => Buffer.from(value).toString('base64url');
    for (const bad of [
      'not base64 json',
      cursor('{"id":1,"createdAt":"2030-01-01T00:00:00Z"}'),
      cursor('{"id":"x","createdAt":"yesterday"}'),
      cursor('{"id":"x"}'),
      cursor('null'),
    ]) {
      let err: unknown;
      try {
        decodeRunCursor(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).details).toEqual([
        { path: 'after', message: 'not a cursor returned by this API' },
      ]);
    }
    expect(decodeRunCursor(cursor('{"id":"x","createdAt":"2030-01-01T00:00:00.000Z"}'))).toEqual({
      id: 'x',
      createdAt: '2030-01-01T00:00:00.000Z',
    });
  });
});

describe('cancelRun: only the caller’s runs, with the spec’s refusals', () => {
  it('answers another account’s run as not found and leaves it running', async () => {
    const mine = await someone();
    const { run } = await startRun(t.app.core, mine, 'maps', SMALL);
    await notFound(cancelRun(t.app.core, theirs, run.id), 'Run');
    expect((await getRun(t.app.core.db, mine.accountId, run.id)).status).toBe('RUNNING');
  });

  it('marks a RUNNING run ABORTING, and a second cancel changes nothing', async () => {
    const p = await someone();
    const { run } = await startRun(t.app.core, p, 'maps', SMALL);
    const cancelled = await cancelRun(t.app.core, p, run.id);
    expect(cancelled).toMatchObject({
      id: run.id,
      status: 'ABORTING',
      statusMessage: 'Cancelling: results stored so far are kept',
    });
    expect(await cancelRun(t.app.core, p, run.id)).toMatchObject({
      status: 'ABORTING',
      statusMessage: 'Cancelling: results stored so far are kept',
    });
    await executeRun(t.app.core, run.id);
    expect((await getRun(t.app.core.db, p.accountId, run.id)).status).toBe('ABORTED');
    const err = await failure(cancelRun(t.app.core, p, run.id));
    expect(err).toMatchObject({ status: 409, code: 'run_finished', message: 'The run has already ended (ABORTED).' });
  });

  it('ends a waiting run at once, charging nothing', async () => {
    const p = await someone();
    for (let i = 0; i < 2; i++) await startRun(t.app.core, p, 'maps', SMALL);
    const { run } = await startRun(t.app.core, p, 'maps', SMALL);
    expect(run.status).toBe('READY');
    const cancelled = await cancelRun(t.app.core, p, run.id);
    expect(cancelled).toMatchObject({
      status: 'ABORTED',
      statusMessage: 'Cancelled before it started: nothing was charged',
      cost: 0,
    });
  });

  it('refuses tools that cannot be cancelled, leaving the run alone', async () => {
    const mine = await someone();
    const { run } = await startRun(t.app.core, mine, 'tech-stack', { domains: ['example.com'] }).catch(async () =>
      startRun(t.app.core, mine, 'criminal-records', { name: 'John Smith' }),
    );
    const err = await failure(cancelRun(t.app.core, mine, run.id));
    expect(err.status).toBe(409);
    expect(err.code).toBe('not_cancellable');
    expect(err.message).toMatch(/ runs cannot be cancelled; this one will finish on its own\.$/);
    expect((await getRun(t.app.core.db, mine.accountId, run.id)).status).not.toBe('ABORTING');
  });
});

describe('webhooks: managed within the caller’s account', () => {
  it('registers a webhook with all events by default, listing it for its account only', async () => {
    const p = await someone();
    const created = await createWebhook(t.app.core, p, {
      url: ' https://hooks.example.com/a ',
      description: '  main  ',
    });
    expect(created).toMatchObject({
      url: 'https://hooks.example.com/a',
      events: [...WEBHOOK_EVENTS],
      description: 'main',
    });
    expect(created.id).toMatch(/^wh_[A-Za-z0-9]{16}$/);
    expect(created.secret).toMatch(/^whsec_/);
    const picked = await createWebhook(t.app.core, p, {
      url: 'http://hooks.example.com/b',
      events: ['run.failed', 'run.failed'],
    });
    expect(picked).toMatchObject({ events: ['run.failed'], description: null });
    const listed = await listWebhooks(t.app.core.db, p);
    expect(listed.map((w) => w.id)).toEqual([created.id, picked.id]);
    expect(listed[0]).not.toHaveProperty('secret');
    expect(await listWebhooks(t.app.core.db, theirs)).not.toEqual(
      expect.arrayContaining([expect.objectContaining({ id: created.id })]),
    );
  });

  it('refuses bad input naming the field', async () => {
    const details = async (raw: unknown) => {
      const err = await failure(createWebhook(t.app.core, mine, raw));
      expect(err).toBeInstanceOf(ValidationError);
      return (err as ValidationError).details;
    };
    for (const raw of [null, 'x', [{ url: 'https://a.example' }]])
      expect(await details(raw)).toEqual([{ path: '', message: 'the request body must be a JSON object' }]);
    expect(await details({})).toEqual([expect.objectContaining({ path: 'url' })]);
    expect(await details({ url: 'ftp://a.example/x' })).toEqual([
      { path: 'url', message: 'must be an http or https URL' },
    ]);
    expect(await details({ url: 'https://u:p@a.example/x' })).toEqual([
      { path: 'url', message: 'must not carry a user name or password' },
    ]);
    expect(await details({ url: 'not a url' })).toEqual([
      { path: 'url', message: 'must be an absolute http or https URL' },
    ]);
    expect(await details({ url: 'https://a.example', events: [] })).toEqual([
      { path: 'events', message: 'give at least one event, or leave events out for all of them' },
    ]);
    expect(await details({ url: 'https://a.example', extra: 1 })).toHaveLength(1);
  });

  it(`allows ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account`, async () => {
    const p = await someone();
    for (let i = 0; i < MAX_WEBHOOKS_PER_ACCOUNT; i++)
      await createWebhook(t.app.core, p, { url: `https://hooks.example.com/${i}` });
    const err = await failure(createWebhook(t.app.core, p, { url: 'https://hooks.example.com/one-too-many' }));
    expect((err as ValidationError).details).toEqual([
      { path: 'url', message: `an account may have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first` },
    ]);
    // Another account is not affected.
    await expect(createWebhook(t.app.core, theirs, { url: 'https://hooks.example.com/theirs' })).resolves.toMatchObject(
      { url: 'https://hooks.example.com/theirs' },
    );
  });

  it('deletes only the caller’s webhook; another account’s is not found and stays', async () => {
    const hook = await createWebhook(t.app.core, mine, { url: 'https://hooks.example.com/keep' });
    await notFound(deleteWebhook(t.app.core.db, theirs, hook.id), 'Webhook');
    expect((await listWebhooks(t.app.core.db, mine)).some((w) => w.id === hook.id)).toBe(true);
    await deleteWebhook(t.app.core.db, mine, hook.id);
    expect((await listWebhooks(t.app.core.db, mine)).some((w) => w.id === hook.id)).toBe(false);
    await notFound(deleteWebhook(t.app.core.db, mine, hook.id), 'Webhook');
  });

  it('shows a webhook’s deliveries to its account only, newest first, by cursor', async () => {
    const hook = await createWebhook(t.app.core, mine, { url: 'https://hooks.example.com/log' });
    await notFound(listDeliveries(t.app.core.db, theirs, hook.id, {}), 'Webhook');
    await notFound(listDeliveries(t.app.core.db, mine, 'wh_missing', {}), 'Webhook');
    expect(await listDeliveries(t.app.core.db, mine, hook.id, undefined)).toEqual({ deliveries: [], nextAfter: null });
    const other = await createWebhook(t.app.core, mine, { url: 'https://hooks.example.com/other' });
    const insert = (id: string, webhookId: string, at: string) =>
      t.app.core.sql`insert into webhook_delivery (id, account_id, webhook_id, event, url, payload, created_at)
        values (${id}, ${mine.accountId}, ${webhookId}, 'run.succeeded', 'https://hooks.example.com/log', '{}'::jsonb, ${at}::timestamptz)`;
    await insert('msg_a', hook.id, '2030-01-01T00:00:01Z');
    await insert('msg_b', hook.id, '2030-01-01T00:00:02Z');
    await insert('msg_c', hook.id, '2030-01-01T00:00:02Z');
    await insert('msg_d', hook.id, '2030-01-01T00:00:03Z');
    await insert('msg_other', other.id, '2030-01-01T00:00:04Z');
    const page1 = await listDeliveries(t.app.core.db, mine, hook.id, { limit: '2' });
    expect(page1.deliveries.map((x) => x.id)).toEqual(['msg_d', 'msg_c']);
    expect(page1.deliveries[0]).toMatchObject({
      event: 'run.succeeded',
      status: 'pending',
      attempts: 0,
      createdAt: '2030-01-01T00:00:03.000Z',
      lastAttemptAt: null,
      deliveredAt: null,
    });
    expect(page1.nextAfter).not.toBeNull();
    const page2 = await listDeliveries(t.app.core.db, mine, hook.id, { limit: 2, after: page1.nextAfter });
    expect(page2.deliveries.map((x) => x.id)).toEqual(['msg_b', 'msg_a']);
    expect(page2.nextAfter).toBeNull();
    expect((await listDeliveries(t.app.core.db, mine, hook.id, { limit: 4 })).nextAfter).toBeNull();
    // The cursor is the last row of the page, whatever the page size.
    const three = await listDeliveries(t.app.core.db, mine, hook.id, { limit: 3 });
    expect(three.deliveries.map((x) => x.id)).toEqual(['msg_d', 'msg_c', 'msg_b']);
    expect(
      (await listDeliveries(t.app.core.db, mine, hook.id, { limit: 3, after: three.nextAfter })).deliveries.map(
        (x) => x.id,
      ),
    ).toEqual(['msg_a']);
    expect((await listDeliveries(t.app.core.db, mine, hook.id, {})).deliveries).toHaveLength(4);
    // Deliveries logged within one millisecond (the cursor's precision) are each met once.
    await insert('msg_e', hook.id, '2030-01-01T00:00:05.000100Z');
    await insert('msg_f', hook.id, '2030-01-01T00:00:05.000200Z');
    const newest = await listDeliveries(t.app.core.db, mine, hook.id, { limit: 1 });
    expect(newest.deliveries.map((x) => x.id)).toEqual(['msg_f']);
    expect(
      (await listDeliveries(t.app.core.db, mine, hook.id, { limit: 1, after: newest.nextAfter })).deliveries.map(
        (x) => x.id,
      ),
    ).toEqual(['msg_e']);
    await t.app.core.sql`delete from webhook_delivery where id in ('msg_e', 'msg_f')`;
    for (const after of [
      'garbage',
      Buffer.from('2030-01-01T00:00:00Z').toString('base64url'),
      Buffer.from('not a date|msg_a').toString('base64url'),
      Buffer.from('|msg_a').toString('base64url'),
    ]) {
      const err = await failure(listDeliveries(t.app.core.db, mine, hook.id, { after }));
      expect((err as ValidationError).details, after).toEqual([
        { path: 'after', message: 'not a cursor returned by this API' },
      ]);
    }
    const bad = await failure(listDeliveries(t.app.core.db, mine, hook.id, { limit: 0 }));
    expect((bad as ValidationError).details).toEqual([{ path: 'limit', message: 'must be at least 1' }]);
  });
});
