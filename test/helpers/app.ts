import { buildApp, type App } from '../../src/app.ts';
import { loopbackConfig, type Config } from '../../src/config.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { createAccount, type CreateAccountInput } from '../../src/accounts/accounts.ts';
import { isTerminal } from '../../src/runs/view.ts';
import type { RunStatus } from '../../db/tables/runs.ts';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { z } from 'zod';
import type { errorBody, runStart } from '../../src/rest/schemas.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { sourceOf, type Answer } from './documents.ts';
import { waitFor } from './wait.ts';

/**
 * The parsed JSON (or the text) of a route a suite reads without naming its type: the suites assert on
 * such answers field by field, wrong ones on purpose included. Pass `T` to `request` to type an answer.
 */
// biome-ignore lint/suspicious/noExplicitAny: the default body of the test client; every untyped read of every suite goes through it
export type LooseBody = any;

/** Every 4xx/5xx answer of the REST routes (src/rest/schemas.ts). */
export type ErrorBody = z.infer<typeof errorBody>;

/** The answer of a tool's start route: the common fields, and `Extra`, the tool's own. */
export type RunStartBody<Extra extends object = object> = z.infer<typeof runStart> & Extra;

export interface ApiResponse<T = LooseBody> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestApp {
  app: App;
  url: string;
  database: TestDatabase;
  /** Creates an account and returns its id and API key. */
  /**
   * Creates an account and returns its id and API key. Its users have acknowledged the permissible use of
   * the tools about individuals (src/accounts/permissible-use.ts) unless `acknowledged` is false.
   */
  account(
    input?: Partial<CreateAccountInput>,
    options?: { acknowledged?: boolean },
  ): Promise<{ accountId: string; apiKey: string }>;
  /** Calls the API over a real socket; JSON bodies are sent and parsed. */
  request<T = LooseBody>(
    method: string,
    path: string,
    options?: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<ApiResponse<T>>;
  /** Posts a document to /graphql; a typed document's answer has its `data` typed (see documents.ts). */
  graphql<TData, TVariables>(
    key: string,
    document: TypedDocumentNode<TData, TVariables>,
    variables?: NoInfer<TVariables>,
  ): Promise<ApiResponse<Answer<TData>>>;
  graphql(key: string, query: string, variables?: Record<string, unknown>): Promise<ApiResponse<LooseBody>>;
  /** Polls the status route until the run reaches a terminal status. */
  waitForRun(key: string, runId: string, timeoutMs?: number): Promise<{ status: RunStatus; [k: string]: unknown }>;
  /**
   * Starts a tool over REST, expects 200, waits for the run to end and downloads its rows as JSON:
   * the happy path of every tool test. `Extra` types the tool's own start fields; the rows are the
   * download's JSON.
   */
  runTool<Extra extends object = object>(
    key: string,
    path: string,
    body: unknown,
    timeoutMs?: number,
  ): Promise<{ start: RunStartBody<Extra>; status: { status: RunStatus; [k: string]: unknown }; rows: LooseBody[] }>;
  /** What an account's wallet holds, plan and purchased credits together, in micro-dollars. */
  walletMicros(accountId: string): Promise<bigint>;
  stop(): Promise<void>;
}

/** The whole gateway with an inline worker, on a real port, over a database of its own. */
export async function startTestApp(
  options: { worker?: boolean; config?: Partial<Config>; logger?: Logger } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  // Suites poll a lot; the rate-limit suite sets the real limit itself. Credit purchases are recorded
  // without payment (PAYMENTS=demo), as the suites written before payments expect; test/payments.*
  // choose Stripe or none.
  const config = loopbackConfig(database.url, 0, {
    authCacheSecs: 0,
    workerConcurrency: 2,
    rateLimitPerMinute: 100_000,
    payments: { mode: 'demo' },
    ...options.config,
  });
  const app = await buildApp({
    config,
    databaseUrl: database.url,
    logger: options.logger ?? createLogger('silent'),
    worker: options.worker ?? true,
    workerPollInterval: 500,
  });
  const url = await app.start(0, '127.0.0.1');

  const request: TestApp['request'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${url}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: res.status, headers: res.headers, body: parsed as never, text };
  };

  const testApp: TestApp = {
    app,
    url,
    database,
    async account(input = {}, options = {}) {
      const created = await createAccount(app.core.db, {
        name: 'test',
        plan: 'scale',
        subscriptionStatus: 'ACTIVE',
        creditsMicros: 100_000_000n,
        ...input,
      });
      if (options.acknowledged !== false)
        await app.core.sql`update account set permissible_use_acknowledged_at = now()
          where id = ${created.account.id}`;
      return { accountId: created.account.id, apiKey: created.apiKey };
    },
    request,
    graphql: (key: string, document: TypedDocumentNode | string, variables?: unknown) =>
      request('POST', '/graphql', { key, body: { query: sourceOf(document), variables } }),
    async waitForRun(key, runId, timeoutMs = 15_000) {
      const status = async () => {
        const res = await request('GET', `/api/v1/scrape/status/${runId}`, { key });
        if (res.status !== 200) throw new Error(`status route answered ${res.status}: ${res.text}`);
        return res.body;
      };
      return waitFor(status, (run) => isTerminal(run.status), {
        timeoutMs,
        intervalMs: 50,
        what: `run ${runId} to end`,
      });
    },
    async runTool(key, path, body, timeoutMs) {
      const start = await request('POST', path, { key, body });
      if (start.status !== 200) throw new Error(`POST ${path} answered ${start.status}: ${start.text}`);
      const status = await testApp.waitForRun(key, start.body.runId, timeoutMs);
      const results = await request('GET', `/api/downloads/${start.body.runId}?format=json`, { key });
      if (results.status !== 200) throw new Error(`download answered ${results.status}: ${results.text}`);
      return { start: start.body, status, rows: results.body };
    },
    async walletMicros(accountId) {
      const [w] = await app.core
        .sql`select (plan_micros + purchased_micros)::text as total from wallet where account_id = ${accountId}`;
      return BigInt(w!.total);
    },
    async stop() {
      await app.stop();
      await database.drop();
    },
  };
  return testApp;
}

/**
 * The setup most suites share: an app for the file and an account on it, with its key. Suites assign
 * the answer in `beforeAll` and stop `t` in `afterAll`.
 */
export async function appWithAccount(
  options: { app?: Parameters<typeof startTestApp>[0]; account?: Partial<CreateAccountInput> } = {},
): Promise<{ t: TestApp; key: string; accountId: string }> {
  const t = await startTestApp(options.app);
  try {
    const { apiKey, accountId } = await t.account(options.account);
    return { t, key: apiKey, accountId };
  } catch (err) {
    await t.stop();
    throw err;
  }
}

/** Maps input that finds places in the small seed catalog. */
export const DENVER_DENTISTS = {
  searchStringsArray: ['dentist'],
  locationQuery: 'Denver, CO',
  maxCrawledPlacesPerSearch: 100,
};
