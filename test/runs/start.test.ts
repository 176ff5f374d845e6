import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/accounts/accounts.ts';
import { AppError, ValidationError } from '../../src/shared/errors.ts';
import { dryRunStart, parseToolInput, prepareStart, startAnswerOf, startRun } from '../../src/runs/start.ts';
import { decodeRunCursor, getRun, loadRuns } from '../../src/runs/read.ts';
import { getTool } from '../../src/tools/index.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { failure } from '../helpers/assertions.ts';

/** Starting a run: validation, the hold, the job, linked runs and the start answer. */

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
});
afterAll(() => t?.stop());

const SMALL = { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 3 };

async function someone(creditsMicros = 100_000_000n): Promise<Principal> {
  const { apiKey } = await t.account({ creditsMicros });
  return t.app.core.auth.authenticate(`Bearer ${apiKey}`);
}

const runsOf = async (accountId: string) =>
  t.app.core
    .sql`select id, tool, status, file_name, parent_run_id, webhook_url, webhook_secret, estimated_micros::text as estimated, hold_plan_micros::text as hold from run where account_id = ${accountId} order by created_at, id`;
const hasJob = async (runId: string) =>
  (await t.app.core.sql`select count(*)::int as n from graphile_worker.jobs where key = ${runId}`)[0]!.n === 1;

describe('parseToolInput', () => {
  it('wants a JSON object', () => {
    for (const raw of [null, undefined, 'text', 3, [SMALL]]) {
      let err: unknown;
      try {
        parseToolInput(getTool('maps'), raw);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(raw)).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).details).toEqual([
        { path: '', message: 'the request body must be a JSON object' },
      ]);
    }
  });

  it('names every bad field, and returns the parsed input', () => {
    expect(() => parseToolInput(getTool('maps'), { searchStringsArray: 'dentist' })).toThrow(ValidationError);
    expect(parseToolInput(getTool('maps'), SMALL)).toMatchObject({
      searchStringsArray: ['dentist'],
      maxCrawledPlacesPerSearch: 3,
    });
  });
});

describe('startRun', () => {
  it('creates the run RUNNING with its hold and its job, and answers with the estimate', async () => {
    const p = await someone();
    const started = await startRun(t.app.core, p, 'maps', SMALL);
    expect(started.run).toMatchObject({ tool: 'maps', status: 'RUNNING', statusMessage: 'Starting' });
    expect(started.start.extra).toMatchObject({ estimatedCost: 0.0297 });
    expect(started.start.extra).not.toHaveProperty('webhookSecret');
    const [row] = await runsOf(p.accountId);
    expect(row).toMatchObject({
      id: started.run.id,
      status: 'RUNNING',
      file_name: null,
      parent_run_id: null,
      webhook_url: null,
      webhook_secret: null,
      estimated: '29700',
      hold: '29700',
    });
    expect(await hasJob(started.run.id)).toBe(true);
    expect(startAnswerOf(started)).toEqual({
      runId: started.run.id,
      status: 'RUNNING',
      message: started.start.message,
      ...started.start.extra,
    });
  });

  it('refuses a start the wallet cannot pay one unit of, writing nothing', async () => {
    const p = await someone(9_899n);
    const err = await failure(startRun(t.app.core, p, 'maps', SMALL));
    expect(err).toMatchObject({
      status: 402,
      code: 'insufficient_funds',
      message: 'The wallet cannot pay for one business (0.0099 USD). Buy credits with POST /api/v1/buy-credits.',
    });
    expect(await runsOf(p.accountId)).toHaveLength(0);
    expect(await t.walletMicros(p.accountId)).toBe(9_899n);
  });

  it('starts a run the wallet can pay exactly one unit of, holding that unit', async () => {
    const p = await someone(9_900n);
    const started = await startRun(t.app.core, p, 'maps', SMALL);
    expect(started.run.status).toBe('RUNNING');
    expect((await runsOf(p.accountId))[0]).toMatchObject({ estimated: '29700', hold: '9900' });
    expect(await t.walletMicros(p.accountId)).toBe(0n);
  });

  it('takes a webhookUrl from any start: stored on the run, its secret answered once', async () => {
    const p = await someone();
    const started = await startRun(t.app.core, p, 'maps', { ...SMALL, webhookUrl: ' https://hooks.example.com/run ' });
    const secret = started.start.extra!.webhookSecret as string;
    expect(secret).toMatch(/^whsec_/);
    expect((await runsOf(p.accountId))[0]).toMatchObject({
      webhook_url: 'https://hooks.example.com/run',
      webhook_secret: secret,
    });
    // null or absent: no webhook.
    const none = await startRun(t.app.core, p, 'maps', { ...SMALL, webhookUrl: null });
    expect(none.start.extra).not.toHaveProperty('webhookSecret');
    expect((await runsOf(p.accountId)).find((r) => r.id === none.run.id)).toMatchObject({
      webhook_url: null,
      webhook_secret: null,
    });
  });

  it('refuses a bad webhookUrl naming the field, creating nothing', async () => {
    const p = await someone();
    for (const webhookUrl of ['ftp://hooks.example.com/x', 'not a url', 42]) {
      const err = await failure(startRun(t.app.core, p, 'maps', { ...SMALL, webhookUrl }));
      expect(err).toBeInstanceOf(ValidationError);
      expect(((err as ValidationError).details as { path: string }[]).map((d) => d.path)).toEqual(['webhookUrl']);
    }
    expect(await runsOf(p.accountId)).toHaveLength(0);
  });

  it('creates linked runs in the same transaction, pointing at their parent, with the file name passed on', async () => {
    const p = await someone();
    const started = await startRun(t.app.core, p, 'property-lookup', {
      addresses: ['1600 Pennsylvania Ave NW, Washington, DC 20500'],
      includeOwnerContact: true,
      fileName: 'my lookup',
    });
    const child = started.start.extra!.ownerContactRunId as string;
    expect(child).toBeTruthy();
    const rows = await runsOf(p.accountId);
    expect(rows.map((r) => r.id).sort()).toEqual([started.run.id, child].sort());
    expect(rows.find((r) => r.id === started.run.id)).toMatchObject({
      tool: 'property-lookup',
      parent_run_id: null,
      file_name: 'my lookup',
    });
    expect(rows.find((r) => r.id === child)).toMatchObject({
      tool: 'property-owner-contact',
      parent_run_id: started.run.id,
      file_name: 'my lookup-owner-contact',
    });
    expect(await hasJob(child)).toBe(true);
  });

  it('checks the input before touching the database', async () => {
    const p = await someone();
    expect(() => prepareStart(t.app.core, p, 'maps', { maxCrawledPlacesPerSearch: 'many' })).toThrow(ValidationError);
    expect(await runsOf(p.accountId)).toHaveLength(0);
  });
});

describe('starts and lookups at the boundary', () => {
  it('refuses a body that is no object, whatever it is, before looking for its webhookUrl', async () => {
    const principal = await someone();
    for (const raw of [null, 'text', 3, [SMALL]]) {
      const err = await startRun(t.app.core, principal, 'maps', raw).catch((e: unknown) => e);
      expect(err, JSON.stringify(raw)).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).details).toEqual([
        { path: '', message: 'the request body must be a JSON object' },
      ]);
    }
  });

  it('shares an idempotency key with the tool’s REST route: a retry through either answers the first start', async () => {
    const { apiKey, accountId } = await t.account();
    const principal = await t.app.core.auth.authenticate(`Bearer ${apiKey}`);
    const first = await startRun(t.app.core, principal, 'maps', SMALL, { idempotencyKey: 'shared-key-1' });
    const rest = await t.request('POST', '/api/v1/scrape/maps', {
      key: apiKey,
      body: SMALL,
      headers: { 'idempotency-key': 'shared-key-1' },
    });
    expect(rest.body.runId, rest.text).toBe(first.run.id);
    const again = await startRun(t.app.core, principal, 'maps', SMALL, { idempotencyKey: 'shared-key-1' });
    expect(again.run.id).toBe(first.run.id);
    // Without a key, each start is a run of its own.
    await startRun(t.app.core, principal, 'maps', SMALL);
    await startRun(t.app.core, principal, 'maps', SMALL);
    expect(await runsOf(accountId)).toHaveLength(3);
  });

  it('answers a dry run’s refusal as the start’s, keeping nothing', async () => {
    const { apiKey, accountId } = await t.account({ creditsMicros: 0n });
    const principal = await t.app.core.auth.authenticate(`Bearer ${apiKey}`);
    const err = await dryRunStart(t.app.core, principal, 'maps', SMALL).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('insufficient_funds');
    expect(await runsOf(accountId)).toEqual([]);
  });

  it('takes ids Postgres cannot store for no run: refused by name, or looked up as none', async () => {
    const principal = await someone();
    const { run } = await startRun(t.app.core, principal, 'maps', SMALL);
    const err = await getRun(t.app.core.db, principal.accountId, 'run_\u0000').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).details).toEqual([expect.objectContaining({ path: 'runId' })]);
    expect(await loadRuns(t.app.core.db, principal.accountId, ['run_\u0000', run.id])).toEqual([
      null,
      expect.objectContaining({ id: run.id }),
    ]);
    expect(await loadRuns(t.app.core.db, principal.accountId, ['run_\ud800'])).toEqual([null]);
    const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const good = { createdAt: new Date().toISOString(), id: run.id };
    expect(decodeRunCursor(cursor(good))).toEqual(good);
    for (const bad of [
      { ...good, id: 'run_\u0000' },
      { ...good, id: 7 },
      { ...good, createdAt: 'yesterday' },
    ])
      expect(() => decodeRunCursor(cursor(bad)), JSON.stringify(bad)).toThrow(ValidationError);
  });
});

describe('startRun with limits off', () => {
  let open: TestApp;
  beforeAll(async () => {
    open = await startTestApp({ worker: false, config: { enforceLimits: false, maxRunningRuns: 1 } });
  });
  afterAll(() => open?.stop());

  it('creates every run RUNNING with its job, holding nothing', async () => {
    const { accountId, apiKey } = await open.account({ creditsMicros: 0n });
    const p = await open.app.core.auth.authenticate(`Bearer ${apiKey}`);
    const a = await startRun(open.app.core, p, 'maps', SMALL);
    const b = await startRun(open.app.core, p, 'maps', SMALL);
    expect([a.run.status, b.run.status]).toEqual(['RUNNING', 'RUNNING']);
    const rows = await open.app.core
      .sql`select hold_plan_micros::text as hold from run where account_id = ${accountId}`;
    expect(rows.map((r) => r.hold)).toEqual(['0', '0']);
    for (const id of [a.run.id, b.run.id])
      expect(
        (await open.app.core.sql`select count(*)::int as n from graphile_worker.jobs where key = ${id}`)[0]!.n,
      ).toBe(1);
    expect(await open.walletMicros(accountId)).toBe(0n);
  });
});
