import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { closeCode, disposeClients, wsClient } from '../helpers/ws.ts';
import { startIdentityApp, type IdentityApp } from '../helpers/identity.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The console's sign-in (the /auth routes) and its session on GraphQL over HTTP and graphql-ws:
 * cookies, CSRF, Origin checks, sign-out and revocation, throttling, and what is stored and logged.
 */

const PASSWORD = 'correct horse battery';
const OTHER_ORIGIN = 'http://console.elsewhere.test';
let t: IdentityApp;

beforeAll(async () => {
  // OTHER_ORIGIN may call the API cross-origin (CORS_ORIGINS), so its sockets reach the session check.
  t = await startIdentityApp({ loginFailuresPerMinute: 3, corsOrigins: [OTHER_ORIGIN] });
});
afterAll(() => t?.stop());
afterEach(() => disposeClients());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const VIEWER = '{ viewer { id name plan subscriptionStatus viewerRole } currentUser { email name } }';

describe('sign-up', () => {
  it('opens an account on the configured trial, owned by the new user, and signs them in with an HttpOnly SameSite=Lax cookie', async () => {
    const browser = t.browser();
    const from = t.mail.mails.length;
    const res = await browser.request('POST', '/auth/sign-up', {
      body: { email: 'Ada@Example.COM', password: PASSWORD, name: 'Ada' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      user: { email: 'ada@example.com', name: 'Ada', emailVerified: false },
      account: { name: "Ada's team" },
      role: 'owner',
      trialCredits: '5.00',
    });
    expect(res.body.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(res.body.expiresAt) - Date.now()).toBeGreaterThan(29 * 24 * 3600_000);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('lg_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure/); // served over http
    expect(JSON.stringify(res.body)).not.toContain(browser.cookie);

    const account = () =>
      t.app.core
        .sql`select a.plan, a.subscription_status, (w.plan_micros + w.purchased_micros)::text as micros from account a join wallet w on w.account_id = a.id where a.id = ${res.body.account.id}`;
    // The trial credits come with the verified email (signup-trial.test.ts).
    expect(await account()).toEqual([{ plan: 'growth', subscription_status: 'TRIAL', micros: '0' }]);
    expect((await t.verifyEmail('ada@example.com', from)).status).toBe(200);
    expect(await account()).toEqual([{ plan: 'growth', subscription_status: 'TRIAL', micros: '5000000' }]);
    const gql = await browser.graphql(VIEWER);
    expect(gql.body).toEqual({
      data: {
        viewer: {
          id: res.body.account.id,
          name: "Ada's team",
          plan: 'GROWTH',
          subscriptionStatus: 'TRIAL',
          viewerRole: 'OWNER',
        },
        currentUser: { email: 'ada@example.com', name: 'Ada' },
      },
    });
  });

  it('stores the password as an argon2id hash and the session token only as its SHA-256', async () => {
    const browser = await t.signUp('hash@example.com');
    const [user] = await t.app.core.sql`select id, password_hash from app_user where email = 'hash@example.com'`;
    expect(user!.password_hash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=1\$/);
    expect(user!.password_hash).not.toContain(PASSWORD);
    const sessions = await t.app.core.sql`select * from console_session where user_id = ${user!.id}`;
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.token_hash).toBe(sha256(browser.cookie!));
    expect(JSON.stringify(sessions)).not.toContain(browser.cookie);
  });

  it('refuses a taken email in any case (409), a short password (400 at its field), a form post (415) and a foreign Origin (403)', async () => {
    await t.signUp('taken@example.com');
    const browser = t.browser();
    expect(
      (await browser.request('POST', '/auth/sign-up', { body: { email: 'TAKEN@example.com', password: PASSWORD } }))
        .body.error.code,
    ).toBe('email_taken');
    const short = await browser.request('POST', '/auth/sign-up', {
      body: { email: 'short@example.com', password: 'tooshort' },
    });
    expect(short.status).toBe(400);
    expect(short.body.error).toMatchObject({ code: 'validation_failed', details: [{ path: 'password' }] });
    // A field the route does not take is refused like on every route, naming the closest one.
    const typo = await browser.request('POST', '/auth/sign-up', {
      body: { email: 'typo@example.com', pasword: PASSWORD },
    });
    expect(typo.status).toBe(400);
    expect(JSON.stringify(typo.body.error.details)).toContain('did you mean password');
    const form = await browser.request('POST', '/auth/sign-up', {
      body: { email: 'form@example.com', password: PASSWORD },
      headers: { 'content-type': 'text/plain' },
    });
    expect(form.status).toBe(415);
    const foreign = await browser.request('POST', '/auth/sign-up', {
      body: { email: 'foreign@example.com', password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    expect([foreign.status, foreign.body.error.code]).toEqual([403, 'csrf_failed']);
    const [{ n }] = (await t.app.core
      .sql`select count(*)::int as n from app_user where email in ('short@example.com', 'typo@example.com', 'form@example.com', 'foreign@example.com')`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(0);
  });

  it('with SIGNUP=invite answers 403 signup_closed and creates nothing', async () => {
    t.app.core.config.signup = 'invite';
    try {
      const res = await t
        .browser()
        .request('POST', '/auth/sign-up', { body: { email: 'closed@example.com', password: PASSWORD } });
      expect([res.status, res.body.error.code]).toEqual([403, 'signup_closed']);
      expect(await t.app.core.sql`select 1 from app_user where email = 'closed@example.com'`).toHaveLength(0);
    } finally {
      t.app.core.config.signup = 'open';
    }
  });
});

describe('sign-in and the session', () => {
  it('signs in, reads the session, and refuses wrong passwords and unknown emails alike (401 invalid_credentials)', async () => {
    await t.signUp('bob@example.com');
    const browser = t.browser();
    const wrong = await browser.request('POST', '/auth/sign-in', {
      body: { email: 'bob@example.com', password: 'not the password' },
    });
    const unknown = await browser.request('POST', '/auth/sign-in', {
      body: { email: 'nobody@example.com', password: 'not the password' },
    });
    expect([wrong.status, wrong.body.error]).toEqual([
      401,
      { code: 'invalid_credentials', message: 'Wrong email or password' },
    ]);
    expect([unknown.status, unknown.body.error]).toEqual([401, wrong.body.error]);
    expect(browser.cookie).toBeUndefined();

    const ok = await browser.request('POST', '/auth/sign-in', {
      body: { email: 'BOB@example.com', password: PASSWORD },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ user: { email: 'bob@example.com' }, role: 'owner' });
    const session = await browser.request('GET', '/auth/session');
    expect(session.status).toBe(200);
    expect(session.body).toEqual(ok.body);
    expect((await t.browser().request('GET', '/auth/session')).status).toBe(401);
  });

  it('throttles failed sign-ins per email: 429 rate_limited with Retry-After, even for the right password, before the password is checked', async () => {
    await t.signUp('carol@example.com');
    const browser = t.browser();
    const attempts = [];
    for (let i = 0; i < 3; i++)
      attempts.push(
        (
          await browser.request('POST', '/auth/sign-in', {
            body: { email: 'carol@example.com', password: `wrong password ${i}` },
          })
        ).status,
      );
    expect(attempts.slice(0, 2)).toEqual([401, 401]);
    const refused = await browser.request('POST', '/auth/sign-in', {
      body: { email: 'carol@example.com', password: PASSWORD },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another email from the same address is not held by carol's budget.
    await t.signUp('dave@example.com');
    expect(
      (await browser.request('POST', '/auth/sign-in', { body: { email: 'dave@example.com', password: PASSWORD } }))
        .status,
    ).toBe(200);
    // The shared counters are keyed by a hash of the email, never the address itself.
    const keys = (await t.app.core.sql`select key from rate_limit where key like 'login:%'`).map(
      (r) => r.key as string,
    );
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((k) => k.includes('@'))).toEqual([]);
  });
});

describe('CSRF on GraphQL over HTTP', () => {
  it('answers a session request only with its X-CSRF-Token: none or a wrong one is 403 CSRF_FAILED, GET included', async () => {
    const browser = await t.signUp('erin@example.com');
    expect((await browser.graphql('{ viewer { id } }')).status).toBe(200);
    const none = await browser.graphql('{ viewer { id } }', undefined, { csrf: false });
    expect(none.status).toBe(403);
    expect(none.body.errors[0].extensions.code).toBe('CSRF_FAILED');
    const wrong = await browser.graphql('{ viewer { id } }', undefined, {
      csrf: false,
      headers: { 'x-csrf-token': 'A'.repeat(43) },
    });
    expect([wrong.status, wrong.body.errors[0].extensions.code]).toEqual([403, 'CSRF_FAILED']);
    const get = await browser.request('GET', `/graphql?query=${encodeURIComponent('{ viewer { id } }')}`, {
      headers: { accept: 'application/json' },
    });
    expect(get.status).toBe(200);
    const getNoCsrf = await browser.request('GET', `/graphql?query=${encodeURIComponent('{ viewer { id } }')}`, {
      headers: { accept: 'application/json' },
      csrf: false,
    });
    expect(getNoCsrf.status).toBe(403);
    // Nothing else authenticates a mutation either.
    const mutation = await browser.graphql(
      'mutation { createApiKey(input: {name: "x"}) { userErrors { code } } }',
      undefined,
      { csrf: false },
    );
    expect(mutation.status).toBe(403);
    expect(await t.app.core.sql`select 1 from api_key where name = 'x'`).toHaveLength(0);
  });

  it('lets an API key take precedence over a cookie: no CSRF token needed, the key’s account answers', async () => {
    const browser = await t.signUp('frank@example.com');
    const created = await browser.graphql(
      'mutation { createApiKey(input: {name: "ci"}) { secret apiKey { id } userErrors { code } } }',
    );
    const secret = created.body.data.createApiKey.secret as string;
    const viaKey = await browser.graphql('{ viewer { viewerRole } currentUser { email } }', undefined, {
      csrf: false,
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(viaKey.body).toEqual({ data: { viewer: { viewerRole: null }, currentUser: null } });
  });

  it('leaves REST and MCP key-only: a session cookie there is ignored (401)', async () => {
    const browser = await t.signUp('gina@example.com');
    expect((await browser.request('GET', '/api/v1/wallet')).status).toBe(401);
    const mcp = await browser.request('POST', '/mcp', {
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(mcp.status).toBe(401);
  });
});

describe('sign-out', () => {
  it('needs the CSRF token (403 without), then revokes the session and clears the cookie', async () => {
    const browser = await t.signUp('hank@example.com');
    const cookie = browser.cookie!;
    const refused = await browser.request('POST', '/auth/sign-out', { csrf: false });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'csrf_failed']);
    expect((await browser.graphql('{ viewer { id } }')).status).toBe(200);
    const out = await browser.request('POST', '/auth/sign-out');
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie().find((c) => c.startsWith('lg_session='))).toMatch(
      /^lg_session=;.*Expires=Thu, 01 Jan 1970/,
    );
    browser.cookie = cookie;
    const after = await browser.graphql('{ viewer { id } }');
    expect([after.status, after.body.errors[0].extensions.code]).toEqual([401, 'UNAUTHENTICATED']);
    expect((await browser.request('GET', '/auth/session')).status).toBe(401);
  });
});

describe('graphql-ws with a session', () => {
  it('authenticates a socket with the cookie, the gateway’s own Origin and connectionParams.csrfToken', async () => {
    const browser = await t.signUp('ivy@example.com');
    const client = browser.socket();
    const result = await new Promise<unknown>((resolve, reject) =>
      client.subscribe(
        { query: '{ viewer { viewerRole } currentUser { email } }' },
        { next: resolve, error: reject, complete: () => {} },
      ),
    );
    expect(result).toEqual({ data: { viewer: { viewerRole: 'OWNER' }, currentUser: { email: 'ivy@example.com' } } });
  });

  it('closes with 4401 without the CSRF token, with a wrong one, and from another origin', async () => {
    const browser = await t.signUp('jack@example.com');
    for (const client of [
      browser.socket({ csrfToken: null }),
      browser.socket({ csrfToken: 'B'.repeat(43) }),
      browser.socket({ origin: OTHER_ORIGIN }),
    ]) {
      const closed = closeCode(client);
      client.subscribe({ query: '{ viewer { id } }' }, { next: () => {}, error: () => {}, complete: () => {} });
      expect(await closed).toBe(4401);
    }
  });

  it('takes the CSRF token under GraphiQL’s header name X-CSRF-Token, in any case; a wrong one closes with 4401', async () => {
    const browser = await t.signUp('iris@example.com');
    const headers = { cookie: `lg_session=${browser.cookie}`, origin: t.url };
    class CookieSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers });
      }
    }
    const socket = (connectionParams: Record<string, string>) =>
      wsClient(t.url, undefined, { webSocketImpl: CookieSocket, connectionParams });
    for (const name of ['X-CSRF-Token', 'x-csrf-token']) {
      const result = await new Promise<unknown>((resolve, reject) =>
        socket({ [name]: browser.csrfToken! }).subscribe(
          { query: '{ currentUser { email } }' },
          { next: resolve, error: reject, complete: () => {} },
        ),
      );
      expect(result, name).toEqual({ data: { currentUser: { email: 'iris@example.com' } } });
    }
    const wrong = socket({ 'X-CSRF-Token': 'B'.repeat(43) });
    const closed = closeCode(wrong);
    wrong.subscribe({ query: '{ viewer { id } }' }, { next: () => {}, error: () => {}, complete: () => {} });
    expect(await closed).toBe(4401);
  });

  it('signOutEverywhere stops the user’s other sessions over HTTP and on their open socket; revokeSession stops one', async () => {
    await t.signUp('kim@example.com');
    const signIn = async () => {
      const browser = t.browser();
      expect(
        (await browser.request('POST', '/auth/sign-in', { body: { email: 'kim@example.com', password: PASSWORD } }))
          .status,
      ).toBe(200);
      return browser;
    };
    const [a, b, c] = [await signIn(), await signIn(), await signIn()];
    const listed = await a.graphql('{ sessions { totalCount nodes { id current userAgent ipAddress } } }');
    expect(listed.body.data.sessions.totalCount).toBe(4);
    expect(listed.body.data.sessions.nodes.filter((s: { current: boolean }) => s.current)).toHaveLength(1);

    // revokeSession: c's own id, seen from c, revoked from a.
    const cId = (await c.graphql('{ sessions { nodes { id current } } }')).body.data.sessions.nodes.find(
      (s: { current: boolean }) => s.current,
    ).id;
    const revoked = await a.graphql(
      'mutation($id: ID!) { revokeSession(id: $id) { revokedSessionId userErrors { code } } }',
      { id: cId },
    );
    expect(revoked.body.data.revokeSession).toEqual({ revokedSessionId: cId, userErrors: [] });
    expect((await c.graphql('{ viewer { id } }')).status).toBe(401);

    // b has a socket open with a subscription running; a signs out everywhere.
    const socket = b.socket();
    const first = await new Promise((resolve, reject) =>
      socket.subscribe({ query: '{ viewer { id } }' }, { next: resolve, error: reject, complete: () => {} }),
    );
    expect(first).toHaveProperty('data.viewer.id');
    const everywhere = await a.graphql('mutation { signOutEverywhere { revokedSessionCount userErrors { code } } }');
    expect(everywhere.body.data.signOutEverywhere).toEqual({ revokedSessionCount: 3, userErrors: [] });
    expect((await a.graphql('{ viewer { id } }')).status).toBe(401);
    expect((await b.graphql('{ viewer { id } }')).status).toBe(401);
    const closed = closeCode(socket);
    const refused = new Promise<unknown>((resolve) =>
      socket.subscribe({ query: '{ viewer { id } }' }, { next: () => {}, error: resolve, complete: () => {} }),
    );
    expect(await closed).toBe(4401);
    expect(await refused).toBeDefined();
  });
});

describe('the last use of a session', () => {
  it('moves lastSeenAt and slides the idle expiry when a session is used again later, logging nothing at warn or error', async () => {
    const from = t.logs.length;
    const browser = await t.signUp('lastseen@example.com');
    const epochMs = (column: string) => t.app.core.sql.unsafe(`(extract(epoch from ${column}) * 1000)::float8`);
    // Last used two hours ago: the stored times are moved back, as if the clock had moved on since sign-up.
    const [earlier] = (await t.app.core.sql`
      update console_session set created_at = created_at - interval '2 hours',
        last_seen_at = last_seen_at - interval '2 hours', expires_at = expires_at - interval '2 hours'
      where user_id = (select id from app_user where email = 'lastseen@example.com')
      returning id, ${epochMs('last_seen_at')} as seen, ${epochMs('expires_at')} as expires`) as unknown as [
      { id: string; seen: number; expires: number },
    ];
    const loud = () => t.logs.slice(from).filter((line) => JSON.parse(line).level >= 40);
    // Used again now: the use is recorded in the background; wait for the write, or a warning that it failed.
    const SESSIONS = '{ sessions { nodes { current lastSeenAt expiresAt } } }';
    expect((await browser.graphql(SESSIONS)).status).toBe(200);
    const stored = await waitFor(
      async () =>
        (
          await t.app.core.sql`select ${epochMs('last_seen_at')} as seen, ${epochMs('expires_at')} as expires
            from console_session where id = ${earlier.id}`
        )[0] as { seen: number; expires: number },
      (row) => row.seen > earlier.seen || loud().length > 0,
      { what: 'the session’s last use recorded' },
    );
    expect(loud()).toEqual([]);
    expect(stored.seen - earlier.seen).toBeGreaterThan(2 * 3600_000 - 60_000);
    expect(stored.expires - earlier.expires).toBeGreaterThan(2 * 3600_000 - 60_000);
    expect(stored.expires - stored.seen).toBe(30 * 24 * 3600_000);
    // The console's "Last seen" reads the moved time.
    const listed = await browser.graphql(SESSIONS);
    const after = listed.body.data.sessions.nodes.find((s: { current: boolean }) => s.current);
    expect(Date.parse(after.lastSeenAt)).toBe(Math.floor(stored.seen));
    expect(Date.parse(after.expiresAt)).toBe(Math.floor(stored.expires));
  });
});

describe('secrets', () => {
  it('never writes a password, a session token, a CSRF token or a key’s secret to the log', async () => {
    const browser = await t.signUp('logs@example.com', 'a very secret passphrase 42');
    await browser.graphql('{ viewer { id } }');
    const key = (await browser.graphql('mutation { createApiKey(input: {name: "logged?"}) { secret } }')).body.data
      .createApiKey.secret as string;
    await fetch(`${t.url}/api/v1/wallet`, { headers: { authorization: `Bearer ${key}` } });
    await t.browser().request('POST', '/auth/sign-in', {
      body: { email: 'logs@example.com', password: 'wrong secret passphrase 42' },
    });
    const log = t.logs.join('\n');
    expect(t.logs.length).toBeGreaterThan(0);
    for (const secret of [
      'a very secret passphrase 42',
      'wrong secret passphrase 42',
      browser.cookie!,
      browser.csrfToken!,
      key,
    ])
      expect(log).not.toContain(secret);
  });
});

describe('the rate limit of a session', () => {
  it('gives each session a key’s per-minute budget, with the RateLimit headers and 429 past it', async () => {
    const limited = await startIdentityApp({ rateLimitPerMinute: 5 });
    try {
      const first = await limited.signUp('budget@example.com');
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await first.graphql('{ viewer { id } }')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      const refused = await first.graphql('{ viewer { id } }');
      expect(refused.body.errors[0].extensions.code).toBe('RATE_LIMITED');
      expect(refused.headers.get('ratelimit-policy')).toBe('5;w=60');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      // Counted per session: another sign-in of the same user has its own budget.
      const second = limited.browser();
      expect(
        (await second.request('POST', '/auth/sign-in', { body: { email: 'budget@example.com', password: PASSWORD } }))
          .status,
      ).toBe(200);
      expect((await second.graphql('{ viewer { id } }')).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });
});

describe('hostile input', () => {
  it('answers text Postgres cannot store with 400 validation_failed, never a 500', async () => {
    const nul = await t
      .browser()
      .request('POST', '/auth/sign-up', { body: { email: 'nul@example.com', password: PASSWORD, name: 'a\u0000b' } });
    expect([nul.status, nul.body.error.code]).toEqual([400, 'validation_failed']);
    const signIn = await t
      .browser()
      .request('POST', '/auth/sign-in', { body: { email: 'x\u0000@example.com', password: PASSWORD } });
    expect(signIn.status).toBe(400);
    const browser = await t.signUp('nul-key@example.com');
    const key = await browser.graphql(
      'mutation { createApiKey(input: {name: "bad\\u0000name"}) { secret userErrors { code field } } }',
    );
    expect(key.body.data.createApiKey).toEqual({
      secret: null,
      userErrors: [{ code: 'VALIDATION_FAILED', field: ['input', 'name'] }],
    });
    const invite = await browser.graphql(
      'mutation { inviteMember(input: {email: "not an email", role: MEMBER}) { invitation { id } userErrors { code field } } }',
    );
    expect(invite.body.data.inviteMember).toEqual({
      invitation: null,
      userErrors: [{ code: 'VALIDATION_FAILED', field: ['input', 'email'] }],
    });
  });
});

// Last: it spends the address's budget of failed authentications, which every test here shares.
describe('throttling per client address', () => {
  it('refuses sign-ins from an address past AUTH_FAILURES_PER_MINUTE, whatever email it tries', async () => {
    await t.signUp('last@example.com');
    const browser = t.browser();
    let status = 401;
    for (let i = 0; i < 70 && status === 401; i++)
      status = (
        await browser.request('POST', '/auth/sign-in', {
          body: { email: `guess${i}@example.com`, password: 'a guessed password' },
        })
      ).status;
    expect(status).toBe(429);
    const refused = await browser.request('POST', '/auth/sign-in', {
      body: { email: 'last@example.com', password: PASSWORD },
    });
    expect([refused.status, refused.body.error.code]).toEqual([429, 'rate_limited']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
