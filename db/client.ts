import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema/index.ts';

export function connect(url: string, options: { max?: number } = {}) {
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    connection: { application_name: 'leadgate' },
    // Seconds before a closed connection tries again: postgres.js's default grows to 20 s after a few
    // refusals, which would hold every request (and the recovery) long after a database restart ends.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
  });
  const db = drizzle(sql, { schema });
  return { sql, db };
}

export type Sql = postgres.Sql;
export type Database = ReturnType<typeof connect>['db'];
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];
/** Services take either and join the caller's transaction when given one. */
export type Executor = Database | Transaction;

export function runInTransaction<T>(db: Executor, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  return db.transaction(fn);
}
