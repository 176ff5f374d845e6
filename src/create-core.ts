import { setMaxListeners } from 'node:events';
import { connect } from '../db/client.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Core } from './core.ts';
import { createAuthenticator } from './accounts/accounts.ts';
import { createEventBus, type EventScope } from './events/bus.ts';
import { createCatalogSources } from './catalog/table-sources/index.ts';
import { createUpstreamEngine } from './runs/upstream.ts';
import { createNetwork } from './net/index.ts';
import { createRateLimiter } from './accounts/rate-limit.ts';
import { createAccountWrites } from './accounts/writes.ts';
import { createPayments } from './billing/payments/index.ts';
import { createMailer } from './net/mail.ts';
import { createCatalogReader } from './catalog/reader.ts';

/**
 * Builds the process's `Core` (core.ts): the database pool, the
 * event bus, the catalog sources, the network and the limits.
 */
export async function createCore(
  config: Config,
  databaseUrl: string,
  logger: Logger,
  options: { poolSize?: number; events?: EventScope } = {},
): Promise<Core> {
  // A TOOL_SOURCES naming a tool that cannot run upstream stops start-up here, before anything opens.
  const upstream = createUpstreamEngine(config);
  const { sql, db } = connect(databaseUrl, { max: options.poolSize ?? 20 });
  // Card purchases are recorded before the charge while the request's transaction holds a connection
  // of the pool above: on a pool of their own, so requests waiting for Stripe never starve them
  // (billing/payments/stripe.ts). postgres.js connects at the first query.
  const records = connect(databaseUrl, { max: 2 });
  const catalogReader = createCatalogReader(sql, {
    url: config.databaseReadUrl,
    maxLagMs: config.databaseReadMaxLagMs,
    logger,
  });
  // A standalone worker hears the cancels and its own changes
  // only (events.ts, EventScope); a gateway the runs it serves.
  const events = createEventBus(sql, { scope: options.events });
  const network = createNetwork(config.network);
  const mailer = createMailer(config.mail, logger);
  await events.ready;
  const shutdown = new AbortController();
  // Every long poll in flight listens for it.
  setMaxListeners(0, shutdown.signal);
  return {
    config,
    logger,
    databaseUrl,
    sql,
    db,
    catalogReader,
    events,
    auth: createAuthenticator(db, config.authCacheSecs, logger),
    // The contact tools reach DNS, mail servers and websites through the configured network and its
    // outbound guard; the catalog is read on the read replica when there is a healthy one.
    sources: createCatalogSources(catalogReader.db, network),
    upstream,
    network,
    rateLimiter: createRateLimiter(sql, config.rateLimitPerMinute),
    mailer,
    payments: createPayments(config.payments, db, records.db),
    authFailureLimiter: createRateLimiter(sql, config.authFailuresPerMinute),
    // Only the limits lock the wallet row per start; without them one account's starts never wait on each other.
    accountWrites: createAccountWrites(db, { group: config.enforceLimits }),
    clock: () => new Date(),
    shutdown: shutdown.signal,
    beginShutdown: () => shutdown.abort(),
    async close() {
      shutdown.abort();
      mailer.close();
      await events.close().catch(() => {});
      await catalogReader.close();
      await records.sql.end({ timeout: 5 });
      await sql.end({ timeout: 5 });
    },
  };
}
