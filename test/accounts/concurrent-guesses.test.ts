import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdentityApp, type IdentityApp } from '../helpers/identity.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Guesses sent all at once are counted like guesses sent one by one: a sign-in attempt is counted
 * against its email (LOGIN_FAILURES_PER_MINUTE) and its client address (AUTH_FAILURES_PER_MINUTE)
 * before its password is checked, and an API key the gateway has not cached is counted against the
 * address before it is looked up, so however many arrive together, no more passwords are checked and no
 * more keys looked up than the budgets allow. The right password and a valid key give their unit back.
 *
 * The gateway trusts 127.0.0.1 as a proxy (TRUST_PROXY), so X-Forwarded-For gives each request the
 * client address the test chooses. To have the requests truly together, the table the lookups read is
 * locked while they arrive (`whileLocked`): every lookup the gateway starts waits there, where the test
 * counts them (a refused request's status alone would not tell whether its password was checked).
 */

const PASSWORD = 'correct horse battery';
const PER_EMAIL = 3;
const PER_ADDRESS = 4;
let t: IdentityApp;
let key: string;

beforeAll(async () => {
  // No key cache (the helper's AUTH_CACHE_SECS=0): every request with a key looks it up.
  t = await startIdentityApp({
    loginFailuresPerMinute: PER_EMAIL,
    authFailuresPerMinute: PER_ADDRESS,
    trustProxy: ['loopback'],
  });
  const owner = await t.signUp('owner@example.com');
  key = (await owner.graphql('mutation { createApiKey(input: {name: "ci"}) { secret } }')).body.data.createApiKey
    .secret;
});
afterAll(() => t?.stop());

const signIn = (email: string, password: string, address: string) =>
  fetch(`${t.url}/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({ email, password }),
  });
const wallet = (authorization: string, address: string) =>
  fetch(`${t.url}/api/v1/wallet`, { headers: { authorization, 'x-forwarded-for': address } });
const unknownKey = () => `Bearer lg_live_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;
const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

/**
 * Sends `requests` while `table` is locked (ACCESS EXCLUSIVE, so even reads of it wait) and unlocks it
 * once the gateway has received every one and a lookup of the table waits for the lock: no lookup had
 * answered, or been counted as a failure, before the others came. Their statuses, in order, and how
 * many lookups were waiting for the lock then (counted by the server, over a connection of its own).
 */
async function whileLocked(
  table: 'app_user' | 'api_key',
  requests: () => Promise<Response>[],
): Promise<{ statuses: number[]; lookups: number }> {
  let unlock!: () => void;
  const unlocked = new Promise<void>((resolve) => (unlock = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = t.app.core.sql.begin(async (tx) => {
    await tx.unsafe(`lock table ${table} in access exclusive mode`);
    locked();
    await unlocked;
  });
  const observer = postgres(t.database.url, { max: 1 });
  let received = 0;
  const receive = () => void received++;
  t.app.http.server.on('request', receive);
  let lookups = 0;
  try {
    await isLocked;
    const sent = requests();
    const answers = Promise.all(sent);
    // Waits for the lock on `table` only: under load other statements wait on locks too (a relation's extension).
    const waiting = async () =>
      (
        (await observer`select count(distinct pid)::int as n from pg_locks
          where not granted and locktype = 'relation' and database = (select oid from pg_database where datname = current_database())
            and relation = ${table}::regclass`) as unknown as [{ n: number }]
      )[0].n;
    await waitFor(
      () => received,
      (n) => n === sent.length,
      { what: 'the gateway to receive every request' },
    );
    lookups = await waitFor(waiting, (n) => n > 0, { what: 'a lookup to wait for the lock' });
    unlock();
    await holder;
    const done = await answers;
    await Promise.all(done.map((a) => a.body?.cancel()));
    return { statuses: done.map((a) => a.status), lookups };
  } finally {
    unlock();
    t.app.http.server.off('request', receive);
    await observer.end();
  }
}

describe('sign-ins sent at once', () => {
  it('check at most LOGIN_FAILURES_PER_MINUTE passwords of one email, from any number of addresses: the right one sent last is refused', async () => {
    await t.signUp('victim@example.com');
    // 39 wrong passwords and the right one last, each from an address of its own.
    const { statuses, lookups } = await whileLocked('app_user', () =>
      Array.from({ length: 40 }, (_, i) =>
        signIn('victim@example.com', i === 39 ? PASSWORD : `guess number ${i}`, `198.51.100.${i + 1}`),
      ),
    );
    expect(lookups).toBeGreaterThan(0);
    expect(lookups).toBeLessThanOrEqual(PER_EMAIL);
    expect(count(statuses, 401)).toBeLessThanOrEqual(PER_EMAIL);
    expect(count(statuses, 401) + count(statuses, 429)).toBe(40);
    expect(statuses[39]).toBe(429);
    const refused = await signIn('victim@example.com', PASSWORD, '198.51.100.99');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: unknown }).error).toEqual({
      code: 'rate_limited',
      message: expect.stringMatching(
        /^Too many failed sign-ins: the limit is 3 per minute\. Retry in \d+ s, or reset the password\.$/,
      ),
    });
  });

  it('check at most AUTH_FAILURES_PER_MINUTE passwords from one address, whatever emails they name', async () => {
    const { statuses, lookups } = await whileLocked('app_user', () =>
      Array.from({ length: 40 }, (_, i) => signIn(`someone${i}@example.com`, 'a guessed password', '198.51.100.200')),
    );
    expect(lookups).toBeGreaterThan(0);
    expect(lookups).toBeLessThanOrEqual(PER_ADDRESS);
    expect(count(statuses, 401)).toBeLessThanOrEqual(PER_ADDRESS);
    expect(count(statuses, 401) + count(statuses, 429)).toBe(40);
  });

  it('cost the right password nothing: a user who signs in keeps the whole budget for mistakes', async () => {
    await t.signUp('regular@example.com');
    const address = '198.51.100.201';
    const statuses = [];
    for (const password of [
      'wrong one',
      PASSWORD,
      PASSWORD,
      PASSWORD,
      PASSWORD,
      'wrong two',
      PASSWORD,
      'wrong three',
      PASSWORD,
    ]) {
      statuses.push((await signIn('regular@example.com', password, address)).status);
    }
    // Three failures use the budget up: then even the right password waits for the window's end.
    expect(statuses).toEqual([401, 200, 200, 200, 200, 401, 200, 401, 429]);
  });
});

describe('API keys sent at once', () => {
  it('look up at most AUTH_FAILURES_PER_MINUTE unknown keys from one address; the rest are refused 429 unlooked-at', async () => {
    const { statuses, lookups } = await whileLocked('api_key', () =>
      Array.from({ length: 40 }, () => wallet(unknownKey(), '203.0.113.50')),
    );
    expect(lookups).toBeGreaterThan(0);
    expect(lookups).toBeLessThanOrEqual(PER_ADDRESS);
    expect(count(statuses, 401)).toBeLessThanOrEqual(PER_ADDRESS);
    expect(count(statuses, 401) + count(statuses, 429)).toBe(40);
    // The address is blocked now, for a valid key too.
    expect((await wallet(`Bearer ${key}`, '203.0.113.50')).status).toBe(429);
  });

  it('never drain the address with a valid key, however many requests arrive together', async () => {
    const address = '203.0.113.51';
    for (let round = 0; round < 3; round++) {
      // One lookup for the 40: the others wait for its answer instead of counting a unit each.
      expect(
        await whileLocked('api_key', () => Array.from({ length: 40 }, () => wallet(`Bearer ${key}`, address))),
      ).toEqual({ statuses: Array(40).fill(200), lookups: 1 });
    }
    // The whole budget is left for mistakes.
    const mistakes = [];
    for (let i = 0; i <= PER_ADDRESS; i++) mistakes.push((await wallet(unknownKey(), address)).status);
    expect(mistakes).toEqual([...Array(PER_ADDRESS).fill(401), 429]);
  });

  it('share one lookup and one unit between requests that send the same unknown key at once', async () => {
    const address = '203.0.113.52';
    const same = unknownKey();
    expect(await whileLocked('api_key', () => Array.from({ length: 20 }, () => wallet(same, address)))).toEqual({
      statuses: Array(20).fill(401),
      lookups: 1,
    });
    // They were one guess: the rest of the budget is left.
    const more = [];
    for (let i = 0; i < PER_ADDRESS; i++) more.push((await wallet(unknownKey(), address)).status);
    expect(more).toEqual([...Array(PER_ADDRESS - 1).fill(401), 429]);
  });
});
