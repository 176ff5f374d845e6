import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import type { Sql } from '../../db/client.ts';
import { ensureDatabase, freePort, startEmbeddedPostgres } from '../../db/embedded.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import { seedCatalog } from '../../db/seed/index.ts';
import { buildApp, type App } from '../../src/app.ts';
import { loopbackConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createAccount } from '../../src/accounts/accounts.ts';

export interface BenchDatabase {
  url: string;
  kind: 'embedded' | 'DATABASE_URL';
  close(): Promise<void>;
}

export interface BenchEnv {
  app: App;
  database: BenchDatabase;
  baseUrl: string;
  apiKey: string;
  close(): Promise<void>;
}

async function adminExec(url: string, statement: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.end();
  }
}

/** A fresh database: `bench_<random>` on DATABASE_URL's server, else an embedded Postgres in a temp directory. */
export async function openBenchDatabase(): Promise<BenchDatabase> {
  const external = process.env.DATABASE_URL;
  if (external) {
    const name = `bench_${randomBytes(6).toString('hex')}`;
    await adminExec(external, `create database "${name}"`);
    const url = new URL(external);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      kind: 'DATABASE_URL',
      close: () => adminExec(external, `drop database if exists "${name}" with (force)`),
    };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-bench-'));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  try {
    const handle = await startEmbeddedPostgres(dir, 'leadgate');
    return {
      url: handle.url,
      kind: 'embedded',
      close: async () => {
        await handle.stop().finally(removeDir);
      },
    };
  } catch (err) {
    await removeDir();
    throw err;
  }
}

export interface BenchServer {
  kind: BenchDatabase['kind'];
  /** A new empty `bench_<random>` database on this server; returns its connection string. */
  createDatabase(): Promise<string>;
  /** Drops the databases it created (DATABASE_URL) or stops the embedded server and removes its directory. */
  close(): Promise<void>;
}

/**
 * One Postgres server to hold several databases, so side-by-side variants share the server (same
 * CPU, same cache) but not their tables or job queues: DATABASE_URL's server, else one embedded
 * Postgres in a temp directory.
 */
export async function openBenchServer(options: { statStatements?: boolean } = {}): Promise<BenchServer> {
  const external = process.env.DATABASE_URL;
  const names: string[] = [];
  const newName = () => {
    const name = `bench_${randomBytes(6).toString('hex')}`;
    names.push(name);
    return name;
  };
  if (external) {
    return {
      kind: 'DATABASE_URL',
      async createDatabase() {
        const name = newName();
        await adminExec(external, `create database "${name}"`);
        const url = new URL(external);
        url.pathname = `/${name}`;
        return url.toString();
      },
      async close() {
        for (const name of names) await adminExec(external, `drop database if exists "${name}" with (force)`);
      },
    };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-bench-'));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  let handle: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  try {
    handle = await startEmbeddedPostgres(dir, 'postgres');
    if (options.statStatements) {
      // For profiling: per-statement timings need the library loaded at server start.
      await adminExec(`${handle.serverUrl}/postgres`, `alter system set shared_preload_libraries = 'pg_stat_statements'`);
      await adminExec(`${handle.serverUrl}/postgres`, `alter system set pg_stat_statements.track = 'all'`);
      await handle.stop();
      handle = undefined;
      handle = await startEmbeddedPostgres(dir, 'postgres');
    }
    const server = handle;
    return {
      kind: 'embedded',
      async createDatabase() {
        const name = newName();
        await ensureDatabase(`${server.serverUrl}/postgres`, name);
        return `${server.serverUrl}/${name}`;
      },
      close: async () => {
        await server.stop().finally(removeDir);
      },
    };
  } catch (err) {
    await handle?.stop().catch(() => {});
    await removeDir();
    throw err;
  }
}

/** A per-key budget no benchmark exhausts. */
export const BENCH_RATE_LIMIT_PER_MINUTE = 1e9;

/** Migrated and seeded database, the gateway with its inline worker listening on loopback, and an API key. */
export async function startBenchEnv(): Promise<BenchEnv> {
  const database = await openBenchDatabase();
  let app: App | undefined;
  try {
    await migrateDatabase(database.url);
    const port = await freePort();
    // The checks stay on, as in service; only the per-key budget is raised so that load generation
    // is never refused (each request is still counted in Postgres).
    const config = loopbackConfig(database.url, port, { rateLimitPerMinute: BENCH_RATE_LIMIT_PER_MINUTE });
    app = await buildApp({ config, databaseUrl: database.url, logger: createLogger('silent'), workerPollInterval: 1000 });
    await seedCatalog(app.core.sql, { scale: 'small' });
    const { apiKey } = await createAccount(app.core.db, { name: 'bench', plan: 'scale', creditsMicros: 1_000_000_000n });
    const baseUrl = await app.start(port, config.host);
    const started = app;
    return {
      app: started,
      database,
      baseUrl,
      apiKey,
      close: async () => {
        await started.stop().finally(() => database.close());
      },
    };
  } catch (err) {
    if (app) await app.stop().catch(() => {});
    await database.close();
    throw err;
  }
}

/** The server's version and the settings a benchmark's figures depend on (`ctype`: the database's locale provider and ctype). */
export async function serverSettings(sql: Sql, names: string[]): Promise<{ version: string; settings: Record<string, string> }> {
  const [version] = await sql<{ v: string }[]>`select current_setting('server_version') as v`;
  const rows = await sql<{ name: string; setting: string }[]>`
    select name, current_setting(name) as setting from pg_settings where name = any(${names})
    union all
    select 'ctype', datlocprovider::text || ':' || datctype from pg_database where datname = current_database()`;
  return { version: version!.v, settings: Object.fromEntries(rows.map((r) => [r.name, r.setting])) };
}
