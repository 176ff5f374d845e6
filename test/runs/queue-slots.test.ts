import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/accounts/accounts.ts';
import { executeRun, finishRun, runTimeLimitSecs } from '../../src/runs/engine/index.ts';
import { plural } from '../../src/shared/text.ts';
import { startRun } from '../../src/runs/start.ts';
import { getTool } from '../../src/tools/index.ts';
import type { ToolDefinition } from '../../src/tools/types.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';

/** Two RUNNING runs per account here, so the queue shows with few runs; no worker: the engine is driven by hand. */
const MAX_RUNNING = 2;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ worker: false, config: { maxRunningRuns: MAX_RUNNING } });
});
afterAll(() => t?.stop());

const maps = getTool('maps');
const SMALL = { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 3 };

async function account(creditsMicros = 100_000_000n) {
  const { accountId, apiKey } = await t.account({ creditsMicros });
  const principal: Principal = await t.app.core.auth.authenticate(`Bearer ${apiKey}`);
  return { accountId, principal };
}

interface RunRow {
  status: string;
  status_message: string;
  started_at: Date | null;
  finished_at: Date | null;
  expires_at: Date | null;
  item_count: number;
  charged: string;
  hold_plan: string;
  settled_at: Date | null;
}

async function run(id: string) {
  const [r] = await t.app.core.sql<RunRow[]>`
    select status, status_message, started_at, finished_at, expires_at, item_count, charged_micros::text as charged,
      hold_plan_micros::text as hold_plan, settled_at
    from run where id = ${id}`;
  return { ...r!, charged: BigInt(r!.charged), holdPlan: BigInt(r!.hold_plan) };
}

const activeRuns = async (accountId: string) =>
  (await t.app.core.sql`select active_runs from wallet where account_id = ${accountId}`)[0]!.active_runs as number;
const hasJob = async (runId: string) =>
  (await t.app.core.sql`select count(*)::int as n from graphile_worker.jobs where key = ${runId}`)[0]!.n === 1;
const walletMicros = async (accountId: string) => t.walletMicros(accountId);

describe('the run queue: READY runs take the slots that free, oldest first', () => {
  it('queues the start past the maximum, and starts it when a RUNNING run ends', async () => {
    const { accountId, principal } = await account();
    const [a, b, c] = [
      await startRun(t.app.core, principal, 'maps', SMALL),
      await startRun(t.app.core, principal, 'maps', SMALL),
      await startRun(t.app.core, principal, 'maps', SMALL),
    ];
    expect([a.run.status, b.run.status, c.run.status]).toEqual(['RUNNING', 'RUNNING', 'READY']);
    expect(c.run.statusMessage).toBe(
      `Waiting: ${MAX_RUNNING} runs of this account are running; this one starts when one of them finishes`,
    );
    expect(await activeRuns(accountId)).toBe(2);
    expect(await hasJob(c.run.id)).toBe(false);
    expect((await run(c.run.id)).started_at).toBeNull();

    // A READY run is not executed by a stray job.
    await executeRun(t.app.core, c.run.id);
    expect((await run(c.run.id)).status).toBe('READY');

    await executeRun(t.app.core, a.run.id);
    const promoted = await run(c.run.id);
    expect(promoted.status).toBe('RUNNING');
    expect(promoted.status_message).toBe('Starting');
    expect(promoted.started_at).not.toBeNull();
    expect(await hasJob(c.run.id)).toBe(true);
    expect(await activeRuns(accountId)).toBe(2);

    await executeRun(t.app.core, b.run.id);
    await executeRun(t.app.core, c.run.id);
    expect((await run(c.run.id)).status).toBe('SUCCEEDED');
    expect(await activeRuns(accountId)).toBe(0);
  });

  it('starts the oldest waiting run first, and only one per freed slot', async () => {
    const { accountId, principal } = await account();
    const started = [];
    for (let i = 0; i < 5; i++) started.push((await startRun(t.app.core, principal, 'maps', SMALL)).run);
    expect(started.map((r) => r.status)).toEqual(['RUNNING', 'RUNNING', 'READY', 'READY', 'READY']);
    // The last two were written at the same instant: the smaller id goes first among equals.
    await t.app.core
      .sql`update run set created_at = (select created_at from run where id = ${started[3]!.id}) where id = ${started[4]!.id}`;
    const [third, fourth, fifth] = started.slice(2).map((r) => r.id) as [string, string, string];
    const [firstOfTie, secondOfTie] = [fourth, fifth].sort() as [string, string];

    await executeRun(t.app.core, started[0]!.id);
    expect((await run(third!)).status).toBe('RUNNING');
    expect((await run(fourth!)).status).toBe('READY');
    expect((await run(fifth!)).status).toBe('READY');

    await executeRun(t.app.core, started[1]!.id);
    expect((await run(firstOfTie)).status).toBe('RUNNING');
    expect((await run(secondOfTie)).status).toBe('READY');
    expect(await activeRuns(accountId)).toBe(2);
  });

  it('does not start a waiting run while the account is at its maximum', async () => {
    const { accountId, principal } = await account();
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    const b = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    const waiting = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    // A slot is taken by something else meanwhile (a start in another process, say): the end frees one slot only.
    await t.app.core.sql`update wallet set active_runs = active_runs + 1 where account_id = ${accountId}`;
    await executeRun(t.app.core, a.id);
    expect((await run(waiting.id)).status).toBe('READY');
    expect(await activeRuns(accountId)).toBe(2);
    await executeRun(t.app.core, b.id);
    expect((await run(waiting.id)).status).toBe('RUNNING');
  });

  it('never starts another account’s waiting run', async () => {
    const one = await account();
    const other = await account();
    const a = (await startRun(t.app.core, one.principal, 'maps', SMALL)).run;
    for (let i = 0; i < 2; i++) await startRun(t.app.core, other.principal, 'maps', SMALL);
    const othersWaiting = (await startRun(t.app.core, other.principal, 'maps', SMALL)).run;
    expect(othersWaiting.status).toBe('READY');
    await executeRun(t.app.core, a.id);
    expect((await run(othersWaiting.id)).status).toBe('READY');
    expect(await activeRuns(one.accountId)).toBe(0);
    expect(await activeRuns(other.accountId)).toBe(2);
  });

  it('frees no slot when a waiting run ends (it held none), and refunds its whole hold', async () => {
    const { accountId, principal } = await account(10_000_000n);
    for (let i = 0; i < 2; i++) await startRun(t.app.core, principal, 'maps', SMALL);
    const waiting = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    const before = await walletMicros(accountId);
    await finishRun(t.app.core, { id: waiting.id, accountId }, maps, {
      status: 'ABORTED',
      message: 'Cancelled before it started',
    });
    const ended = await run(waiting.id);
    expect(ended).toMatchObject({ status: 'ABORTED', status_message: 'Cancelled before it started', charged: 0n });
    expect(ended.finished_at).not.toBeNull();
    expect(ended.started_at).not.toBeNull();
    expect(ended.settled_at).not.toBeNull();
    expect(await activeRuns(accountId)).toBe(2);
    expect(await walletMicros(accountId)).toBe(before + ended.holdPlan);
  });

  it('frees the slot of a run that ends while ABORTING', async () => {
    const { accountId, principal } = await account();
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    await t.app.core.sql`update run set status = 'ABORTING' where id = ${a.id}`;
    await executeRun(t.app.core, a.id);
    expect(await run(a.id)).toMatchObject({ status: 'ABORTED', status_message: 'Cancelled: 0 businesses kept' });
    expect(await activeRuns(accountId)).toBe(0);
  });

  it('ends a run once: a second end changes nothing and frees no second slot', async () => {
    const { accountId, principal } = await account();
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    await startRun(t.app.core, principal, 'maps', SMALL);
    await executeRun(t.app.core, a.id);
    const first = await run(a.id);
    expect(await activeRuns(accountId)).toBe(1);
    const wallet = await walletMicros(accountId);
    await finishRun(t.app.core, { id: a.id, accountId }, maps, { status: 'FAILED', message: 'late failure' });
    expect(await run(a.id)).toEqual(first);
    expect(await activeRuns(accountId)).toBe(1);
    expect(await walletMicros(accountId)).toBe(wallet);
    const [ledger] = await t.app.core.sql`select count(*)::int as n from ledger_entry where run_id = ${a.id}`;
    expect(ledger!.n).toBe(3);
  });

  it('sets the result expiry from the retention setting', async () => {
    const { principal } = await account();
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    await executeRun(t.app.core, a.id);
    const ended = await run(a.id);
    const hours = (new Date(ended.expires_at!).getTime() - new Date(ended.finished_at!).getTime()) / 3_600_000;
    expect(hours).toBeCloseTo(t.app.core.config.resultRetentionHours, 5);
  });
});

describe('settling a run: never charged more than it held', () => {
  it('caps the final charge at the hold when limits are on', async () => {
    const { accountId, principal } = await account(10_000_000n);
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    const hold = (await run(a.id)).holdPlan;
    expect(hold).toBe(3n * 9_900n);
    const before = await walletMicros(accountId);
    await t.app.core.sql`update run set charged_micros = ${(hold * 10n).toString()}::bigint where id = ${a.id}`;
    await finishRun(t.app.core, { id: a.id, accountId }, maps, { status: 'FAILED', message: 'failed' });
    expect((await run(a.id)).charged).toBe(hold);
    expect(await walletMicros(accountId)).toBe(before);
  });

  it('charges what was delivered, below the hold', async () => {
    const { accountId, principal } = await account(10_000_000n);
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    const before = await walletMicros(accountId);
    const hold = (await run(a.id)).holdPlan;
    await t.app.core.sql`update run set charged_micros = 9900 where id = ${a.id}`;
    await finishRun(t.app.core, { id: a.id, accountId }, maps, { status: 'ABORTED', message: 'stopped' });
    expect((await run(a.id)).charged).toBe(9_900n);
    expect(await walletMicros(accountId)).toBe(before + hold - 9_900n);
  });
});

describe('executeRun: how runs end', () => {
  it('finishes with the rows and the units it billed', async () => {
    const { accountId, principal } = await account(10_000_000n);
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    const before = await walletMicros(accountId);
    await executeRun(t.app.core, a.id);
    const ended = await run(a.id);
    expect(ended).toMatchObject({
      status: 'SUCCEEDED',
      status_message: 'Finished: 3 businesses',
      item_count: 3,
      charged: 29_700n,
    });
    expect(await walletMicros(accountId)).toBe(before + ended.holdPlan - 29_700n);
  });

  it('stops when the hold is used up, saying how much was held', async () => {
    const { principal } = await account(20_000n);
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    await executeRun(t.app.core, a.id);
    expect(await run(a.id)).toMatchObject({
      status: 'SUCCEEDED',
      status_message: 'Stopped after 2 businesses: the 0.02 USD held for this run is used up. Buy credits to get more.',
      item_count: 2,
      charged: 19_800n,
    });
  });

  it('ends a run past its time limit TIMED-OUT before running it', async () => {
    const { accountId, principal } = await account();
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    await t.app.core.sql`update run set started_at = now() - interval '2 hours' where id = ${a.id}`;
    await executeRun(t.app.core, a.id);
    expect(await run(a.id)).toMatchObject({
      status: 'TIMED-OUT',
      status_message: `Timed out after ${t.app.core.config.runTimeoutSecs} s (this tool's limit): 0 businesses kept`,
      item_count: 0,
    });
    expect(await activeRuns(accountId)).toBe(0);
  });

  it('leaves an ended run alone', async () => {
    const { principal } = await account();
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    await executeRun(t.app.core, a.id);
    const ended = await run(a.id);
    await t.app.core.sql`update run set status = 'FAILED' where id = ${a.id}`;
    await executeRun(t.app.core, a.id);
    expect(await run(a.id)).toEqual({ ...ended, status: 'FAILED' });
  });

  it('hands a run back when its worker is stopping', async () => {
    const { principal } = await account();
    const a = (await startRun(t.app.core, principal, 'maps', SMALL)).run;
    await t.app.core.sql`select graphile_worker.remove_job(${a.id})`;
    expect(await hasJob(a.id)).toBe(false);
    const stopping = new AbortController();
    stopping.abort();
    await executeRun(t.app.core, a.id, stopping.signal);
    expect(await run(a.id)).toMatchObject({ status: 'RUNNING', item_count: 0 });
    expect(await hasJob(a.id)).toBe(true);
  });
});

describe('words and limits', () => {
  it('writes counts with their unit', () => {
    expect(plural(0, 'business')).toBe('0 businesses');
    expect(plural(1, 'business')).toBe('1 business');
    expect(plural(2, 'box')).toBe('2 boxes');
    expect(plural(2, 'match')).toBe('2 matches');
    expect(plural(2, 'dish')).toBe('2 dishes');
    expect(plural(3, 'company')).toBe('3 companies');
    expect(plural(3, 'day')).toBe('3 days');
    expect(plural(5, 'record')).toBe('5 records');
    expect(plural(1, 'company')).toBe('1 company');
    // The endings count at the end of the word only.
    expect(plural(2, 'list')).toBe('2 lists');
    expect(plural(2, 'style')).toBe('2 styles');
  });

  it('takes the shorter of the tool’s limit and the service’s', () => {
    const tool = (maxRunSecs?: number) => ({ ...maps, maxRunSecs }) as ToolDefinition;
    expect(runTimeLimitSecs(tool(), { runTimeoutSecs: 3600 })).toBe(3600);
    expect(runTimeLimitSecs(tool(600), { runTimeoutSecs: 3600 })).toBe(600);
    expect(runTimeLimitSecs(tool(7200), { runTimeoutSecs: 3600 })).toBe(3600);
  });
});
