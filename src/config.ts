import path from 'node:path';
import { drop, type DropConfig } from './config/drop.ts';
import proxyaddr from '@fastify/proxy-addr';
import { PLANS, SUBSCRIPTION_STATUSES, type Plan, type SubscriptionStatus } from '../db/tables/accounts.ts';
import { EXACT_TOTAL_LIMIT } from './catalog/sql.ts';
import { bool, int, isOrigin, list, oneOf } from './config/env.ts';
import { networkConfig, type NetworkConfig } from './config/network.ts';
import { payments, type PaymentsConfig } from './config/payments.ts';
import { destinations, type DestinationsConfig } from './config/destinations.ts';
import { upstream, type ApifyConfig, type ToolSource } from './config/upstream.ts';
import { operatorToken } from './config/operator.ts';
import { optOut, type OptOutConfig } from './config/opt-out.ts';

export type { NetworkConfig } from './config/network.ts';
export type { PaymentsConfig, StripeConfig } from './config/payments.ts';
export type { ApifyConfig, ToolSource } from './config/upstream.ts';
export type { OptOutConfig } from './config/opt-out.ts';

/**
 * Runtime configuration, read once from the environment. The sections with variables of their own are read
 * beside this file: the outbound network (`config/network.ts`), payments (`config/payments.ts`) and the
 * upstream engine (`config/upstream.ts`).
 */
export interface Config {
  /** Postgres connection string; when absent an embedded Postgres under `dataDir` is used. */
  databaseUrl: string | undefined;
  /**
   * A streaming replica of it for read-only catalog work (docs/operations.md#read-replicas); unset: everything reads
   * the primary. Default none.
   */
  databaseReadUrl: string | undefined;
  /**
   * How far behind the primary, ms, the replica may be and still serve reads; past it they go to the primary. Default
   * 5,000.
   */
  databaseReadMaxLagMs: number;
  /** HTTP port; 0 binds a free one (and the default public URL follows it). Default 4000. */
  port: number;
  /** Interface to bind. Default 0.0.0.0. */
  host: string;
  /** Base URL used in `outputUrl` and printed links. Default http://localhost:PORT. */
  publicUrl: string;
  /** Directory for embedded Postgres data. Default .data (git-ignored). */
  dataDir: string;
  /** Run graphile-worker inside the gateway process. Default true. */
  inlineWorker: boolean;
  /** Jobs a worker process executes at once. Default 4. */
  workerConcurrency: number;
  /** pino log level. Default info. */
  logLevel: string;
  /** Bearer token GET /metrics asks for; when unset, /metrics is open (docs/operations.md). Default none. */
  metricsToken: string | undefined;
  /**
   * SHA-256 (hex) of OPERATOR_TOKEN, the Bearer token of the operator API (/operator/v1); the token itself is
   * not kept. Unset (default): the operator API answers 404.
   */
  operatorTokenSha256: string | undefined;
  /**
   * Port on which a standalone worker (`leadgate worker`) serves /metrics, /ready and /health; unset: none. Default
   * none.
   */
  metricsPort: number | undefined;
  /** Seconds an authenticated key stays cached in a gateway process. Default 5; 0 disables. */
  authCacheSecs: number;
  /** Hours a finished run's results stay downloadable. Default 48. */
  resultRetentionHours: number;
  /** Requests per minute per API key, over REST, GraphQL and MCP. Default 100. */
  rateLimitPerMinute: number;
  /**
   * Failed authentications (no, malformed, unknown or revoked key) per minute per client address, over
   * every face; past it the address is refused 429 `rate_limited` until its window ends, whatever key it
   * sends. Default 60; 0 turns the limit off.
   */
  authFailuresPerMinute: number;
  /**
   * Open graphql-ws sockets an API key (or console session) may hold in one gateway process; one more is closed with
   * 4429. Default 300.
   */
  wsMaxSocketsPerKey: number;
  /**
   * Open graphql-ws sockets one client address (an IPv6 /64) may hold in one gateway process; one more is closed with
   * 4429. Default 1000.
   */
  wsMaxSocketsPerAddress: number;
  /**
   * The proxies in front of the gateway whose X-Forwarded-For is believed when telling client addresses
   * apart (the limit on failed authentications): undefined (default) takes the connection's peer; a
   * number trusts that many hops; a list trusts those addresses or CIDR ranges (also `loopback`,
   * `linklocal`, `uniquelocal`).
   */
  trustProxy: number | string[] | undefined;
  /** RUNNING runs per account; more wait as READY. Default 10. */
  maxRunningRuns: number;
  /** Longest a run may take, seconds, unless its tool sets a shorter limit; then it ends TIMED-OUT. Default 3600. */
  runTimeoutSecs: number;
  /**
   * Seconds without a heartbeat after which a worker counts as dead and its runs are resumed by another. Default 30.
   */
  workerLivenessSecs: number;
  /** Database-API records per account per UTC day. Default 100,000. */
  dailyDatabaseRecords: number;
  /** Enrichment matches per account per UTC day. Default 100,000. */
  dailyEnrichmentMatches: number;
  /** Statement timeout of a lead database search, ms; past it the search answers 503 query_timeout. Default 10,000. */
  leadQueryTimeoutMs: number;
  /** Database searches count their matches exactly up to this many and estimate past it (`total_is_estimate`). */
  searchExactTotalLimit: number;
  /** The lead scraper's mode shown by /api/v1/apollo-status. Default url-based. */
  leadScraperMode: 'url-based' | 'legacy';
  /**
   * Money and limit checks (holds, run queue, rate limit). Always true in service; false only
   * lets the benchmark measure what the checks cost.
   */
  enforceLimits: boolean;
  /**
   * Outbound network of the email and website tools (DNS, SMTP, web); every connection goes through the outbound
   * guard.
   */
  network: NetworkConfig;
  /**
   * Browser origins (`scheme://host[:port]`) allowed to call the HTTP API cross-origin and to open
   * graphql-ws sockets; never with credentials. Default none: same origin only.
   */
  corsOrigins: string[];
  /**
   * A JSON file mapping SHA-256 hashes to GraphQL documents: the persisted operations of first-party frontends.
   * Default none.
   */
  graphqlPersistedOperations: string | undefined;
  /**
   * Run only the operations of `graphqlPersistedOperations`: documents sent by clients are refused, APQ registration
   * is off. Default false.
   */
  graphqlPersistedOnly: boolean;
  /**
   * The largest GraphQL result, in bytes of JSON: a query's or mutation's result, or a subscription
   * event, over HTTP and graphql-ws; a larger one is replaced by a `RESPONSE_TOO_LARGE` error. Default
   * 8 MiB (8,388,608), about five times 1,000 rows of the widest tool; 0 turns the limit off.
   */
  graphqlMaxResponseBytes: number;
  /**
   * Who may open an account in the console: `open` (anyone, by signing up) or `invite` (invited people only). Default
   * open.
   */
  signup: 'open' | 'invite';
  /**
   * The trial a sign-up starts on: plan (default growth), subscription status (default TRIAL) and plan
   * credits in USD (default 5), granted when the user verifies their email, once per mailbox; 0 grants
   * none (docs/console.md#sign-up-and-the-trial).
   */
  signupTrial: { plan: Plan; status: SubscriptionStatus; creditsUsd: number };
  /**
   * Sign-ups per hour per client address (an IPv6 /64, see TRUST_PROXY); past it 429 until the hour ends. Default 5;
   * 0 turns the limit off.
   */
  signupsPerHour: number;
  /**
   * Failed console sign-ins per minute per email address; past it the address is refused 429 until its window ends.
   * Default 10.
   */
  loginFailuresPerMinute: number;
  /** Outgoing mail (invitations, password resets). */
  mail: MailConfig;
  /** The Apify API the tools of `toolSources` run on (docs/upstream.md). */
  apify: ApifyConfig;
  /**
   * TOOL_SOURCES: the tools that run on an upstream actor instead of the catalog, by tool name, e.g.
   * `maps=apify:compass~crawler-google-places` (`maps=apify` takes the tool's default actor). Default
   * none: every tool reads the catalog.
   */
  toolSources: Record<string, ToolSource>;
  /**
   * argon2id cost of new password hashes. Default OWASP's 19 MiB and 2 passes; not read from the environment (tests
   * lower it).
   */
  passwordCost: { memoryKib: number; passes: number };
  /** How credit purchases and subscriptions are paid (docs/payments.md). */
  payments: PaymentsConfig;
  /** Provider connections and destinations (docs/destinations.md). */
  destinations: DestinationsConfig;
  /** The public opt-out page's limits and channels (docs/privacy.md#the-opt-out-page). */
  optOut: OptOutConfig;
  /** California's DROP deletion cycles (docs/drop.md). */
  drop: DropConfig;
}

export interface MailConfig {
  /** SMTP server, `smtp://user:pass@host:587` or `smtps://…`; unset: mails are written to the log. Default none. */
  smtpUrl: string | undefined;
  /** Sender of the mails. Default `leadgate <no-reply@localhost>`. */
  from: string;
}

/** CORS_ORIGINS: comma-separated origins, each exactly `scheme://host[:port]` as browsers send it in `Origin`. */
function origins(value: string | undefined): string[] {
  return list(value).map((entry) => {
    if (!isOrigin(entry)) {
      throw new Error(
        `CORS_ORIGINS takes origins such as https://app.example.com (scheme, host and port only, no path or "*"), ` +
          `got "${entry}"`,
      );
    }
    return entry;
  });
}

/**
 * TRUST_PROXY: a number of hops, or comma-separated addresses and CIDR ranges of the proxies (see Config.trustProxy).
 */
function trustProxy(value: string | undefined): Config['trustProxy'] {
  if (value === undefined || value.trim() === '' || value.trim().toLowerCase() === 'false') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) === 0 ? undefined : Number(value.trim());
  if (value.trim().toLowerCase() === 'true') {
    throw new Error(
      'TRUST_PROXY takes the number of proxies in front of the gateway or their addresses (e.g. 10.0.0.0/8), not ' +
        'true: trusting every X-Forwarded-For lets a client pick its own address',
    );
  }
  const proxies = list(value);
  try {
    proxyaddr.compile(proxies);
  } catch (err) {
    throw new Error(
      `TRUST_PROXY: ${(err as Error).message} (give a number of hops, or addresses and CIDR ranges such as ` +
        `10.0.0.0/8, loopback)`,
    );
  }
  return proxies;
}

function leadScraperMode(value: string | undefined): Config['leadScraperMode'] {
  if (value === undefined || value === '' || value === 'url-based') return 'url-based';
  if (value === 'legacy') return 'legacy';
  throw new Error(`LEAD_SCRAPER_MODE must be url-based or legacy, got "${value}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env.PORT, 4000);
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    databaseReadUrl: env.DATABASE_READ_URL || undefined,
    databaseReadMaxLagMs: int(env.DATABASE_READ_MAX_LAG_MS, 5_000),
    port,
    host: env.HOST ?? '0.0.0.0',
    publicUrl: (env.PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/$/, ''),
    dataDir: path.resolve(env.LEADGATE_DATA_DIR ?? '.data'),
    inlineWorker: bool(env.LEADGATE_INLINE_WORKER, true),
    workerConcurrency: int(env.WORKER_CONCURRENCY, 4),
    logLevel: env.LOG_LEVEL ?? 'info',
    metricsToken: env.METRICS_TOKEN || undefined,
    ...operatorToken(env),
    metricsPort: env.METRICS_PORT ? int(env.METRICS_PORT, 0) : undefined,
    authCacheSecs: int(env.AUTH_CACHE_SECS, 5),
    resultRetentionHours: int(env.RESULT_RETENTION_HOURS, 48),
    rateLimitPerMinute: int(env.RATE_LIMIT_PER_MINUTE, 100),
    authFailuresPerMinute: int(env.AUTH_FAILURES_PER_MINUTE, 60),
    wsMaxSocketsPerKey: int(env.WS_MAX_SOCKETS_PER_KEY, 300),
    wsMaxSocketsPerAddress: int(env.WS_MAX_SOCKETS_PER_ADDRESS, 1000),
    trustProxy: trustProxy(env.TRUST_PROXY),
    maxRunningRuns: int(env.MAX_RUNNING_RUNS, 10),
    runTimeoutSecs: int(env.RUN_TIMEOUT_SECS, 3600),
    workerLivenessSecs: int(env.WORKER_LIVENESS_SECS, 30),
    dailyDatabaseRecords: int(env.DAILY_DATABASE_RECORDS, 100_000),
    dailyEnrichmentMatches: int(env.DAILY_ENRICHMENT_MATCHES, 100_000),
    leadQueryTimeoutMs: int(env.LEAD_QUERY_TIMEOUT_MS, 10_000),
    searchExactTotalLimit: int(env.SEARCH_EXACT_TOTAL_LIMIT, EXACT_TOTAL_LIMIT),
    leadScraperMode: leadScraperMode(env.LEAD_SCRAPER_MODE),
    enforceLimits: true,
    network: networkConfig(env, (env.PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/$/, '')),
    corsOrigins: origins(env.CORS_ORIGINS),
    ...persistedOperations(env),
    graphqlMaxResponseBytes: int(env.GRAPHQL_MAX_RESPONSE_BYTES, 8 * 1024 * 1024),
    ...signup(env),
    loginFailuresPerMinute: int(env.LOGIN_FAILURES_PER_MINUTE, 10),
    mail: { smtpUrl: env.SMTP_URL || undefined, from: env.MAIL_FROM || 'leadgate <no-reply@localhost>' },
    passwordCost: { memoryKib: 19 * 1024, passes: 2 },
    payments: payments(env),
    destinations: destinations(env),
    optOut: optOut(env),
    drop: drop(env, path.resolve(env.LEADGATE_DATA_DIR ?? '.data')),
    ...upstream(env),
  };
}

/** SIGNUP, SIGNUP_PLAN, SIGNUP_STATUS, SIGNUP_CREDITS (USD, decimals allowed) and SIGNUPS_PER_HOUR. */
function signup(env: NodeJS.ProcessEnv): Pick<Config, 'signup' | 'signupTrial' | 'signupsPerHour'> {
  const credits = env.SIGNUP_CREDITS === undefined || env.SIGNUP_CREDITS === '' ? 5 : Number(env.SIGNUP_CREDITS);
  if (!Number.isFinite(credits) || credits < 0 || credits > 1_000_000)
    throw new Error(`SIGNUP_CREDITS must be an amount of USD from 0 to 1000000, got "${env.SIGNUP_CREDITS}"`);
  return {
    signup: oneOf('SIGNUP', env.SIGNUP, ['open', 'invite'] as const, 'open'),
    signupTrial: {
      plan: oneOf('SIGNUP_PLAN', env.SIGNUP_PLAN, PLANS, 'growth'),
      status: oneOf('SIGNUP_STATUS', env.SIGNUP_STATUS, SUBSCRIPTION_STATUSES, 'TRIAL'),
      creditsUsd: credits,
    },
    signupsPerHour: int(env.SIGNUPS_PER_HOUR, 5),
  };
}

function persistedOperations(
  env: NodeJS.ProcessEnv,
): Pick<Config, 'graphqlPersistedOperations' | 'graphqlPersistedOnly'> {
  const file = env.GRAPHQL_PERSISTED_OPERATIONS || undefined;
  const only = bool(env.GRAPHQL_PERSISTED_ONLY, false);
  if (only && !file)
    throw new Error(
      'GRAPHQL_PERSISTED_ONLY=true needs GRAPHQL_PERSISTED_OPERATIONS, the JSON file of the operations to allow',
    );
  return { graphqlPersistedOperations: file ? path.resolve(file) : undefined, graphqlPersistedOnly: only };
}

/**
 * A gateway on loopback at `port` (0: a free one, picked when it starts) over `databaseUrl`, for tests and
 * benchmarks.
 */
export function loopbackConfig(databaseUrl: string, port = 0, overrides: Partial<Config> = {}): Config {
  // Read as a deployment on `databaseUrl` would be: no payments unless the overrides choose them.
  return {
    ...loadConfig({ DATABASE_URL: databaseUrl }),
    databaseUrl,
    host: '127.0.0.1',
    port,
    publicUrl: `http://127.0.0.1:${port}`,
    ...overrides,
  };
}
