import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '../../db/client.ts';
import { createEventBus, type EventBus } from '../../src/events/bus.ts';
import type { RunEvent, RunEventKind } from '../../src/events/topics.ts';
import { eventFanout, runsFinished, runsStarted } from '../../src/shared/metrics.ts';
import { snapshotOf, type RunSnapshot } from '../../src/runs/view.ts';
import type { Run } from '../../db/tables/runs.ts';
import { openDirectDb, type DirectDb } from '../helpers/direct-db.ts';
import { takeEvents } from '../helpers/events.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The two scopes of the event bus on one database. A gateway's bus (`topics`) hears the runs and
 * accounts something in its process follows, each on its own channel, listened on while followed; a
 * standalone worker's (`control`) only runs entering ABORTING, the one change a worker acts on (it
 * stops the run in hand); its own changes reach its subscribers once committed, with no notification.
 * No bus is sent its own changes to count them: they are counted once committed. What a process hears is read from the
 * fan-out histogram (one observation per notification received) and its LISTEN statements from the
 * pool's `debug` hook, which the listening connection shares.
 */

let d: DirectDb;
let sql: Sql;
let gateway: EventBus;
let worker: EventBus;
const statements: string[] = [];

beforeAll(async () => {
  d = await openDirectDb();
  sql = connect(d.database.url, { max: 4 }).sql;
  (sql.options as { debug?: unknown }).debug = (_connection: number, query: string) => void statements.push(query);
  gateway = createEventBus(sql);
  worker = createEventBus(sql, { scope: 'control' });
  await Promise.all([gateway.ready, worker.ready]);
});
afterAll(async () => {
  await gateway?.close();
  await worker?.close();
  await sql?.end();
  await d?.close();
});

/** Notifications received by this process's buses so far. */
const received = async () =>
  (await eventFanout.get()).values.find((v) => v.metricName === 'leadgate_event_fanout_seconds_count')?.value ?? 0;
const counted = async (counter: typeof runsStarted, tool: string) =>
  (await counter.get()).values.filter((v) => v.labels.tool === tool).reduce((sum, v) => sum + v.value, 0);
const listens = (verb: 'listen' | 'unlisten') => statements.filter((s) => s.startsWith(`${verb} `));

/**
 * A change as `publisher` sends it (on the run's and account's channels, and the control channel for
 * a cancel), from another connection: what each bus then hears is only what it listens on.
 */
async function announce(publisher: EventBus, run: Run, status: RunSnapshot['status'], kind: RunEventKind = 'progress') {
  const { channels, payload } = publisher.runNotification(run.accountId, kind, { ...snapshotOf(run), status });
  expect(channels).toHaveLength(status === 'ABORTING' ? 3 : 2);
  await d.sql.begin(async (tx) => {
    for (const channel of channels) await tx`select pg_notify(${channel}, ${payload})`;
  });
}

const describeEvent = (runs: Record<string, Run>) => (e: RunEvent) =>
  `${Object.keys(runs).find((name) => runs[name]!.id === e.run.id)} ${e.kind} ${e.run.status}`;

describe('event bus scopes', { timeout: 60_000 }, () => {
  it('gives a gateway’s bus the runs and accounts it follows and nothing else, and a worker’s bus the cancels', async () => {
    const [a, b] = [await d.account(), await d.account()];
    const runs = {
      x: await d.insertRun({ accountId: a, status: 'RUNNING' }),
      y: await d.insertRun({ accountId: a, status: 'RUNNING' }),
      z: await d.insertRun({ accountId: b, status: 'RUNNING' }),
    };
    const before = listens('listen').length;
    // Two subscriptions made together: one LISTEN statement for both channels.
    const [progressG, accountG] = await Promise.all([
      gateway.subscribe('runProgress', runs.x.id),
      gateway.subscribe('runEvents', a),
    ]);
    expect(listens('listen').slice(before)).toEqual([
      `listen "leadgate_run_${runs.x.id}"; listen "leadgate_account_${a}"`,
    ]);
    const progressW = await worker.subscribe('runProgress', runs.x.id);
    const accountW = await worker.subscribe('runEvents', a);
    const otherW = await worker.subscribe('runEvents', b);
    expect(listens('listen').length, 'a worker’s bus listens on its channels from the start').toBe(before + 1);
    const heard = await received();

    await announce(gateway, runs.x, 'RUNNING');
    await announce(gateway, runs.y, 'RUNNING');
    await announce(gateway, runs.z, 'RUNNING');
    await announce(gateway, runs.x, 'ABORTING');
    await announce(gateway, runs.z, 'ABORTING');
    await announce(gateway, runs.x, 'ABORTED', 'finished');

    // The gateway: x on its run's topic; x and y on the account's; nothing of account b.
    expect((await takeEvents<RunSnapshot>(progressG, 3, 'gateway, run topic')).map((s) => s.status)).toEqual([
      'RUNNING',
      'ABORTING',
      'ABORTED',
    ]);
    expect((await takeEvents<RunEvent>(accountG, 4, 'gateway, account topic')).map(describeEvent(runs))).toEqual([
      'x progress RUNNING',
      'y progress RUNNING',
      'x progress ABORTING',
      'x finished ABORTED',
    ]);
    // The worker: the cancels, each once, on the topics of its run and of the runs' accounts.
    expect((await takeEvents<RunSnapshot>(progressW, 1, 'worker, run topic')).map((s) => s.status)).toEqual([
      'ABORTING',
    ]);
    expect((await takeEvents<RunEvent>(accountW, 1, 'worker, account a')).map(describeEvent(runs))).toEqual([
      'x progress ABORTING',
    ]);
    expect((await takeEvents<RunEvent>(otherW, 1, 'worker, account b')).map(describeEvent(runs))).toEqual([
      'z progress ABORTING',
    ]);
    // Received: the gateway x's three changes on two channels and y's on one (7), the worker two cancels.
    expect((await received()) - heard).toBe(9);

    // Followed no more: a little later, one UNLISTEN for both channels, and x's changes reach the gateway no more.
    await Promise.all([progressG.return(), accountG.return()]);
    await waitFor(
      () => listens('unlisten'),
      (u) => u.includes(`unlisten "leadgate_run_${runs.x.id}"; unlisten "leadgate_account_${a}"`),
      { what: 'the UNLISTEN' },
    );
    const w = await d.insertRun({ accountId: b, status: 'RUNNING' });
    const progressWG = await gateway.subscribe('runProgress', w.id);
    const quiet = await received();
    await announce(gateway, runs.x, 'ABORTED', 'finished');
    await announce(gateway, w, 'SUCCEEDED', 'finished');
    expect(
      (await takeEvents<RunSnapshot>(progressWG, 1, 'gateway, a run followed after')).map((s) => s.status),
    ).toEqual(['SUCCEEDED']);
    expect((await received()) - quiet, 'the gateway heard w, not x').toBe(1);

    // Followed again before the sweep: no new LISTEN, and it hears on.
    await progressWG.return();
    const listened = listens('listen').length;
    const again = await gateway.subscribe('runProgress', w.id);
    await announce(gateway, w, 'SUCCEEDED', 'finished');
    expect(await takeEvents<RunSnapshot>(again, 1, 'gateway, the run followed again')).toHaveLength(1);
    expect(listens('listen').length).toBe(listened);
    for (const it of [again, progressW, accountW, otherW]) await it.return();
  });

  it('names a channel for an id of any characters by its digest, and delivers on it', async () => {
    const accountId = await d.account();
    const run = await d.insertRun({ accountId, status: 'RUNNING' });
    const hostile = { ...snapshotOf(run), id: '"; select pg_sleep(2); --' };
    const before = statements.length;
    const events = await gateway.subscribe('runProgress', hostile.id);
    const listened = statements.slice(before).filter((q) => q.startsWith('listen '));
    expect(listened).toEqual([expect.stringMatching(/^listen "leadgate_run_[0-9a-f]{40}"$/)]);
    await d.db.transaction((tx) => gateway.publishRun(tx, accountId, 'progress', { ...hostile, status: 'SUCCEEDED' }));
    expect(
      (await takeEvents<RunSnapshot>(events, 1, 'the hostile id’s run')).map((s) => `${s.id} ${s.status}`),
    ).toEqual([`${hostile.id} SUCCEEDED`]);
    await events.return();
  });

  it('counts each change once where it was made, once committed, and never a change rolled back; a worker’s bus hands its own changes over', async () => {
    const accountId = await d.account();
    const run = await d.insertRun({ accountId, status: 'RUNNING', tool: 'tech-stack' });
    const progress = await gateway.subscribe('runProgress', run.id);
    const account = await gateway.subscribe('runEvents', accountId);
    const started = await counted(runsStarted, 'tech-stack');
    const heard = await received();

    // Rolled back: neither counted nor delivered.
    await expect(
      d.db.transaction(async (tx) => {
        await gateway.publishRun(tx, accountId, 'created', snapshotOf(run));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // In a savepoint released, then its transaction committed: counted once, at the commit.
    let countedBeforeCommit = -1;
    await d.db.transaction(async (tx) => {
      await tx.transaction((savepoint) => gateway.publishRun(savepoint, accountId, 'created', snapshotOf(run)));
      countedBeforeCommit = await counted(runsStarted, 'tech-stack');
    });
    expect(countedBeforeCommit, 'not counted before the commit').toBe(started);
    expect(await counted(runsStarted, 'tech-stack'), 'counted by the time the transaction’s caller goes on').toBe(
      started + 1,
    );
    expect(await takeEvents(progress, 1, 'gateway, its own start')).toHaveLength(1);
    expect(await takeEvents(account, 1, 'gateway, its own start, account')).toHaveLength(1);
    // The gateway heard its start on the two channels it follows, and nothing to count it by.
    expect((await received()) - heard).toBe(2);

    // The worker's cancel and end: counted once; its subscribers get both, in order, and its bus is
    // notified only of the cancel (on the control channel, which it listens on for every run).
    const finished = await counted(runsFinished, 'tech-stack');
    const workerAccount = await worker.subscribe('runEvents', accountId);
    const beforeWorker = await received();
    await d.db.transaction((tx) =>
      worker.publishRun(tx, accountId, 'progress', { ...snapshotOf(run), status: 'ABORTING' }),
    );
    await d.db.transaction((tx) =>
      worker.publishRun(tx, accountId, 'finished', {
        ...snapshotOf(run),
        status: 'ABORTED',
        finishedAt: new Date().toISOString(),
      }),
    );
    expect(
      (await takeEvents<RunEvent>(workerAccount, 2, 'worker, its own changes')).map((e) => `${e.kind} ${e.run.status}`),
    ).toEqual(['progress ABORTING', 'finished ABORTED']);
    expect(
      (await takeEvents<RunEvent>(account, 2, 'gateway, the worker’s changes')).map((e) => `${e.kind} ${e.run.status}`),
    ).toEqual(['progress ABORTING', 'finished ABORTED']);
    expect(await counted(runsFinished, 'tech-stack')).toBe(finished + 1);
    // Received: the gateway both changes on two channels (4); the worker its cancel on the control channel (1).
    await waitFor(received, (n) => n - beforeWorker >= 5, { what: 'the notifications' });
    // Nothing more comes: a later cancel (which both hear) is the next thing each subscriber gets.
    await d.db.transaction((tx) =>
      gateway.publishRun(tx, accountId, 'progress', { ...snapshotOf(run), status: 'ABORTING', itemCount: 99 }),
    );
    expect((await takeEvents<RunEvent>(account, 1, 'gateway, the next change')).map((e) => e.run.itemCount)).toEqual([
      99,
    ]);
    expect(
      (await takeEvents<RunEvent>(workerAccount, 1, 'worker, the next change')).map((e) => e.run.itemCount),
      'the worker’s own cancel came once',
    ).toEqual([99]);
    await waitFor(received, (n) => n - beforeWorker >= 8, { what: 'the notifications of the later cancel' });
    expect((await received()) - beforeWorker).toBe(8);
    expect(await counted(runsFinished, 'tech-stack')).toBe(finished + 1);
    for (const it of [progress, account, workerAccount]) await it.return();
  });
});
