import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { freePort, startEmbeddedPostgres } from '../../db/embedded.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import { seedCatalog } from '../../db/seed/index.ts';
import { buildApp, type App } from '../../src/app.ts';
import { loopbackConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createAccount } from '../../src/services/accounts.ts';

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

/** Migrated and seeded database, the gateway with its inline worker listening on loopback, and an API key. */
export async function startBenchEnv(): Promise<BenchEnv> {
  const database = await openBenchDatabase();
  let app: App | undefined;
  try {
    await migrateDatabase(database.url);
    const port = await freePort();
    const config = loopbackConfig(database.url, port);
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
