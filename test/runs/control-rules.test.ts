import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { runTable } from '../../db/tables/runs.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import { followRunItems, type RunItemsBatch } from '../../src/runs/follow.ts';
import { cancelRun } from '../../src/runs/engine/index.ts';
import type { RunEvent } from '../../src/events/topics.ts';
import { startRun } from '../../src/runs/start.ts';
import { snapshotOf } from '../../src/runs/view.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * Run control without a worker: runs stay where the test puts them, and the test plays the worker's
 * part (storing rows and announcing them) in the same statements the engine uses.
 */

let t: TestApp;
let principal: Principal;
let accountId: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  const account = await t.account();
  accountId = account.accountId;
  principal = await t.app.core.auth.authenticate(`Bearer ${account.apiKey}`);
});
afterAll(() => t?.stop());

async function next<T>(events: AsyncIterator<T>): Promise<T> {
  const { value, done } = await events.next();
  if (done) throw new Error('the event stream ended');
  return value;
}

/** Stores rows `from` … `to - 1` of a run ({ i }) and sets its count to `count`, announcing `announced` (default: the stored run). */
async function store(
  runId: string,
  from: number,
  to: number,
  count: number,
  change: { status?: 'SUCCEEDED'; announcedCount?: number } = {},
) {
  await t.app.core.db.transaction(async (tx) => {
    if (to > from)
      await tx.execute(
        `insert into run_item (run_id, seq, data) select '${runId}', g, json_build_object('i', g) from generate_series(${from}, ${to - 1}) g` as never,
      );
    const [row] = await tx
      .update(runTable)
      .set({
        itemCount: count,
        handled: count,
        ...(change.status ? { status: change.status, finishedAt: new Date() } : {}),
      })
      .where(eq(runTable.id, runId))
      .returning();
    const snapshot = snapshotOf(row!);
    await t.app.core.events.publishRun(tx, accountId, change.status ? 'finished' : 'progress', {
      ...snapshot,
      itemCount: change.announcedCount ?? snapshot.itemCount,
    });
  });
}

describe('cancel', () => {
  it('announces ABORTING once as a progress event; a second cancel answers the same and announces nothing', async () => {
    const events = (await t.app.core.events.subscribe('runEvents', accountId))[
      Symbol.asyncIterator
    ]() as AsyncIterator<RunEvent>;
    try {
      const { run } = await startRun(t.app.core, principal, 'maps', DENVER_DENTISTS);
      expect(await next(events)).toMatchObject({ kind: 'created', run: { id: run.id, status: 'RUNNING' } });
      const first = await cancelRun(t.app.core, principal, run.id);
      expect(first).toMatchObject({ status: 'ABORTING', statusMessage: 'Cancelling: results stored so far are kept' });
      expect(await next(events)).toMatchObject({ kind: 'progress', run: { id: run.id, status: 'ABORTING' } });

      const again = await cancelRun(t.app.core, principal, run.id);
      expect(again).toEqual(first);
      // Events arrive in commit order: the next one is the start below, not a second ABORTING.
      const { run: later } = await startRun(t.app.core, principal, 'maps', DENVER_DENTISTS);
      expect(await next(events)).toMatchObject({ kind: 'created', run: { id: later.id } });
    } finally {
      await events.return?.();
    }
  });

  it('ends a waiting run at once, charging nothing', async () => {
    const queued = await startTestApp({ worker: false, config: { maxRunningRuns: 1 } });
    try {
      const { apiKey } = await queued.account();
      const p = await queued.app.core.auth.authenticate(`Bearer ${apiKey}`);
      await startRun(queued.app.core, p, 'maps', DENVER_DENTISTS);
      const { run } = await startRun(queued.app.core, p, 'maps', DENVER_DENTISTS);
      expect(run.status).toBe('READY');
      expect(await cancelRun(queued.app.core, p, run.id)).toMatchObject({
        status: 'ABORTED',
        statusMessage: 'Cancelled before it started: nothing was charged',
        cost: 0,
      });
    } finally {
      await queued.stop();
    }
  });
});

describe('following a run’s rows', () => {
  it('pages stored rows by 500, then each stored batch, then what the final read finds, in order and without gaps', async () => {
    const { run } = await startRun(t.app.core, principal, 'maps', {
      ...DENVER_DENTISTS,
      maxCrawledPlacesPerSearch: 2000,
    });
    await store(run.id, 0, 600, 600);
    const batches: RunItemsBatch[] = [];
    const stream = followRunItems(t.app.core, principal, run.id);
    const take = async (n: number) => {
      for (let i = 0; i < n; i++) batches.push(await next(stream));
    };
    await take(2); // what was stored before: 500, then 100
    await store(run.id, 600, 1300, 1300);
    await take(2); // the new batch, by 500 again
    // The final event reports fewer rows than were stored: the end is read once more.
    await store(run.id, 1300, 1350, 1350, { status: 'SUCCEEDED', announcedCount: 1300 });
    await take(1);
    expect((await stream.next()).done).toBe(true);

    expect(batches.map((b) => [b.offset, b.items.length])).toEqual([
      [0, 500],
      [500, 100],
      [600, 500],
      [1100, 200],
      [1300, 50],
    ]);
    expect(batches.flatMap((b) => b.items.map((item) => item.i))).toEqual(Array.from({ length: 1350 }, (_, i) => i));
    expect(batches.at(-1)!.run.status).toBe('SUCCEEDED');
  });

  it('starts from a given row', async () => {
    const { run } = await startRun(t.app.core, principal, 'maps', DENVER_DENTISTS);
    await store(run.id, 0, 30, 30, { status: 'SUCCEEDED' });
    const batches: RunItemsBatch[] = [];
    for await (const batch of followRunItems(t.app.core, principal, run.id, 25)) batches.push(batch);
    expect(batches.map((b) => [b.offset, b.items.map((item) => item.i)])).toEqual([[25, [25, 26, 27, 28, 29]]]);
  });
});
