import { inject } from 'vitest';
import postgres from 'postgres';
import { randomBase62 } from '../../src/shared/ids.ts';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A database of its own for one test file, cloned from the migrated, seeded template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const server = inject('pgServerUrl');
  const template = inject('templateDatabase');
  const name = `test_${randomBase62(12).toLowerCase()}`;
  const admin = postgres(`${server}/postgres`, { max: 1, onnotice: () => {} });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        // file_copy copies the template's files; the default (wal_log) writes all of it to the WAL page by
        // page: 0.6 s of the server's CPU for a clone and its drop, against 0.2 s (Postgres 15 or later).
        await admin.unsafe(`create database ${name} template ${template} strategy file_copy`);
        break;
      } catch (err) {
        // Two files cloning at the same instant can collide on the template; try again.
        if (attempt >= 10 || !/being accessed by other users/.test(String(err))) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  return {
    url: `${server}/${name}`,
    name,
    async drop() {
      const sql = postgres(`${server}/postgres`, { max: 1, onnotice: () => {} });
      // Connections their owners are still closing (a stopped worker's pool) go on their own first:
      // forced, a closing client can meet the server's 57P01 with no one listening, an uncaught error.
      // Up to 3 s; stragglers are then cut off.
      for (let waited = 0; waited < 3000; waited += 50) {
        const [{ n }] =
          (await sql`select count(*)::int as n from pg_stat_activity where datname = ${name}`) as unknown as [
            { n: number },
          ];
        if (n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await sql.unsafe(`drop database if exists ${name} with (force)`);
      await sql.end();
    },
  };
}
