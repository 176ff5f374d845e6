import { readFileSync } from 'node:fs';
import { Client } from '@hubspot/api-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeHubspot, type FakeHubspotOptions, startFakeHubspot } from '../helpers/fakes/hubspot.ts';

/**
 * The local HubSpot (helpers/fakes/hubspot.ts) driven through the official client, @hubspot/api-client
 * 13.5.0, as the destinations will drive it: `new Client({ accessToken, basePath: fake.url })`. The
 * client sends every API it has (CRM and the OAuth token endpoints alike) to `basePath` + the path;
 * only `oauth.getAuthorizationUrl` ignores it (it always answers https://app.hubspot.com/oauth/authorize…),
 * so the install page is reached by swapping that origin for the fake's, as a browser would follow it.
 *
 * What the client does with answers, checked here:
 * - Any status the operation does not declare as success rejects with the module's `ApiException`
 *   (one class per generated module, not exported from the package: test `code`, `body`, `headers`),
 *   `code` the HTTP status, `body` the parsed JSON as HubSpot sent it (no field dropped), `headers` the
 *   answer's headers in lower case, `message` "HTTP-Code: …\nMessage: An error occurred.\nBody: <the whole
 *   body>\nHeaders: <all headers>" (so logging it logs HubSpot's validation texts, emails included).
 * - A 207 resolves like a 200: the batch's `errors` and `numErrors` are to be read from the result.
 * - Results are deserialized to the models: `new` becomes `_new`, dates become `Date`s, and fields the
 *   model lacks are dropped (the token answer keeps only accessToken, refreshToken, idToken, tokenType,
 *   expiresIn: a hub id there would be lost; the token info endpoint gives it).
 */

const APP = {
  appId: 456,
  clientId: 'leadgate-client-id',
  clientSecret: 'leadgate-client-secret',
  redirectUris: ['https://gateway.leadgate.test/oauth/hubspot/callback'],
};
const REDIRECT = APP.redirectUris[0]!;
const SCOPES = 'oauth crm.objects.contacts.write crm.objects.companies.write crm.schemas.contacts.read';
const PRIVATE_APP = {
  token: 'pat-na1-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  appId: 900,
  scopes: ['crm.objects.contacts.write', 'crm.objects.companies.write', 'crm.schemas.companies.read'],
};
const READ_ONLY_APP = {
  token: 'pat-na1-ffffffff-0000-4000-8000-000000000001',
  appId: 901,
  scopes: ['crm.schemas.contacts.read'],
};
const OPTIONS: FakeHubspotOptions = {
  apps: [APP],
  privateApps: [PRIVATE_APP, READ_ONLY_APP],
  customProperties: {
    contacts: [
      {
        name: 'leadgate_source',
        label: 'Leadgate source',
        type: 'enumeration',
        fieldType: 'select',
        options: [
          { label: 'Google Maps', value: 'google_maps' },
          { label: 'Leads finder', value: 'leads_finder' },
        ],
      },
    ],
    companies: [{ name: 'leadgate_domain', label: 'Leadgate domain key', hasUniqueValue: true }],
  },
};

interface ClientError {
  code: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  message: string;
}

/** What the client rejects with: its ApiException, read by duck typing (the class is not exported). */
async function rejection(promise: Promise<unknown>): Promise<ClientError> {
  try {
    await promise;
  } catch (err) {
    const e = err as ClientError;
    expect(typeof e.code).toBe('number');
    return e;
  }
  throw new Error('expected the client to reject');
}

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/hubspot/${name}.json`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;
const keys = (value: object) => Object.keys(value).sort();
/** Lets pending I/O run (setImmediate is left real when setTimeout is faked). */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
async function until(check: () => boolean) {
  for (let i = 0; i < 20_000; i++) {
    if (check()) return;
    await tick();
  }
  throw new Error('timed out');
}

/**
 * A client and its APIs, taken at once. The client's retry and limiter decorators live in one object
 * for the whole process (ApiDecoratorService.getInstance()): `new Client()` replaces them, and an API
 * object is decorated when it is first reached (`client.crm.contacts` is built lazily). An API reached
 * after another client was made gets that client's decorators, so each API is taken right away here.
 */
function apis(url: string, accessToken?: string, extra: { numberOfApiCallRetries?: number } = {}) {
  const client = new Client({ basePath: url, ...(accessToken ? { accessToken } : {}), ...extra });
  return {
    client,
    contacts: client.crm.contacts.batchApi,
    companies: client.crm.companies.batchApi,
    properties: client.crm.properties.coreApi,
    tokens: client.oauth.tokensApi,
    accessTokens: client.oauth.accessTokensApi,
    refreshTokens: client.oauth.refreshTokensApi,
  };
}

/** The install flow: the authorization URL, the fake's consent (302 with a code), the code exchange. */
async function connect(fake: FakeHubspot) {
  const { client, tokens } = apis(fake.url);
  const published = new URL(client.oauth.getAuthorizationUrl(APP.clientId, REDIRECT, SCOPES, undefined, 'st-1'));
  expect(published.origin).toBe('https://app.hubspot.com');
  const page = await fetch(`${fake.url}${published.pathname}${published.search}`, { redirect: 'manual' });
  await page.text();
  expect(page.status).toBe(302);
  const back = new URL(page.headers.get('location')!);
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
  expect(back.searchParams.get('state')).toBe('st-1');
  const code = back.searchParams.get('code')!;
  const answer = await tokens.create('authorization_code', code, REDIRECT, APP.clientId, APP.clientSecret);
  return { code, ...answer };
}

const contact = (email: string, properties: Record<string, string> = {}) => ({
  id: email,
  idProperty: 'email',
  properties,
});

let fake: FakeHubspot;

beforeAll(async () => {
  fake = await startFakeHubspot(OPTIONS);
});

afterAll(async () => {
  await fake.close();
});

describe('OAuth through the client', () => {
  it('installs: the consent page redirects with a code, which the client exchanges for tokens once', async () => {
    const tokens = await connect(fake);
    expect(tokens.tokenType).toBe('bearer');
    expect(tokens.expiresIn).toBe(1800);
    expect(tokens.accessToken).toMatch(/^C/);
    expect(tokens.refreshToken).toMatch(/^na1-/);
    // What the client keeps of the answer: no hub id (the token info endpoint gives it).
    expect(keys(tokens)).toEqual(['accessToken', 'code', 'expiresIn', 'refreshToken', 'tokenType']);

    const { tokens: api } = apis(fake.url);
    const reused = await rejection(
      api.create('authorization_code', tokens.code, REDIRECT, APP.clientId, APP.clientSecret),
    );
    expect(reused.code).toBe(400);
    expect(reused.body).toEqual({
      error: 'invalid_grant',
      error_description: 'missing or unknown auth code',
      status: 'BAD_AUTH_CODE',
      message: 'missing or unknown auth code',
    });
    // The changelog's shape: RFC 6749's error and error_description beside HubSpot's status and message.
    expect(keys(reused.body)).toEqual(keys(fixture('oauth-error-bad-refresh-token')));
    expect(reused.message).toMatch(/^HTTP-Code: 400\nMessage: An error occurred\.\nBody: \{"error":"invalid_grant"/);
  });

  it('refuses on the install page, without redirecting, an unknown app or a redirect URI it does not have', async () => {
    const { client } = apis(fake.url);
    for (const [clientId, redirectUri] of [
      ['no-such-client', REDIRECT],
      [APP.clientId, 'https://evil.test/callback'],
      [APP.clientId, `${REDIRECT}/more`],
    ] as const) {
      const published = new URL(client.oauth.getAuthorizationUrl(clientId, redirectUri, SCOPES));
      const page = await fetch(`${fake.url}${published.pathname}${published.search}`, { redirect: 'manual' });
      expect(page.status).toBe(400);
      expect(page.headers.get('location')).toBeNull();
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain('Authorization failed');
    }
  });

  it('refuses a token request with the wrong secret, redirect URI or grant type, as HubSpot words it', async () => {
    const { client, tokens } = apis(fake.url);
    const published = new URL(client.oauth.getAuthorizationUrl(APP.clientId, REDIRECT, SCOPES));
    const page = await fetch(`${fake.url}${published.pathname}${published.search}`, { redirect: 'manual' });
    await page.text();
    const code = new URL(page.headers.get('location')!).searchParams.get('code')!;
    const secret = await rejection(tokens.create('authorization_code', code, REDIRECT, APP.clientId, 'wrong'));
    expect([secret.code, secret.body.status, secret.body.error]).toEqual([400, 'BAD_CLIENT_SECRET', 'invalid_client']);
    const client_ = await rejection(tokens.create('authorization_code', code, REDIRECT, 'nope', APP.clientSecret));
    expect([client_.code, client_.body.status, client_.body.error]).toEqual([400, 'BAD_CLIENT_ID', 'invalid_client']);
    const redirect = await rejection(
      tokens.create('authorization_code', code, 'https://other.test/cb', APP.clientId, APP.clientSecret),
    );
    expect([redirect.code, redirect.body.status]).toEqual([400, 'BAD_REDIRECT_URI']);
    const grant = await rejection(tokens.create('password', code, REDIRECT, APP.clientId, APP.clientSecret));
    expect([grant.code, grant.body.status, grant.body.error]).toEqual([
      400,
      'BAD_GRANT_TYPE',
      'unsupported_grant_type',
    ]);
    // The failed attempts did not use the code up.
    const answer = await tokens.create('authorization_code', code, REDIRECT, APP.clientId, APP.clientSecret);
    expect(answer.accessToken).toBeTruthy();
  });

  it('gives token info (hub, user, scopes, time left), refreshes, and revokes the refresh token', async () => {
    const first = await connect(fake);
    const { accessTokens, refreshTokens, tokens } = apis(fake.url);

    const info = await accessTokens.get(first.accessToken);
    expect(info).toMatchObject({
      token: first.accessToken,
      user: fake.portal.user,
      hubDomain: fake.portal.hubDomain,
      hubId: fake.portal.hubId,
      appId: APP.appId,
      userId: fake.portal.userId,
      tokenType: 'access',
      scopes: SCOPES.split(' '),
    });
    expect(info.expiresIn).toBeGreaterThan(1790);
    expect(info.expiresIn).toBeLessThanOrEqual(1800);

    const refreshed = await tokens.create(
      'refresh_token',
      undefined,
      undefined,
      APP.clientId,
      APP.clientSecret,
      first.refreshToken,
    );
    expect(refreshed.accessToken).not.toBe(first.accessToken);
    expect(refreshed.refreshToken).toBe(first.refreshToken); // HubSpot's refresh tokens do not rotate
    expect(await refreshTokens.get(first.refreshToken)).toMatchObject({
      clientId: APP.clientId,
      hubId: fake.portal.hubId,
      tokenType: 'refresh',
    });

    await expect(refreshTokens.archive(first.refreshToken)).resolves.toBeUndefined();
    expect(fake.revokedRefreshTokens).toContain(first.refreshToken);
    const revoked = await rejection(
      tokens.create('refresh_token', undefined, undefined, APP.clientId, APP.clientSecret, first.refreshToken),
    );
    expect(revoked.code).toBe(400);
    expect(revoked.body).toEqual(fixture('oauth-error-bad-refresh-token'));
    // Revoking again: the token is gone.
    expect((await rejection(refreshTokens.archive(first.refreshToken))).code).toBe(404);

    // "Access tokens generated with the refresh token will not be affected."
    const { contacts } = apis(fake.url, refreshed.accessToken);
    const answer = await contacts.upsert({ inputs: [contact('after-revoke@example.com')] });
    expect(answer.results).toHaveLength(1);
  });

  it('answers 401 EXPIRED_AUTHENTICATION once an access token has expired, and its info is gone', async () => {
    const { accessToken } = await connect(fake);
    fake.advance(1800 * 1000 + 75_000);
    const { contacts, accessTokens } = apis(fake.url, accessToken);
    const expired = await rejection(contacts.upsert({ inputs: [contact('late@example.com')] }));
    expect(expired.code).toBe(401);
    expect(expired.body).toMatchObject({
      status: 'error',
      message: 'The OAuth token used to make this call expired 75 second(s) ago.',
      category: 'EXPIRED_AUTHENTICATION',
      context: { 'expire time': [expect.stringMatching(/^\d{4}-\d\d-\d\dT/)] },
    });
    expect(keys(expired.body)).toEqual(keys(fixture('error-expired-authentication')));
    expect((await rejection(accessTokens.get(accessToken))).code).toBe(404);
  });

  it('ends every token of an app uninstalled from the account', async () => {
    const { accessToken, refreshToken } = await connect(fake);
    fake.uninstall(APP.clientId);
    const { contacts, tokens } = apis(fake.url, accessToken);
    const gone = await rejection(contacts.upsert({ inputs: [contact('gone@example.com')] }));
    expect([gone.code, gone.body.category]).toEqual([401, 'INVALID_AUTHENTICATION']);
    const refresh = await rejection(
      tokens.create('refresh_token', undefined, undefined, APP.clientId, APP.clientSecret, refreshToken),
    );
    expect(refresh.body.status).toBe('BAD_REFRESH_TOKEN');
  });
});

describe('authentication of the CRM endpoints', () => {
  it('answers 401 INVALID_AUTHENTICATION with no token or one it does not know', async () => {
    for (const token of [undefined, 'pat-na1-not-a-real-token', 'not-a-token']) {
      const { contacts } = apis(fake.url, token);
      const refused = await rejection(contacts.upsert({ inputs: [contact('x@example.com')] }));
      expect(refused.code).toBe(401);
      const expected = fixture('error-invalid-authentication');
      expect(refused.body).toEqual({ ...expected, correlationId: refused.body.correlationId });
      expect(refused.headers['x-hubspot-correlation-id']).toBe(refused.body.correlationId);
    }
  });

  it('takes a private-app token as a Bearer token, with the daily limit in its headers', async () => {
    const { contacts } = apis(fake.url, PRIVATE_APP.token);
    const answer = await contacts.upsertWithHttpInfo({ inputs: [contact('pat@example.com')] });
    expect(answer.httpStatusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json;charset=utf-8');
    expect(answer.headers['x-hubspot-ratelimit-max']).toBe('100');
    expect(answer.headers['x-hubspot-ratelimit-interval-milliseconds']).toBe('10000');
    expect(answer.headers['x-hubspot-ratelimit-daily']).toBe('250000');
    expect(Number(answer.headers['x-hubspot-ratelimit-daily-remaining'])).toBeLessThan(250_000);
    expect(fake.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: '/crm/v3/objects/contacts/batch/upsert',
      status: 200,
      auth: 'private-app',
    });
  });

  it('answers 403 MISSING_SCOPES to a token without the endpoint’s scope', async () => {
    const { contacts } = apis(fake.url, READ_ONLY_APP.token);
    const refused = await rejection(contacts.upsert({ inputs: [contact('scope@example.com')] }));
    expect(refused.code).toBe(403);
    expect(keys(refused.body)).toEqual(keys(fixture('error-missing-scopes')));
    expect(refused.body).toMatchObject({
      category: 'MISSING_SCOPES',
      errors: [{ context: { requiredGranularScopes: ['crm.objects.contacts.write'] } }],
    });
  });
});

describe('batch upsert of contacts', () => {
  it('creates, then updates the same records when sent again (emails matched case-insensitively)', async () => {
    const { accessToken } = await connect(fake);
    const { contacts } = apis(fake.url, accessToken);
    const emails = ['ada@example.org', 'Grace.Hopper@Navy.Example.net', 'linus@kernel.example.com'];
    const before = fake.records.contacts.size;

    const first = await contacts.upsertWithHttpInfo({
      inputs: emails.map((email, i) =>
        contact(email, { firstname: `First ${i}`, lifecyclestage: 'lead', leadgate_source: 'google_maps' }),
      ),
    });
    expect(first.httpStatusCode).toBe(200);
    expect(first.data.status).toBe('COMPLETE');
    expect(first.data.results.map((r) => r._new)).toEqual([true, true, true]);
    expect(first.data.results.every((r) => r.createdAt instanceof Date)).toBe(true);
    expect(fake.records.contacts.size).toBe(before + 3);
    // Not in input order: match results by their email (HubSpot stores it lowercased).
    const idByEmail = new Map(first.data.results.map((r) => [r.properties.email, r.id]));
    expect([...idByEmail.keys()].sort()).toEqual(emails.map((e) => e.toLowerCase()).sort());
    expect(first.data.results.map((r) => r.properties.email)).not.toEqual(emails.map((e) => e.toLowerCase()));

    const second = await contacts.upsert({
      inputs: emails.map((email) => contact(email.toUpperCase(), { firstname: 'Again', hs_lead_status: 'NEW' })),
    });
    expect(second.results.map((r) => r._new)).toEqual([false, false, false]);
    for (const result of second.results) {
      expect(result.id).toBe(idByEmail.get(result.properties.email));
      expect(result.properties).toMatchObject({
        firstname: 'Again',
        hs_lead_status: 'NEW',
        lifecyclestage: 'lead',
        hs_object_id: result.id,
      });
    }
    expect(fake.records.contacts.size).toBe(before + 3);
    expect(fake.contactByEmail('GRACE.HOPPER@navy.example.NET')?.properties.firstname).toBe('Again');
  });

  it('refuses the whole batch (400, nothing written) when one input is invalid', async () => {
    const { contacts } = apis(fake.url, PRIVATE_APP.token);
    const before = fake.records.contacts.size;
    const refused = await rejection(
      contacts.upsert({
        inputs: [contact('valid.one@example.com', { firstname: 'Valid' }), contact('broken@example.lcom')],
      }),
    );
    expect(refused.code).toBe(400);
    expect(keys(refused.body)).toEqual(keys(fixture('error-validation-property')));
    expect(refused.body).toMatchObject({
      status: 'error',
      category: 'VALIDATION_ERROR',
      errors: [
        {
          message: 'Email address broken@example.lcom is invalid',
          code: 'INVALID_EMAIL',
          context: { propertyName: ['email'] },
        },
      ],
    });
    expect(refused.body.message).toBe(
      `Property values were not valid: [{"isValid":false,"message":"Email address broken@example.lcom is invalid","error":"INVALID_EMAIL","name":"email","localizedErrorMessage":"Email address broken@example.lcom is invalid","portalId":${fake.portal.hubId}}]`,
    );
    expect(fake.records.contacts.size).toBe(before);
    expect(fake.contactByEmail('valid.one@example.com')).toBeUndefined();

    // HubSpot wants a TLD of IANA's list: the reserved .test, .example, .invalid, .localhost are refused.
    for (const email of ['lead@gateway.test', 'lead@host.example', 'lead@localhost', '"quoted"@example.com']) {
      const invalid = await rejection(contacts.upsert({ inputs: [contact(email)] }));
      expect([invalid.code, (invalid.body.errors as { code: string }[])[0]?.code]).toEqual([400, 'INVALID_EMAIL']);
    }
  });

  it('answers 207 with the valid inputs written and the others in errors when every input has an objectWriteTraceId', async () => {
    const { contacts } = apis(fake.url, PRIVATE_APP.token);
    const answer = await contacts.upsertWithHttpInfo({
      inputs: [
        { ...contact('traced@example.com'), objectWriteTraceId: 'row-1' },
        { ...contact('traced@bad'), objectWriteTraceId: 'row-2' },
        { ...contact('traced.too@example.com', { lifecyclestage: 'Lead' }), objectWriteTraceId: 'row-3' },
      ],
    });
    // A 207 resolves: the caller has to read errors from the result.
    expect(answer.httpStatusCode).toBe(207);
    const data = answer.data as typeof answer.data & { numErrors?: number; errors?: { context: object }[] };
    expect(keys(data)).toEqual(keys(fixture('batch-create-multi-status')));
    expect(data.results.map((r) => r.properties.email)).toEqual(['traced@example.com']);
    expect(data.numErrors).toBe(2);
    expect(data.errors?.map((e) => e.context)).toEqual([
      { objectWriteTraceId: ['row-2'] },
      { objectWriteTraceId: ['row-3'] },
    ]);
    expect(fake.contactByEmail('traced@example.com')).toBeDefined();
    expect(fake.contactByEmail('traced.too@example.com')).toBeUndefined();
  });

  it('validates every property: unknown, read-only, options, whitespace, length', async () => {
    const { contacts } = apis(fake.url, PRIVATE_APP.token);
    const refused = await rejection(
      contacts.upsert({
        inputs: [
          contact('props@example.com', {
            favourite_colour: 'blue',
            hs_object_id: '5',
            lifecyclestage: 'Lead',
            hs_lead_status: ' NEW',
            leadgate_source: 'apify',
            jobtitle: 'x'.repeat(65_537),
            lastname: 'y'.repeat(65_536),
          }),
        ],
      }),
    );
    expect(refused.code).toBe(400);
    const errors = refused.body.errors as { code: string; message: string; context: { propertyName: string[] } }[];
    expect(errors.map((e) => [e.context.propertyName[0], e.code])).toEqual([
      ['favourite_colour', 'PROPERTY_DOESNT_EXIST'],
      ['hs_object_id', 'READ_ONLY_VALUE'],
      ['lifecyclestage', 'INVALID_OPTION'],
      ['hs_lead_status', 'LEADING_TRAILING_WHITESPACE'],
      ['leadgate_source', 'INVALID_OPTION'],
      ['jobtitle', 'MAX_LENGTH_EXCEEDED'],
    ]);
    expect(errors[0]!.message).toBe('Property "favourite_colour" does not exist');
    expect(errors[1]!.message).toBe('"hs_object_id" is a calculated property; its value cannot be set.');
    expect(errors[2]!.message).toMatch(
      /^Lead was not one of the allowed options: \[label: "Subscriber"\nvalue: "subscriber"/,
    );
    expect(errors[3]!.message).toBe('" NEW" includes leading or trailing whitespace.');
  });

  it('refuses more than 100 inputs, and the same id twice in one batch', async () => {
    const { contacts } = apis(fake.url, PRIVATE_APP.token);
    const many = Array.from({ length: 101 }, (_, i) => contact(`bulk${i}@example.com`));
    const tooMany = await rejection(contacts.upsert({ inputs: many }));
    expect([tooMany.code, tooMany.body.category]).toEqual([400, 'VALIDATION_ERROR']);
    expect(fake.contactByEmail('bulk0@example.com')).toBeUndefined();
    const hundred = await contacts.upsert({ inputs: many.slice(0, 100) });
    expect(hundred.results).toHaveLength(100);

    const twice = await rejection(
      contacts.upsert({ inputs: [contact('twice@example.com'), contact('Twice@example.com')] }),
    );
    expect(twice.code).toBe(400);
    expect(keys(twice.body)).toEqual(keys(fixture('error-duplicate-ids')));
    expect(twice.body.message).toBe('Duplicate IDs found in batch input: [Twice@example.com]. IDs must be unique');
  });
});

describe('batch upsert of companies', () => {
  it('refuses domain as the idProperty (not a unique property), and upserts by a unique custom property', async () => {
    const { companies } = apis(fake.url, PRIVATE_APP.token);
    const byDomain = await rejection(
      companies.upsert({ inputs: [{ id: 'acme.test', idProperty: 'domain', properties: { name: 'Acme' } }] }),
    );
    expect(byDomain.code).toBe(400);
    expect(byDomain.body).toMatchObject({
      status: 'error',
      message: 'Unable to perform update/upsert by non-unique 0-2 property domain',
      category: 'VALIDATION_ERROR',
    });

    const input = (name: string) => ({
      id: 'acme.test',
      idProperty: 'leadgate_domain',
      properties: { name, domain: 'acme.test', lifecyclestage: 'lead' },
    });
    const first = await companies.upsert({ inputs: [input('Acme')] });
    const second = await companies.upsert({ inputs: [input('Acme Inc.')] });
    expect(first.results[0]!._new).toBe(true);
    expect(second.results[0]).toMatchObject({ id: first.results[0]!.id, _new: false });
    expect(second.results[0]!.properties).toMatchObject({
      name: 'Acme Inc.',
      domain: 'acme.test',
      leadgate_domain: 'acme.test',
    });
    expect(second.results[0]!.properties.hs_lastmodifieddate).toBeDefined();
    expect([...fake.records.companies.values()].filter((c) => c.properties.domain === 'acme.test')).toHaveLength(1);
  });
});

describe('properties', () => {
  it('lists the default picklists and the custom properties', async () => {
    const { properties } = apis(fake.url, PRIVATE_APP.token);
    const { properties: contactProperties } = apis(fake.url, (await connect(fake)).accessToken);
    const listed = (await contactProperties.getAll('contacts')).results;
    const lifecycle = listed.find((p) => p.name === 'lifecyclestage')!;
    expect(lifecycle).toMatchObject({ type: 'enumeration', fieldType: 'radio', hubspotDefined: true });
    expect(lifecycle.options.map((o) => o.value)).toEqual([
      'subscriber',
      'lead',
      'marketingqualifiedlead',
      'salesqualifiedlead',
      'opportunity',
      'customer',
      'evangelist',
      'other',
    ]);
    expect(listed.find((p) => p.name === 'hs_lead_status')?.options.map((o) => o.value)).toContain('IN_PROGRESS');
    expect(listed.find((p) => p.name === 'leadgate_source')).toMatchObject({
      type: 'enumeration',
      options: [{ value: 'google_maps' }, { value: 'leads_finder' }],
    });
    expect(listed.find((p) => p.name === 'email')?.hasUniqueValue).toBe(false);

    const companyProperties = (await properties.getAll('companies')).results;
    expect(companyProperties.find((p) => p.name === 'leadgate_domain')?.hasUniqueValue).toBe(true);
    expect(companyProperties.find((p) => p.name === 'domain')?.hasUniqueValue).toBe(false);

    const unknown = await rejection(properties.getAll('widgets'));
    expect(unknown.code).toBe(400);
    expect(keys(unknown.body)).toEqual(keys(fixture('error-unknown-object-type')));
    expect(unknown.body.message).toBe('Unable to infer object type from: widgets');
  });
});

describe('rate limits', () => {
  it('answers 429 past the ten-second window, with HubSpot’s body and headers as the client surfaces them', async () => {
    const limited = await startFakeHubspot({ ...OPTIONS, rateLimit: { oauthMax: 3 } });
    try {
      const { accessToken } = await connect(limited);
      const { contacts } = apis(limited.url, accessToken);
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const answer = await contacts.upsertWithHttpInfo({ inputs: [contact(`window${i}@example.com`)] });
        remaining.push(answer.headers['x-hubspot-ratelimit-remaining']!);
        expect(answer.headers['x-hubspot-ratelimit-daily']).toBeUndefined(); // OAuth: no daily limit
      }
      expect(remaining).toEqual(['2', '1', '0']);

      const limitedOut = await rejection(contacts.upsert({ inputs: [contact('window3@example.com')] }));
      expect(limitedOut.code).toBe(429);
      expect(limitedOut.body).toMatchObject({
        status: 'error',
        message: 'You have reached your ten_secondly_rolling limit.',
        errorType: 'RATE_LIMIT',
        policyName: 'TEN_SECONDLY_ROLLING',
      });
      expect(keys(limitedOut.body)).toEqual(keys(fixture('rate-limit-daily')));
      expect(limitedOut.headers).toMatchObject({
        'x-hubspot-ratelimit-interval-milliseconds': '10000',
        'x-hubspot-ratelimit-max': '3',
        'x-hubspot-ratelimit-remaining': '0',
      });
      expect(limitedOut.message).toMatch(/^HTTP-Code: 429\nMessage: An error occurred\.\nBody: /);
      expect(limited.contactByEmail('window3@example.com')).toBeUndefined();

      // The window rolls.
      limited.advance(10_000);
      await expect(contacts.upsert({ inputs: [contact('window4@example.com')] })).resolves.toBeTruthy();
    } finally {
      await limited.close();
    }
  });

  it('answers a storm of 429s on demand (throttle), and the daily limit as its own policy', async () => {
    const { contacts } = apis(fake.url, PRIVATE_APP.token);
    fake.throttle(3);
    for (let i = 0; i < 3; i++) {
      const storm = await rejection(contacts.upsert({ inputs: [contact('storm@example.com')] }));
      expect([storm.code, storm.body.policyName]).toEqual([429, 'TEN_SECONDLY_ROLLING']);
    }
    await expect(contacts.upsert({ inputs: [contact('storm@example.com')] })).resolves.toBeTruthy();
    fake.throttle(1, 'DAILY');
    const daily = await rejection(contacts.upsert({ inputs: [contact('storm@example.com')] }));
    expect(daily.body).toMatchObject({
      message: 'You have reached your daily limit.',
      policyName: 'DAILY',
      errorType: 'RATE_LIMIT',
    });
  });
});

/**
 * The client's own retries (`numberOfApiCallRetries`, 0 to 6, RetryDecorator): with N > 0 a call is
 * made at most N times in all (N - 1 retries; 1 retries nothing). It retries a 5xx after 200 ms × the
 * attempt, a 429 whose body's policyName is TEN_SECONDLY_ROLLING after 10 s × the attempt, a 429 whose
 * message is "You have reached your secondly limit." (search) after 1 s × the attempt; nothing else
 * (a DAILY 429, 4xx). It reads no header, logs each wait with console.error, and decorates every method
 * of every API, the OAuth token exchange included (a 5xx on a code exchange is sent again with the same
 * single-use code). Timers are faked here (setTimeout only) so that the 10 s waits take no time.
 */
describe('the client’s retries against the fake', () => {
  async function withFakeTimers(run: (logged: string[]) => Promise<void>) {
    const logged: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((line: unknown) => {
      logged.push(String(line));
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await run(logged);
    } finally {
      vi.useRealTimers();
      spy.mockRestore();
    }
  }
  const upserts = () => fake.requests.filter((r) => r.path === '/crm/v3/objects/contacts/batch/upsert');

  it('waits 10 s and sends a TEN_SECONDLY_ROLLING 429 again when numberOfApiCallRetries ≥ 2', async () => {
    const { contacts } = apis(fake.url, PRIVATE_APP.token, { numberOfApiCallRetries: 2 });
    await withFakeTimers(async (logged) => {
      const before = upserts().length;
      fake.throttle(1);
      const pending = contacts.upsert({ inputs: [contact('retried@example.com')] });
      await until(() => logged.length === 1);
      expect(logged[0]).toBe('Request failed with status code [429], will retry [1] time in [10000] ms');
      expect(upserts().length).toBe(before + 1);
      await vi.advanceTimersByTimeAsync(10_000);
      const answer = await pending;
      expect(answer.results[0]!.properties.email).toBe('retried@example.com');
      expect(
        upserts()
          .slice(before)
          .map((r) => r.status),
      ).toEqual([429, 200]);
    });
  });

  it('does not retry with numberOfApiCallRetries 1, nor a DAILY 429', async () => {
    const once = apis(fake.url, PRIVATE_APP.token, { numberOfApiCallRetries: 1 }).contacts;
    const twice = apis(fake.url, PRIVATE_APP.token, { numberOfApiCallRetries: 2 }).contacts;
    await withFakeTimers(async (logged) => {
      const before = upserts().length;
      fake.throttle(1);
      expect((await rejection(once.upsert({ inputs: [contact('once@example.com')] }))).code).toBe(429);
      fake.throttle(1, 'DAILY');
      expect((await rejection(twice.upsert({ inputs: [contact('once@example.com')] }))).code).toBe(429);
      expect(upserts().length).toBe(before + 2);
      expect(logged).toEqual([]);
    });
  });

  it('retries a 5xx after 200 ms', async () => {
    const { contacts } = apis(fake.url, PRIVATE_APP.token, { numberOfApiCallRetries: 3 });
    await withFakeTimers(async (logged) => {
      fake.failNext(2, 503);
      const pending = contacts.upsert({ inputs: [contact('outage@example.com')] });
      await until(() => logged.length === 1);
      await vi.advanceTimersByTimeAsync(200);
      await until(() => logged.length === 2);
      expect(logged[1]).toBe('Request failed with status code [503], will retry [2] time in [200] ms');
      await vi.advanceTimersByTimeAsync(400);
      expect((await pending).results).toHaveLength(1);
    });
  });

  it('shares its retry setting across the process: an API reached after another client was made takes that one’s', async () => {
    expect(() => new Client({ numberOfApiCallRetries: 7 })).toThrow(
      'numberOfApiCallRetries can be set to a number from 0 - 6.',
    );
    const retrying = new Client({ basePath: fake.url, accessToken: PRIVATE_APP.token, numberOfApiCallRetries: 3 });
    apis(fake.url, PRIVATE_APP.token); // another client, no retries, made before `retrying` reaches its APIs
    await withFakeTimers(async (logged) => {
      fake.throttle(1);
      const refused = await rejection(
        retrying.crm.contacts.batchApi.upsert({ inputs: [contact('shared@example.com')] }),
      );
      expect(refused.code).toBe(429);
      expect(logged).toEqual([]);
    });
  });
});
