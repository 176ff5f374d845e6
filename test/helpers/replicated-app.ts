import postgres from 'postgres';
import { connect, type Database, type Sql } from '../../db/client.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import { buildApp, type App } from '../../src/app.ts';
import { loopbackConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createCluster, type Cluster } from './postgres-cluster.ts';

/** A log line of the gateway, as JSON. */
export interface LogLine {
  level: number;
  msg: string;
  reason?: string;
}

/** A gateway over a real primary and a real streaming replica of it, with DATABASE_READ_URL set. */
export interface ReplicatedApp {
  primary: Cluster;
  replica: Cluster;
  /** The primary's database, a pool of 4. */
  sql: Sql;
  db: Database;
  /** The replica's database, one session. */
  onReplica: Sql;
  app: App;
  url: string;
  /** Every line the gateway logged. */
  lines: LogLine[];
  stop(): Promise<void>;
}

/**
 * A primary cluster of the test file's own, migrated; `prepare` fills it (on its own sessions, which it
 * ends) before the replica is made from a base backup of it; then the gateway (docs/operations.md#read-replicas).
 */
export async function startReplicatedApp(options: {
  prepare: (primaryUrl: string) => Promise<void>;
  maxLagMs: number;
  /** An inline worker (polling every 200 ms), or none. */
  worker: boolean;
}): Promise<ReplicatedApp> {
  const primary = await createCluster();
  let replica: Cluster | undefined;
  let sql: Sql | undefined;
  let onReplica: Sql | undefined;
  let app: App | undefined;
  // Everything started so far, stopped: after the tests, or when a step of the start fails.
  const stop = async () => {
    await app?.stop();
    await onReplica?.end({ timeout: 1 }).catch(() => {});
    await sql?.end({ timeout: 1 }).catch(() => {});
    await replica?.destroy();
    await primary.destroy();
  };
  try {
    const primaryUrl = primary.url('postgres');
    await migrateDatabase(primaryUrl);
    await options.prepare(primaryUrl);
    const connected = connect(primaryUrl, { max: 4 });
    sql = connected.sql;
    replica = await primary.replica();
    onReplica = postgres(replica.url('postgres'), { max: 1, onnotice: () => {} });
    const lines: LogLine[] = [];
    const config = loopbackConfig(primaryUrl, 0, {
      authCacheSecs: 0,
      rateLimitPerMinute: 100_000,
      databaseReadUrl: replica.url('postgres'),
      databaseReadMaxLagMs: options.maxLagMs,
    });
    const logger = createLogger('info', { write: (line: string) => lines.push(JSON.parse(line)) });
    app = await buildApp({
      config,
      databaseUrl: primaryUrl,
      logger,
      worker: options.worker,
      ...(options.worker ? { workerPollInterval: 200 } : {}),
    });
    const url = await app.start(0, '127.0.0.1');
    return { primary, replica, sql, db: connected.db, onReplica, app, url, lines, stop };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}
