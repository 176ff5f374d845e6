import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { destinations } from '../../src/config/destinations.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { deliver, person, writeRun } from '../helpers/deliveries.ts';
import { type FakeSlack, startFakeSlack } from '../helpers/fakes/slack.ts';

/**
 * A Slack channel as a destination, against the local Slack (test/helpers/fakes/slack.ts) through
 * @slack/web-api: a connection by Slack's OAuth v2 install with token rotation (refreshed when it
 * expires, the spent refresh token replaced) and by a bot token, a run's summary posted with its counts
 * and a link that downloads its rows, a rate limit waited out, and a channel Slack refuses failing the
 * delivery with the reason instead of retrying it.
 */

const PUBLIC_URL = 'http://gateway.test';

let fake: FakeSlack;
let t: TestApp;
let key: string;
let accountId: string;
let connectionId: string;
let destinationId: string;

beforeAll(async () => {
  fake = await startFakeSlack({
    tokenRotation: true,
    redirectUris: [`${PUBLIC_URL}/connections/callback`],
    channels: [{ name: 'leads', isMember: true }],
  });
  t = await startTestApp({
    config: {
      publicUrl: PUBLIC_URL,
      destinations: destinations({
        SECRETS_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        SLACK_BASE_URL: fake.url,
        SLACK_CLIENT_ID: fake.clientId,
        SLACK_CLIENT_SECRET: fake.clientSecret,
      }),
    },
  });
  ({ apiKey: key, accountId } = await t.account({ creditsMicros: 20_000_000n }));
});
afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

const people = (tag: string, count: number) => Array.from({ length: count }, (_, i) => person(tag, i));

describe('a Slack channel', () => {
  it('connects by Slack’s install flow, with the workspace it is', async () => {
    const begun = await t.request('POST', '/api/v1/connections/oauth', {
      key,
      body: { provider: 'slack', name: 'Team' },
    });
    expect(begun.status, begun.text).toBe(200);
    expect(new URL(begun.body.authorizeUrl).searchParams.get('scope')).toBe('chat:write,channels:read');
    const consent = await fetch(begun.body.authorizeUrl, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location') ?? '');
    const callback = await fetch(`${t.url}${back.pathname}${back.search}`, { redirect: 'manual' });
    connectionId = new URL(callback.headers.get('location') ?? '', t.url).searchParams.get('connected') ?? '';
    expect(connectionId).toMatch(/^con_/);
    const listed = (await t.request('GET', '/api/v1/connections', { key })).body.connections;
    expect(listed[0]).toMatchObject({ provider: 'slack', externalId: fake.team.id, externalName: fake.team.name });
  });

  it('needs the channel, said at its field', async () => {
    const missing = await t.request('POST', '/api/v1/destinations', {
      key,
      body: { name: 'Summary', kind: 'slack_summary', connection: connectionId },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details[0]).toEqual({
      path: 'channel',
      message: 'the channel the summary goes to is required',
    });
    const made = await t.request('POST', '/api/v1/destinations', {
      key,
      body: { name: 'Summary', kind: 'slack_summary', connection: connectionId, channel: '#leads' },
    });
    expect(made.status, made.text).toBe(201);
    destinationId = made.body.destination.id;
  });

  it('posts a run’s summary with its count and a link that downloads its rows, refreshing an expired token', async () => {
    const [before] = await t.app.core.sql`select refresh_token from provider_connection where id = ${connectionId}`;
    fake.expireTokens();
    await t.app.core.sql`update provider_connection set access_expires_at = now() where id = ${connectionId}`;
    const runId = await writeRun(t, accountId, 'lead-scraper', people('slack', 12));
    const from = fake.messages.length;
    const delivered = await deliver(t, key, accountId, runId, destinationId);
    expect(delivered).toMatchObject({ total: 12, status: 'succeeded' });
    const [message, ...more] = fake.messages.slice(from);
    expect(more).toEqual([]);
    expect(message?.channel).toBe(fake.channels.get([...fake.channels.keys()][0] ?? '')?.id);
    expect(message?.text).toMatch(
      new RegExp(
        `^Lead scraper \\(people-search URL\\) run ${runId} ended with 12 rows\\. <http\\S+\\|Download the CSV> \\(until `,
      ),
    );
    const link = /<(http:\/\/gateway\.test\/api\/downloads\/[^|]+)\|/.exec(message?.text ?? '')?.[1] ?? '';
    const csv = await fetch(link.replace(PUBLIC_URL, t.url));
    expect(csv.status).toBe(200);
    const lines = (await csv.text()).trim().split('\n');
    expect(lines).toHaveLength(13);
    expect(lines[1]).toContain('person0.slack@acme-0.com');
    // The rotated refresh token was spent and replaced.
    const [after] = await t.app.core.sql`select refresh_token from provider_connection where id = ${connectionId}`;
    expect(after?.refresh_token).not.toBe(before?.refresh_token);
  });

  it('waits out Slack’s rate limit and posts once', async () => {
    fake.rateLimit('chat.postMessage', { times: 1, retryAfter: 1 });
    const runId = await writeRun(t, accountId, 'lead-scraper', people('limited', 2));
    const from = fake.requests.length;
    await deliver(t, key, accountId, runId, destinationId);
    const posts = fake.requests.slice(from).filter((r) => r.method === 'chat.postMessage');
    expect(posts.map((r) => r.status)).toEqual([429, 200]);
  });

  it('a channel Slack refuses fails the delivery with the reason, without retrying it', async () => {
    const made = await t.request('POST', '/api/v1/destinations', {
      key,
      body: { name: 'Nowhere', kind: 'slack_summary', connection: connectionId, channel: '#nowhere' },
    });
    const runId = await writeRun(t, accountId, 'lead-scraper', people('nowhere', 1));
    const failed = await deliver(t, key, accountId, runId, made.body.destination.id, 'failed');
    expect(failed.message).toBe('Slack refused the message (channel_not_found)');
    const [job] = await t.app.core.sql`select count(*)::int as n from graphile_worker.jobs where key = ${failed.id}`;
    expect(job?.n).toBe(0);
  });
});
