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
        await admin.unsafe(`create database ${name} template ${template}`);
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
      await sql.unsafe(`drop database if exists ${name} with (force)`);
      await sql.end();
    },
  };
}
