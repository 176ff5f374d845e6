import { is } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './tables/index.ts';

/**
 * A pool of connections. drizzle sets its type parsers (dates and times kept as text) on the client
 * its constructor is given, and a proxy over the client passes them through to it. Every pool gets
 * them here, whatever later runs on it: the catalog reader's drizzle runs on a proxy over the
 * primary's pool, so it would never set them on the replica's (src/catalog/reader.ts).
 */
export function openPool(url: string, options: { max?: number } = {}): Sql {
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection: { application_name: 'leadgate' },
    // Seconds before a closed connection tries again: postgres.js's default grows to 20 s after a few
    // refusals, which would hold every request (and the recovery) long after a database restart ends.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
  });
  drizzle(sql);
  return sql;
}

/** A pool and the service's drizzle over it, which prepares every statement it sends. */
export function connect(url: string, options: { max?: number } = {}) {
  const sql = openPool(url, options);
  const db = drizzle(preparing(sql), { schema });
  return { sql, db };
}

/**
 * Query options of an unnamed statement sent in one round trip. For an unnamed statement with
 * parameters, postgres.js asks the server for the parameter types, waits, then sends the values: two
 * round trips. With `askTypes: false` (this project's patch of postgres.js, patches/), values that
 * are text, numbers or nulls are sent at once as text, which is what their types would have made of
 * them on the pools of `openPool` (drizzle's serializers pass json and dates through as given);
 * arrays and objects still ask first.
 */
export const UNNAMED_IN_ONE_TRIP = { prepare: false, askTypes: false } as postgres.UnsafeQueryOptions;

/**
 * A drizzle over `sql` that sends its statements unnamed, each planned for its own
 * values and sent in one round trip where its values allow: the catalog's.
 */
export function planningDatabase(sql: Sql) {
  const oneTrip = new Proxy(sql, {
    get(target, property, receiver) {
      return property === 'unsafe' ? unsafeWith(target, UNNAMED_IN_ONE_TRIP) : Reflect.get(target, property, receiver);
    },
  });
  return drizzle(oneTrip, { schema });
}

/**
 * `sql.unsafe` with `forced` over the caller's query options: how
 * the pools' proxies choose how drizzle's statements are sent.
 */
const unsafeWith =
  (sql: postgres.Sql | postgres.TransactionSql, forced: postgres.UnsafeQueryOptions) =>
  (query: string, parameters?: never[], options?: postgres.UnsafeQueryOptions) =>
    sql.unsafe(query, parameters, { ...options, ...forced });

/**
 * `sql` with every statement drizzle sends prepared. drizzle asks postgres.js for unnamed statements,
 * and postgres.js sends an unnamed statement with parameters in two round trips (it asks Postgres for
 * the parameter types, then sends the values), which Postgres parses and plans every time. A
 * prepared one is named once per connection and then sent in one round trip: a run's statements
 * cost the worker and Postgres about a third fewer wake-ups (docs/benchmarks-history.md, `processes`).
 * Postgres may give a prepared statement a generic plan after five runs, which suits the lookups by
 * key this client serves. The catalog's searches need a plan for their own values and do not come
 * through here: the catalog sources have their own drizzle (src/catalog/reader.ts) and the searches
 * are sent unnamed (`plannedPerCall`). A connection's statements go with it (postgres.js replaces
 * each connection after 30 to 60 minutes). Transactions and savepoints hand out clients that prepare
 * too, and keep the work to do once they commit (`afterCommit`).
 */
function preparing<S extends postgres.Sql | postgres.TransactionSql>(sql: S): S {
  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property === 'unsafe') return unsafeWith(target, { prepare: true });
      if (property === 'begin' || property === 'savepoint') {
        const open = Reflect.get(target, property, receiver) as (...args: unknown[]) => Promise<unknown>;
        // (options or name)?, then the callback, which gets a client that prepares as well.
        return async (...args: unknown[]) => {
          const work = args.pop() as (tx: postgres.TransactionSql) => unknown;
          const committed: (() => void)[] = [];
          const result = await open(...args, (tx: postgres.TransactionSql) => {
            const client = preparing(tx);
            onCommit.set(client, committed);
            return work(client);
          });
          // A savepoint released hands its work on to its transaction, which may still roll back.
          const outer = property === 'savepoint' ? onCommit.get(receiver as object) : undefined;
          if (outer) outer.push(...committed);
          else for (const fn of committed) fn();
          return result;
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/** The work to do once a transaction commits, by the client drizzle's transaction runs on. */
const onCommit = new WeakMap<object, (() => void)[]>();

/**
 * Runs `fn` once the transaction `executor` belongs to has committed, and never if it rolls back;
 * with the pool itself (no transaction), at once. `fn` runs before the transaction's caller gets its
 * result, and must not throw.
 */
export function afterCommit(executor: Executor, fn: () => void) {
  if (!is(executor, PgTransaction)) return fn();
  // drizzle's transaction runs on the client `begin` or `savepoint` handed it (its session's `client`).
  const committed = onCommit.get((executor as unknown as { session: { client: object } }).session.client);
  if (!committed) throw new Error('afterCommit: the transaction was not opened on a pool of connect()');
  committed.push(fn);
}

export type Sql = postgres.Sql;
export type Database = ReturnType<typeof connect>['db'];
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];
/** Services take either and join the caller's transaction when given one. */
export type Executor = Database | Transaction;

export function runInTransaction<T>(db: Executor, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  return db.transaction(fn);
}
