import { migrateDatabase } from '../db/migrate.ts';
import { startEmbeddedPostgres } from '../db/embedded.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';

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
  const handle = await startEmbeddedPostgres(config.dataDir, 'leadgate', (line) => log.debug(line), (line) => log.warn(line));
  await migrateDatabase(handle.url);
  return { url: handle.url, embedded: true, stop: handle.stop };
}
