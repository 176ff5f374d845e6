import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { webhookDeliveryTable } from '../../db/tables/webhooks.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { deliverWebhook } from '../../src/webhooks/deliver.ts';
import { startWorker } from '../../workers/index.ts';
import { startDns, type LocalDns } from '../fixtures/net.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { graphql } from '../helpers/gql/index.ts';

/**
 * Webhook URLs the outbound guard refuses are refused when they are given (a webhook registered, a
 * run started with webhookUrl), and a refusal at delivery (the name now resolves to a private
 * address) fails the delivery for good at once. The gateway runs with the production guard (no
 * allow-list: nothing local is reachable) and a local DNS server whose answers the test changes; its
 * worker is started only once every webhook it would deliver to points somewhere refused (or nowhere),
 * so nothing outside the machine is ever contacted.
 */

/** A public address, never connected to: the guard only checks it when a webhook is registered. */
const PUBLIC = '93.184.215.14';

let dns: LocalDns;
let t: TestApp;
let key: string;

beforeAll(async () => {
  dns = await startDns({
    // ttl 0: the gateway sees a change of this name at its next lookup.
    'hooks.rebind.test': { A: [PUBLIC], ttl: 0 },
    'private.test': { A: ['10.1.2.3'] },
    'mixed.test': { A: [PUBLIC, '192.168.0.9'] },
    'metadata.test': { A: ['169.254.169.254'] },
  });
  const network = {
    ...loadConfig({}).network,
    dnsServers: [`127.0.0.1:${dns.port}`],
    dnsTimeoutMs: 1_000,
    webTimeoutMs: 2_000,
    outboundAllow: [],
  };
  t = await startTestApp({ worker: false, config: { network } });
  ({ apiKey: key } = await t.account());
});
afterAll(async () => {
  await t?.stop();
  await dns?.close();
});

const CreateWebhook = graphql(`
  mutation WebhookUrlsCreateWebhook($url: String!) { createWebhook(input: { url: $url }) { webhook { id } userErrors { code field message } } }
`);
const StartWithWebhook = graphql(`
  mutation WebhookUrlsStartWithWebhook($url: String!) {
    startMapsScrape(input: { searchStringsArray: ["dentist"], locationQuery: "Denver, CO", maxCrawledPlacesPerSearch: 5 }, webhookUrl: $url) {
      run { id }
      userErrors { code field message }
    }
  }
`);

/** URLs the guard refuses, each with the reason the refusal must give. */
const REFUSED: [string, RegExp][] = [
  ['http://127.0.0.1/hook', /loopback address \(127\.0\.0\.0\/8\) 127\.0\.0\.1/],
  ['http://2130706433/hook', /loopback address .*127\.0\.0\.1/],
  ['http://[::1]/hook', /loopback address \(::1\)/],
  ['http://10.0.0.8/hook', /private address \(RFC 1918\) 10\.0\.0\.8/],
  ['http://[fd00::1]/hook', /unique-local address/],
  ['http://169.254.169.254/latest/meta-data', /cloud metadata address 169\.254\.169\.254/],
  ['http://localhost/hook', /localhost is a localhost name/],
  ['https://hooks.rebind.test:8443/hook', /port 8443 is not allowed for https \(only 443\)/],
  ['http://private.test/hook', /private\.test resolves to private address \(RFC 1918\) 10\.1\.2\.3/],
  ['http://mixed.test/hook', /mixed\.test resolves to private address \(RFC 1918\) 192\.168\.0\.9/],
  ['http://metadata.test/hook', /metadata\.test resolves to cloud metadata address/],
];

describe('a webhook URL the outbound guard refuses is refused when it is given', () => {
  it('answers 400 validation_failed at url saying why, and registers nothing', async () => {
    const { apiKey } = await t.account();
    for (const [url, reason] of REFUSED) {
      const res = await t.request('POST', '/api/v1/webhooks', { key: apiKey, body: { url } });
      expect(res.status, url).toBe(400);
      expect(res.body.error.code, url).toBe('validation_failed');
      expect(res.body.error.details, url).toEqual([
        { path: 'url', message: expect.stringMatching(/^refused by the outbound guard: /) },
      ]);
      expect(res.body.error.details[0].message, url).toMatch(reason);
    }
    expect((await t.request('GET', '/api/v1/webhooks', { key: apiKey })).body.webhooks).toEqual([]);
  });

  it('registers a public URL, and a name that does not resolve yet (its deliveries are retried)', async () => {
    const { apiKey } = await t.account();
    for (const url of [`https://${PUBLIC}/hook`, 'https://hooks.rebind.test/hook', 'https://not-yet.test/hook']) {
      const res = await t.request('POST', '/api/v1/webhooks', { key: apiKey, body: { url } });
      expect(res.status, url).toBe(201);
    }
    expect((await t.request('GET', '/api/v1/webhooks', { key: apiKey })).body.webhooks).toHaveLength(3);
  });

  it('refuses it over GraphQL as a VALIDATION_FAILED user error on input.url', async () => {
    const res = await t.graphql(key, CreateWebhook, { url: 'http://private.test/hook' });
    expect(res.body.data!.createWebhook).toEqual({
      webhook: null,
      userErrors: [
        {
          code: 'VALIDATION_FAILED',
          field: ['input', 'url'],
          message: expect.stringMatching(/private\.test resolves to private address/),
        },
      ],
    });
  });

  it('refuses a run started with such a webhookUrl (REST, GraphQL, MCP), writing nothing', async () => {
    const { apiKey, accountId } = await t.account();
    const runs = async () =>
      (await t.app.core.sql`select count(*)::int as n from run where account_id = ${accountId}`)[0]!.n as number;

    const rest = await t.request('POST', '/api/v1/scrape/maps', {
      key: apiKey,
      body: { ...DENVER_DENTISTS, webhookUrl: 'http://169.254.169.254/latest' },
    });
    expect(rest.status).toBe(400);
    expect(rest.body.error).toMatchObject({
      code: 'validation_failed',
      details: [
        {
          path: 'webhookUrl',
          message: expect.stringMatching(/^refused by the outbound guard: cloud metadata address/),
        },
      ],
    });

    // With an Idempotency-Key the refusal is not stored: the corrected request goes through with the same key.
    const keyed = { key: apiKey, headers: { 'idempotency-key': 'abuse-webhook-1' } };
    expect(
      (
        await t.request('POST', '/api/v1/scrape/maps', {
          ...keyed,
          body: { ...DENVER_DENTISTS, webhookUrl: 'http://private.test/x' },
        })
      ).status,
    ).toBe(400);

    const gql = await t.graphql(apiKey, StartWithWebhook, { url: 'http://[::1]/hook' });
    expect(gql.body.data!.startMapsScrape).toEqual({
      run: null,
      userErrors: [
        {
          code: 'VALIDATION_FAILED',
          field: ['webhookUrl'],
          message: expect.stringMatching(/loopback address \(::1\)/),
        },
      ],
    });

    const mcp = await t.request('POST', '/mcp?tools=all', {
      key: apiKey,
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'scrape_maps', arguments: { ...DENVER_DENTISTS, webhookUrl: 'http://10.9.9.9/hook' } },
      },
    });
    expect(mcp.body.result.isError).toBe(true);
    expect(JSON.parse(mcp.body.result.content[0].text).error).toMatchObject({
      code: 'validation_failed',
      details: [{ path: 'webhookUrl', message: expect.stringMatching(/private address/) }],
    });

    expect(await runs()).toBe(0);
    const fixed = await t.request('POST', '/api/v1/scrape/maps', {
      ...keyed,
      body: { ...DENVER_DENTISTS, webhookUrl: 'https://not-yet.test/hook' },
    });
    expect(fixed.status).toBe(200);
    expect(await runs()).toBe(1);
  });
});

/** Both deliveries of a run's end (its account webhook, its webhookUrl) failed for good at their first attempt, and their jobs finished. */
async function expectRefusedForGood(runId: string, webhookId: string, apiKey: string) {
  const deliveries = () =>
    t.app.core.db.select().from(webhookDeliveryTable).where(eq(webhookDeliveryTable.runId, runId));
  const settled = await waitFor(deliveries, (rows) => rows.length === 2 && rows.every((d) => d.status !== 'pending'), {
    what: 'both deliveries to settle',
  });
  for (const d of settled) {
    expect(d).toMatchObject({ status: 'failed', attempts: 1, responseStatus: null, deliveredAt: null });
    expect(d.lastError).toMatch(/^refused by the outbound guard: hooks\.rebind\.test resolves to loopback address/);
  }
  // graphile-worker finished both jobs (a thrown task would stay queued for its next attempt, with its error).
  const ids = settled.map((d) => d.id);
  const jobs = await waitFor(
    async () =>
      (await t.app.core
        .sql`select key, attempts, last_error from graphile_worker.jobs where key = any(${ids})`) as unknown as unknown[],
    (rows) => rows.length === 0,
    { what: 'the delivery jobs to finish' },
  );
  expect(jobs).toEqual([]);
  // The account's log shows it like any delivery.
  const log = await t.request('GET', `/api/v1/webhooks/${webhookId}/deliveries`, { key: apiKey });
  expect(log.body.deliveries).toEqual([
    expect.objectContaining({
      status: 'failed',
      attempts: 1,
      lastError: expect.stringMatching(/resolves to loopback address/),
    }),
  ]);
}

describe('a guard refusal at delivery is permanent', () => {
  it('fails the delivery at its first attempt with the reason, and the job ends instead of being retried', async () => {
    const { apiKey } = await t.account();
    const hook = await t.request('POST', '/api/v1/webhooks', {
      key: apiKey,
      body: { url: 'https://hooks.rebind.test/hooks/account' },
    });
    expect(hook.status).toBe(201);
    const start = await t.request('POST', '/api/v1/scrape/maps', {
      key: apiKey,
      body: { ...DENVER_DENTISTS, webhookUrl: 'https://hooks.rebind.test/hooks/run' },
    });
    expect(start.status).toBe(200);
    // The name now points at the gateway's own machine (DNS rebinding): every delivery to it is refused.
    dns.zone['hooks.rebind.test'] = { A: ['127.0.0.1'], ttl: 0 };
    const worker = await startWorker(t.app.core, { pollInterval: 100 });
    try {
      await t.waitForRun(apiKey, start.body.runId);
      await expectRefusedForGood(start.body.runId, hook.body.webhook.id, apiKey);
    } finally {
      await worker.stop();
    }
  });

  it('logs the refusal as one warning without an error stack, and throws nothing for the worker to retry', async () => {
    const { apiKey, accountId } = await t.account();
    dns.zone['hooks.rebind.test'] = { A: [PUBLIC], ttl: 0 };
    const hook = (
      await t.request('POST', '/api/v1/webhooks', {
        key: apiKey,
        body: { url: 'https://hooks.rebind.test/hooks/direct' },
      })
    ).body.webhook;
    dns.zone['hooks.rebind.test'] = { A: ['127.0.0.1'], ttl: 0 };
    const deliveryId = `msg_abuse_${Date.now()}`;
    await t.app.core.db.insert(webhookDeliveryTable).values({
      id: deliveryId,
      accountId,
      webhookId: hook.id,
      runId: null,
      event: 'run.succeeded',
      url: hook.url,
      payload: { type: 'run.succeeded' },
    });
    const lines: string[] = [];
    const logger = createLogger('debug', { write: (line: string) => lines.push(line) });

    await expect(
      deliverWebhook({ db: t.app.core.db, logger, post: t.app.core.network.post }, deliveryId, 1, 13),
    ).resolves.toBeUndefined();

    const [row] = await t.app.core.db
      .select()
      .from(webhookDeliveryTable)
      .where(eq(webhookDeliveryTable.id, deliveryId));
    expect(row).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: expect.stringMatching(
        /^refused by the outbound guard: hooks\.rebind\.test resolves to loopback address/,
      ),
    });
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'webhook delivery refused by the outbound guard; not retried',
        deliveryId,
      }),
    ]);
    expect(JSON.stringify(logged[0])).not.toMatch(/stack|"err"/);
  });
});

describe('a webhook URL that stops resolving', () => {
  it('logs each failed attempt as one warning line, nothing at error level and no stack, and tries again', async () => {
    const { apiKey } = await t.account();
    dns.zone['gone.rebind.test'] = { A: [PUBLIC], ttl: 0 };
    const hook = await t.request('POST', '/api/v1/webhooks', {
      key: apiKey,
      body: { url: 'https://gone.rebind.test/hooks/crm', events: ['run.succeeded'] },
    });
    expect(hook.status).toBe(201);
    delete dns.zone['gone.rebind.test']; // NXDOMAIN from now on, as for a CRM taken down
    const lines: string[] = [];
    const logger = createLogger('debug', { write: (line: string) => lines.push(line) });
    const worker = await startWorker({ ...t.app.core, logger }, { pollInterval: 100 });
    try {
      const start = await t.request('POST', '/api/v1/scrape/maps', { key: apiKey, body: DENVER_DENTISTS });
      await t.waitForRun(apiKey, start.body.runId);
      const delivery = () =>
        t.app.core.db
          .select()
          .from(webhookDeliveryTable)
          .where(eq(webhookDeliveryTable.webhookId, hook.body.webhook.id))
          .then((rows) => rows[0]);
      const unlocked = async (key: string) =>
        (await t.app.core.sql`select 1 from graphile_worker.jobs where key = ${key} and locked_at is null`).length;
      const first = await waitFor(delivery, (d) => d?.attempts === 1, { what: 'the first attempt' });
      await waitFor(
        () => unlocked(first!.id),
        (n) => n === 1,
        { what: 'the job put back for a retry' },
      );
      // Its retry is due at once instead of in a few seconds.
      await t.app.core.sql`update graphile_worker._private_jobs set run_at = now() where key = ${first!.id}`;
      const second = await waitFor(delivery, (d) => d?.attempts === 2, { what: 'the second attempt' });
      await waitFor(
        () => unlocked(second!.id),
        (n) => n === 1,
        { what: 'the job put back again' },
      );
      expect(second).toMatchObject({ status: 'pending', lastError: expect.stringMatching(/does not resolve/) });

      const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(logged.filter((l) => (l.level as number) >= 50)).toEqual([]);
      // This delivery's lines: the worker also retries what earlier tests' webhooks left queued, in lines of their own.
      const ours = logged.filter((l) => l.deliveryId === second!.id || String(l.msg).includes('gone.rebind.test'));
      expect(ours.filter((l) => (l.level as number) >= 40)).toEqual(
        [1, 2].map((attempt) =>
          expect.objectContaining({
            msg: `webhook delivery attempt ${attempt} of 13 failed; it is tried again later`,
            deliveryId: second!.id,
            host: 'gone.rebind.test',
            error: expect.stringMatching(/^gone\.rebind\.test does not resolve/),
          }),
        ),
      );
      // graphile-worker's report of each failure stays, at debug, in one line without the stack.
      const reports = ours.filter((l) => String(l.msg).startsWith('Failed task'));
      expect(reports.map((l) => l.level)).toEqual([20, 20]);
      expect(JSON.stringify(logged)).not.toMatch(/"stack"|\\n\s+at /);
      await t.app.core.sql`select graphile_worker.remove_job(${second!.id})`;
    } finally {
      await worker.stop();
    }
  });
});
