import { openPool, planningDatabase, type Database, type Sql } from '../../db/client.ts';
import type { Logger } from '../logger.ts';
import { catalogReadsOnReplica } from '../shared/metrics.ts';
import { isDatabaseUnavailable } from '../shared/errors.ts';

/**
 * Where read-only catalog work runs (DATABASE_READ_URL, docs/operations.md#read-replicas): a streaming
 * replica while it answers and has replayed the primary's WAL of at most `maxLagMs` ago, else the
 * primary. Only reads that need not see the caller's own writes belong here; allowances, delivered
 * leads and everything else that writes stay on the primary.
 */
export interface CatalogReader {
  /**
   * Runs `work` on the replica when it is healthy, else on the primary. A replica that drops the
   * connection, refuses it, or cancels the query for a conflict with recovery is left for the primary,
   * which runs `work` again; any other error is the work's own.
   */
  read<T>(work: (sql: Sql) => PromiseLike<T>): Promise<T>;
  /**
   * What `work` yields (rows read through a cursor), on the replica when it is healthy, else on the
   * primary. `work(sql, from, onReplica)` yields the items from the `from`-th on, the same items in
   * the same order on both servers (rows that no longer change). When the replica fails part-way (the
   * errors `read` leaves for the primary) or `work` throws `NotReplayed` there, the primary yields the
   * rest, so the stream ends whole either way.
   */
  stream<T>(work: (sql: Sql, from: number, onReplica: boolean) => AsyncIterable<T>): AsyncIterable<T>;
  /** drizzle over `read`: each query it sends runs as one `read` (the catalog sources of tool runs read through it). */
  db: Database;
  close(): Promise<void>;
}

export interface ReaderOptions {
  /** DATABASE_READ_URL; undefined: every read goes to the primary. */
  url: string | undefined;
  /** DATABASE_READ_MAX_LAG_MS: the replica is used only while it is at most this far behind. */
  maxLagMs: number;
  logger: Pick<Logger, 'warn' | 'info'>;
}

/**
 * Thrown by work on the replica that has not replayed what the work
 * needs yet: the primary answers it, and the replica stays in use.
 */
export class NotReplayed extends Error {}

/**
 * A standby cancels a query whose rows recovery must remove (conflict with recovery); the primary has no such conflict.
 */
const RECOVERY_CONFLICT = '40001';

const lsnOf = (text: string) => {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
};

export function createCatalogReader(primarySql: Sql, options: ReaderOptions): CatalogReader {
  const { url, maxLagMs, logger } = options;
  catalogReadsOnReplica.set(0);
  // The catalog's own drizzle, on the primary's pool: its statements go unnamed, unlike those of the
  // pool's own drizzle (db/client.ts), so a search is planned for its own values every time.
  if (!url)
    return {
      read: async (work) => work(primarySql),
      stream: (work) => work(primarySql, 0, false),
      db: planningDatabase(primarySql),
      close: async () => {},
    };

  const replica = openPool(url, { max: 10 });
  // The replica is trusted only after a check has found it current.
  let healthy = false;
  const setHealth = (ok: boolean, why: string) => {
    if (ok === healthy) return;
    healthy = ok;
    catalogReadsOnReplica.set(ok ? 1 : 0);
    if (ok) logger.info('catalog reads go to the read replica');
    else logger.warn({ reason: why }, 'catalog reads fall back to the primary');
  };

  // The primary's WAL positions the replica had not replayed when seen, oldest first: the lag is how
  // long ago the oldest of them was written. An idle primary writes nothing, so its replica is current.
  const unreplayed: { at: number; lsn: bigint }[] = [];
  // A replica that does not answer (an address that drops packets) is as good as down.
  const answerMs = Math.max(1000, maxLagMs);
  const answered = <T>(query: PromiseLike<T>) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer in ${answerMs} ms`)), answerMs);
      const settle = () => clearTimeout(timer);
      query.then(
        (value) => {
          settle();
          resolve(value);
        },
        (err: unknown) => {
          settle();
          reject(err);
        },
      );
    });
  const check = async () => {
    try {
      const [{ position }] = await answered(
        primarySql<[{ position: string }]>`select pg_current_wal_lsn()::text as position`,
      );
      const at = Date.now();
      const [state] = await answered(
        replica<[{ replayed: string | null }]>`select pg_last_wal_replay_lsn()::text as replayed`,
      );
      if (state.replayed === null) return setHealth(false, 'DATABASE_READ_URL is not a standby in recovery');
      const replayed = lsnOf(state.replayed);
      while (unreplayed[0] && unreplayed[0].lsn <= replayed) unreplayed.shift();
      const current = lsnOf(position);
      if (current > replayed && (unreplayed.at(-1)?.lsn ?? 0n) < current) unreplayed.push({ at, lsn: current });
      // A replica stuck for long: pairs merge into their older time and
      // newer position, so the lag read is never less than the true one.
      if (unreplayed.length > 64)
        unreplayed.splice(
          0,
          unreplayed.length,
          ...unreplayed.flatMap((s, i, all) => (i % 2 === 0 ? [{ at: s.at, lsn: (all[i + 1] ?? s).lsn }] : [])),
        );
      const lag = unreplayed[0] ? Date.now() - unreplayed[0].at : 0;
      setHealth(lag <= maxLagMs, lag <= maxLagMs ? 'current' : `replay is ${lag} ms behind the primary`);
    } catch (err) {
      setHealth(false, `unreachable: ${(err as Error).message}`);
    }
  };
  // Checked a few times within the lag bound, so a lagging replica is left before it is much past it.
  const interval = Math.max(50, Math.min(1000, Math.floor(maxLagMs / 4)));
  let running = check();
  const timer = setInterval(() => {
    running = running.then(check);
  }, interval);
  timer.unref();

  /**
   * Whether `err`, thrown by work on the replica, leaves the work to the primary; a replica out of reach is marked so.
   */
  const leftForPrimary = (err: unknown) => {
    if (isDatabaseUnavailable(err)) setHealth(false, `unreachable: ${(err as Error).message}`);
    else return (err as { code?: string }).code === RECOVERY_CONFLICT || err instanceof NotReplayed;
    return true;
  };
  const read = async <T>(work: (sql: Sql) => PromiseLike<T>): Promise<T> => {
    if (!healthy) return work(primarySql);
    try {
      return await work(replica);
    } catch (err) {
      if (!leftForPrimary(err)) throw err;
      return work(primarySql);
    }
  };
  async function* stream<T>(work: (sql: Sql, from: number, onReplica: boolean) => AsyncIterable<T>): AsyncGenerator<T> {
    let from = 0;
    if (healthy) {
      const items = work(replica, 0, true)[Symbol.asyncIterator]();
      try {
        for (;;) {
          // Only the replica's own failures are caught: whatever the consumer throws in at `yield` passes.
          let next: IteratorResult<T>;
          try {
            next = await items.next();
          } catch (err) {
            if (!leftForPrimary(err)) throw err;
            break;
          }
          if (next.done) return;
          from += 1;
          yield next.value;
        }
      } finally {
        await items.return?.();
      }
    }
    yield* work(primarySql, from, false);
  }
  // drizzle sends every query through `unsafe` (a plain result or `.values()`): each becomes one `read`.
  // drizzle's parsers are set on both pools (`openPool`): this drizzle sets them on the primary's only.
  const routed = new Proxy(primarySql, {
    get(target, property, receiver) {
      if (property !== 'unsafe') return Reflect.get(target, property, receiver);
      return (query: string, params?: never[], queryOptions?: never) => {
        const run = (values: boolean) =>
          read((sql) =>
            values ? sql.unsafe(query, params, queryOptions).values() : sql.unsafe(query, params, queryOptions),
          );
        return {
          values: () => run(true),
          // biome-ignore lint/suspicious/noThenProperty: awaited like the postgres.js query it stands for
          then: (resolve: never, reject: never) => run(false).then(resolve, reject),
        };
      };
    },
  });
  return {
    read,
    stream,
    db: planningDatabase(routed),
    async close() {
      clearInterval(timer);
      await running;
      await replica.end({ timeout: 5 });
    },
  };
}
