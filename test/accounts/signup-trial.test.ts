import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { loadConfig } from '../../src/config.ts';
import { canonicalMailbox } from '../../src/accounts/mailbox.ts';
import { startIdentityApp, type Browser, type IdentityApp } from '../helpers/identity.ts';

/**
 * Sign-up farming: a sign-up's trial credits come only when the user follows the link mailed to
 * their address, once per mailbox (plus-tags and Gmail's dots folded), never for a throwaway-mail
 * address; until then the account has nothing to spend. Sign-ups are limited per client address.
 */

const PASSWORD = 'correct horse battery';
const START_MAPS =
  'mutation { startMapsScrape(input: {searchStringsArray: ["dentist"], locationQuery: "Denver, CO", maxCrawledPlacesPerSearch: 5}) { run { id } userErrors { code message } } }';
let t: IdentityApp;

beforeAll(async () => {
  t = await startIdentityApp();
});
afterAll(() => t?.stop());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function walletOf(browser: Browser): Promise<string> {
  const session = await browser.request('GET', '/auth/session');
  const [row] = await t.app.core
    .sql`select (plan_micros + purchased_micros)::text as micros from wallet where account_id = ${session.body.account.id}`;
  return row!.micros as string;
}

/** Signs `email` up: its browser and the verification link's answer. */
async function signUpAndVerify(email: string) {
  const from = t.mail.mails.length;
  const browser = await t.signUp(email);
  return { browser, verified: await t.verifyEmail(email, from) };
}

describe('the trial credits', () => {
  it('are not in an unverified account: it cannot start a paid run; verifying grants them once, and the run starts', async () => {
    const from = t.mail.mails.length;
    const browser = await t.signUp('unverified@example.com');
    const session = await browser.request('GET', '/auth/session');
    expect(session.body).toMatchObject({
      user: { email: 'unverified@example.com', emailVerified: false },
      trialCredits: '5.00',
    });
    expect(await walletOf(browser)).toBe('0');
    const refused = await browser.graphql(START_MAPS);
    expect(refused.body.data.startMapsScrape).toMatchObject({
      run: null,
      userErrors: [{ code: 'INSUFFICIENT_FUNDS' }],
    });
    expect(
      await t.app.core
        .sql`select 1 from run r join account a on a.id = r.account_id where a.id = ${session.body.account.id}`,
    ).toHaveLength(0);

    // The mail says what the link brings.
    const mail = t.mail.mails.slice(from).find((m) => m.to === 'unverified@example.com')!;
    expect(mail.raw).toMatch(/Subject: Verify your email for leadgate/);
    expect(mail.raw.replace(/=\r?\n/g, '')).toContain('trial credits (5.00 USD)');

    const link = await t.mail.linkTo('unverified@example.com', '/verify-email?token=', from);
    expect(link.startsWith(`${t.url}/verify-email?token=`)).toBe(true);
    const token = new URL(link).searchParams.get('token')!;
    expect(await t.app.core.sql`select 1 from email_verification where token_hash = ${token}`).toHaveLength(0);
    const verify = () => t.browser().request('POST', '/auth/verify-email', { body: { token } });
    const verified = await verify();
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({
      email: 'unverified@example.com',
      alreadyVerified: false,
      trial: 'granted',
      trialCredits: '5.00',
      message: "Your email is verified: 5.00 USD of trial credits are in your account's wallet.",
    });
    expect(await walletOf(browser)).toBe('5000000');
    expect((await browser.request('GET', '/auth/session')).body).toMatchObject({
      user: { emailVerified: true },
      trialCredits: null,
    });

    // Following the link again, or a link sent before it, changes nothing.
    const again = await verify();
    expect(again.body).toMatchObject({
      alreadyVerified: true,
      trial: 'none',
      trialCredits: null,
      message: 'Your email was verified already.',
    });
    expect(await walletOf(browser)).toBe('5000000');
    const ledger = await t.app.core
      .sql`select kind, plan_micros::text as micros, note from ledger_entry where account_id = ${session.body.account.id}`;
    expect(ledger).toEqual([{ kind: 'plan_grant', micros: '5000000', note: 'trial credits: email verified' }]);

    const started = await browser.graphql(START_MAPS);
    expect(started.body.data.startMapsScrape.userErrors).toEqual([]);
    expect(started.body.data.startMapsScrape.run.id).toMatch(/^[A-Za-z0-9]{17}$/);
  });

  it('go to one account per mailbox: plus-tagged and dotted variants of a Gmail address are told plainly they get none', async () => {
    const first = await signUpAndVerify('jane.doe@gmail.com');
    expect(first.verified.body).toMatchObject({ trial: 'granted', trialCredits: '5.00' });
    for (const variant of ['janedoe+farm1@gmail.com', 'J.A.N.E.doe+2@googlemail.com', 'jane.d.o.e@gmail.com']) {
      const { browser, verified } = await signUpAndVerify(variant);
      expect(verified.status, variant).toBe(200);
      expect(verified.body, variant).toEqual({
        email: variant.toLowerCase(),
        alreadyVerified: false,
        trial: 'claimed',
        trialCredits: null,
        message:
          'Your email is verified, but this mailbox has received trial credits before, with another account, so this account gets none: there is one trial per mailbox.',
      });
      expect(await walletOf(browser), variant).toBe('0');
      expect((await browser.graphql(START_MAPS)).body.data.startMapsScrape.userErrors[0].code, variant).toBe(
        'INSUFFICIENT_FUNDS',
      );
    }
    expect(await walletOf(first.browser)).toBe('5000000');
    // The claim stores a hash of the mailbox, never the address.
    const claims = await t.app.core
      .sql`select mailbox_hash from trial_claim where mailbox_hash = ${sha256('janedoe@gmail.com')}`;
    expect(claims).toHaveLength(1);
    expect(JSON.stringify(await t.app.core.sql`select * from trial_claim`)).not.toContain('jane');
  });

  it('are not granted to a throwaway-mail address', async () => {
    const { browser, verified } = await signUpAndVerify('someone@mailinator.com');
    expect(verified.body).toMatchObject({
      trial: 'throwaway',
      trialCredits: null,
      message: expect.stringMatching(/throwaway-mail service, which gets no trial credits/),
    });
    expect(await walletOf(browser)).toBe('0');
  });

  it('with SIGNUP_CREDITS=0 are none: no banner text about credits, nothing granted, no claim made', async () => {
    t.app.core.config.signupTrial.creditsUsd = 0;
    try {
      const { browser, verified } = await signUpAndVerify('no-credits@example.com');
      expect(verified.body).toMatchObject({ trial: 'none', trialCredits: null, message: 'Your email is verified.' });
      expect(await walletOf(browser)).toBe('0');
      expect(
        await t.app.core.sql`select 1 from trial_claim where mailbox_hash = ${sha256('no-credits@example.com')}`,
      ).toHaveLength(0);
      const unverified = await t.signUp('no-credits-yet@example.com');
      expect((await unverified.request('GET', '/auth/session')).body).toMatchObject({
        user: { emailVerified: false },
        trialCredits: null,
      });
    } finally {
      t.app.core.config.signupTrial.creditsUsd = 5;
    }
  });

  it('refuses an unknown link with 400 invalid_token, in words that say what to do', async () => {
    const res = await t.browser().request('POST', '/auth/verify-email', { body: { token: 'A'.repeat(43) } });
    expect([res.status, res.body.error]).toEqual([
      400,
      {
        code: 'invalid_token',
        message:
          'This verification link is unknown or expired: sign in and send a new one from the banner at the top of the console',
      },
    ]);
    expect((await t.browser().request('POST', '/auth/verify-email', { body: { token: 'short' } })).status).toBe(400);
  });
});

describe('sending the link again', () => {
  it('mails a new link to the signed-in user (CSRF token required), at most 5 an hour, nothing once verified', async () => {
    const browser = await t.signUp('resend@example.com');
    expect((await browser.request('POST', '/auth/verify-email/resend', { csrf: false })).status).toBe(403);
    expect((await t.browser().request('POST', '/auth/verify-email/resend')).status).toBe(401);
    const from = t.mail.mails.length;
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await browser.request('POST', '/auth/verify-email/resend')).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
    const refused = await browser.request('POST', '/auth/verify-email/resend');
    expect(refused.body.error.message).toMatch(
      /^5 verification links were sent in the last hour: check your inbox and spam folder, or ask again in \d+ min\.$/,
    );
    const resent = t.mail.mails.slice(from).filter((m) => m.to === 'resend@example.com');
    expect(resent).toHaveLength(5);
    // Any of the links verifies; then there is nothing to send.
    const verified = await t.verifyEmail('resend@example.com', from);
    expect(verified.body.trial).toBe('granted');
    const done = await browser.request('POST', '/auth/verify-email/resend');
    expect([done.status, done.body]).toEqual([200, { message: 'Your email is verified already.' }]);
  });
});

describe('users who did not sign up', () => {
  it('an invited user is verified by the invitation’s link and gets no trial; the inviting account keeps its wallet', async () => {
    const owner = await t.signUpVerified('inviter@example.com');
    const from = t.mail.mails.length;
    await owner.graphql(
      'mutation { inviteMember(input: {email: "invited@example.com", role: MEMBER}) { userErrors { code } } }',
    );
    const token = (await t.mail.linkTo('invited@example.com', '/invitations/', from)).split('/invitations/')[1]!;
    const member = t.browser();
    const accepted = await member.request('POST', '/auth/invitations/accept', { body: { token, password: PASSWORD } });
    expect(accepted.body).toMatchObject({
      user: { email: 'invited@example.com', emailVerified: true },
      trialCredits: null,
    });
    expect(await walletOf(owner)).toBe('5000000');
  });
});

describe('sign-ups per client address', () => {
  it('60 sign-ups at once from one address open at most SIGNUPS_PER_HOUR accounts; the rest are refused 429, an IPv6 /64 counting as one', async () => {
    const limited = await startIdentityApp({ signupsPerHour: 5, trustProxy: ['loopback'] });
    try {
      const signUp = (i: number, address: string) =>
        fetch(`${limited.url}/auth/sign-up`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
          body: JSON.stringify({ email: `farm+${i}@gmail.com`, password: PASSWORD }),
        });
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => signUp(i, '203.0.113.9')));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(55);
      const refused = answers.find((a) => a.status === 429)!;
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
      expect(refused.headers.get('ratelimit-policy')).toBe('5;w=3600');
      expect(((await refused.json()) as { error: unknown }).error).toEqual({
        code: 'rate_limited',
        message: expect.stringMatching(
          /^Too many sign-ups from your address: the limit is 5 an hour\. Retry in \d+ min, or sign in if you have an account\.$/,
        ),
      });
      const [{ n }] = (await limited.app.core
        .sql`select count(*)::int as n from app_user where email like 'farm+%'`) as unknown as [{ n: number }];
      expect(n).toBe(5);

      // An IPv6 client is its /64: other addresses of the network share its budget, another network has its own.
      const v6 = [];
      for (let i = 0; i < 6; i++) v6.push((await signUp(100 + i, `2001:db8:7:8::${i + 1}`)).status);
      expect(v6).toEqual([201, 201, 201, 201, 201, 429]);
      expect((await signUp(200, '2001:db8:7:9::1')).status).toBe(201);
    } finally {
      await limited.stop();
    }
  });

  it('reads SIGNUPS_PER_HOUR: default 5, 0 turns the limit off', () => {
    expect(loadConfig({}).signupsPerHour).toBe(5);
    expect(loadConfig({ SIGNUPS_PER_HOUR: '0' }).signupsPerHour).toBe(0);
    expect(loadConfig({ SIGNUPS_PER_HOUR: '20' }).signupsPerHour).toBe(20);
    expect(() => loadConfig({ SIGNUPS_PER_HOUR: 'many' })).toThrow();
  });
});

describe('the canonical mailbox', () => {
  it.each([
    ['Jane.Doe+news@GMail.com', 'janedoe@gmail.com'],
    ['j.a.n.e.doe@googlemail.com', 'janedoe@gmail.com'],
    ['jane.doe+x@outlook.com', 'jane.doe@outlook.com'],
    ['jane+x@hotmail.co.uk', 'jane@hotmail.co.uk'],
    ['jane+x@live.fr', 'jane@live.fr'],
    ['jane+x@me.com', 'jane@icloud.com'],
    ['jane+x@mac.com', 'jane@icloud.com'],
    ['jane+x@fastmail.com', 'jane@fastmail.com'],
    ['jane+x@pm.me', 'jane@proton.me'],
    ['jane+x@protonmail.com', 'jane@proton.me'],
    ['jane-shopping@yahoo.com', 'jane@yahoo.com'],
    ['jane+x@yahoo.com', 'jane+x@yahoo.com'],
    ['jane-x@ymail.com', 'jane@ymail.com'],
    // Dots count at every provider but Gmail, and elsewhere the address is as typed (lower-cased).
    ['jane.doe@icloud.com', 'jane.doe@icloud.com'],
    ['Jane.Doe+tag@Example.com', 'jane.doe+tag@example.com'],
    ['+only@gmail.com', '+only@gmail.com'],
  ])('%s is %s', (email, canonical) => {
    expect(canonicalMailbox(email)).toBe(canonical);
  });
});
