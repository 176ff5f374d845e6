import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destinations } from '../../src/config/destinations.ts';
import { runDelivery } from '../../src/destinations/deliveries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { deliver, deliveryLog, person, writeRun } from '../helpers/deliveries.ts';
import { type FakeSalesforce, startFakeSalesforce } from '../helpers/fakes/salesforce.ts';

/**
 * Destinations to Salesforce against the local org (test/helpers/fakes/salesforce.ts), through jsforce:
 * the web server flow, Leads upserted by an external-id field with sObject Collections and, for 10,000
 * rows, through one Bulk API 2.0 job with its failed rows reported, a session refreshed by itself and
 * kept, the daily API allowance waited out, and a refresh token revoked breaking the connection.
 */

const PUBLIC_URL = 'http://gateway.test';
const APP = {
  clientId: '3MVG9leadgate',
  clientSecret: 'leadgate-consumer-secret',
  callbackUrls: [`${PUBLIC_URL}/connections/callback`],
};
const EXT = 'Leadgate_Id__c';

let fake: FakeSalesforce;
let t: TestApp;
let key: string;
let accountId: string;
let connectionId: string;
let destinationId: string;

beforeAll(async () => {
  fake = await startFakeSalesforce({ apps: [APP] });
  t = await startTestApp({
    config: {
      publicUrl: PUBLIC_URL,
      destinations: destinations({
        SECRETS_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        SALESFORCE_LOGIN_URL: fake.url,
        SALESFORCE_CLIENT_ID: APP.clientId,
        SALESFORCE_CLIENT_SECRET: APP.clientSecret,
      }),
    },
  });
  ({ apiKey: key, accountId } = await t.account({ creditsMicros: 20_000_000n }));
});
afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

/** Salesforce's consent, then the gateway's callback, as the user's browser follows them. */
async function signIn(authorizeUrl: string) {
  const back = await fake.consent(authorizeUrl);
  expect(`${back.origin}${back.pathname}`).toBe(`${PUBLIC_URL}/connections/callback`);
  const callback = await fetch(`${t.url}${back.pathname}${back.search}`, { redirect: 'manual' });
  expect(callback.status).toBe(303);
  return new URL(callback.headers.get('location') ?? '', t.url);
}

const leads = (tag: string, count: number, bad: (i: number) => Record<string, unknown> = () => ({})) =>
  Array.from({ length: count }, (_, i) => ({ ...person(tag, i), ...bad(i) }));

describe('connecting Salesforce', () => {
  it('connects by the web server flow; the session is sealed, and the org is who it is', async () => {
    const begun = await t.request('POST', '/api/v1/connections/oauth', {
      key,
      body: { provider: 'salesforce', name: 'Sales org' },
    });
    expect(begun.status, begun.text).toBe(200);
    const url = new URL(begun.body.authorizeUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${fake.url}/services/oauth2/authorize`);
    expect(url.searchParams.get('response_type')).toBe('code');
    const landed = await signIn(begun.body.authorizeUrl);
    connectionId = landed.searchParams.get('connected') ?? '';
    expect(connectionId, landed.search).toMatch(/^con_/);
    const listed = await t.request('GET', '/api/v1/connections', { key });
    expect(listed.body.connections[0]).toMatchObject({
      id: connectionId,
      provider: 'salesforce',
      method: 'oauth',
      externalId: fake.orgId,
      status: 'active',
    });
    const [row] = await t.app.core
      .sql`select access_token, refresh_token, instance_url from provider_connection where id = ${connectionId}`;
    expect(row?.instance_url).toBe(fake.url);
    expect(String(row?.access_token)).not.toContain(fake.orgId.slice(0, 15));
    expect(String(row?.refresh_token)).not.toMatch(/5Aep861/);
  });

  it('refuses a pasted token: Salesforce connects by signing in', async () => {
    const refused = await t.request('POST', '/api/v1/connections/token', {
      key,
      body: { provider: 'salesforce', name: 'Pasted', token: 'anything' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0]).toMatchObject({ path: 'provider' });
  });

  it('checks the external-id field at the org, and says which ones it has', async () => {
    const wrong = await t.request('POST', '/api/v1/destinations', {
      key,
      body: { name: 'Leads', kind: 'salesforce_leads', connection: connectionId, externalIdField: 'Email' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details[0]).toEqual({
      path: 'externalIdField',
      message: `must be an External ID field of Lead: ${EXT}`,
    });
    const missing = await t.request('POST', '/api/v1/destinations', {
      key,
      body: { name: 'Leads', kind: 'salesforce_leads', connection: connectionId },
    });
    expect(missing.body.error.details[0]).toMatchObject({ path: 'externalIdField' });
    const made = await t.request('POST', '/api/v1/destinations', {
      key,
      body: { name: 'Leads', kind: 'salesforce_leads', connection: connectionId, externalIdField: EXT },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body.destination.settings).toEqual({ externalIdField: EXT });
    destinationId = made.body.destination.id;
  });
});

describe('leads upserted by external id', () => {
  it('sends a small set with sObject Collections, reports refused rows alone, and updates on a second delivery', async () => {
    const rows = leads('small', 30, (i) =>
      i === 7 ? { email: 'not-an-email' } : i === 9 ? { title: 'T'.repeat(200) } : {},
    );
    const runId = await writeRun(t, accountId, 'lead-scraper', rows);
    const before = fake.records('Lead').length;
    const delivered = await deliver(t, key, accountId, runId, destinationId);
    expect(delivered).toMatchObject({ total: 30, sent: 30, created: 28, updated: 0, failed: 2, skipped: 0 });
    const log = await deliveryLog(t, key, delivered.id);
    expect(log.problems).toEqual([
      { row: 7, outcome: 'failed', reason: 'Email: invalid email address: not-an-email (INVALID_EMAIL_ADDRESS)' },
      {
        row: 9,
        outcome: 'failed',
        reason: `Title: data value too large: ${'T'.repeat(200)} (max length=128) (STRING_TOO_LONG)`,
      },
    ]);
    expect(fake.records('Lead').length).toBe(before + 28);
    const lead = fake.findByExternalId('Lead', EXT, 'person3.small@acme-3.com');
    // A lead scraped with its company: Last Name and Company filled; never "[not provided]" then.
    expect(lead).toMatchObject({
      FirstName: 'First3',
      LastName: 'Last3',
      Company: 'Acme 3',
      Email: 'person3.small@acme-3.com',
    });
    const calls = fake.requests.filter((r) => r.path.includes('/composite/sobjects/Lead/'));
    expect(calls.at(-1)).toMatchObject({ method: 'PATCH', status: 200 });

    // Again: every row an update, no lead twice.
    const again = await deliver(t, key, accountId, runId, destinationId);
    expect(again).toMatchObject({ created: 0, updated: 28, failed: 2 });
    expect(fake.records('Lead').length).toBe(before + 28);
  });

  it('sends 10,000 rows through one Bulk API 2.0 job, refreshing an expired session, with failed rows reported', async () => {
    const rows = leads('bulk', 10_000, (i) => (i % 1_000 === 1 ? { email: `bad-${i}@` } : {}));
    const runId = await writeRun(t, accountId, 'lead-scraper', rows);
    const before = fake.records('Lead').length;
    const jobsBefore = fake.jobs.size;
    const [before_] = await t.app.core.sql`select access_token from provider_connection where id = ${connectionId}`;
    fake.expireAccessTokens();
    const delivered = await deliver(t, key, accountId, runId, destinationId, 'succeeded', 120_000);
    expect(delivered).toMatchObject({ total: 10_000, created: 9_990, updated: 0, failed: 10 });
    expect(fake.records('Lead').length).toBe(before + 9_990);
    const jobs = [...fake.jobs.values()].slice(jobsBefore);
    expect(jobs.map((j) => [j.object, j.operation, j.externalIdFieldName, j.state, j.rows.length])).toEqual([
      ['Lead', 'upsert', EXT, 'JobComplete', 10_000],
    ]);
    const log = await deliveryLog(t, key, delivered.id);
    expect(log.problems.map((p) => p.row)).toEqual([1, 1001, 2001, 3001, 4001, 5001, 6001, 7001, 8001, 9001]);
    expect(log.problems[0]).toEqual({
      row: 1,
      outcome: 'failed',
      reason: 'Email: invalid email address: bad-1@ (INVALID_EMAIL_ADDRESS)',
    });
    // jsforce refreshed the session; the new access token was sealed and kept.
    const [after_] = await t.app.core.sql`select access_token from provider_connection where id = ${connectionId}`;
    expect(after_?.access_token).not.toBe(before_?.access_token);
  });

  it('waits when the org’s daily API allowance is spent, and goes on once it is back', async () => {
    const runId = await writeRun(t, accountId, 'lead-scraper', leads('allowance', 5));
    fake.exhaustDailyAllowance();
    const waiting = await deliver(t, key, accountId, runId, destinationId, 'waiting');
    expect(waiting.message).toMatch(/daily API allowance is spent.*sending goes on at/);
    const [job] = await t.app.core.sql`select run_at from graphile_worker.jobs
      where key = ${waiting.id} and task_identifier = 'deliver_rows'`;
    expect(new Date(job?.run_at).getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    // The allowance is back (a new day); the queued job's time comes.
    fake.setApiUsage(0);
    await t.app.core.sql`update delivery set resume_at = now() where id = ${waiting.id}`;
    await runDelivery(t.app.core, waiting.id);
    const done = (await deliveryLog(t, key, waiting.id)).delivery;
    expect(done).toMatchObject({ status: 'succeeded', created: 5 });
  });

  it('a refresh token revoked at the org breaks the connection and pauses the delivery with the reason', async () => {
    const runId = await writeRun(t, accountId, 'lead-scraper', leads('revoked', 3));
    fake.expireRefreshTokens();
    fake.expireAccessTokens();
    const paused = await deliver(t, key, accountId, runId, destinationId, 'paused');
    expect(paused.message).toMatch(/refused the connection.*expired access\/refresh token/);
    const connection = (await t.request('GET', '/api/v1/connections', { key })).body.connections[0];
    expect(connection).toMatchObject({ status: 'broken', brokenReason: expect.stringContaining('Unable to refresh') });
  });

  it('disconnecting revokes the refresh token at Salesforce', async () => {
    const begun = await t.request('POST', '/api/v1/connections/oauth', {
      key,
      body: { provider: 'salesforce', name: 'Second org' },
    });
    const id = (await signIn(begun.body.authorizeUrl)).searchParams.get('connected') ?? '';
    const from = fake.requests.length;
    const gone = await t.request('DELETE', `/api/v1/connections/${id}`, { key });
    expect(gone.status, gone.text).toBe(204);
    expect(fake.requests.slice(from).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /services/oauth2/revoke 200',
    ]);
  });
});
