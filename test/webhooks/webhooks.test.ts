import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { loopbackConfig } from '../../src/config.ts';
import type { OutboundGuard } from '../../src/net/guard.ts';
import { NetError } from '../../src/net/errors.ts';
import { checkWebhookUrl } from '../../src/webhooks/subscriptions.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { waitFor } from '../helpers/wait.ts';
import { graphql } from '../helpers/gql/index.ts';

let receiver: Receiver;
let t: TestApp;
let key: string;

/** The network settings of a test: the web is the local receiver, and nothing else is reachable. */
function networkTo(port: number, allow: string[]) {
  const base = loopbackConfig('postgres://unused', 0).network;
  return { ...base, webPorts: { http: port, https: port }, outboundAllow: allow };
}

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestApp({ config: { network: networkTo(receiver.port, [`127.0.0.1:${receiver.port}`]) } });
  ({ apiKey: key } = await t.account());
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

const CreateAbortedWebhook = graphql(`
  mutation WebhooksCreateAborted($url: String!) { createWebhook(input: { url: $url, events: [RUN_ABORTED] }) { secret webhook { id url events } } }
`);
const WebhookDeliveries = graphql(
  `query WebhooksDeliveries { webhooks { nodes { id deliveries { totalCount nodes { id } } } } }`,
);
const DeleteWebhook = graphql(
  `mutation WebhooksDelete($id: ID!) { deleteWebhook(id: $id) { deletedWebhookId userErrors { code } } }`,
);
// Valid GraphQL: the service refuses the URL as a user error.
const CreateFtpWebhook = graphql(`
  mutation WebhooksCreateFtp { createWebhook(input: { url: "ftp://example.com/x" }) { webhook { id } userErrors { code field } } }
`);

const deliveries = async (id: string, k = key) =>
  (await t.request('GET', `/api/v1/webhooks/${id}/deliveries`, { key: k })).body;

describe('account webhooks', () => {
  it('registers a webhook (secret shown once), lists it without the secret, and delivers a signed run.succeeded', async () => {
    // An account of its own: the listing below is the whole list.
    const { apiKey: key } = await t.account();
    const created = await t.request('POST', '/api/v1/webhooks', {
      key,
      body: { url: receiver.url('/hooks/all'), description: 'CRM sync' },
    });
    expect(created.status).toBe(201);
    const hook = created.body.webhook;
    expect(hook).toMatchObject({
      id: expect.stringMatching(/^wh_/),
      url: receiver.url('/hooks/all'),
      events: [
        'run.succeeded',
        'run.failed',
        'run.aborted',
        'run.timed_out',
        'schedule.paused',
        'pipeline.succeeded',
        'pipeline.failed',
        'pipeline.aborted',
        'connection.broken',
        'delivery.finished',
      ],
      description: 'CRM sync',
    });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    const listed = await t.request('GET', '/api/v1/webhooks', { key });
    expect(listed.body.webhooks).toEqual([
      { id: hook.id, url: hook.url, events: hook.events, description: 'CRM sync', createdAt: hook.createdAt },
    ]);

    const run = await t.runTool(key, '/api/v1/scrape/maps', DENVER_DENTISTS);
    await receiver.until((r) => r.some((x) => x.path === '/hooks/all' && x.body.includes(run.start.runId)));
    const got = receiver.received.find((x) => x.path === '/hooks/all' && x.body.includes(run.start.runId))!;

    // Verified with the Standard Webhooks reference library, and by hand.
    const payload = new Webhook(hook.secret).verify(got.body, got.headers as Record<string, string>) as {
      type: string;
      data: Record<string, unknown>;
    };
    const signed = `${got.headers['webhook-id']}.${got.headers['webhook-timestamp']}.${got.body}`;
    const expectedSignature = createHmac('sha256', Buffer.from(hook.secret.slice('whsec_'.length), 'base64'))
      .update(signed)
      .digest('base64');
    expect(got.headers['webhook-signature']).toBe(`v1,${expectedSignature}`);
    expect(() =>
      new Webhook(hook.secret).verify(got.body.replace('SUCCEEDED', 'FAILED'), got.headers as Record<string, string>),
    ).toThrow();

    expect(payload).toMatchObject({
      type: 'run.succeeded',
      data: {
        runId: run.start.runId,
        tool: 'maps',
        status: 'SUCCEEDED',
        itemCount: run.rows.length,
        downloadUrl: `${t.url}/api/downloads/${run.start.runId}`,
      },
    });
    const log = await deliveries(hook.id, key);
    expect(log.deliveries[0]).toMatchObject({
      id: got.headers['webhook-id'],
      event: 'run.succeeded',
      runId: run.start.runId,
      status: 'succeeded',
      attempts: 1,
      responseStatus: 200,
      lastError: null,
    });
    expect(log.nextAfter).toBeNull();
  });

  it('retries a delivery the receiver answered with 500, and logs both attempts', async () => {
    const created = await t.request('POST', '/api/v1/webhooks', {
      key,
      body: { url: receiver.url('/hooks/flaky'), events: ['run.succeeded'] },
    });
    const hook = created.body.webhook;
    receiver.answer('/hooks/flaky', 500);
    const run = await t.runTool(key, '/api/v1/scrape/maps', DENVER_DENTISTS);
    await receiver.until(
      (r) => r.filter((x) => x.path === '/hooks/flaky' && x.body.includes(run.start.runId)).length >= 2,
      30_000,
    );
    const attempts = receiver.received.filter((x) => x.path === '/hooks/flaky' && x.body.includes(run.start.runId));
    expect(attempts[0]!.headers['webhook-id']).toBe(attempts[1]!.headers['webhook-id']);
    const latest = await waitFor(
      async () => (await deliveries(hook.id)).deliveries[0],
      (d) => d.status !== 'pending',
      { what: 'the delivery to settle' },
    );
    expect(latest).toMatchObject({ status: 'succeeded', attempts: 2, responseStatus: 200, lastError: null });
    await t.request('DELETE', `/api/v1/webhooks/${hook.id}`, { key });
  });

  it('sends only the events a webhook subscribed to', async () => {
    const failedOnly = (
      await t.request('POST', '/api/v1/webhooks', {
        key,
        body: { url: receiver.url('/hooks/failed-only'), events: ['run.failed'] },
      })
    ).body.webhook;
    const witness = (
      await t.request('POST', '/api/v1/webhooks', {
        key,
        body: { url: receiver.url('/hooks/witness'), events: ['run.succeeded'] },
      })
    ).body.webhook;
    const run = await t.runTool(key, '/api/v1/scrape/maps', DENVER_DENTISTS);
    await receiver.until((r) => r.some((x) => x.path === '/hooks/witness' && x.body.includes(run.start.runId)));
    expect(receiver.received.some((x) => x.path === '/hooks/failed-only')).toBe(false);
    expect((await deliveries(failedOnly.id)).deliveries).toEqual([]);
    for (const id of [failedOnly.id, witness.id])
      expect((await t.request('DELETE', `/api/v1/webhooks/${id}`, { key })).status).toBe(204);
  });

  it('refuses bad input with 400 naming the field, and another account’s webhook with 404', async () => {
    const bad = await t.request('POST', '/api/v1/webhooks', {
      key,
      body: { url: 'ftp://example.com/x', events: ['run.exploded'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_failed');
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['events.0', 'url']);
    const extra = await t.request('POST', '/api/v1/webhooks', {
      key,
      body: { url: 'https://example.com/x', secret: 'mine' },
    });
    expect(extra.status).toBe(400);

    const hook = (await t.request('POST', '/api/v1/webhooks', { key, body: { url: receiver.url('/hooks/private') } }))
      .body.webhook;
    const other = await t.account();
    expect((await t.request('DELETE', `/api/v1/webhooks/${hook.id}`, { key: other.apiKey })).status).toBe(404);
    expect((await t.request('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { key: other.apiKey })).status).toBe(404);
    expect((await t.request('GET', '/api/v1/webhooks', { key: other.apiKey })).body.webhooks).toEqual([]);
    expect((await t.request('DELETE', `/api/v1/webhooks/${hook.id}`, { key })).status).toBe(204);
    expect((await t.request('DELETE', `/api/v1/webhooks/${hook.id}`, { key })).status).toBe(404);
  });

  it('refuses a delivery cursor it did not give', async () => {
    const hook = (await t.request('POST', '/api/v1/webhooks', { key, body: { url: receiver.url('/hooks/cursor') } }))
      .body.webhook;
    const cursor = (text: string) => Buffer.from(text).toString('base64url');
    for (const after of [
      cursor('not a cursor'),
      cursor('2026-01-01T00:00:00.000Z|'),
      cursor(`2026-01-01T00:00:00.000Z|${hook.id}|more`),
      cursor('2026-01-01T00:00:00.000Z|a\u0000b'),
    ]) {
      const page = await t.request('GET', `/api/v1/webhooks/${hook.id}/deliveries?after=${after}`, { key });
      expect(page.status, after).toBe(400);
      expect(page.body.error.details).toEqual([{ path: 'after', message: 'not a cursor returned by this API' }]);
    }
  });

  it('is managed over GraphQL too', async () => {
    const created = await t.graphql(key, CreateAbortedWebhook, { url: receiver.url('/hooks/gql') });
    expect(created.body.errors).toBeUndefined();
    const { secret, webhook } = created.body.data!.createWebhook;
    expect(secret).toMatch(/^whsec_/);
    expect(webhook).toMatchObject({ url: receiver.url('/hooks/gql'), events: ['RUN_ABORTED'] });
    const listed = await t.graphql(key, WebhookDeliveries);
    expect(listed.body.data!.webhooks.nodes).toContainEqual({
      id: webhook!.id,
      deliveries: { totalCount: 0, nodes: [] },
    });
    const deleted = await t.graphql(key, DeleteWebhook, { id: webhook!.id });
    expect(deleted.body.data!.deleteWebhook).toEqual({ deletedWebhookId: webhook!.id, userErrors: [] });
    const invalid = await t.graphql(key, CreateFtpWebhook);
    expect(invalid.body.data!.createWebhook).toEqual({
      webhook: null,
      userErrors: [{ code: 'VALIDATION_FAILED', field: ['input', 'url'] }],
    });
  });
});

describe('per-run webhooks', () => {
  it('delivers a run’s end to its webhookUrl, signed with the secret of its start response', async () => {
    const start = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { ...DENVER_DENTISTS, webhookUrl: receiver.url('/hooks/run') },
    });
    expect(start.status).toBe(200);
    expect(start.body.webhookSecret).toMatch(/^whsec_/);
    await receiver.until((r) => r.some((x) => x.path === '/hooks/run'));
    const got = receiver.received.find((x) => x.path === '/hooks/run')!;
    const payload = new Webhook(start.body.webhookSecret).verify(got.body, got.headers as Record<string, string>) as {
      type: string;
      data: { runId: string };
    };
    expect(payload).toMatchObject({ type: 'run.succeeded', data: { runId: start.body.runId } });
  });

  it('refuses a bad webhookUrl at start, creating nothing', async () => {
    const before = await t.app.core.sql`select count(*)::int as n from run`;
    const res = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { ...DENVER_DENTISTS, webhookUrl: 'not a url' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'webhookUrl', message: 'must be an absolute http or https URL' }]);
    expect(await t.app.core.sql`select count(*)::int as n from run`).toEqual(before);
  });
});

describe('the outbound guard', () => {
  it('passes a URL whose name does not resolve yet, but not a failure of the check itself', async () => {
    const failing = (error: Error) => ({ checkUrl: async () => Promise.reject(error) }) as unknown as OutboundGuard;
    await expect(
      checkWebhookUrl(failing(new NetError('dns', 'later.example', 'no such name')), 'https://later.example/x', 'url'),
    ).resolves.toBeUndefined();
    const broken = new Error('resolver crashed');
    await expect(checkWebhookUrl(failing(broken), 'https://later.example/x', 'url')).rejects.toBe(broken);
  });

  it('never sends to a private address outside tests: such a URL is refused when it is registered or given to a start, and the receiver gets nothing', async () => {
    // The same local receiver, but with the production guard (no allow-list): loopback is refused.
    // (A URL that passes then but is refused at delivery fails for good at once: test/webhooks/url-guard.test.ts.)
    const guarded = await startTestApp({ config: { network: networkTo(receiver.port, []) } });
    try {
      const { apiKey } = await guarded.account();
      const hook = await guarded.request('POST', '/api/v1/webhooks', {
        key: apiKey,
        body: { url: receiver.url('/hooks/never') },
      });
      expect(hook.status).toBe(400);
      expect(hook.body.error).toMatchObject({
        code: 'validation_failed',
        details: [{ path: 'url', message: expect.stringMatching(/^refused by the outbound guard: loopback address/) }],
      });
      expect((await guarded.request('GET', '/api/v1/webhooks', { key: apiKey })).body.webhooks).toEqual([]);
      const start = await guarded.request('POST', '/api/v1/scrape/maps', {
        key: apiKey,
        body: { ...DENVER_DENTISTS, webhookUrl: receiver.url('/hooks/never') },
      });
      expect(start.status).toBe(400);
      expect(start.body.error.details).toEqual([
        { path: 'webhookUrl', message: expect.stringMatching(/^refused by the outbound guard: loopback address/) },
      ]);
      expect(await guarded.app.core.sql`select count(*)::int as n from run`).toEqual([{ n: 0 }]);
      expect(receiver.received.some((x) => x.path === '/hooks/never')).toBe(false);
    } finally {
      await guarded.stop();
    }
  });
});
