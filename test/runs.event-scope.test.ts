import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '../db/client.ts';
import { createEventBus, type EventBus, type RunEvent } from '../src/runs/events.ts';
import { snapshotOf, type RunSnapshot } from '../src/runs/view.ts';
import { openDirectDb, type DirectDb } from './helpers/direct-db.ts';
import { takeEvents } from './helpers/events.ts';

/**
 * The two scopes of the event bus on one database: a gateway's bus (`all`) gets every change of every
 * run; a standalone worker's (`control`) only runs entering ABORTING, the one change a worker acts on
 * (it stops the run in hand), and the changes it published itself, so progress elsewhere does not wake
 * it. A cancel reaches both, and every change each bus hears, once.
 */

let d: DirectDb;
let sql: Sql;
let all: EventBus;
let control: EventBus;

beforeAll(async () => {
  d = await openDirectDb();
  ({ sql } = connect(d.database.url, { max: 4 }));
  all = createEventBus(sql);
  control = createEventBus(sql, { scope: 'control' });
  await Promise.all([all.ready, control.ready]);
});
afterAll(async () => {
  await all?.close();
  await control?.close();
  await sql?.end();
  await d?.close();
});

describe('event bus scopes', { timeout: 60_000 }, () => {
  it('gives a worker’s bus the cancels only, and a gateway’s bus every change, each once', async () => {
    const accountId = await d.account();
    const run = await d.insertRun({ accountId, status: 'RUNNING' });
    const other = await d.insertRun({ accountId, status: 'RUNNING' });
    const snapshot = (status: RunSnapshot['status'], id = run.id): RunSnapshot => ({ ...snapshotOf(id === run.id ? run : other), status });
    const progressAll = all.subscribe('runProgress', run.id)[Symbol.asyncIterator]();
    const accountAll = all.subscribe('runEvents', accountId)[Symbol.asyncIterator]();
    const progressControl = control.subscribe('runProgress', run.id)[Symbol.asyncIterator]();
    const accountControl = control.subscribe('runEvents', accountId)[Symbol.asyncIterator]();

    // Progress of both runs, then the cancel of one, then its end: each in a transaction of its own, so
    // notifications arrive in this order to every listener.
    const publish = (kind: RunEvent['kind'], s: RunSnapshot) => d.db.transaction((tx) => all.publishRun(tx, accountId, kind, s));
    await publish('progress', snapshot('RUNNING'));
    await publish('progress', snapshot('RUNNING', other.id));
    await publish('progress', snapshot('ABORTING'));
    await publish('finished', snapshot('ABORTED'));
    await publish('finished', snapshot('ABORTED', other.id));

    // The gateway's bus: every change, the cancel once (the run's topic: RUNNING, ABORTING, ABORTED).
    expect((await takeEvents<RunSnapshot>(progressAll, 3, 'gateway, run topic')).map((s) => s.status)).toEqual(['RUNNING', 'ABORTING', 'ABORTED']);
    expect((await takeEvents<RunEvent>(accountAll, 5, 'gateway, account topic')).map((e) => `${e.run.id === run.id ? 'run' : 'other'} ${e.kind} ${e.run.status}`)).toEqual([
      'run progress RUNNING',
      'other progress RUNNING',
      'run progress ABORTING',
      'run finished ABORTED',
      'other finished ABORTED',
    ]);

    // The worker's bus: the cancel, and nothing before or after it. A later cancel of the other run is
    // the next thing it gets, on the account topic too, so nothing else was queued in between.
    expect((await takeEvents<RunSnapshot>(progressControl, 1, 'worker, run topic')).map((s) => s.status)).toEqual(['ABORTING']);
    expect((await takeEvents<RunEvent>(accountControl, 1, 'worker, account topic')).map((e) => `${e.kind} ${e.run.status}`)).toEqual(['progress ABORTING']);
    await publish('progress', snapshot('ABORTING', other.id));
    expect((await takeEvents<RunEvent>(accountControl, 1, 'worker, account topic, second cancel')).map((e) => `${e.run.id === other.id ? 'other' : 'run'} ${e.kind} ${e.run.status}`)).toEqual([
      'other progress ABORTING',
    ]);
    // And the gateway's bus got that second cancel once, right after the rest.
    expect((await takeEvents<RunEvent>(accountAll, 1, 'gateway, second cancel')).map((e) => `${e.run.id === other.id ? 'other' : 'run'} ${e.run.status}`)).toEqual(['other ABORTING']);

    // What the worker's bus publishes itself (a run it executes ends) comes back to it, once, and reaches the
    // gateway's bus once: a process counts its own changes in its metrics.
    const third = await d.insertRun({ accountId, status: 'RUNNING' });
    await d.db.transaction((tx) => control.publishRun(tx, accountId, 'finished', { ...snapshotOf(third), status: 'SUCCEEDED' }));
    await publish('progress', snapshot('ABORTING'));
    expect((await takeEvents<RunEvent>(accountControl, 2, 'worker, its own change')).map((e) => `${e.run.id === third.id ? 'third' : 'run'} ${e.kind} ${e.run.status}`)).toEqual([
      'third finished SUCCEEDED',
      'run progress ABORTING',
    ]);
    expect((await takeEvents<RunEvent>(accountAll, 2, 'gateway, the worker’s change')).map((e) => `${e.run.id === third.id ? 'third' : 'run'} ${e.kind} ${e.run.status}`)).toEqual([
      'third finished SUCCEEDED',
      'run progress ABORTING',
    ]);

    for (const it of [progressAll, accountAll, progressControl, accountControl]) await it.return?.(undefined);
  });
});
