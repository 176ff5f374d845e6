import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destinations } from '../../src/config/destinations.ts';
import { runDelivery } from '../../src/destinations/deliveries.ts';
import { deliver, writeRun } from '../helpers/deliveries.ts';
import { startFakeHubspot } from '../helpers/fakes/hubspot.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Destinations to HubSpot against the local fake (test/helpers/fakes/hubspot.ts), through the official
 * client: a connection made by HubSpot's OAuth flow and by a private-app token, its tokens sealed and
 * refreshed, a maps run delivered as contacts and delivered again without duplicates, a 429 storm
 * waited out, and a revoked grant that pauses the destination with its reason.
 */

const PUBLIC_URL = 'http://gateway.test';
const APP = {
  appId: 7,
  clientId: 'leadgate-client',
  clientSecret: 'leadgate-secret',
  redirectUris: [`${PUBLIC_URL}/connections/callback`],
};
const PRIVATE_TOKEN = 'pat-na1-11111111-2222-3333-4444-555555555555';
const MAPS = { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 40 };

let fake: Awaited<ReturnType<typeof startFakeHubspot>>;
let t: TestApp;
let key: string;
let accountId: string;

beforeAll(async () => {
  fake = await startFakeHubspot({
    apps: [APP],
    privateApps: [
      { token: PRIVATE_TOKEN, appId: 8, scopes: ['crm.objects.contacts.write', 'crm.objects.contacts.read'] },
    ],
    rateLimit: { intervalMs: 300 },
    customProperties: { companies: [{ name: 'leadgate_domain', label: 'Leadgate domain', hasUniqueValue: true }] },
  });
  t = await startTestApp({
    config: {
      publicUrl: PUBLIC_URL,
      destinations: destinations({
        SECRETS_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        HUBSPOT_BASE_URL: fake.url,
        HUBSPOT_CLIENT_ID: APP.clientId,
        HUBSPOT_CLIENT_SECRET: APP.clientSecret,
      }),
    },
  });
  ({ apiKey: key, accountId } = await t.account({ creditsMicros: 20_000_000n }));
});
afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

/** Follows the authorization URL as a browser would: HubSpot's consent, then the gateway's callback. */
async function signIn(authorizeUrl: string) {
  const consent = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(consent.status, await consent.clone().text()).toBe(302);
  const back = new URL(consent.headers.get('location') ?? '');
  expect(`${back.origin}${back.pathname}`).toBe(`${PUBLIC_URL}/connections/callback`);
  const callback = await fetch(`${t.url}${back.pathname}${back.search}`, { redirect: 'manual' });
  expect(callback.status).toBe(303);
  return new URL(callback.headers.get('location') ?? '', t.url);
}

let connectionId: string;
let destinationId: string;

describe('connections', () => {
  it('connects by HubSpot’s OAuth flow; the tokens are sealed and never shown', async () => {
    const begun = await t.request('POST', '/api/v1/connections/oauth', {
      key,
      body: { provider: 'hubspot', name: 'Sales portal' },
    });
    expect(begun.status, begun.text).toBe(200);
    const landed = await signIn(begun.body.authorizeUrl);
    expect(landed.pathname).toBe('/connections');
    connectionId = landed.searchParams.get('connected') ?? '';
    expect(connectionId).toMatch(/^con_/);
    const listed = await t.request('GET', '/api/v1/connections', { key });
    expect(listed.body.connections).toEqual([
      expect.objectContaining({ id: connectionId, provider: 'hubspot', method: 'oauth', status: 'active' }),
    ]);
    expect(JSON.stringify(listed.body)).not.toMatch(/token"/);
    const [row] = await t.app.core
      .sql`select access_token, refresh_token from provider_connection where id = ${connectionId}`;
    const issued = [...fake.accessTokens.keys()];
    expect(issued.length).toBeGreaterThan(0);
    for (const token of [...issued, ...fake.refreshTokens.keys()]) {
      expect(String(row?.access_token)).not.toContain(token);
      expect(String(row?.refresh_token)).not.toContain(token);
    }
    // The callback's state works once.
    const again = await fetch(`${t.url}/connections/callback?state=used&code=x`, { redirect: 'manual' });
    expect(new URL(again.headers.get('location') ?? '', t.url).searchParams.get('refused')).toMatch(/expired|used/);
  });

  it('connects with a private-app token, and refuses one HubSpot does not take, at its field', async () => {
    const bad = await t.request('POST', '/api/v1/connections/token', {
      key,
      body: { provider: 'hubspot', name: 'Wrong', token: 'pat-na1-00000000-0000-0000-0000-000000000000' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0]).toMatchObject({ path: 'token' });
    const good = await t.request('POST', '/api/v1/connections/token', {
      key,
      body: { provider: 'hubspot', name: 'Private app', token: PRIVATE_TOKEN },
    });
    expect(good.status, good.text).toBe(201);
    expect(good.body.connection).toMatchObject({ method: 'token', status: 'active' });
  });
});

describe('a maps run delivered as HubSpot contacts', () => {
  let runId: string;

  it('upserts each place with an email, skips the rest with the reason, and a second delivery duplicates nothing', async () => {
    const made = await t.request('POST', '/api/v1/destinations', {
      key,
      body: { name: 'Dentists to HubSpot', kind: 'hubspot_contacts', connection: connectionId },
    });
    expect(made.status, made.text).toBe(201);
    destinationId = made.body.destination.id;
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { ...MAPS, destinations: [destinationId] },
    });
    expect(started.status, started.text).toBe(200);
    runId = started.body.runId;
    const rows = (await t.runTool(key, '/api/v1/scrape/maps', MAPS)).rows as { emails: string[]; name: string }[];
    await t.waitForRun(key, runId);
    const delivered = await waitFor(
      async () => (await t.request('GET', `/api/v1/deliveries?runId=${runId}`, { key })).body.deliveries[0],
      (d) => d?.status === 'succeeded',
      { timeoutMs: 30_000, what: 'the delivery' },
    );
    const withEmail = rows.filter((r) => r.emails.length > 0);
    expect(withEmail.length).toBeGreaterThan(0);
    expect(delivered).toMatchObject({
      total: rows.length,
      sent: withEmail.length,
      created: withEmail.length,
      updated: 0,
      skipped: rows.length - withEmail.length,
      failed: 0,
    });
    for (const row of withEmail) {
      const contact = fake.contactByEmail(row.emails[0]!);
      expect(contact?.properties).toMatchObject({ email: row.emails[0]!.toLowerCase(), company: row.name });
    }
    const log = await t.request('GET', `/api/v1/deliveries/${delivered.id}`, { key });
    expect(log.body.problems).toHaveLength(rows.length - withEmail.length);
    expect(log.body.problems[0]).toMatchObject({ outcome: 'skipped', reason: 'no email to match a contact by' });

    // Delivered again (a worker that died after HubSpot took the rows, say): updates, never duplicates.
    const contactsBefore = fake.records.contacts.size;
    await t.app.core.sql`update delivery set status = 'running', next_offset = 0, sent = 0, created = 0,
      skipped = 0 where id = ${delivered.id}`;
    await t.app.core.sql`delete from delivery_problem where delivery_id = ${delivered.id}`;
    await runDelivery(t.app.core, delivered.id);
    const redone = (await t.request('GET', `/api/v1/deliveries/${delivered.id}`, { key })).body.delivery;
    expect(redone).toMatchObject({ status: 'succeeded', created: 0, updated: withEmail.length });
    expect(fake.records.contacts.size).toBe(contactsBefore);
  });

  it('waits out a storm of 429s, sends the same batch again, and refreshes an expired access token first', async () => {
    await t.app.core.sql`update provider_connection set access_expires_at = now() - interval '1 minute'
      where id = ${connectionId}`;
    const refreshesBefore = fake.requests.filter((r) => r.path === '/oauth/v1/token').length;
    fake.throttle(3);
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { ...MAPS, maxCrawledPlacesPerSearch: 5, destinations: [destinationId] },
    });
    await t.waitForRun(key, started.body.runId);
    const delivered = await waitFor(
      async () =>
        (await t.request('GET', `/api/v1/deliveries?runId=${started.body.runId}`, { key })).body.deliveries[0],
      (d) => d?.status === 'succeeded',
      { timeoutMs: 30_000, what: 'the delivery' },
    );
    expect(delivered.failed).toBe(0);
    const upserts = fake.requests.filter((r) => r.path === '/crm/v3/objects/contacts/batch/upsert');
    expect(upserts.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(3);
    expect(fake.requests.filter((r) => r.path === '/oauth/v1/token').length).toBe(refreshesBefore + 1);
  });

  it('upserts companies by domain under a unique property, and refuses a property that is not unique at its field', async () => {
    const notUnique = await t.request('POST', '/api/v1/destinations', {
      key,
      body: { name: 'Companies', kind: 'hubspot_companies', connection: connectionId, idProperty: 'domain' },
    });
    expect(notUnique.status).toBe(400);
    expect(notUnique.body.error.details[0]).toEqual({
      path: 'idProperty',
      message: 'must be a company property with unique values: leadgate_domain',
    });
    const made = await t.request('POST', '/api/v1/destinations', {
      key,
      body: { name: 'Companies', kind: 'hubspot_companies', connection: connectionId, idProperty: 'leadgate_domain' },
    });
    expect(made.status, made.text).toBe(201);
    const places = [
      {
        name: 'Smile Dental',
        website: 'https://www.smile-dental.com/contact',
        phone: '+1 303-555-0101',
        city: 'Denver',
      },
      { name: 'Smile Dental Aurora', website: 'http://smile-dental.com', phone: '+1 303-555-0102', city: 'Aurora' },
      { name: 'No Site Dental', website: null, phone: '+1 303-555-0103', city: 'Denver' },
      { name: 'Peak Ortho', website: 'peak-ortho.com', phone: '+1 303-555-0104', city: 'Boulder' },
    ];
    const runId = await writeRun(t, accountId, 'maps', places);
    const before = fake.records.companies.size;
    const delivered = await deliver(t, key, accountId, runId, made.body.destination.id);
    expect(delivered).toMatchObject({ total: 4, created: 2, skipped: 2, failed: 0 });
    expect(fake.records.companies.size).toBe(before + 2);
    const smile = [...fake.records.companies.values()].find((c) => c.properties.leadgate_domain === 'smile-dental.com');
    expect(smile?.properties).toMatchObject({ name: 'Smile Dental', domain: 'smile-dental.com', city: 'Denver' });
    const log = await t.request('GET', `/api/v1/deliveries/${delivered.id}`, { key });
    expect(log.body.problems).toEqual([
      { row: 1, outcome: 'skipped', reason: 'the same domain as row 0' },
      { row: 2, outcome: 'skipped', reason: 'no domain to match a company by' },
    ]);
    const again = await deliver(t, key, accountId, runId, made.body.destination.id);
    expect(again).toMatchObject({ created: 0, updated: 2 });
    expect(fake.records.companies.size).toBe(before + 2);
  });

  it('waits for the day to turn when HubSpot’s daily limit is spent', async () => {
    const runId = await writeRun(t, accountId, 'maps', [{ name: 'Late Dental', emails: ['late@late-dental.com'] }]);
    fake.throttle(1, 'DAILY');
    const waiting = await deliver(t, key, accountId, runId, destinationId, 'waiting');
    expect(waiting.message).toMatch(/^HubSpot’s daily limit is spent; sending goes on at /);
    const [job] = await t.app.core.sql`select run_at from graphile_worker.jobs where key = ${waiting.id}`;
    expect(new Date(job?.run_at).getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    // Its hour comes (the job moved to now, as the clock would): the job runs, and the row goes.
    await t.app.core.sql`update delivery set resume_at = now() where id = ${waiting.id}`;
    await t.app.core
      .sql`select graphile_worker.add_job('deliver_rows', json_build_object('deliveryId', ${waiting.id}::text),
      job_key => ${waiting.id}::text, run_at => now())`;
    const done = await waitFor(
      async () => (await t.request('GET', `/api/v1/deliveries/${waiting.id}`, { key })).body.delivery,
      (d) => d?.status === 'succeeded',
      { timeoutMs: 30_000, what: 'the delivery after the wait' },
    );
    expect(done).toMatchObject({ created: 1 });
  });

  it('a grant revoked at HubSpot breaks the connection and pauses the destination and its delivery with the reason', async () => {
    fake.uninstall(APP.clientId);
    await t.app.core.sql`update provider_connection set access_expires_at = now() - interval '1 minute'
      where id = ${connectionId}`;
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { ...MAPS, maxCrawledPlacesPerSearch: 3, destinations: [destinationId] },
    });
    await t.waitForRun(key, started.body.runId);
    const paused = await waitFor(
      async () =>
        (await t.request('GET', `/api/v1/deliveries?runId=${started.body.runId}`, { key })).body.deliveries[0],
      (d) => d?.status === 'paused',
      { timeoutMs: 30_000, what: 'the paused delivery' },
    );
    expect(paused.message).toMatch(/refused the connection/);
    const destination = (await t.request('GET', `/api/v1/destinations/${destinationId}`, { key })).body.destination;
    expect(destination).toMatchObject({ paused: true, pausedReason: expect.stringContaining('Connect again') });
    const connection = (await t.request('GET', '/api/v1/connections', { key })).body.connections.find(
      (c: { id: string }) => c.id === connectionId,
    );
    expect(connection).toMatchObject({ status: 'broken', brokenReason: expect.any(String) });
  });

  it('disconnecting revokes the refresh token at HubSpot', async () => {
    const connected = await t.request('POST', '/api/v1/connections/oauth', {
      key,
      body: { provider: 'hubspot', name: 'Second portal' },
    });
    const landed = await signIn(connected.body.authorizeUrl);
    const id = landed.searchParams.get('connected') ?? '';
    const revokedBefore = fake.revokedRefreshTokens.length;
    const gone = await t.request('DELETE', `/api/v1/connections/${id}`, { key });
    expect(gone.status, gone.text).toBe(204);
    expect(fake.revokedRefreshTokens.length).toBe(revokedBefore + 1);
    expect(
      (await t.request('GET', '/api/v1/connections', { key })).body.connections.map((c: { id: string }) => c.id),
    ).not.toContain(id);
  });
});

describe('on MCP', () => {
  it('lists connections, creates a destination, reads a delivery’s log and disconnects, each answer structured', async () => {
    const client = new Client({ name: 'destinations-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp?tools=destinations`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    try {
      const call = async (name: string, args: Record<string, unknown> = {}) => {
        const answer = (await client.callTool({ name, arguments: args })) as {
          isError?: boolean;
          content: { text?: string }[];
          structuredContent?: Record<string, unknown>;
        };
        expect(answer.isError, `${name}: ${answer.content[0]?.text}`).toBeFalsy();
        return answer.structuredContent ?? {};
      };
      const { connections } = (await call('list_connections')) as { connections: { id: string; method: string }[] };
      const privateApp = connections.find((c) => c.method === 'token');
      expect(privateApp).toBeDefined();
      const { destination } = (await call('create_destination', {
        name: 'Leads to the private app',
        kind: 'hubspot_contacts',
        connection: privateApp?.id,
      })) as { destination: { id: string } };
      expect(destination.id).toMatch(/^dest_/);
      expect(((await call('list_destinations')) as { destinations: unknown[] }).destinations.length).toBeGreaterThan(1);
      const { deliveries } = (await call('list_deliveries')) as { deliveries: { id: string }[] };
      const log = (await call('get_delivery', { delivery: deliveries.at(-1)?.id })) as { problems: unknown[] };
      expect(Array.isArray(log.problems)).toBe(true);
      await call('disconnect', { connection: privateApp?.id });
      const after = (await call('list_connections')) as { connections: { id: string }[] };
      expect(after.connections.map((c) => c.id)).not.toContain(privateApp?.id);
      const refused = (await client.callTool({ name: 'get_delivery', arguments: { delivery: 'dlv_nope' } })) as {
        isError?: boolean;
        content: { text?: string }[];
      };
      expect(refused.isError).toBe(true);
      expect(refused.content[0]?.text).not.toMatch(/\/api\/v1|HTTP|\b404\b/);
    } finally {
      await client.close();
    }
  });
});
