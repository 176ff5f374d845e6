import {
  ErrorCode,
  type Logger,
  LogLevel,
  retryPolicies,
  type WebAPIPlatformError,
  type WebAPIRateLimitedError,
  WebClient,
  WebClientEvent,
  type WebClientOptions,
} from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import methods from '../fixtures/slack/methods.json' with { type: 'json' };
import rateLimited from '../fixtures/slack/rate-limited.json' with { type: 'json' };
import { type FakeSlack, startFakeSlack } from '../helpers/fakes/slack.ts';

/**
 * The local Slack (test/helpers/fakes/slack.ts) driven only through `@slack/web-api`'s WebClient, its
 * answers checked against the reference's examples (test/fixtures/slack, SOURCES.md there).
 */

/** The WebClient logs every failed call and Slack's `[ERROR]` messages: kept out of the test output. */
const quiet: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => LogLevel.ERROR,
  setName: () => {},
};

let fake: FakeSlack;

beforeAll(async () => {
  fake = await startFakeSlack();
});
afterAll(() => fake.close());

const client = (token?: string, options: WebClientOptions = {}, on: FakeSlack = fake) =>
  new WebClient(token, { slackApiUrl: on.apiUrl, logger: quiet, ...options });

async function platformError(promise: Promise<unknown>): Promise<WebAPIPlatformError> {
  try {
    await promise;
  } catch (err) {
    expect((err as { code?: string }).code).toBe(ErrorCode.PlatformError);
    return err as WebAPIPlatformError;
  }
  throw new Error('expected the call to fail');
}

/** The install page: follows the authorization URL and reads the redirect, as a browser would. */
async function install(on: FakeSlack, query: Record<string, string>) {
  const url = new URL(on.authorizeUrl);
  for (const [key, value] of Object.entries({ client_id: on.clientId, ...query })) url.searchParams.set(key, value);
  const res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  return { status: res.status, location: location ? new URL(location) : null };
}

async function botToken(on: FakeSlack, scope = 'chat:write,channels:read') {
  const { location } = await install(on, { scope, redirect_uri: on.redirectUris[0]!, state: 's' });
  return client(undefined, {}, on).oauth.v2.access({
    client_id: on.clientId,
    client_secret: on.clientSecret,
    code: location!.searchParams.get('code')!,
    redirect_uri: on.redirectUris[0],
  });
}

const keysOf = (value: object) => Object.keys(value).sort();

describe('OAuth v2 through @slack/web-api', () => {
  it('consents at once and exchanges the code with oauth.v2.access for a bot token', async () => {
    const { status, location } = await install(fake, {
      scope: 'chat:write,channels:read',
      redirect_uri: fake.redirectUris[0]!,
      state: 'state-42',
    });
    expect(status).toBe(302);
    expect(`${location!.origin}${location!.pathname}`).toBe(fake.redirectUris[0]);
    expect(location!.searchParams.get('state')).toBe('state-42');
    const code = location!.searchParams.get('code')!;

    const anonymous = client();
    const access = await anonymous.oauth.v2.access({
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
      code,
      redirect_uri: fake.redirectUris[0],
    });
    const example = methods['oauth.v2.access'].examples[0]!;
    // The reference's example, plus what the WebClient adds (response_metadata) and is_enterprise_install.
    expect(keysOf(access)).toEqual(keysOf({ ...example, response_metadata: {}, is_enterprise_install: false }));
    expect(access).toMatchObject({
      ok: true,
      token_type: 'bot',
      scope: 'chat:write,channels:read',
      bot_user_id: fake.botUserId,
      app_id: fake.appId,
      team: { id: fake.team.id, name: fake.team.name },
      enterprise: null,
    });
    expect(access.access_token).toMatch(/^xoxb-/);

    const identity = await client(access.access_token).auth.test();
    expect(keysOf(identity)).toEqual(
      keysOf({ ...methods['auth.test'].examples[2], is_enterprise_install: false, response_metadata: {} }),
    );
    expect(identity).toMatchObject({ ok: true, team_id: fake.team.id, user_id: fake.botUserId, bot_id: fake.botId });
    // The WebClient reads Slack's X-OAuth-Scopes header into response_metadata.scopes.
    expect(identity.response_metadata?.scopes).toEqual(['chat:write', 'channels:read']);

    const reused = await platformError(
      anonymous.oauth.v2.access({ client_id: fake.clientId, client_secret: fake.clientSecret, code }),
    );
    expect(reused.data.error).toBe('invalid_code');
    expect(reused.message).toBe('An API error occurred: invalid_code');
    expect(methods['oauth.v2.access'].errors).toHaveProperty('invalid_code');
  });

  it('refuses a wrong secret, a wrong client and a redirect_uri other than the authorization one', async () => {
    const anonymous = client();
    const codeOf = async () =>
      (await install(fake, { scope: 'chat:write', redirect_uri: fake.redirectUris[0]! })).location!.searchParams.get(
        'code',
      )!;
    const secret = await platformError(
      anonymous.oauth.v2.access({ client_id: fake.clientId, client_secret: 'nope', code: await codeOf() }),
    );
    expect(secret.data.error).toBe('bad_client_secret');
    const id = await platformError(
      anonymous.oauth.v2.access({ client_id: '1.2', client_secret: fake.clientSecret, code: await codeOf() }),
    );
    expect(id.data.error).toBe('invalid_client_id');
    const redirect = await platformError(
      anonymous.oauth.v2.access({
        client_id: fake.clientId,
        client_secret: fake.clientSecret,
        code: await codeOf(),
        redirect_uri: `${fake.url}/elsewhere`,
      }),
    );
    expect(redirect.data.error).toBe('bad_redirect_uri');
    // Slack answers its errors with HTTP 200 and ok: false.
    expect(fake.requests.at(-1)).toMatchObject({ method: 'oauth.v2.access', status: 200, error: 'bad_redirect_uri' });

    const mismatch = await install(fake, { scope: 'chat:write', redirect_uri: 'https://evil.example/cb' });
    expect(mismatch.status).toBe(400);
    fake.consent = 'deny';
    try {
      const denied = await install(fake, { scope: 'chat:write', state: 'x' });
      expect(denied.location!.searchParams.get('error')).toBe('access_denied');
    } finally {
      fake.consent = 'grant';
    }
  });

  it('rotates tokens when token rotation is on: expires_in, refresh_token, grant_type=refresh_token', async () => {
    const rotating = await startFakeSlack({ tokenRotation: true });
    try {
      const access = await botToken(rotating);
      expect(keysOf(access)).toEqual(
        keysOf({ ...methods['oauth.v2.access'].examples[1], response_metadata: {}, is_enterprise_install: false }),
      );
      expect(access.access_token).toMatch(/^xoxe\.xoxb-1-/);
      expect(access.refresh_token).toMatch(/^xoxe-1-/);
      expect(access.expires_in).toBe(43_200);

      rotating.expireTokens();
      const expired = await platformError(
        client(access.access_token, {}, rotating).chat.postMessage({ channel: 'general', text: 'hi' }),
      );
      expect(expired.data.error).toBe('token_expired');

      const refreshed = await client(undefined, {}, rotating).oauth.v2.access({
        client_id: rotating.clientId,
        client_secret: rotating.clientSecret,
        grant_type: 'refresh_token',
        refresh_token: access.refresh_token!,
      });
      expect(refreshed.access_token).not.toBe(access.access_token);
      expect(refreshed.refresh_token).not.toBe(access.refresh_token);
      const posted = await client(refreshed.access_token, {}, rotating).chat.postMessage({
        channel: 'general',
        text: 'hi',
      });
      expect(posted.ok).toBe(true);

      const spent = await platformError(
        client(undefined, {}, rotating).oauth.v2.access({
          client_id: rotating.clientId,
          client_secret: rotating.clientSecret,
          grant_type: 'refresh_token',
          refresh_token: access.refresh_token!,
        }),
      );
      expect(spent.data.error).toBe('invalid_refresh_token');
    } finally {
      await rotating.close();
    }
  });

  it('revokes with auth.revoke: the token then answers token_revoked', async () => {
    const token = fake.issueBotToken();
    const tested = await client(token).auth.revoke({ test: true });
    expect(tested).toMatchObject({ ok: true, revoked: false });
    const revoked = await client(token).auth.revoke();
    expect(keysOf(revoked)).toEqual(keysOf({ ...methods['auth.revoke'].examples[0], response_metadata: {} }));
    expect(revoked).toMatchObject({ ok: true, revoked: true });
    const after = await platformError(client(token).auth.test());
    expect(after.data.error).toBe('token_revoked');
    expect(methods['auth.test'].errors).toHaveProperty('token_revoked');

    const unknown = await platformError(client('xoxb-not-a-token').auth.test());
    expect(unknown.data).toMatchObject(methods['auth.test'].examples[1]!);
    const none = await platformError(client().auth.test());
    expect(none.data).toMatchObject(methods['auth.test'].examples[3]!);
  });
});

describe('chat.postMessage and conversations.list through @slack/web-api', () => {
  it('posts text and blocks: {ok, channel, ts, message}, a channel named or by ID', async () => {
    const token = fake.issueBotToken();
    const slack = client(token);
    const general = [...fake.channels.values()].find((c) => c.name === 'general')!;
    const blocks = [
      { type: 'header', text: { type: 'plain_text', text: 'New leads' } },
      { type: 'section', text: { type: 'mrkdwn', text: '*12* leads delivered to Google Sheets' } },
      { type: 'divider' },
    ];
    const posted = await slack.chat.postMessage({ channel: '#general', text: '12 leads delivered', blocks });
    expect(keysOf(posted)).toEqual(keysOf({ ...methods['chat.postMessage'].examples[0], response_metadata: {} }));
    expect(posted.channel).toBe(general.id);
    expect(posted.ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(posted.message).toMatchObject({ type: 'message', text: '12 leads delivered', bot_id: fake.botId, blocks });
    expect(fake.messages.at(-1)).toMatchObject({ channel: general.id, ts: posted.ts, blocks });

    const again = await slack.chat.postMessage({ channel: general.id, text: 'second' });
    expect(Number(again.ts)).toBeGreaterThan(Number(posted.ts));
    expect(fake.requests.at(-1)).toMatchObject({ contentType: 'application/x-www-form-urlencoded', status: 200 });
  });

  it('takes a JSON body with the token in the Authorization header, as Slack does', async () => {
    const token = fake.issueBotToken();
    // The WebClient always sends a form; its requestInterceptor turns this one into JSON.
    const slack = client(token, {
      requestInterceptor: (config) => {
        const form = Object.fromEntries(new URLSearchParams(config.data as string));
        const body = { ...form, blocks: JSON.parse(form.blocks ?? '[]') };
        config.data = JSON.stringify(body);
        config.headers.set('Content-Type', 'application/json; charset=utf-8');
        return config;
      },
    });
    const posted = await slack.chat.postMessage({
      channel: 'general',
      text: 'json',
      blocks: [{ type: 'section', text: { type: 'plain_text', text: 'from JSON' } }],
    });
    expect(posted.message?.blocks).toHaveLength(1);
    expect(fake.requests.at(-1)?.contentType).toBe('application/json; charset=utf-8');
  });

  it('raises the documented errors as WebAPIPlatformError with error.data.error', async () => {
    // Refused calls count against the channel's allowance too: each case posts to a channel of its own.
    const slack = client(fake.issueBotToken(), { rejectRateLimitedCalls: true });
    const fresh = () => fake.addChannel({ name: `errors-${fake.channels.size}`, isMember: true }).id;
    const cases: [Parameters<typeof slack.chat.postMessage>[0], string][] = [
      [{ channel: 'C000NOPE', text: 'x' }, 'channel_not_found'],
      [{ channel: 'random', text: 'x' }, 'not_in_channel'],
      [{ channel: fresh(), text: 'x'.repeat(4001) }, 'msg_too_long'],
      [{ channel: fresh(), text: '' }, 'no_text'],
      [{ channel: fresh(), text: 'x', blocks: 'not json' as never }, 'invalid_blocks_format'],
      [
        {
          channel: fresh(),
          text: 'x',
          blocks: [{ type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } }],
        },
        'invalid_blocks',
      ],
      [{ channel: fresh(), text: 'x', blocks: [{ type: 'nonsense' } as never] }, 'invalid_blocks'],
    ];
    for (const [args, error] of cases) {
      const failed = await platformError(slack.chat.postMessage(args));
      expect(failed.data.error, error).toBe(error);
      expect(methods['chat.postMessage'].errors, error).toHaveProperty(error);
    }
    const blocks = await platformError(
      slack.chat.postMessage({
        channel: fresh(),
        text: 'x',
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '' } }],
      }),
    );
    expect(blocks.data.response_metadata?.messages).toEqual([
      '[ERROR] must be more than 0 characters [json-pointer:/blocks/0/text/text]',
    ]);

    const archived = fake.addChannel({ name: 'old-leads', isMember: true, isArchived: true });
    expect((await platformError(slack.chat.postMessage({ channel: archived.id, text: 'x' }))).data.error).toBe(
      'is_archived',
    );
    const publicWrite = client(fake.issueBotToken(['chat:write', 'chat:write.public']));
    expect((await publicWrite.chat.postMessage({ channel: 'random', text: 'x' })).ok).toBe(true);

    const readOnly = client(fake.issueBotToken(['channels:read']));
    const scope = await platformError(readOnly.chat.postMessage({ channel: 'general', text: 'x' }));
    expect(scope.data).toMatchObject({ error: 'missing_scope', needed: 'chat:write', provided: 'channels:read' });
  });

  it('lists channels with a cursor', async () => {
    const on = await startFakeSlack({
      channels: [
        { name: 'general', isMember: true },
        { name: 'leads', isMember: true },
        { name: 'sales', isMember: false },
        { name: 'secret', isPrivate: true, isMember: false },
      ],
    });
    try {
      const slack = client(on.issueBotToken(['chat:write', 'channels:read', 'groups:read']), {}, on);
      const first = await slack.conversations.list({ limit: 2 });
      const referenceChannel = methods['conversations.list'].examples[0]!.channels![0]!;
      expect(Object.keys(first.channels![0]!)).toEqual(expect.arrayContaining(Object.keys(referenceChannel)));
      expect(first.channels!.map((c) => c.name)).toEqual(['general', 'leads']);
      const second = await slack.conversations.list({ limit: 2, cursor: first.response_metadata!.next_cursor! });
      expect(second.channels!.map((c) => c.name)).toEqual(['sales']);
      expect(second.response_metadata?.next_cursor).toBe('');
      const withPrivate = await slack.conversations.list({ types: 'public_channel,private_channel' });
      expect(withPrivate.channels!.map((c) => c.name)).not.toContain('secret');
      expect((await platformError(slack.conversations.list({ limit: 1000 }))).data.error).toBe('invalid_limit');
      expect((await platformError(slack.conversations.list({ cursor: 'bogus' }))).data.error).toBe('invalid_cursor');
    } finally {
      await on.close();
    }
  });
});

describe('rate limits through @slack/web-api', () => {
  it('allows a short burst, then 429 ratelimited with Retry-After; rejectRateLimitedCalls raises it', async () => {
    const channel = fake.addChannel({ name: 'burst', isMember: true });
    const slack = client(fake.issueBotToken(), { rejectRateLimitedCalls: true });
    // The burst (5) goes through; the bucket refills at 1 a second, so a slow machine may get one more.
    let delivered = 0;
    let caught: WebAPIRateLimitedError | undefined;
    while (!caught && delivered < 20) {
      try {
        await slack.chat.postMessage({ channel: channel.id, text: `lead ${delivered}` });
        delivered++;
      } catch (err) {
        caught = err as WebAPIRateLimitedError;
      }
    }
    expect(delivered).toBeGreaterThanOrEqual(5);
    expect(caught?.code).toBe(ErrorCode.RateLimitedError);
    expect(caught?.retryAfter).toBe(1);
    const last = fake.requests.at(-1)!;
    expect(last.status).toBe(rateLimited.status);
    expect(last.error).toBe(rateLimited.body.error);
    expect(methods['chat.postMessage'].errors).toHaveProperty('ratelimited');
    // Another channel has its own allowance.
    const other = fake.addChannel({ name: 'burst-other', isMember: true });
    expect((await slack.chat.postMessage({ channel: other.id, text: 'elsewhere' })).ok).toBe(true);

    const raw = await fetch(`${fake.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.issueBotToken()}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ channel: channel.id, text: 'raw' }),
    });
    expect(raw.status).toBe(rateLimited.status);
    expect(raw.headers.get('retry-after')).toBe(rateLimited.headers['retry-after']);
    expect(await raw.json()).toEqual(rateLimited.body);
  });

  it('by default waits Retry-After seconds, emits rate_limited, and retries', async () => {
    const slack = client(fake.issueBotToken(), { retryConfig: retryPolicies.rapidRetryPolicy });
    const events: number[] = [];
    slack.on(WebClientEvent.RATE_LIMITED, (seconds: number) => events.push(seconds));
    fake.rateLimit('chat.postMessage', { times: 1, retryAfter: 1 });
    const started = Date.now();
    const posted = await slack.chat.postMessage({
      channel: fake.addChannel({ name: 'waits', isMember: true }).id,
      text: 'after the wait',
    });
    expect(posted.ok).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(events).toEqual([1]);
    expect(fake.requests.slice(-2).map((r) => r.status)).toEqual([429, 200]);
  });

  it('limits the tiered methods per minute (conversations.list is Tier 2)', async () => {
    const on = await startFakeSlack({ tierLimits: { 'conversations.list': 2 } });
    try {
      const slack = client(on.issueBotToken(), { rejectRateLimitedCalls: true }, on);
      await slack.conversations.list();
      await slack.conversations.list();
      const limited = await slack.conversations.list().catch((err: WebAPIRateLimitedError) => err);
      expect((limited as WebAPIRateLimitedError).code).toBe(ErrorCode.RateLimitedError);
      expect((limited as WebAPIRateLimitedError).retryAfter).toBeGreaterThanOrEqual(59);
    } finally {
      await on.close();
    }
  });
});
