import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { loopbackConfig } from '../../src/config.ts';
import { startIdentityApp, type Browser, type IdentityApp } from '../helpers/identity.ts';
import { waitFor } from '../helpers/wait.ts';
import { graphql } from '../helpers/gql/index.ts';

/**
 * The test event (`sendTestWebhook`, `POST /api/v1/webhooks/{id}/test`): one signed `webhook.test`
 * delivery to a local receiver, through the worker like a run's events, logged with the receiver's
 * answer; refused for another account's webhook and for a console member.
 */

const CreateKey = graphql(
  `mutation WebhooksTestEventCreateKey { createApiKey(input: {name: "webhooks"}) { secret userErrors { code } } }`,
);
const SendTest = graphql(`
  mutation WebhooksTestEventSend($id: ID!) { sendTestWebhook(id: $id) { delivery { id event status runId } userErrors { code } } }
`);
const SendTestRefused = graphql(
  `mutation WebhooksTestEventSendRefused($id: ID!) { sendTestWebhook(id: $id) { delivery { id } userErrors { code } } }`,
);
const Deliveries = graphql(`
  query WebhooksTestEventDeliveries($id: ID!) {
    node(id: $id) { ... on Webhook { deliveries { totalCount nodes { id event attempts responseStatus lastError } } } }
  }
`);
const InviteMember = graphql(
  `mutation WebhooksTestEventInvite { inviteMember(input: {email: "member@example.com", role: MEMBER}) { userErrors { code } } }`,
);
const CreateTestHook = graphql(`
  mutation WebhooksTestEventCreateTestHook($url: String!) { createWebhook(input: {url: $url, events: [WEBHOOK_TEST]}) { webhook { id } userErrors { code } } }
`);

interface Received {
  headers: Record<string, string>;
  body: string;
  path: string;
}

let t: IdentityApp;
let server: http.Server;
let port: number;
const received: Received[] = [];
/** What the receiver answers, by path (default 200). */
const statusOf = new Map<string, number>();

let owner: Browser;
let key: string;

const hookUrl = (path: string) => `http://127.0.0.1:${port}${path}`;

async function rest(method: string, path: string, apiKey: string, body?: unknown) {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** A new signed-up owner's API key, made in the console. */
async function ownerKey(browser: Browser): Promise<string> {
  const made = await browser.graphql(CreateKey);
  expect(made.body.data!.createApiKey.userErrors).toEqual([]);
  return made.body.data!.createApiKey.secret!;
}

async function createHook(apiKey: string, path: string, events?: string[]) {
  const created = await rest('POST', '/api/v1/webhooks', apiKey, { url: hookUrl(path), ...(events ? { events } : {}) });
  expect(created.status).toBe(201);
  return created.body.webhook as { id: string; secret: string };
}

const settled = (webhookId: string, apiKey = key) =>
  waitFor(
    async () => (await rest('GET', `/api/v1/webhooks/${webhookId}/deliveries`, apiKey)).body.deliveries,
    (log: { status: string }[]) => log.length > 0 && log.every((d) => d.status !== 'pending'),
    { what: 'the test delivery to settle' },
  );

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body, path: req.url ?? '' });
      res.writeHead(statusOf.get(req.url ?? '') ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  // The web is the local receiver and nothing else is reachable (see webhooks.test.ts).
  const network = {
    ...loopbackConfig('postgres://unused', 0).network,
    webPorts: { http: port, https: port },
    outboundAllow: [`127.0.0.1:${port}`],
  };
  t = await startIdentityApp({ network }, { worker: true });
  owner = await t.signUp('owner@example.com');
  key = await ownerKey(owner);
});
afterAll(async () => {
  await t?.stop();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

describe('the webhook test event', () => {
  it('POSTs a signed webhook.test to a webhook not subscribed to it, and logs the answer’s status', async () => {
    const hook = await createHook(key, '/hooks/failures', ['run.failed']);
    statusOf.set('/hooks/failures', 202);
    const sent = await rest('POST', `/api/v1/webhooks/${hook.id}/test`, key);
    expect(sent.status).toBe(201);
    expect(sent.body.delivery).toMatchObject({
      id: expect.stringMatching(/^msg_/),
      event: 'webhook.test',
      runId: null,
      url: hookUrl('/hooks/failures'),
      status: 'pending',
    });

    const got = await waitFor(() => received.find((r) => r.path === '/hooks/failures'), Boolean, {
      what: 'the receiver to get the test event',
    });
    const payload = new Webhook(hook.secret).verify(got!.body, got!.headers) as {
      type: string;
      timestamp: string;
      data: { webhookId: string; sentAt: string };
    };
    expect(payload).toEqual({
      type: 'webhook.test',
      timestamp: payload.data.sentAt,
      data: { webhookId: hook.id, sentAt: expect.any(String) },
    });
    expect(Date.parse(payload.data.sentAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(got!.headers['webhook-id']).toBe(sent.body.delivery.id);
    // Another webhook's secret does not verify it.
    const other = await createHook(key, '/hooks/other');
    expect(() => new Webhook(other.secret).verify(got!.body, got!.headers)).toThrow();

    const log = await settled(hook.id);
    expect(log).toEqual([
      expect.objectContaining({
        id: sent.body.delivery.id,
        event: 'webhook.test',
        status: 'succeeded',
        attempts: 1,
        responseStatus: 202,
        lastError: null,
      }),
    ]);
    expect(received.filter((r) => r.path === '/hooks/other')).toEqual([]);
  });

  it('answers the test delivery in GraphQL and shows it in the delivery log with the receiver’s status', async () => {
    const hook = await createHook(key, '/hooks/graphql');
    statusOf.set('/hooks/graphql', 500);
    const sent = await owner.graphql(SendTest, { id: hook.id });
    expect(sent.body.data!.sendTestWebhook).toEqual({
      delivery: { id: expect.stringMatching(/^msg_/), event: 'WEBHOOK_TEST', status: 'PENDING', runId: null },
      userErrors: [],
    });
    const id = sent.body.data!.sendTestWebhook.delivery!.id;
    // A 500 is retried: the log shows the attempt and the receiver's status while the delivery is pending.
    const log = await waitFor(
      async () => {
        const node = (await owner.graphql(Deliveries, { id: hook.id })).body.data!.node!;
        if (!('deliveries' in node)) throw new Error(`not a webhook: ${JSON.stringify(node)}`);
        return node.deliveries;
      },
      (d) => d.nodes[0]!.attempts >= 1,
      { what: 'the first attempt' },
    );
    expect(log).toEqual({
      totalCount: 1,
      nodes: [
        {
          id,
          event: 'WEBHOOK_TEST',
          attempts: expect.any(Number),
          responseStatus: 500,
          lastError: 'the receiver answered 500',
        },
      ],
    });
    await rest('DELETE', `/api/v1/webhooks/${hook.id}`, key);
  });

  it('is NOT_FOUND for another account’s webhook or none, and sends nothing', async () => {
    const stranger = await t.signUp('stranger@example.com');
    const theirs = await createHook(await ownerKey(stranger), '/hooks/theirs');
    const before = received.length;
    const viaGraphql = await owner.graphql(SendTestRefused, { id: theirs.id });
    expect(viaGraphql.body.data!.sendTestWebhook).toEqual({ delivery: null, userErrors: [{ code: 'NOT_FOUND' }] });
    expect((await rest('POST', `/api/v1/webhooks/${theirs.id}/test`, key)).body).toMatchObject({
      error: { code: 'not_found' },
    });
    expect((await rest('POST', '/api/v1/webhooks/wh_nosuchwebhook/test', key)).status).toBe(404);
    // A member of the account may not send one (webhooks are the owners' and admins').
    const from = t.mail.mails.length;
    await owner.graphql(InviteMember);
    const token = (await t.mail.linkTo('member@example.com', '/invitations/', from)).split('/invitations/')[1];
    const member = t.browser();
    expect(
      (
        await member.request('POST', '/auth/invitations/accept', {
          body: { token, password: 'correct horse battery', name: 'member' },
        })
      ).status,
    ).toBe(200);
    const mine = await createHook(key, '/hooks/mine');
    const refused = await member.graphql(SendTestRefused, { id: mine.id });
    expect(refused.body.data!.sendTestWebhook).toEqual({ delivery: null, userErrors: [{ code: 'ROLE_REQUIRED' }] });

    expect(
      (await rest('GET', `/api/v1/webhooks/${theirs.id}/deliveries`, await ownerKey(stranger))).body.deliveries,
    ).toEqual([]);
    expect((await rest('GET', `/api/v1/webhooks/${mine.id}/deliveries`, key)).body.deliveries).toEqual([]);
    expect(received.length).toBe(before);
  });

  it('is not an event to subscribe to', async () => {
    const created = await rest('POST', '/api/v1/webhooks', key, { url: hookUrl('/hooks/x'), events: ['webhook.test'] });
    expect(created.status).toBe(400);
    expect(created.body.error.details[0].path).toBe('events.0');
    const viaGraphql = await owner.graphql(CreateTestHook, { url: hookUrl('/hooks/x') });
    expect(viaGraphql.body.data!.createWebhook).toEqual({ webhook: null, userErrors: [{ code: 'VALIDATION_FAILED' }] });
  });
});
