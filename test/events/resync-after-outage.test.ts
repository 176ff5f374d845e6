import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connect, type Sql } from '../../db/client.ts';
import { createEventBus, type EventBus } from '../../src/events/bus.ts';
import type { RunEvent } from '../../src/events/topics.ts';
import { snapshotOf, type RunSnapshot } from '../../src/runs/view.ts';
import { DatabaseUnavailableError } from '../../src/shared/errors.ts';
import { waitFor } from '../helpers/wait.ts';
import { openDirectDb, type DirectDb } from '../helpers/direct-db.ts';
import { takeEvents } from '../helpers/events.ts';

/**
 * The event bus across a lost LISTEN. Its listening session is ended while the database refuses new
 * sessions (ALLOW_CONNECTIONS false on this file's database only), and runs change meanwhile through a
 * session opened before: their notifications reach nobody. Once sessions are allowed again, the bus
 * listens again by itself and its subscribers get the runs as they are now.
 */

let d: DirectDb;
let busSql: Sql;
let bus: EventBus;
let admin: postgres.Sql;

beforeAll(async () => {
  d = await openDirectDb();
  ({ sql: busSql } = connect(d.database.url, { max: 2 }));
  bus = createEventBus(busSql);
  await bus.ready;
  admin = postgres(`${inject('pgServerUrl')}/postgres`, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await admin?.unsafe(`alter database "${d.database.name}" allow_connections true`);
  await admin?.end();
  await bus?.close();
  await busSql?.end();
  await d?.close();
});

/** The next value of `events` that `accept` takes; rejects past a minute, naming `what`. */
const next = async <T>(events: AsyncIterator<unknown>, accept: (value: T) => boolean, what: string): Promise<T> =>
  (await takeEvents<T>(events, 1, what, { accept, timeoutMs: 60_000 }))[0]!;

/** A run's change sent on the channels the bus would send it on, through `session`. */
async function announce(session: postgres.Sql, accountId: string, snapshot: RunSnapshot) {
  const { channels, payload } = bus.runNotification(accountId, 'progress', snapshot);
  for (const channel of channels) await session`select pg_notify(${channel}, ${payload})`;
}

describe('event bus after LISTEN was lost', { timeout: 120_000 }, () => {
  it('listens again once it can, and gives its subscribers the runs that changed unannounced: a run’s end, and an account’s runs', async () => {
    const accountId = await d.account();
    const watched = await d.insertRun({ accountId, status: 'RUNNING' });
    const other = await d.insertRun({ accountId, status: 'RUNNING' });
    const progress = (await bus.subscribe('runProgress', watched.id))[Symbol.asyncIterator]();
    const account = (await bus.subscribe('runEvents', accountId))[Symbol.asyncIterator]();

    // A session opened before: changes go through it while no new session can be opened.
    const writer = await d.sql.reserve();
    try {
      await writer`select 1`;
      await admin.unsafe(`alter database "${d.database.name}" allow_connections false`);
      const [{ ended }] = (await admin`
        select count(pg_terminate_backend(pid))::int as ended from pg_stat_activity
        where datname = ${d.database.name} and query ilike 'listen%'`) as unknown as [{ ended: number }];
      expect(ended, 'the bus listens on one session').toBe(1);

      await writer`update run set status = 'SUCCEEDED', item_count = 7, finished_at = now() where id = ${watched.id}`;
      await writer`update run set handled = 3 where id = ${other.id}`;
      await announce(writer, accountId, { ...snapshotOf(watched), status: 'SUCCEEDED' });
      // Meanwhile a subscription cannot be made: the bus answers that the database is unavailable.
      const refused = await waitFor(
        () =>
          bus.subscribe('runProgress', other.id).then(
            (s) => {
              void s.return();
              return undefined;
            },
            (err: unknown) => err,
          ),
        (err) => err instanceof DatabaseUnavailableError,
        { what: 'a subscription refused', timeoutMs: 20_000 },
      );
      expect(refused).toMatchObject({ code: 'database_unavailable', status: 503 });
    } finally {
      writer.release();
      await admin.unsafe(`alter database "${d.database.name}" allow_connections true`);
    }

    expect(await next<RunSnapshot>(progress, (s) => s.status === 'SUCCEEDED', 'the watched run’s end')).toMatchObject({
      id: watched.id,
      status: 'SUCCEEDED',
      itemCount: 7,
    });
    const seen = new Map<string, RunEvent>();
    const bothSeen = (e: RunEvent) => {
      seen.set(e.run.id, e);
      return seen.size === 2;
    };
    await next<RunEvent>(account, bothSeen, 'the account’s events of both runs');
    expect(seen.get(watched.id)).toMatchObject({ kind: 'finished', run: { status: 'SUCCEEDED' } });
    expect(seen.get(other.id)).toMatchObject({ kind: 'progress', run: { status: 'RUNNING', handled: 3 } });

    // And it listens: a notification from now on arrives as it is sent.
    await announce(d.sql, accountId, { ...snapshotOf(watched), status: 'SUCCEEDED', itemCount: 8 });
    expect(
      await next<RunSnapshot>(progress, (s) => s.itemCount === 8, 'a notification after the resync'),
    ).toMatchObject({ itemCount: 8 });
    await progress.return?.();
    await account.return?.();
  });
});
