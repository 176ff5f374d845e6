import type { Database, Sql } from '../db/client.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Authenticator } from './accounts/accounts.ts';
import type { EventBus } from './events/bus.ts';
import type { Network } from './net/index.ts';
import type { Sources } from './sources/types.ts';
import type { UpstreamEngine } from './upstream/engine.ts';
import type { RateLimiter } from './accounts/rate-limit.ts';
import type { AccountWrites } from './accounts/writes.ts';
import type { Payments } from './billing/payments/port.ts';
import type { Mailer } from './net/mail.ts';
import type { CatalogReader } from './catalog/reader.ts';

/**
 * The shared parts every face and worker uses; built once per process by `createCore`
 * (create-core.ts). This file holds the type alone, importing types only, so the domains that take a
 * `Core` never depend on what builds one (the catalog sources among them).
 */
export interface Core {
  config: Config;
  logger: Logger;
  databaseUrl: string;
  sql: Sql;
  db: Database;
  /** Where read-only catalog work runs: the read replica (DATABASE_READ_URL) while it is healthy, else `sql`. */
  catalogReader: CatalogReader;
  events: EventBus;
  auth: Authenticator;
  sources: Sources;
  /** The upstream engine the tools of TOOL_SOURCES run on (docs/upstream.md); undefined without APIFY_TOKEN. */
  upstream: UpstreamEngine | undefined;
  /** DNS, SMTP and web clients behind the outbound guard (the contact tools, webhook deliveries). */
  network: Network;
  rateLimiter: RateLimiter;
  /** The service's own mail (invitations, password resets): SMTP_URL, or the log without it. */
  mailer: Mailer;
  /** How credit purchases and subscriptions are paid: Stripe, demo, or none (config.payments; billing/payments). */
  payments: Payments;
  /** Failed authentications per minute per client address (`auth:<address>`), from `authFailuresPerMinute`. */
  authFailureLimiter: RateLimiter;
  /** Transactions for an account's writes; with the limits on, one account's concurrent writes share a commit. */
  accountWrites: AccountWrites;
  /** Now; tests move it to check expiry and daily resets. */
  clock: () => Date;
  /**
   * Aborts when the process begins to stop (`beginShutdown`): long
   * waits (a status poll with waitForFinish) answer at once.
   */
  shutdown: AbortSignal;
  /** The first step of a graceful stop, before the HTTP server drains: see `shutdown`. */
  beginShutdown(): void;
  close(): Promise<void>;
}
