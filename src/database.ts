import { migrateDatabase } from '../db/migrate.ts';
import { startEmbeddedPostgres } from '../db/embedded.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Sql } from '../db/client.ts';
import { isDatabaseUnavailable } from './shared/errors.ts';

export interface OpenedDatabase {
  url: string;
  /** True when this is the embedded instance under the data directory. */
  embedded: boolean;
  stop(): Promise<void>;
}

/** DATABASE_URL when set, else the embedded Postgres; pending migrations are applied either way. */
export async function openDatabase(config: Config, logger: Logger): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    await migrateDatabase(config.databaseUrl);
    return { url: config.databaseUrl, embedded: false, stop: async () => {} };
  }
  const log = logger.child({ component: 'embedded-postgres' });
  const handle = await startEmbeddedPostgres(
    config.dataDir,
    'leadgate',
    (line) => log.debug(line),
    (line) => log.warn(line),
  );
  await migrateDatabase(handle.url);
  return { url: handle.url, embedded: true, stop: handle.stop };
}

/**
 * Resolves true once the database answers again (a `select 1`, tried with backoff), or false as soon
 * as `signal` aborts. What waits on it (a run, a task) goes on where it stopped instead of failing.
 */
export async function waitForDatabase(sql: Sql, signal: AbortSignal, maxPauseMs = 1_000): Promise<boolean> {
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      await sql`select 1`;
      return true;
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(50 * 2 ** attempt, maxPauseMs));
      signal.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    });
  }
  return false;
}
