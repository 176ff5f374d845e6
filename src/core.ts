import { connect, type Database, type Sql } from '../db/client.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { createAuthenticator, type Authenticator } from './accounts/accounts.ts';
import { createEventBus, type EventBus } from './runs/events.ts';
import { createCatalogSources } from './sources/catalog/index.ts';
import { createNetwork, type Network } from './net/index.ts';
import type { Sources } from './sources/types.ts';
import { createRateLimiter, type RateLimiter } from './accounts/rate-limit.ts';
import { createAccountWrites, type AccountWrites } from './accounts/writes.ts';

/** The shared parts every face and worker uses; built once per process. */
export interface Core {
  config: Config;
  logger: Logger;
  databaseUrl: string;
  sql: Sql;
  db: Database;
  events: EventBus;
  auth: Authenticator;
  sources: Sources;
  /** DNS, SMTP and web clients behind the outbound guard (the contact tools, webhook deliveries). */
  network: Network;
  rateLimiter: RateLimiter;
  /** Transactions for an account's writes; with the limits on, one account's concurrent writes share a commit. */
  accountWrites: AccountWrites;
  /** Now; tests move it to check expiry and daily resets. */
  clock: () => Date;
  close(): Promise<void>;
}

export async function createCore(config: Config, databaseUrl: string, logger: Logger, options: { poolSize?: number } = {}): Promise<Core> {
  const { sql, db } = connect(databaseUrl, { max: options.poolSize ?? 20 });
  const events = createEventBus(sql);
  const network = createNetwork(config.network);
  await events.ready;
  return {
    config,
    logger,
    databaseUrl,
    sql,
    db,
    events,
    auth: createAuthenticator(db, config.authCacheSecs),
    // The contact tools reach DNS, mail servers and websites through the configured network and its outbound guard.
    sources: createCatalogSources(db, network),
    network,
    rateLimiter: createRateLimiter(sql, config.rateLimitPerMinute),
    // Only the limits lock the wallet row per start; without them one account's starts never wait on each other.
    accountWrites: createAccountWrites(db, { group: config.enforceLimits }),
    clock: () => new Date(),
    async close() {
      await events.close().catch(() => {});
      await sql.end({ timeout: 5 });
    },
  };
}
