import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import postgres from 'postgres';
import { createTestDatabase, type TestDatabase } from './db.ts';

export interface ImportFixture {
  database: TestDatabase;
  sql: postgres.Sql;
  dir: string;
  /** Writes `text` to a file of the temp directory; returns its path. */
  write(name: string, text: string): Promise<string>;
  /** Row count and an md5 over every row (ids included) of a table. */
  checksum(table: string): Promise<{ rows: number; md5: string }>;
  /** The dataset's `dataset_state` row. */
  state(dataset: string): Promise<{ ready: boolean; row_count: number } | undefined>;
  /** Rows of an errors file as written. */
  errorsIn(file: string): Promise<{ line: string; reason: string }[]>;
  close(): Promise<void>;
}

/** A database of its own (cloned from the seeded template) and a temp directory for import files. */
export async function importFixture(): Promise<ImportFixture> {
  const database = await createTestDatabase();
  const sql = postgres(database.url, { max: 4, onnotice: () => {}, connection: { application_name: 'leadgate-test' } });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-import-'));
  return {
    database,
    sql,
    dir,
    async write(name, text) {
      const file = path.join(dir, name);
      await writeFile(file, text);
      return file;
    },
    async checksum(table) {
      const [row] = await sql.unsafe<{ rows: number; md5: string }[]>(
        `select count(*)::int as rows, coalesce(md5(string_agg(t::text, '|' order by t.id)), '') as md5 from "${table}" t`,
      );
      return row!;
    },
    async state(dataset) {
      const [row] = await sql<
        { ready: boolean; row_count: number }[]
      >`select ready, row_count::int from dataset_state where dataset = ${dataset}`;
      return row;
    },
    async errorsIn(file) {
      return parse(await readFile(file, 'utf8'), { columns: true }) as { line: string; reason: string }[];
    },
    async close() {
      await sql.end();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
