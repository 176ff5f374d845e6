import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import jsforce from 'jsforce';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectedApp, type FakeSalesforce, startFakeSalesforce } from '../helpers/fakes/salesforce.ts';

/**
 * The local Salesforce (helpers/fakes/salesforce.ts) driven only through the official client, jsforce
 * 3.10.16, as the destinations will drive it: `new jsforce.Connection({ oauth2: { loginUrl, clientId,
 * clientSecret, redirectUri } })`, the user's consent given by following the authorization URL as a
 * browser would (`fake.consent`).
 *
 * What jsforce does with answers, checked here:
 * - It speaks API version 50.0 unless `version` is given, and picks the sObject Collections upsert
 *   (`PATCH /composite/sobjects/:type/:extField`) for an array from 46.0: at most 200 records a call,
 *   more is Salesforce's 400 `EXCEEDED_ID_LIMIT` unless `allowRecursive: true` (then 200 a call).
 * - Per-record failures resolve (`success: false`, `errors: [{statusCode, message, fields}]`: jsforce's
 *   type says `errorCode`, the wire says `statusCode`); whole-request errors reject with an error whose
 *   `name` and `errorCode` are Salesforce's errorCode and `message` its message.
 * - Any 401 from the REST API (a 401 carrying INVALID_SESSION_ID from Bulk API 2.0) makes it refresh
 *   the access token with the refresh token, once for concurrent calls, and retry; the `refresh` event
 *   gives the new token. A refused refresh rejects "Unable to refresh session due to: <error_description>".
 * - `bulk2.loadAndWaitForResults` creates, uploads, closes, polls every `pollInterval` (1 s unless
 *   given) up to `pollTimeout` (30 s), then reads the three result files (all values strings). A Failed
 *   job rejects "Ingest job failed to complete due to: <errorMessage>" and jsforce deletes the job
 *   (unprocessed records gone with it): a caller that needs them drives `createJob` itself.
 * - Token revocation errors are read as form data, so Salesforce's JSON error surfaces as
 *   `ERROR_HTTP_400` with the raw body as the message.
 */

const APP: ConnectedApp = {
  clientId: '3MVG9leadgateTestConsumerKey.forTheFakeOrg_0123456789',
  clientSecret: 'F4C3D1E2B3A4958677665544332211000FFEEDDCCBBAA99887766554433221100',
  callbackUrls: ['https://gateway.leadgate.test/oauth/salesforce/callback'],
};
const REDIRECT = APP.callbackUrls[0]!;
/** Job answers captured from real orgs (test/fixtures/salesforce/SOURCES.md). */
const JOB = JSON.parse(
  readFileSync(new URL('../fixtures/salesforce/ingest-job-lifecycle.json', import.meta.url), 'utf8'),
) as Record<
  'created' | 'openBeforeUpload' | 'openAfterUpload' | 'closed' | 'complete' | 'failed',
  Record<string, unknown>
>;
const EXT = 'Leadgate_Id__c';

let fake: FakeSalesforce;

beforeAll(async () => {
  fake = await startFakeSalesforce({ apps: [APP] });
});

afterAll(async () => {
  await fake.close();
});

function newConnection(oauth2: Partial<{ clientId: string; clientSecret: string; redirectUri: string }> = {}) {
  return new jsforce.Connection({
    oauth2: {
      loginUrl: fake.url,
      clientId: APP.clientId,
      clientSecret: APP.clientSecret,
      redirectUri: REDIRECT,
      ...oauth2,
    },
  });
}

/** The consent step: the authorization URL followed as the user's browser would, to the callback. */
async function consent(conn: jsforce.Connection, state = `state-${Math.random()}`) {
  const back = await fake.consent(conn.oauth2.getAuthorizationUrl({ state, scope: 'api refresh_token' }));
  return { back, state, code: back.searchParams.get('code') };
}

/** A connection authorized through the web server flow. */
async function connected() {
  const conn = newConnection();
  const { code } = await consent(conn);
  await conn.authorize(code!);
  return conn;
}

/** A record error as sent: `statusCode`, where jsforce's type says `errorCode`. */
interface WireError {
  statusCode: string;
  message: string;
  fields: string[];
}
const wireErrors = (result: { errors: unknown[] }) => result.errors as unknown as WireError[];
/** Result rows as parsed from the CSV: every value a string. */
const rows = (results: unknown) => results as Record<string, string>[];

async function rejection(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (err) {
    return err as Error & { errorCode?: string; data?: unknown };
  }
  throw new Error('expected a rejection');
}

describe('OAuth 2.0 web server flow', () => {
  it('consents, then exchanges the code for tokens signed as Salesforce signs them', async () => {
    const conn = newConnection();
    const { back, state, code } = await consent(conn);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe(state);
    expect(code).toMatch(/^aPrx/);

    const userInfo = await conn.authorize(code!);
    expect(userInfo).toEqual({
      id: fake.userId,
      organizationId: fake.orgId,
      url: `${fake.url}/id/${fake.orgId}/${fake.userId}`,
    });
    expect(conn.instanceUrl).toBe(fake.url);
    expect(conn.version).toBe('50.0');
    expect(conn.accessToken).toMatch(new RegExp(`^${fake.orgId.slice(0, 15)}!`));
    expect(conn.refreshToken).toMatch(/^5Aep861/);

    // The raw token answer (jsforce's OAuth2 class returns it as sent).
    const second = await consent(conn);
    const answer = await conn.oauth2.requestToken(second.code!);
    expect(Object.keys(answer).sort()).toEqual(
      ['access_token', 'id', 'instance_url', 'issued_at', 'refresh_token', 'scope', 'signature', 'token_type'].sort(),
    );
    expect(answer.token_type).toBe('Bearer');
    expect(answer.scope).toBe('api refresh_token');
    expect(answer.signature).toBe(
      createHmac('sha256', APP.clientSecret)
        .update(answer.id + answer.issued_at)
        .digest('base64'),
    );

    // A code is good once.
    const reused = await rejection(newConnection().authorize(second.code!));
    expect(reused.name).toBe('invalid_grant');
    expect(reused.message).toBe('expired authorization code');
  });

  it('refuses unknown clients, callbacks and secrets as Salesforce does', async () => {
    const stranger = await fake.consent(newConnection({ clientId: '3MVG9unknown' }).oauth2.getAuthorizationUrl({}));
    expect(stranger.pathname).toBe('/setup/secur/RemoteAccessErrorPage.apexp');
    expect(stranger.searchParams.get('error')).toBe('invalid_client_id');
    expect(stranger.searchParams.get('error_description')).toBe('client identifier invalid');

    const elsewhere = await fake.consent(
      newConnection({ redirectUri: 'https://attacker.example/callback' }).oauth2.getAuthorizationUrl({}),
    );
    expect(elsewhere.origin).toBe(fake.url);
    expect(elsewhere.searchParams.get('error')).toBe('redirect_uri_mismatch');

    const { code } = await consent(newConnection());
    const wrongSecret = await rejection(newConnection({ clientSecret: 'not-the-secret' }).authorize(code!));
    expect(wrongSecret.name).toBe('invalid_client');
    expect(wrongSecret.message).toBe('invalid client credentials');
  });

  it('refreshes an expired session by itself, and fails once the refresh token is gone', async () => {
    const conn = await connected();
    const refreshed: string[] = [];
    conn.on('refresh', (accessToken: string) => refreshed.push(accessToken));
    const before = conn.accessToken;
    const from = fake.requests.length;

    fake.expireAccessTokens();
    const limits = await conn.limits();
    expect(limits.DailyApiRequests?.Max).toBe(15_000);
    expect(refreshed).toHaveLength(1);
    expect(conn.accessToken).toBe(refreshed[0]);
    expect(conn.accessToken).not.toBe(before);
    expect(fake.requests.slice(from).map((r) => [r.method, r.path, r.status, r.grantType])).toEqual([
      ['GET', '/services/data/v50.0/limits', 401, undefined],
      ['POST', '/services/oauth2/token', 200, 'refresh_token'],
      ['GET', '/services/data/v50.0/limits', 200, undefined],
    ]);

    fake.expireRefreshTokens();
    fake.expireAccessTokens();
    const gone = await rejection(conn.limits());
    expect(gone.message).toBe('Unable to refresh session due to: expired access/refresh token');
  });

  it('revokes a refresh token and the sessions it made', async () => {
    const conn = await connected();
    await conn.oauth2.revokeToken(conn.refreshToken!);
    const after = await rejection(conn.limits());
    expect(after.message).toBe('Unable to refresh session due to: expired access/refresh token');

    const again = await rejection(conn.oauth2.revokeToken(conn.refreshToken!));
    expect(again.name).toBe('ERROR_HTTP_400');
    expect(JSON.parse(again.message)).toEqual({ error: 'invalid_token', error_description: 'Token was invalid' });
  });
});

describe('REST API', () => {
  let conn: jsforce.Connection;
  beforeAll(async () => {
    conn = await connected();
  });

  it('answers limits, counts every call, and refuses calls past the daily allowance', async () => {
    const limits = await conn.limits();
    const { used, max } = fake.apiUsage();
    expect(limits.DailyApiRequests).toEqual({ Max: max, Remaining: max - used });
    expect(conn.limitInfo).toEqual({ apiUsage: { used, limit: max } });
    await conn.limits();
    expect(fake.apiUsage().used).toBe(used + 1);

    fake.exhaustDailyAllowance();
    const refused = await rejection(conn.limits());
    expect(refused.name).toBe('REQUEST_LIMIT_EXCEEDED');
    expect(refused.errorCode).toBe('REQUEST_LIMIT_EXCEEDED');
    expect(refused.message).toBe('TotalRequests Limit exceeded.');
    expect(fake.requests.at(-1)?.status).toBe(403);
    fake.setApiUsage(used + 1);
  });

  it('refuses malformed requests, unknown fields and versions it does not serve', async () => {
    const malformed = await rejection(
      conn.request({
        method: 'PATCH',
        url: `/composite/sobjects/Lead/${EXT}`,
        body: '{"allOrNone": false, "records": [',
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(malformed.name).toBe('JSON_PARSER_ERROR');
    const unknownField = await rejection(
      conn.sobject('Lead').upsert([{ [EXT]: 'odd-1', LastName: 'Odd', Company: 'Acme', Shoe_Size__c: 44 }], EXT),
    );
    expect(unknownField.name).toBe('INVALID_FIELD');
    expect(unknownField.message).toBe("No such column 'Shoe_Size__c' on sobject of type Lead");
    const unknownExternalId = await rejection(
      conn.sobject('Lead').upsert([{ Badge__c: 'b-1', LastName: 'X' }], 'Badge__c'),
    );
    expect(unknownExternalId.name).toBe('NOT_FOUND');

    const newer = new jsforce.Connection({ instanceUrl: fake.url, accessToken: conn.accessToken!, version: '62.0' });
    expect((await newer.limits()).DailyApiRequests?.Max).toBe(15_000);
    const future = new jsforce.Connection({ instanceUrl: fake.url, accessToken: conn.accessToken!, version: '99.0' });
    const unserved = await rejection(future.limits());
    expect(unserved.name).toBe('NOT_FOUND');
    const noSession = new jsforce.Connection({ instanceUrl: fake.url, accessToken: 'not-a-session' });
    const invalid = await rejection(noSession.limits());
    expect([invalid.name, invalid.message]).toEqual(['INVALID_SESSION_ID', 'Session expired or invalid']);
  });

  it('describes Lead and Contact', async () => {
    const lead = await conn.sobject('Lead').describe();
    const field = (name: string) => lead.fields.find((f) => f.name === name);
    expect(lead.keyPrefix).toBe('00Q');
    expect(field(EXT)).toMatchObject({ externalId: true, unique: true, type: 'string', length: 64 });
    expect(field('LastName')).toMatchObject({ nillable: false, length: 80 });
    expect(field('Company')).toMatchObject({ nillable: false, length: 255 });
    expect(field('Email')).toMatchObject({ type: 'email', length: 80 });
    expect(field('LeadSource')?.restrictedPicklist).toBe(true);
    expect(field('LeadSource')?.picklistValues?.map((p) => p.value)).toContain('Web');
    expect(field('Status')).toMatchObject({ nillable: false, defaultedOnCreate: true });
    const contact = await conn.sobject('Contact').describe();
    expect(contact.fields.find((f) => f.name === EXT)?.externalId).toBe(true);
    const missing = await rejection(conn.sobject('Prospect__c').describe());
    expect(missing.name).toBe('NOT_FOUND');
  });

  it('upserts leads by external id with sObject Collections, one result per record', async () => {
    const leads = [
      {
        [EXT]: 'rest-1',
        FirstName: 'Ada',
        LastName: 'Lovelace',
        Company: 'Analytical Engines',
        Email: 'ada@example.com',
      },
      { [EXT]: 'rest-2', LastName: 'Hopper', Company: 'Navy', LeadSource: 'Web' },
      { [EXT]: 'rest-3', FirstName: 'Nobody' },
      { [EXT]: 'rest-4', LastName: 'Typo', Company: 'Acme', Email: 'ada@@example' },
      { [EXT]: 'rest-5', LastName: 'Billboard', Company: 'Acme', LeadSource: 'Billboard' },
    ];
    const results = await conn.sobject('Lead').upsert(leads, EXT);
    expect(results.map((r) => [r.success, r.created])).toEqual([
      [true, true],
      [true, true],
      [false, false],
      [false, false],
      [false, false],
    ]);
    expect(results[0]?.id).toMatch(/^00Q\w{15}$/);
    expect(results.slice(2).map(wireErrors)).toEqual([
      [
        {
          statusCode: 'REQUIRED_FIELD_MISSING',
          message: 'Required fields are missing: [LastName, Company]',
          fields: ['LastName', 'Company'],
        },
      ],
      [
        {
          statusCode: 'INVALID_EMAIL_ADDRESS',
          message: 'Email: invalid email address: ada@@example',
          fields: ['Email'],
        },
      ],
      [
        {
          statusCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
          message: 'Lead Source: bad value for restricted picklist field: Billboard',
          fields: ['LeadSource'],
        },
      ],
    ]);
    const ada = fake.findByExternalId('Lead', EXT, 'REST-1');
    expect(ada).toMatchObject({ Id: results[0]?.id, Status: 'Open - Not Contacted', OwnerId: fake.userId });

    // The same external id updates, never duplicates.
    const count = fake.records('Lead').length;
    const again = await conn.sobject('Lead').upsert([{ [EXT]: 'rest-1', Title: 'Countess' }], EXT);
    expect(again).toEqual([{ id: results[0]?.id, success: true, errors: [], created: false }]);
    expect(fake.records('Lead')).toHaveLength(count);
    expect(fake.findByExternalId('Lead', EXT, 'rest-1')).toMatchObject({ Title: 'Countess', LastName: 'Lovelace' });

    // One record (not an array) goes to PATCH /sobjects/Lead/Leadgate_Id__c/<value>: a failure rejects.
    const single = await conn.sobject('Lead').upsert({ [EXT]: 'rest-9', LastName: 'Single', Company: 'Acme' }, EXT);
    expect(single).toMatchObject({ success: true, created: true, errors: [] });
    const singleAgain = await conn.sobject('Lead').upsert({ [EXT]: 'rest-9', Title: 'Updated' }, EXT);
    expect(singleAgain).toEqual({ id: single.id, success: true, errors: [], created: false });
    const singleBad = await rejection(conn.sobject('Lead').upsert({ [EXT]: 'rest-10', LastName: 'NoCompany' }, EXT));
    expect([singleBad.name, singleBad.message]).toEqual([
      'REQUIRED_FIELD_MISSING',
      'Required fields are missing: [Company]',
    ]);
  });

  it('rolls back with allOrNone, refuses duplicates in a call and more than 200 records', async () => {
    const count = fake.records('Lead').length;
    const rolledBack = await conn.sobject('Lead').upsert(
      [
        { [EXT]: 'aon-1', LastName: 'Fine', Company: 'Acme' },
        { [EXT]: 'aon-2', LastName: 'Long', Company: 'x'.repeat(256) },
      ],
      EXT,
      { allOrNone: true },
    );
    expect(rolledBack.map((r) => wireErrors(r)[0]?.statusCode)).toEqual([
      'ALL_OR_NONE_OPERATION_ROLLED_BACK',
      'STRING_TOO_LONG',
    ]);
    expect(rolledBack[1]?.errors[0]?.message).toBe(
      `Company: data value too large: ${'x'.repeat(256)} (max length=255)`,
    );
    expect(fake.records('Lead')).toHaveLength(count);

    const twice = await conn.sobject('Lead').upsert(
      [
        { [EXT]: 'dup-1', LastName: 'One', Company: 'Acme' },
        { [EXT]: 'DUP-1', LastName: 'Two', Company: 'Acme' },
      ],
      EXT,
    );
    expect(twice.map((r) => wireErrors(r)[0])).toEqual([
      { statusCode: 'DUPLICATE_VALUE', message: 'Duplicate external id specified: dup-1', fields: [EXT] },
      { statusCode: 'DUPLICATE_VALUE', message: 'Duplicate external id specified: dup-1', fields: [EXT] },
    ]);

    const many = Array.from({ length: 250 }, (_, i) => ({ [EXT]: `many-${i}`, LastName: `L${i}`, Company: 'Acme' }));
    const tooMany = await rejection(conn.sobject('Lead').upsert(many, EXT));
    expect(tooMany.name).toBe('EXCEEDED_ID_LIMIT');
    expect(tooMany.message).toBe('record limit reached. cannot submit more than 200 records into this call');
    const split = await conn.sobject('Lead').upsert(many, EXT, { allowRecursive: true });
    expect(split.filter((r) => r.success)).toHaveLength(250);
    expect(fake.records('Lead')).toHaveLength(count + 250);
  });
});

describe('Bulk API 2.0 ingest', () => {
  let conn: jsforce.Connection;
  beforeAll(async () => {
    conn = await connected();
  });

  const HEADER = `${EXT},FirstName,LastName,Company,Email,LeadSource`;
  /** Row i, every 500th (from 1 to 4) invalid in its own way. */
  function row(i: number) {
    const kind = i % 500;
    const lastName = kind === 1 ? '' : `Last${i}`;
    const email = kind === 2 ? 'not-an-email' : `lead${i}@example.com`;
    const company = kind === 3 ? 'C'.repeat(256) : `"Company ${i}, Inc."`;
    const source = kind === 4 ? 'Billboard' : 'Web';
    return `bulk-${i},First${i},${lastName},${company},${email},${source}`;
  }
  const csv = `${HEADER}\n${Array.from({ length: 10_000 }, (_, i) => row(i)).join('\n')}\n`;

  it('upserts 10,000 rows, reporting each failed row as the guide words it', async () => {
    // Two leads exist already: their rows update.
    await conn.sobject('Lead').upsert(
      [
        { [EXT]: 'bulk-0', LastName: 'Before', Company: 'Before Inc.' },
        { [EXT]: 'bulk-10', LastName: 'Before', Company: 'Before Inc.' },
      ],
      EXT,
    );
    const count = fake.records('Lead').length;
    const from = fake.requests.length;
    // Bulk API 2.0 refreshes an expired session too.
    fake.expireAccessTokens();

    const results = await conn.bulk2.loadAndWaitForResults({
      object: 'Lead',
      operation: 'upsert',
      externalIdFieldName: EXT,
      input: csv,
      pollInterval: 100,
      pollTimeout: 10_000,
    });
    const successfulResults = rows(results.successfulResults);
    const failedResults = rows(results.failedResults);
    const unprocessedRecords = rows(results.unprocessedRecords);

    expect(successfulResults).toHaveLength(10_000 - 80);
    expect(failedResults).toHaveLength(80);
    expect(unprocessedRecords).toEqual([]);
    expect(Object.keys(successfulResults[0]!)).toEqual([
      'sf__Id',
      'sf__Created',
      EXT,
      'FirstName',
      'LastName',
      'Company',
      'Email',
      'LeadSource',
    ]);
    const success = (ext: string) => successfulResults.find((r) => r[EXT] === ext);
    expect(success('bulk-0')).toMatchObject({ sf__Created: 'false', LastName: 'Last0', Company: 'Company 0, Inc.' });
    expect(success('bulk-5')?.sf__Created).toBe('true');
    expect(success('bulk-5')?.sf__Id).toMatch(/^00Q\w{15}$/);
    const failure = (ext: string) => failedResults.find((r) => r[EXT] === ext);
    expect(failure('bulk-1')).toMatchObject({
      sf__Id: '',
      sf__Error: 'REQUIRED_FIELD_MISSING:Required fields are missing: [LastName]:LastName --',
    });
    expect(failure('bulk-502')?.sf__Error).toBe(
      'INVALID_EMAIL_ADDRESS:Email: invalid email address: not-an-email:Email --',
    );
    expect(failure('bulk-3')?.sf__Error).toBe(
      `STRING_TOO_LONG:Company: data value too large: ${'C'.repeat(256)} (max length=255):Company --`,
    );
    expect(failure('bulk-4')?.sf__Error).toBe(
      'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST:Lead Source: bad value for restricted picklist field: Billboard:LeadSource --',
    );
    expect(fake.records('Lead')).toHaveLength(count + 10_000 - 80 - 2);

    // What went over the wire: refresh, create, upload, close, polls through the real states, results.
    const calls = fake.requests.slice(from).map((r) => `${r.method} ${r.path.replace(/750\w{15}/, ':id')} ${r.status}`);
    expect(calls).toEqual([
      'POST /services/data/v50.0/jobs/ingest 401',
      'POST /services/oauth2/token 200',
      'POST /services/data/v50.0/jobs/ingest 200',
      'PUT /services/data/v50.0/jobs/ingest/:id/batches 201',
      'PATCH /services/data/v50.0/jobs/ingest/:id 200',
      'GET /services/data/v50.0/jobs/ingest/:id 200',
      'GET /services/data/v50.0/jobs/ingest/:id 200',
      'GET /services/data/v50.0/jobs/ingest/:id 200',
      'GET /services/data/v50.0/jobs/ingest/:id/successfulResults 200',
      'GET /services/data/v50.0/jobs/ingest/:id/failedResults 200',
      'GET /services/data/v50.0/jobs/ingest/:id/unprocessedrecords 200',
    ]);
    const job = [...fake.jobs.values()].at(-1)!;
    expect(job).toMatchObject({ state: 'JobComplete', batchesDone: 1, object: 'Lead', externalIdFieldName: EXT });

    // The same file again: every row an update, no lead twice.
    const again = await conn.bulk2.loadAndWaitForResults({
      object: 'Lead',
      operation: 'upsert',
      externalIdFieldName: EXT,
      input: csv,
      pollInterval: 100,
    });
    expect(again.successfulResults).toHaveLength(10_000 - 80);
    expect(again.successfulResults.every((r) => r.sf__Created === 'false')).toBe(true);
    expect(fake.records('Lead')).toHaveLength(count + 10_000 - 80 - 2);
  });

  it('passes through UploadComplete, InProgress and JobComplete poll by poll, in the shapes a real org answers', async () => {
    /** The keys of a captured job answer (test/fixtures/salesforce), and externalIdFieldName for an upsert. */
    const keysOf = (captured: Record<string, unknown>) => [...Object.keys(captured), 'externalIdFieldName'].sort();
    const keys = (info: object) => Object.keys(info).sort();

    const job = conn.bulk2.createJob({ object: 'Contact', operation: 'upsert', externalIdFieldName: EXT });
    const opened = await job.open();
    expect(keys(opened)).toEqual(keysOf(JOB.created));
    expect(opened).toMatchObject({
      state: 'Open',
      apiVersion: 50,
      contentUrl: `services/data/v50.0/jobs/ingest/${opened.id}/batches`,
      lineEnding: 'LF',
      columnDelimiter: 'COMMA',
    });
    expect(keys(await job.check())).toEqual(keysOf(JOB.openBeforeUpload));
    await job.uploadData(`${EXT},LastName\ncontact-1,One\ncontact-2,\n`);
    expect(keys(await job.check())).toEqual(keysOf(JOB.openAfterUpload));
    // jsforce refuses a second upload on the same object; Salesforce refuses it from any client.
    const second = await rejection(job.uploadData(`${EXT},LastName\ncontact-3,Three\n`));
    expect(second.message).toBe('Data can only be uploaded to a job once.');
    const sameJob = conn.bulk2.job('ingest', { id: opened.id! });
    const again = await rejection(sameJob.uploadData(`${EXT},LastName\ncontact-3,Three\n`));
    expect(again.name).toBe('BULK_API_ERROR');
    expect(again.message).toMatch(/^Found multiple contents for job: <750\w{15}>/);

    await job.close();
    expect(keys(job.getInfo())).toEqual(keysOf(JOB.closed));
    const states = [];
    for (let i = 0; i < 3; i++) {
      const info = await job.check();
      states.push(info.state);
      if (info.state !== 'UploadComplete') expect(keys(info)).toEqual(keysOf(JOB.complete));
    }
    expect(states).toEqual(['UploadComplete', 'InProgress', 'JobComplete']);
    expect(job.getInfo()).toMatchObject({ numberRecordsProcessed: 2, numberRecordsFailed: 1, jobType: 'V2Ingest' });
    const results = await job.getAllResults();
    expect(rows(results.successfulResults).map((r) => r[EXT])).toEqual(['contact-1']);
    expect(results.failedResults[0]?.sf__Error).toBe(
      'REQUIRED_FIELD_MISSING:Required fields are missing: [LastName]:LastName --',
    );
    await job.delete();
    expect(fake.jobs.get(opened.id!)?.deleted).toBe(true);
  });

  it('fails a job as Salesforce does, and keeps its unprocessed rows', async () => {
    const unknownColumn = await rejection(
      conn.bulk2.loadAndWaitForResults({
        object: 'Lead',
        operation: 'upsert',
        externalIdFieldName: EXT,
        input: `${EXT},LastName,Company,Fax_Number__c\nfail-1,Doe,Acme,555\n`,
        pollInterval: 50,
      }),
    );
    expect(unknownColumn.message).toBe(
      'Ingest job failed to complete due to: InvalidBatch : Field name not found : Fax_Number__c',
    );
    const failedJob = [...fake.jobs.values()].at(-1)!;
    await expect.poll(() => failedJob.deleted).toBe(true);

    const crlf = await rejection(
      conn.bulk2.loadAndWaitForResults({
        object: 'Lead',
        operation: 'upsert',
        externalIdFieldName: EXT,
        input: `${EXT},LastName,Company\r\nfail-2,Doe,Acme\r\n`,
        pollInterval: 50,
      }),
    );
    expect(crlf.message).toBe(
      'Ingest job failed to complete due to: ClientInputError : LineEnding is invalid on user data. Current LineEnding setting is LF',
    );

    // A poll timeout rejects (name JobPollingTimeout, with jobId), and jsforce 3.10.16 still deletes the
    // job: it skips the clean-up only for the name 'JobPollingTimeoutError', which it never gives.
    fake.jobPolls = { uploadComplete: 1_000, inProgress: 1 };
    const slow = await rejection(
      conn.bulk2.loadAndWaitForResults({
        object: 'Lead',
        operation: 'upsert',
        externalIdFieldName: EXT,
        input: `${EXT},LastName,Company\nslow-1,Doe,Acme\n`,
        pollInterval: 20,
        pollTimeout: 150,
      }),
    );
    fake.jobPolls = { uploadComplete: 1, inProgress: 1 };
    expect(slow.name).toBe('JobPollingTimeout');
    const slowJob = [...fake.jobs.values()].at(-1)!;
    expect((slow as Error & { jobId?: string }).jobId).toBe(slowJob.id);
    await expect.poll(() => slowJob.deleted).toBe(true);

    fake.failNextJob('InternalServerError : a batch failed after 20 retries');
    const job = conn.bulk2.createJob({ object: 'Lead', operation: 'upsert', externalIdFieldName: EXT });
    await job.open();
    await job.uploadData(
      `${EXT},LastName,Company\n${Array.from({ length: 30 }, (_, i) => `left-${i},Doe,Acme`).join('\n')}\n`,
    );
    await job.close();
    const failed = await rejection(job.poll(50, 5_000));
    expect(failed.message).toBe(
      'Ingest job failed to complete due to: InternalServerError : a batch failed after 20 retries',
    );
    expect(Object.keys(job.getInfo()).sort()).toEqual(Object.keys(JOB.failed).sort());
    expect(job.getInfo()).toMatchObject({ state: 'Failed', numberRecordsProcessed: 0, numberRecordsFailed: 0 });
    const left = await job.getAllResults();
    expect([left.successfulResults.length, left.failedResults.length, left.unprocessedRecords.length]).toEqual([
      0, 0, 30,
    ]);
    expect(left.unprocessedRecords[0]).toEqual({ [EXT]: 'left-0', LastName: 'Doe', Company: 'Acme' });
    expect(fake.findByExternalId('Lead', EXT, 'left-0')).toBeUndefined();
  });
});
