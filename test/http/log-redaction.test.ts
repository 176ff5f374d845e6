import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.ts';
import { loopbackConfig } from '../../src/config.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import { createLogger } from '../../src/logger.ts';
import { localNetwork, startDns, startSmtp, type LocalDns, type LocalSmtp } from '../fixtures/net.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { waitFor } from '../helpers/wait.ts';
import { collect, closeCode, disposeClients, wsClient } from '../helpers/ws.ts';

/**
 * Hostile requests against the whole gateway (inline worker, real database), with the logger at
 * `trace` writing to a captured stream: bad keys in headers, bodies, query strings and paths on
 * every face; queries that fail with secrets among their bind parameters (a REST and a GraphQL write,
 * a run's rows, and a worker job that fails on a query carrying the first failure's text); webhook
 * secrets; an email-validator run. Then every secret used is searched for in the captured lines: none
 * may appear. The lines must also show the failures they log (so the search is not over empty logs),
 * each with its request id or run id.
 */

const random = (n = 12) => randomBytes(n).toString('hex');
/** A secret with no recognisable shape: only the removal of bind parameters can keep it out. */
const MARKER = `PARAM-MARKER-${random()}`;
const BAD_KEY = `lg_live_${random(16)}`;
const EMAILS = [`victim.${random(4)}@explode.test`, `other.${random(4)}+tag@explode.test`];
const PASSWORD = `hunter2-${random()}`;

const lines: string[] = [];
let database: TestDatabase;
let dns: LocalDns;
let smtp: LocalSmtp;
let app: App;
let url: string;
let key: string;
/** Secrets the service handed out during the test (webhook signing secrets), searched for too. */
const issued: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  dns = await startDns({});
  smtp = await startSmtp({});
  const logger = createLogger('trace', { write: (line: string) => void lines.push(line) });
  const config = loopbackConfig(database.url, 0, {
    authCacheSecs: 0,
    workerConcurrency: 2,
    rateLimitPerMinute: 100_000,
    network: localNetwork({ dns: dns.port, smtp: smtp.port }, { smtpTimeoutMs: 500 }),
  });
  app = await buildApp({ config, databaseUrl: database.url, logger, worker: true, workerPollInterval: 200 });
  url = await app.start(0, '127.0.0.1');
  ({ apiKey: key } = await createAccount(app.core.db, {
    name: 'test',
    plan: 'scale',
    subscriptionStatus: 'ACTIVE',
    creditsMicros: 100_000_000n,
  }));
  // Faults that make queries fail with the secrets among their parameters: rows and descriptions with "explode".
  await app.core.sql.unsafe(`
    alter table webhook add constraint no_explosions check (description is null or description not like '%explode%') not valid;
    alter table run_item add constraint no_explosions check (data::text not like '%explode.test%') not valid;
    alter table run add constraint no_explosions check (error_detail is null or error_detail not like '%explode.test%') not valid;`);
});
afterAll(async () => {
  await disposeClients();
  await app?.stop();
  await database?.drop();
  await dns?.close();
  await smtp?.close();
});

const send = (method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}) =>
  fetch(`${url}${path}`, {
    method,
    headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('hostile requests leave no secret in the logs', () => {
  it('bad keys in headers, bodies, query strings and paths, on every face', async () => {
    const hostileBody = { apiKey: BAD_KEY, api_key: BAD_KEY, password: PASSWORD, note: `key ${BAD_KEY} ${EMAILS[0]}` };
    for (const res of [
      await send('GET', '/api/v1/wallet', { headers: bearer(BAD_KEY) }),
      await send('POST', '/api/v1/webhooks', { headers: bearer(BAD_KEY), body: hostileBody }),
      await send('POST', '/api/v1/webhooks', { headers: { authorization: BAD_KEY }, body: hostileBody }),
      await send('GET', `/api/v1/scrape/status/${BAD_KEY}?api_key=${BAD_KEY}&password=${PASSWORD}`, {
        headers: bearer(BAD_KEY),
      }),
      await send('POST', '/graphql', {
        headers: bearer(BAD_KEY),
        body: { query: '{ viewer { id } }', variables: { key: BAD_KEY } },
      }),
      await send('POST', '/mcp', {
        headers: bearer(BAD_KEY),
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_wallet', arguments: hostileBody } },
      }),
    ]) {
      expect(res.status).toBe(401);
      await res.arrayBuffer();
    }
    // A valid key with hostile bodies: refused as bad input, with the secrets in them.
    const bad = await send('POST', '/api/v1/webhooks', {
      headers: bearer(key),
      body: { ...hostileBody, url: 'not a url' },
    });
    expect(bad.status).toBe(400);
    await bad.arrayBuffer();
    const client = wsClient(url, BAD_KEY);
    const closed = closeCode(client);
    collect(client, '{ viewer { id } }', { key: BAD_KEY }, 'viewer').done.catch(() => {});
    expect(await closed).toBe(4401);
  });

  it('a REST write failing in the database with the secrets among its parameters: a 500, logged with its request id', async () => {
    const res = await send('POST', '/api/v1/webhooks', {
      headers: { ...bearer(key), 'x-request-id': 'hostile-rest-1' },
      body: {
        url: `https://hooks.example.com/${MARKER}?token=${PASSWORD}`,
        description: `explode ${MARKER} ${BAD_KEY} ${EMAILS[0]} ${PASSWORD}`,
      },
    });
    expect(res.status).toBe(500);
    expect((await res.json()).error.code).toBe('internal_error');
    const entry = logged().find((l) => l.msg === 'unhandled error' && l.reqId === 'hostile-rest-1');
    expect(entry, 'the failure is logged with the request id').toBeDefined();
    const err = entry!.err as Record<string, unknown>;
    // What failed stays readable: the SQL (placeholders only), the constraint, the Postgres code.
    expect(err.query).toMatch(/^insert into "webhook"/);
    expect(err.cause).toMatchObject({
      code: '23514',
      constraint_name: 'no_explosions',
      detail: 'Failing row contains ([redacted]).',
    });
    expect(String(err.message)).toContain('params: [redacted]');
  });

  it('a GraphQL write failing the same way: masked, logged by the GraphQL engine', async () => {
    const before = lines.length;
    const res = await send('POST', '/graphql', {
      headers: bearer(key),
      body: {
        query: 'mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { secret userErrors { code } } }',
        variables: {
          input: { url: `https://hooks.example.com/${MARKER}`, description: `explode ${MARKER} ${EMAILS[1]}` },
        },
      },
    });
    const body = await res.json();
    expect(body.errors[0].extensions.code).toBe('INTERNAL_ERROR');
    expect(
      lines.slice(before).some((l) => l.includes('params: [redacted]')),
      'the engine logged the failure',
    ).toBe(true);
  });

  it('webhook signing secrets, as handed out and as used to sign', async () => {
    const created = await send('POST', '/api/v1/webhooks', {
      headers: bearer(key),
      body: { url: 'https://hooks.example.com/in', description: 'fine' },
    });
    expect(created.status).toBe(201);
    issued.push((await created.json()).webhook.secret);
    const graphql = await send('POST', '/graphql', {
      headers: bearer(key),
      body: { query: 'mutation { createWebhook(input: { url: "https://hooks.example.com/gql" }) { secret } }' },
    });
    issued.push((await graphql.json()).data.createWebhook.secret);
    expect(issued.every((s) => /^whsec_/.test(s))).toBe(true);
  });

  it('an email-validator run whose rows cannot be stored, and whose failure cannot be recorded: the worker logs it with the run id', async () => {
    const start = await send('POST', '/api/v1/scrape/email-validator', {
      headers: bearer(key),
      body: { emails: EMAILS, webhookUrl: 'https://hooks.example.com/run' },
    });
    const started = await start.json();
    expect(start.status, JSON.stringify(started)).toBe(200);
    if (typeof started.webhookSecret === 'string') issued.push(started.webhookSecret);
    const runId = started.runId as string;
    // Its rows fail to store (the engine logs "run failed"), then recording the failure fails too, so the job fails and graphile-worker logs it.
    const failedTask = await waitFor(
      () => logged().find((l) => typeof l.msg === 'string' && l.msg.startsWith('Failed task') && l.runId === runId),
      Boolean,
      { what: 'the worker to log the failed job' },
    );
    expect(failedTask!.msg).toContain('params: [redacted]');
    expect(
      logged().some((l) => l.msg === 'run failed' && l.runId === runId),
      "the engine logged the run's failure with its id",
    ).toBe(true);
  });

  it('no secret appears anywhere in what was logged', () => {
    const text = lines.join('\n');
    expect(lines.length).toBeGreaterThan(5);
    const secrets = [
      key,
      BAD_KEY,
      MARKER,
      PASSWORD,
      ...EMAILS,
      ...issued,
      ...issued.map((s) => s.slice('whsec_'.length)),
    ];
    for (const secret of secrets) expect(text.includes(secret), `a log line holds ${secret}`).toBe(false);
    // Nor a key, a signing secret or a mailbox of any shape.
    expect(text).not.toMatch(/lg_live_(?!\[redacted\])/);
    expect(text).not.toMatch(/whsec_(?!\[redacted\])/);
    expect(text).not.toMatch(/[A-Za-z0-9._%+-]+@explode\.test/);
    // The redactions did happen (the search above is not over lines that never held the secrets).
    expect(text.split('params: [redacted]').length - 1).toBeGreaterThanOrEqual(4);
    expect(text).toContain('Failing row contains ([redacted])');
  });
});

describe('the logger, wherever a secret is in a log call', () => {
  const capture = () => {
    const out: string[] = [];
    return {
      logger: createLogger('trace', { write: (line: string) => void out.push(line) }),
      out,
      text: () => out.join('\n'),
    };
  };

  it('scrubs keys, signing secrets, Bearer tokens and mailboxes from messages, nested fields, bindings and errors', () => {
    const { logger, out, text } = capture();
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const token = `tok${random()}`;
    logger
      .child({ caller: `Bearer ${token}` })
      .info(
        { deep: { nested: { list: [`key ${BAD_KEY}`, `mail ${EMAILS[0]}`] } }, signing: `secret=${secret}` },
        `user ${EMAILS[1]} sent ${BAD_KEY}`,
      );
    logger.warn(new Error(`failed for ${EMAILS[0]} with ${BAD_KEY} and ${secret}`));
    logger.error({ err: new Error(`nested\n${BAD_KEY}\t${EMAILS[1]}`) }, 'with a newline before the key');
    expect(out).toHaveLength(3);
    for (const line of out) JSON.parse(line);
    for (const s of [BAD_KEY, secret, token, ...EMAILS]) expect(text()).not.toContain(s);
    expect(text()).toContain('lg_live_[redacted]');
    expect(text()).toContain('whsec_[redacted]');
    expect(text()).toContain('Bearer [redacted]');
    expect(text()).toContain('***@explode.test');
  });

  it('blanks the fields that hold secrets by name, at any of the usual depths', () => {
    const { logger, out } = capture();
    logger.info(
      {
        password: PASSWORD,
        body: { password: PASSWORD, apiKey: MARKER, email: 'x', webhookSecret: MARKER, token: MARKER },
        req: { headers: { authorization: MARKER, cookie: MARKER } },
        connectionParams: { authorization: MARKER },
        job: {
          id: '7',
          task_identifier: 'run_tool',
          attempts: 2,
          max_attempts: 5,
          payload: { runId: 'run1' },
          last_error: MARKER,
        },
      },
      'fields',
    );
    const line = JSON.parse(out[0]!);
    expect(out[0]).not.toContain(PASSWORD);
    expect(out[0]).not.toContain(MARKER);
    expect(line.body).toMatchObject({
      password: '[redacted]',
      apiKey: '[redacted]',
      email: '[redacted]',
      webhookSecret: '[redacted]',
      token: '[redacted]',
    });
    expect(line.req.headers).toEqual({ authorization: '[redacted]', cookie: '[redacted]' });
    // A worker job: which job, attempt and run, never its payload or last error; its run at the top.
    expect(line.job).toEqual({ id: '7', task: 'run_tool', attempts: 2, maxAttempts: 5, runId: 'run1' });
    expect(line.runId).toBe('run1');
  });

  it("keeps the values out of a failed query's error: its parameters, the value a data exception quotes, a DETAIL", async () => {
    const { logger, text } = capture();
    const { sql } = await import('drizzle-orm');
    const failures: unknown[] = [];
    // Real failures of real queries: a value that is no integer, a duplicate key.
    await app.core.db.execute(sql`select ${MARKER}::int`).catch((err) => failures.push(err));
    await app.core.sql
      .begin(async (tx) => {
        await tx`create temporary table dup (v text primary key) on commit drop`;
        await tx`insert into dup values (${PASSWORD})`;
        await tx`insert into dup values (${PASSWORD})`;
      })
      .catch((err) => failures.push(err));
    expect(failures).toHaveLength(2);
    for (const err of failures) {
      logger.error({ err }, `query failed: ${String(err)}`);
      logger.error(err);
      logger.error({ error: err }, `with error '${(err as Error).message}': ${(err as Error).stack}`);
    }
    expect(text()).not.toContain(MARKER);
    expect(text()).not.toContain(PASSWORD);
    expect(text()).toContain('invalid input syntax for type integer: \\"[redacted]\\"');
    expect(text()).toContain('Key (v)=([redacted]) already exists.');
    expect(text()).toContain('params: [redacted]');
  });
});
