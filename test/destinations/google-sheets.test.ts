import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destinations } from '../../src/config/destinations.ts';
import { runDelivery } from '../../src/destinations/deliveries.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { deliver, deliveryLog, person, writeRun } from '../helpers/deliveries.ts';
import { type FakeGoogle, startFakeGoogle } from '../helpers/fakes/google.ts';

/**
 * Destinations to Google Sheets against the local Google (test/helpers/fakes/google.ts), through
 * @googleapis/sheets: a connection by Google's OAuth flow (offline access) and by a service account's
 * key, a spreadsheet checked when the destination is made, rows appended under a header written once,
 * a header already there followed, the per-minute quota's 429s backed off, and a delivery cut short after
 * an append resumed without appending those rows twice.
 */

const PUBLIC_URL = 'http://gateway.test';
const CLIENT = {
  clientId: 'leadgate.apps.googleusercontent.com',
  clientSecret: 'GOCSPX-leadgate',
  redirectUris: [`${PUBLIC_URL}/connections/callback`],
};
const ROBOT = 'leadgate-writer@leadgate-project.iam.gserviceaccount.com';
const keys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
/** A service account's key file as Google issues it. */
const keyFile = (privateKey: string) =>
  JSON.stringify({
    type: 'service_account',
    project_id: 'leadgate-project',
    private_key_id: 'k1',
    private_key: privateKey,
    client_email: ROBOT,
    client_id: '1234567890',
    token_uri: 'https://oauth2.googleapis.com/token',
  });
const KEY_FILE = keyFile(keys.privateKey);

let fake: FakeGoogle;
let t: TestApp;
let key: string;
let accountId: string;
let oauthConnection: string;
let robotConnection: string;

beforeAll(async () => {
  fake = await startFakeGoogle({ clients: [CLIENT], serviceAccounts: [{ email: ROBOT, publicKey: keys.publicKey }] });
  t = await startTestApp({
    config: {
      publicUrl: PUBLIC_URL,
      destinations: destinations({
        SECRETS_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        GOOGLE_BASE_URL: fake.url,
        GOOGLE_CLIENT_ID: CLIENT.clientId,
        GOOGLE_CLIENT_SECRET: CLIENT.clientSecret,
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

async function destination(body: Record<string, unknown>) {
  return t.request('POST', '/api/v1/destinations', { key, body: { name: 'Sheet', kind: 'google_sheet', ...body } });
}

describe('connecting Google', () => {
  it('connects by Google’s OAuth flow with offline access, and knows whose account it is', async () => {
    const begun = await t.request('POST', '/api/v1/connections/oauth', {
      key,
      body: { provider: 'google', name: 'My Google' },
    });
    expect(begun.status, begun.text).toBe(200);
    const url = new URL(begun.body.authorizeUrl);
    expect(url.searchParams.get('access_type')).toBe('offline');
    const consent = await fetch(url, { redirect: 'manual' });
    expect(consent.status, await consent.clone().text()).toBe(302);
    const back = new URL(consent.headers.get('location') ?? '');
    const callback = await fetch(`${t.url}${back.pathname}${back.search}`, { redirect: 'manual' });
    const landed = new URL(callback.headers.get('location') ?? '', t.url);
    oauthConnection = landed.searchParams.get('connected') ?? '';
    expect(oauthConnection, landed.search).toMatch(/^con_/);
    const listed = (await t.request('GET', '/api/v1/connections', { key })).body.connections;
    expect(listed[0]).toMatchObject({ provider: 'google', method: 'oauth', externalName: fake.user });
    const [row] = await t.app.core
      .sql`select refresh_token, access_expires_at from provider_connection where id = ${oauthConnection}`;
    expect(row?.refresh_token).toBeTruthy();
    expect(row?.access_expires_at).toBeTruthy();
  });

  it('connects a service account by its key file, and refuses a file that is not one at its field', async () => {
    const notAKey = await t.request('POST', '/api/v1/connections/token', {
      key,
      body: { provider: 'google', name: 'Robot', token: '{"type":"authorized_user"}' },
    });
    expect(notAKey.status).toBe(400);
    expect(notAKey.body.error.details[0]).toEqual({
      path: 'token',
      message: 'must be a service account key (type service_account, with client_email and private_key)',
    });
    const stranger = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const unknown = await t.request('POST', '/api/v1/connections/token', {
      key,
      body: { provider: 'google', name: 'Robot', token: keyFile(stranger.privateKey) },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0]).toMatchObject({ path: 'token' });
    const made = await t.request('POST', '/api/v1/connections/token', {
      key,
      body: { provider: 'google', name: 'Robot', token: KEY_FILE },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body.connection).toMatchObject({ method: 'token', externalName: ROBOT });
    robotConnection = made.body.connection.id;
  });
});

describe('rows appended to a sheet', () => {
  it('checks the spreadsheet is shared with the connection and has the sheet, at their fields', async () => {
    const book = fake.addSpreadsheet({ title: 'Leads', sheets: ['Leads'] });
    const unshared = await destination({ connection: robotConnection, spreadsheet: book.spreadsheetId });
    expect(unshared.status).toBe(400);
    expect(unshared.body.error.details[0]).toEqual({
      path: 'spreadsheet',
      message: `Google has no such spreadsheet shared with ${ROBOT}`,
    });
    const noSheet = await destination({ connection: oauthConnection, spreadsheet: book.spreadsheetId, sheet: 'Q1' });
    expect(noSheet.body.error.details[0]).toEqual({
      path: 'sheet',
      message: 'the spreadsheet has no sheet named Q1; it has Leads',
    });
    const garbled = await destination({ connection: oauthConnection, spreadsheet: 'https://example.com/nope' });
    expect(garbled.body.error.details[0]).toMatchObject({ path: 'spreadsheet' });
  });

  it('writes the header once, then appends each delivery’s rows under it', async () => {
    const book = fake.addSpreadsheet({ title: 'Leads' });
    const made = await destination({
      connection: oauthConnection,
      spreadsheet: `https://docs.google.com/spreadsheets/d/${book.spreadsheetId}/edit#gid=0`,
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body.destination.settings).toEqual({ spreadsheet: book.spreadsheetId });
    const runId = await writeRun(t, accountId, 'lead-scraper', people('sheet', 30));
    // The access token has expired: refreshed with the refresh token first, and the new one kept.
    fake.expireAccessTokens();
    await t.app.core.sql`update provider_connection set access_expires_at = now() - interval '1 minute'
      where id = ${oauthConnection}`;
    const [before] = await t.app.core.sql`select access_token from provider_connection where id = ${oauthConnection}`;
    const from = fake.requests.length;
    const first = await deliver(t, key, accountId, runId, made.body.destination.id);
    expect(first).toMatchObject({ total: 30, sent: 30, created: 30, failed: 0 });
    expect(
      fake.requests
        .slice(from)
        .filter((r) => r.path === '/token')
        .map((r) => r.status),
    ).toEqual([200]);
    expect(fake.requests.slice(from).filter((r) => r.status === 401)).toEqual([]);
    const [after] = await t.app.core.sql`select access_token from provider_connection where id = ${oauthConnection}`;
    expect(after?.access_token).not.toBe(before?.access_token);
    await deliver(t, key, accountId, runId, made.body.destination.id);
    const values = fake.sheetValues(book.spreadsheetId, 'Sheet1');
    expect(values).toHaveLength(61);
    // The header is the download's: the tool's CSV headers.
    expect(values[0]?.slice(0, 5)).toEqual(['id', 'first_name', 'last_name', 'full_name', 'title']);
    expect(values.filter((row) => row[1] === 'first_name')).toHaveLength(1);
    expect(values[1]?.slice(0, 5)).toEqual(['', 'First0', 'Last0', 'First0 Last0', 'Owner']);
    expect(values[31]?.[1]).toBe('First0');
  });

  it('follows a header already in the sheet: its columns, its order, nothing it does not name', async () => {
    const book = fake.addSpreadsheet({ title: 'CRM import', sheets: ['Import'] });
    book.editors.add(ROBOT);
    book.sheets[0]!.cells = [['Email', 'Notes', 'First name']];
    const made = await destination({ connection: robotConnection, spreadsheet: book.spreadsheetId, sheet: 'Import' });
    expect(made.status, made.text).toBe(201);
    const runId = await writeRun(t, accountId, 'lead-scraper', people('header', 3));
    await deliver(t, key, accountId, runId, made.body.destination.id);
    expect(fake.sheetValues(book.spreadsheetId, 'Import')).toEqual([
      ['Email', 'Notes', 'First name'],
      ['person0.header@acme-0.com', '', 'First0'],
      ['person1.header@acme-1.com', '', 'First1'],
      ['person2.header@acme-2.com', '', 'First2'],
    ]);
  });

  it('backs off when the per-minute quota answers 429, and appends each row once', async () => {
    const book = fake.addSpreadsheet({ title: 'Quota' });
    const made = await destination({ connection: oauthConnection, spreadsheet: book.spreadsheetId });
    const runId = await writeRun(t, accountId, 'lead-scraper', people('quota', 5));
    const from = fake.requests.length;
    fake.exhaustQuota(2);
    const delivered = await deliver(t, key, accountId, runId, made.body.destination.id);
    expect(delivered).toMatchObject({ created: 5, failed: 0 });
    const appends = fake.requests.slice(from).filter((r) => r.path.endsWith(':append'));
    expect(appends.map((r) => r.status)).toEqual([429, 429, 200, 200]);
    expect(fake.sheetValues(book.spreadsheetId, 'Sheet1')).toHaveLength(6);
  });

  it('a delivery cut short after an append it had not recorded resumes without appending those rows again', async () => {
    const book = fake.addSpreadsheet({ title: 'Resume' });
    const made = await destination({ connection: oauthConnection, spreadsheet: book.spreadsheetId });
    const runId = await writeRun(t, accountId, 'lead-scraper', people('resume', 1_200));
    const done = await deliver(t, key, accountId, runId, made.body.destination.id);
    expect(fake.sheetValues(book.spreadsheetId, 'Sheet1')).toHaveLength(1_201);
    // As a worker killed after Sheets took rows 500 to 1,199 but before it recorded them: the delivery
    // says row 500 is next, and its cursor counts the sheet's rows as they were then.
    const [state] = await t.app.core.sql`select cursor from delivery where id = ${done.id}`;
    const rowsAfterAll = (state?.cursor as { sheetRows: number } | undefined)?.sheetRows ?? 0;
    await t.app.core.sql`update delivery set status = 'running', next_offset = 500, sent = 500, created = 500,
      cursor = ${JSON.stringify({ sheetRows: rowsAfterAll - 700 })}::jsonb where id = ${done.id}`;
    await runDelivery(t.app.core, done.id);
    const resumed = (await deliveryLog(t, key, done.id)).delivery;
    expect(resumed).toMatchObject({ status: 'succeeded', sent: 1_200, created: 1_200 });
    expect(fake.sheetValues(book.spreadsheetId, 'Sheet1')).toHaveLength(1_201);
  });
});
