import { generateKeyPairSync } from 'node:crypto';
import { auth, type MethodOptions, sheets } from '@googleapis/sheets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import oauthFixtures from '../fixtures/google/oauth.json' with { type: 'json' };
import sheetsErrors from '../fixtures/google/sheets-errors.json' with { type: 'json' };
import sheetsResponses from '../fixtures/google/sheets-responses.json' with { type: 'json' };
import { type FakeGoogle, SCOPES, startFakeGoogle } from '../helpers/fakes/google.ts';

/**
 * The local Google (test/helpers/fakes/google.ts) driven only through the official clients: the
 * OAuth2Client and JWT of google-auth-library, as `@googleapis/sheets` exports them (`auth`), and the
 * generated Sheets v4 client. Bodies are checked against the fixtures taken from Google's references
 * (test/fixtures/google/SOURCES.md).
 */

type OAuth2Client = InstanceType<typeof auth.OAuth2>;
type JWTClient = InstanceType<typeof auth.JWT>;

/** What google-auth-library's GaxiosError carries, read where the gateway will read it. */
interface ClientError {
  message: string;
  status?: number;
  code?: unknown;
  response?: { status: number; data: unknown; headers: Headers };
}

async function failure(promise: Promise<unknown>): Promise<ClientError> {
  try {
    await promise;
  } catch (err) {
    return err as ClientError;
  }
  throw new Error('expected the call to fail');
}

const SERVICE_ACCOUNT = 'leadgate-writer@leadgate-test.iam.gserviceaccount.com';
const keys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

let fake: FakeGoogle;

beforeAll(async () => {
  fake = await startFakeGoogle({ serviceAccounts: [{ email: SERVICE_ACCOUNT, publicKey: keys.publicKey }] });
});
afterAll(() => fake.close());

/** An OAuth2Client pointed at the fake: google-auth-library takes its OAuth URLs as `endpoints`. */
function oauthClient(extra: { forceRefreshOnFailure?: boolean } = {}): OAuth2Client {
  return new auth.OAuth2({
    clientId: fake.client.clientId,
    clientSecret: fake.client.clientSecret,
    redirectUri: fake.client.redirectUris[0],
    endpoints: fake.endpoints,
    ...extra,
  });
}

/**
 * The service-account client: gtoken (which JWT uses for its token) posts to the hard-coded
 * https://oauth2.googleapis.com/token whatever `endpoints` says, so its requests are re-addressed on the
 * client's own transporter (a gaxios instance) with a request interceptor. The JWT's `aud` claim stays
 * https://oauth2.googleapis.com/token, as Google requires.
 */
function serviceAccountClient(privateKey: string, scopes: string[] = [SCOPES.spreadsheets]): JWTClient {
  const client = new auth.JWT({ email: SERVICE_ACCOUNT, key: privateKey, scopes });
  client.transporter.interceptors.request.add({
    resolved: async (config) => {
      const target = new URL(config.url);
      if (target.origin === 'https://oauth2.googleapis.com')
        config.url = new URL(target.pathname + target.search, fake.url);
      return config;
    },
  });
  return client;
}

/** The consent screen: follows the authorization URL and reads the redirect, as a browser would. */
async function consent(url: string) {
  const res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  return { status: res.status, location: location ? new URL(location) : null, body: location ? '' : await res.text() };
}

async function authorizedUser(options: { prompt?: string; extra?: { forceRefreshOnFailure?: boolean } } = {}) {
  const client = oauthClient(options.extra);
  const url = client.generateAuthUrl({
    access_type: 'offline',
    scope: [SCOPES.spreadsheets],
    state: 'state-123',
    ...(options.prompt ? { prompt: options.prompt } : {}),
  });
  const { location } = await consent(url);
  const { tokens } = await client.getToken(location!.searchParams.get('code')!);
  client.setCredentials(tokens);
  return { client, tokens };
}

const sheetsApi = (client?: OAuth2Client | JWTClient) =>
  sheets({ version: 'v4', rootUrl: fake.rootUrl, ...(client ? { auth: client } : {}) });

describe('OAuth 2.0 through google-auth-library', () => {
  it('consents at once: a 302 to the redirect URI with the code, the state and the granted scope', async () => {
    const client = oauthClient();
    const url = client.generateAuthUrl({ access_type: 'offline', scope: [SCOPES.spreadsheets], state: 'abc' });
    expect(url.startsWith(fake.endpoints.oauth2AuthBaseUrl)).toBe(true);
    const { status, location } = await consent(url);
    expect(status).toBe(302);
    expect(`${location!.origin}${location!.pathname}`).toBe(fake.client.redirectUris[0]);
    expect(location!.searchParams.get('state')).toBe('abc');
    expect(location!.searchParams.get('code')).toMatch(/^4\/0A/);
    expect(location!.searchParams.get('scope')).toBe(SCOPES.spreadsheets);
  });

  it("refuses an unknown client and an unregistered redirect URI on Google's error page, not a redirect", async () => {
    const stranger = new auth.OAuth2({
      clientId: 'nobody.apps.googleusercontent.com',
      redirectUri: fake.client.redirectUris[0],
      endpoints: fake.endpoints,
    });
    const unknown = await consent(stranger.generateAuthUrl({ scope: [SCOPES.spreadsheets] }));
    expect(unknown.status).toBe(401);
    expect(unknown.body).toContain('Error 401: invalid_client');
    expect(unknown.body).toContain('The OAuth client was not found.');

    const elsewhere = oauthClient().generateAuthUrl({
      scope: [SCOPES.spreadsheets],
      redirect_uri: 'https://evil.example/callback',
    });
    const mismatch = await consent(elsewhere);
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toContain('Error 400: redirect_uri_mismatch');

    fake.consent = 'deny';
    try {
      const denied = await consent(oauthClient().generateAuthUrl({ scope: [SCOPES.spreadsheets], state: 's' }));
      expect(denied.location!.searchParams.get('error')).toBe('access_denied');
      expect(denied.location!.searchParams.get('state')).toBe('s');
    } finally {
      fake.consent = 'grant';
    }
  });

  it('exchanges the code once; access_type=offline gives a refresh token on the first consent only', async () => {
    const other = await startFakeGoogle();
    try {
      const client = new auth.OAuth2({
        clientId: other.client.clientId,
        clientSecret: other.client.clientSecret,
        redirectUri: other.client.redirectUris[0],
        endpoints: other.endpoints,
      });
      const codeOf = async (prompt?: string) => {
        const url = client.generateAuthUrl({
          access_type: 'offline',
          scope: [SCOPES.spreadsheets],
          ...(prompt ? { prompt } : {}),
        });
        return (await consent(url)).location!.searchParams.get('code')!;
      };
      const first = await codeOf();
      const { tokens, res } = await client.getToken(first);
      expect(res?.status).toBe(200);
      // google-auth-library turns `expires_in` into `expiry_date` (ms since the epoch).
      // google-auth-library turns the body's `expires_in` into `expiry_date` in place (res.data is tokens).
      const answered = Object.keys(oauthFixtures.tokenFromCode.body).map((k) =>
        k === 'expires_in' ? 'expiry_date' : k,
      );
      expect(Object.keys(tokens).sort()).toEqual(answered.sort());
      expect(tokens).toMatchObject({ token_type: 'Bearer', scope: SCOPES.spreadsheets });
      expect(tokens.expiry_date! - Date.now()).toBeGreaterThan(3590_000);

      const reused = await failure(client.getToken(first));
      expect(reused.message).toBe('invalid_grant');
      expect(reused.status).toBe(400);
      expect(reused.response?.data).toEqual(oauthFixtures.errors.codeInvalid.body);

      // Consenting again without prompt=consent gives no new refresh token (Google's documented rule).
      const again = await client.getToken(await codeOf());
      expect(again.tokens.refresh_token).toBeUndefined();
      const forced = await client.getToken(await codeOf('consent'));
      expect(forced.tokens.refresh_token).toMatch(/^1\/\/0/);
    } finally {
      await other.close();
    }
  });

  it("checks the redirect URI, the client's secret and the PKCE verifier at /token", async () => {
    const client = oauthClient();
    const codeOf = async (extra: Record<string, string> = {}) =>
      (await consent(client.generateAuthUrl({ scope: [SCOPES.spreadsheets], ...extra }))).location!.searchParams.get(
        'code',
      )!;

    const mismatch = await failure(client.getToken({ code: await codeOf(), redirect_uri: `${fake.url}/other` }));
    expect(mismatch.response?.data).toEqual(oauthFixtures.errors.redirectUriMismatch.body);

    const wrongSecret = new auth.OAuth2({
      clientId: fake.client.clientId,
      clientSecret: 'GOCSPX-wrong',
      redirectUri: fake.client.redirectUris[0],
      endpoints: fake.endpoints,
    });
    const unauthorized = await failure(wrongSecret.getToken(await codeOf()));
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.response?.data).toEqual(oauthFixtures.errors.clientSecretWrong.body);

    const { codeVerifier, codeChallenge } = await client.generateCodeVerifierAsync();
    const pkce = { code_challenge: codeChallenge!, code_challenge_method: 'S256' };
    const missing = await failure(client.getToken(await codeOf(pkce)));
    expect(missing.response?.data).toEqual(oauthFixtures.errors.codeVerifierMissing.body);
    const { tokens } = await client.getToken({ code: await codeOf(pkce), codeVerifier });
    expect(tokens.access_token).toMatch(/^ya29\./);
  });

  it('refreshes an expired token: ahead of time when the client knows, after a 401 only with forceRefreshOnFailure', async () => {
    const book = fake.addSpreadsheet({ title: 'Refresh', sheets: ['Leads'] });
    const { client, tokens } = await authorizedUser({ prompt: 'consent' });
    const seen: { access_token?: string | null; refresh_token?: string | null }[] = [];
    // The library mutates the emitted object afterwards (adding the kept refresh token): copy it.
    client.on('tokens', (t) => seen.push({ ...t }));
    const api = sheetsApi(client);
    await api.spreadsheets.values.get({ spreadsheetId: book.spreadsheetId, range: 'Leads' });

    // Google ends the token while the client still thinks it valid: the 401 surfaces, no refresh.
    fake.expireAccessTokens();
    const expired = await failure(
      api.spreadsheets.values.append({
        spreadsheetId: book.spreadsheetId,
        range: 'Leads!A1',
        valueInputOption: 'RAW',
        requestBody: { values: [['x']] },
      }),
    );
    expect(expired.status).toBe(401);
    expect(expired.response?.data).toEqual(sheetsErrors.accessTokenExpired.body);
    expect(expired.response?.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(seen).toEqual([]);

    // Once the client knows the token expired (expiry_date past), it refreshes before the call.
    client.setCredentials({ ...client.credentials, expiry_date: Date.now() - 1000 });
    const refreshesBefore = fake.requests.filter((r) => r.path === '/token').length;
    const read = await api.spreadsheets.values.get({ spreadsheetId: book.spreadsheetId, range: 'Leads' });
    expect(read.status).toBe(200);
    expect(fake.requests.filter((r) => r.path === '/token').length).toBe(refreshesBefore + 1);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.access_token).not.toBe(tokens.access_token);
    expect(seen[0]!.refresh_token).toBeUndefined();
    expect(client.credentials.refresh_token).toBe(tokens.refresh_token);

    // With forceRefreshOnFailure the client refreshes after a 401 and tries once more.
    const forced = await authorizedUser({ prompt: 'consent', extra: { forceRefreshOnFailure: true } });
    fake.expireAccessTokens();
    const retried = await sheetsApi(forced.client).spreadsheets.values.get({
      spreadsheetId: book.spreadsheetId,
      range: 'Leads',
    });
    expect(retried.status).toBe(200);
  });

  it('gets a service-account token with an RS256 assertion verified against the public key', async () => {
    const book = fake.addSpreadsheet({ title: 'Service', sheets: ['Leads'], editors: [SERVICE_ACCOUNT] });
    const jwt = serviceAccountClient(keys.privateKey);
    const { token } = await jwt.getAccessToken();
    expect(token).toMatch(/^ya29\./);
    const grant = fake.requests.findLast((r) => r.path === '/token');
    expect(grant?.status).toBe(200);
    const appended = await sheetsApi(jwt).spreadsheets.values.append({
      spreadsheetId: book.spreadsheetId,
      range: 'Leads',
      valueInputOption: 'RAW',
      requestBody: { values: [['from the service account']] },
    });
    expect(appended.status).toBe(200);
    expect(fake.requests.findLast((r) => r.path.includes(':append'))?.principal).toBe(SERVICE_ACCOUNT);

    const impostor = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const refused = await failure(serviceAccountClient(impostor.privateKey).getAccessToken());
    // gtoken rewrites the message to "<error>: <error_description>".
    expect(refused.message).toBe('invalid_grant: Invalid JWT Signature.');
    expect(refused.response?.data).toEqual(oauthFixtures.errors.jwtSignature.body);

    const badScope = await failure(
      serviceAccountClient(keys.privateKey, ['https://www.googleapis.com/auth/nope']).getAccessToken(),
    );
    expect(badScope.response?.data).toEqual(oauthFixtures.errors.scopeInvalid.body);
  });

  it('revokes: the grant ends, its refresh token with it, and a second revoke is invalid_token', async () => {
    const book = fake.addSpreadsheet({ title: 'Revoke', sheets: ['Leads'] });
    const { client, tokens } = await authorizedUser({ prompt: 'consent' });
    const revoked = await client.revokeToken(tokens.access_token!);
    expect(revoked.status).toBe(200);
    expect(fake.isRevoked(tokens.refresh_token!)).toBe(true);

    const stale = oauthClient();
    stale.setCredentials({ access_token: tokens.access_token, expiry_date: Date.now() + 3_000_000 });
    const denied = await failure(sheetsApi(stale).spreadsheets.get({ spreadsheetId: book.spreadsheetId }));
    expect(denied.status).toBe(401);
    expect(denied.response?.data).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });

    stale.setCredentials({ refresh_token: tokens.refresh_token });
    const refresh = await failure(stale.getAccessToken());
    expect(refresh.message).toBe('invalid_grant');
    expect(refresh.response?.data).toEqual(oauthFixtures.errors.refreshTokenRevoked.body);

    const again = await failure(client.revokeToken(tokens.access_token!));
    expect(again.status).toBe(400);
    expect(again.response?.data).toEqual(oauthFixtures.errors.revokeInvalidToken.body);
  });
});

describe('Sheets v4 through @googleapis/sheets', () => {
  it('appends a header then rows after the last row of the table, and reads them back', async () => {
    const book = fake.addSpreadsheet({ title: 'Leads export', sheets: ['Leads', "Q1 Leads 'draft'"] });
    const { client } = await authorizedUser();
    const api = sheetsApi(client);

    const meta = await api.spreadsheets.get({ spreadsheetId: book.spreadsheetId });
    expect(Object.keys(meta.data).sort()).toEqual(Object.keys(sheetsResponses.spreadsheetsGet).sort());
    expect(meta.data.sheets?.map((s) => s.properties?.title)).toEqual(['Leads', "Q1 Leads 'draft'"]);
    const titles = await api.spreadsheets.get({ spreadsheetId: book.spreadsheetId, fields: 'sheets.properties.title' });
    expect(titles.data).toEqual({
      sheets: [{ properties: { title: 'Leads' } }, { properties: { title: "Q1 Leads 'draft'" } }],
    });

    const header = await api.spreadsheets.values.append({
      spreadsheetId: book.spreadsheetId,
      range: 'Leads!A1',
      valueInputOption: 'RAW',
      insertDataOption: 'INSERT_ROWS',
      requestBody: { values: [['name', 'email', 'company', 'score']] },
    });
    expect(header.data).toEqual({
      spreadsheetId: book.spreadsheetId,
      updates: {
        spreadsheetId: book.spreadsheetId,
        updatedRange: 'Leads!A1:D1',
        updatedRows: 1,
        updatedColumns: 4,
        updatedCells: 4,
      },
    });
    expect(Object.keys(header.data).sort()).toEqual(Object.keys(sheetsResponses.valuesAppendToEmptySheet).sort());

    const rows = await api.spreadsheets.values.append({
      spreadsheetId: book.spreadsheetId,
      range: 'Leads!A1',
      valueInputOption: 'RAW',
      insertDataOption: 'INSERT_ROWS',
      requestBody: {
        values: [
          ['Ada Lovelace', 'ada@example.com', 'Analytical Engines', 92],
          ['Grace Hopper', 'grace@example.com', 'COBOL Inc', '=1+1'],
        ],
      },
    });
    expect(rows.data).toEqual({
      spreadsheetId: book.spreadsheetId,
      tableRange: 'Leads!A1:D1',
      updates: {
        spreadsheetId: book.spreadsheetId,
        updatedRange: 'Leads!A2:D3',
        updatedRows: 2,
        updatedColumns: 4,
        updatedCells: 8,
      },
    });
    expect(Object.keys(rows.data).sort()).toEqual(Object.keys(sheetsResponses.valuesAppend).sort());

    // RAW keeps a leading "=" as text; numbers stay numbers (and read back formatted).
    expect(fake.sheetValues(book.spreadsheetId, 'Leads')).toEqual([
      ['name', 'email', 'company', 'score'],
      ['Ada Lovelace', 'ada@example.com', 'Analytical Engines', '92'],
      ['Grace Hopper', 'grace@example.com', 'COBOL Inc', '=1+1'],
    ]);
    const read = await api.spreadsheets.values.get({ spreadsheetId: book.spreadsheetId, range: 'Leads!A1:D3' });
    expect(read.data).toEqual({
      range: 'Leads!A1:D3',
      majorDimension: 'ROWS',
      values: fake.sheetValues(book.spreadsheetId, 'Leads'),
    });
    const whole = await api.spreadsheets.values.get({ spreadsheetId: book.spreadsheetId, range: 'Leads' });
    expect(whole.data.range).toBe('Leads!A1:Z1003');

    // A quoted sheet name (an apostrophe doubled), and a table found from a range in the middle of it.
    const quoted = await api.spreadsheets.values.append({
      spreadsheetId: book.spreadsheetId,
      range: "'Q1 Leads ''draft'''!A:D",
      valueInputOption: 'USER_ENTERED',
      requestBody: {
        values: [
          ['a', '1'],
          ['b', 'TRUE'],
        ],
      },
    });
    expect(quoted.data.updates?.updatedRange).toBe("'Q1 Leads ''draft'''!A1:B2");
    const typed = await api.spreadsheets.values.get({
      spreadsheetId: book.spreadsheetId,
      range: "'Q1 Leads ''draft'''!A1:B2",
      valueRenderOption: 'UNFORMATTED_VALUE',
    });
    expect(typed.data.values).toEqual([
      ['a', 1],
      ['b', true],
    ]);
  });

  it('answers the limits and refusals with the bodies of the reference', async () => {
    const book = fake.addSpreadsheet({ title: 'Limits', sheets: ['Leads'] });
    const { client } = await authorizedUser();
    const api = sheetsApi(client);

    const tooLong = await failure(
      api.spreadsheets.values.append({
        spreadsheetId: book.spreadsheetId,
        range: 'Leads',
        valueInputOption: 'RAW',
        requestBody: { values: [['ok', 'x'.repeat(50_001)]] },
      }),
    );
    expect(tooLong.status).toBe(400);
    expect(tooLong.message).toBe(sheetsErrors.cellTooLong.body.error.message);
    expect(tooLong.response?.data).toEqual(sheetsErrors.cellTooLong.body);
    expect(fake.sheetValues(book.spreadsheetId, 'Leads')).toEqual([]);
    const fits = await api.spreadsheets.values.append({
      spreadsheetId: book.spreadsheetId,
      range: 'Leads',
      valueInputOption: 'RAW',
      requestBody: { values: [['x'.repeat(50_000)]] },
    });
    expect(fits.status).toBe(200);

    const unknown = await failure(api.spreadsheets.get({ spreadsheetId: '1DoesNotExist' }));
    expect(unknown.status).toBe(404);
    expect(unknown.response?.data).toEqual(sheetsErrors.notFound.body);

    const private_ = fake.addSpreadsheet({ title: 'Not shared', editors: ['someone.else@example.com'] });
    const denied = await failure(api.spreadsheets.get({ spreadsheetId: private_.spreadsheetId }));
    expect(denied.status).toBe(403);
    expect(denied.response?.data).toEqual(sheetsErrors.permissionDenied.body);

    const badRange = await failure(
      api.spreadsheets.values.get({ spreadsheetId: book.spreadsheetId, range: 'Nowhere!A1' }),
    );
    expect(badRange.response?.data).toEqual(sheetsErrors.unableToParseRange.body);

    const anonymous = await failure(sheetsApi().spreadsheets.get({ spreadsheetId: book.spreadsheetId }));
    expect(anonymous.status).toBe(401);
    expect(anonymous.response?.data).toEqual(sheetsErrors.credentialsMissing.body);

    // A token granted only the read-only scope may not write.
    const reader = oauthClient();
    const code = (
      await consent(reader.generateAuthUrl({ scope: [SCOPES.spreadsheetsReadonly] }))
    ).location!.searchParams.get('code')!;
    reader.setCredentials((await reader.getToken(code)).tokens);
    const scoped = await failure(
      sheetsApi(reader).spreadsheets.values.append({
        spreadsheetId: book.spreadsheetId,
        range: 'Leads',
        valueInputOption: 'RAW',
        requestBody: { values: [['x']] },
      }),
    );
    expect(scoped.status).toBe(403);
    expect(scoped.response?.data).toEqual(sheetsErrors.scopeInsufficient.body);

    const noOption = await failure(
      api.spreadsheets.values.append({
        spreadsheetId: book.spreadsheetId,
        range: 'Leads',
        requestBody: { values: [['x']] },
      }),
    );
    expect(noOption.response?.data).toEqual({
      error: { code: 400, message: "'valueInputOption' is required but not specified", status: 'INVALID_ARGUMENT' },
    });
  });

  it('surfaces a 429 as the client does: POST is not retried by default, retryConfig can make it', async () => {
    const book = fake.addSpreadsheet({ title: 'Quota', sheets: ['Leads'] });
    const { client } = await authorizedUser();
    const api = sheetsApi(client);
    const append = (options: MethodOptions = {}) =>
      api.spreadsheets.values.append(
        {
          spreadsheetId: book.spreadsheetId,
          range: 'Leads',
          valueInputOption: 'RAW',
          requestBody: { values: [['x']] },
        },
        options,
      );
    const appends = () =>
      fake.requests.filter((r) => r.path.includes(book.spreadsheetId) && r.path.endsWith(':append'));

    fake.exhaustQuota(1, 'write');
    const limited = await failure(append());
    expect(limited.status).toBe(429);
    // gaxios reads google.rpc.Status: the message and the numeric code are the body's.
    expect(limited.code).toBe(429);
    expect(limited.message).toBe(sheetsErrors.quotaWritePerUser.body.error.message);
    expect(limited.response?.data).toEqual(sheetsErrors.quotaWritePerUser.body);
    expect(limited.response?.headers.get('retry-after')).toBeNull();
    expect(appends()).toHaveLength(1);

    // retryConfig (gaxios): POST added to httpMethodsToRetry; 429 is in the default statusCodesToRetry.
    fake.exhaustQuota(1, 'write');
    const retried = await append({ retryConfig: { httpMethodsToRetry: ['POST'], retry: 2, retryDelay: 10 } });
    expect(retried.status).toBe(200);
    expect(appends().map((r) => r.status)).toEqual([429, 429, 200]);

    // GET is retried by default (3 times, 100 ms then exponential backoff).
    fake.exhaustQuota(1, 'read');
    const read = await api.spreadsheets.values.get({ spreadsheetId: book.spreadsheetId, range: 'Leads' });
    expect(read.status).toBe(200);
  });

  it('counts the per-minute write quota per user and per project', async () => {
    const tight = await startFakeGoogle({
      serviceAccounts: [{ email: SERVICE_ACCOUNT, publicKey: keys.publicKey }],
      writeQuotaPerUser: 2,
      writeQuotaPerProject: 3,
    });
    try {
      const book = tight.addSpreadsheet({ title: 'Tight', sheets: ['Leads'], editors: [tight.user, SERVICE_ACCOUNT] });
      const client = new auth.OAuth2({
        clientId: tight.client.clientId,
        clientSecret: tight.client.clientSecret,
        redirectUri: tight.client.redirectUris[0],
        endpoints: tight.endpoints,
      });
      const location = (await consent(client.generateAuthUrl({ scope: [SCOPES.spreadsheets] }))).location!;
      client.setCredentials((await client.getToken(location.searchParams.get('code')!)).tokens);
      const jwt = new auth.JWT({ email: SERVICE_ACCOUNT, key: keys.privateKey, scopes: [SCOPES.spreadsheets] });
      jwt.transporter.interceptors.request.add({
        resolved: async (config) => {
          const target = new URL(config.url);
          if (target.origin === 'https://oauth2.googleapis.com') config.url = new URL(target.pathname, tight.url);
          return config;
        },
      });
      const write = (who: OAuth2Client | JWTClient) =>
        sheets({ version: 'v4', rootUrl: tight.rootUrl, auth: who }).spreadsheets.values.append({
          spreadsheetId: book.spreadsheetId,
          range: 'Leads',
          valueInputOption: 'RAW',
          requestBody: { values: [['x']] },
        });
      await write(client);
      await write(client);
      const perUser = await failure(write(client));
      expect(perUser.status).toBe(429);
      const expectedPerUser = structuredClone(sheetsErrors.quotaWritePerUser.body);
      expectedPerUser.error.details[0]!.metadata!.quota_limit_value = '2';
      expect(perUser.response?.data).toEqual(expectedPerUser);
      await write(jwt);
      const perProject = await failure(write(jwt));
      const expected = structuredClone(sheetsErrors.quotaWritePerProject.body);
      expected.error.details[0]!.metadata!.quota_limit_value = '3';
      expect(perProject.response?.data).toEqual(expected);
    } finally {
      await tight.close();
    }
  });
});
