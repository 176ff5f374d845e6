import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type WorkerHandle } from '../../workers/index.ts';
import { startIdentityApp, type IdentityApp } from '../helpers/identity.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Password resets by mailed link: the request answers the same for every address, before anything is
 * looked up, and a worker job mails the link; a link works once, and using one ends every other link of
 * the user, older or newer.
 */

const PASSWORD = 'correct horse battery';
const VIEWER = '{ viewer { id } }';
let t: IdentityApp;
let worker: WorkerHandle | undefined;

beforeAll(async () => {
  // No worker in the gateway: the tests start one when the mail should go.
  t = await startIdentityApp();
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});
afterAll(() => t?.stop());

const ask = (email: string) => t.browser().request('POST', '/auth/password-reset', { body: { email } });
const confirm = (token: string, password: string) =>
  t.browser().request('POST', '/auth/password-reset/confirm', { body: { token, password } });
const signIn = (email: string, password: string) =>
  t.browser().request('POST', '/auth/sign-in', { body: { email, password } });
const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;
const pendingMails = async () =>
  Number(
    (
      await t.app.core
        .sql`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'send_password_reset'`
    )[0]!.n,
  );

describe('asking for a reset link', () => {
  it('answers a known and an unknown email alike, before any mail: a worker job mails the link to the known one only', async () => {
    const first = await t.signUp('reset@example.com');
    const from = t.mail.mails.length;
    const unknown = await ask('nobody-here@example.com');
    const known = await ask('Reset@example.com');
    expect([unknown.status, known.status]).toEqual([202, 202]);
    expect(unknown.body).toEqual(known.body);
    expect(known.body).toEqual({
      message: 'If this email has an account, a link to set a new password is on its way.',
    });
    // The answers came before any user was looked up: both are jobs, nothing is sent yet.
    expect(await pendingMails()).toBe(2);
    expect(t.mail.mails.slice(from)).toEqual([]);
    // No link exists yet: the job makes it, so no token waits in the job table.
    expect(
      await t.app.core
        .sql`select 1 from password_reset pr join app_user u on u.id = pr.user_id where u.email = 'reset@example.com'`,
    ).toHaveLength(0);

    worker = await startWorker(t.app.core, { pollInterval: 100 });
    const link = await t.mail.linkTo('reset@example.com', '/reset-password?token=', from);
    await waitFor(pendingMails, (n) => n === 0, { what: 'both jobs to finish' });
    expect(t.mail.mails.slice(from).map((m) => m.to)).toEqual(['reset@example.com']);

    const browser = t.browser();
    const confirmed = await browser.request('POST', '/auth/password-reset/confirm', {
      body: { token: tokenOf(link), password: 'a brand new password' },
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ user: { email: 'reset@example.com' }, role: 'owner' });
    expect((await browser.graphql(VIEWER)).status).toBe(200);
    expect((await first.graphql(VIEWER)).status).toBe(401); // every other session of the user ends
    const again = await confirm(tokenOf(link), 'yet another password');
    expect([again.status, again.body.error.code]).toEqual([400, 'invalid_token']);
    expect((await signIn('reset@example.com', PASSWORD)).status).toBe(401);
    expect((await signIn('reset@example.com', 'a brand new password')).status).toBe(200);
  });
});

describe('using a link', () => {
  it('ends every other link of the user: an older one fails after a newer one is used, and the other way round', async () => {
    const first = await t.signUp('links@example.com');
    worker = await startWorker(t.app.core, { pollInterval: 100 });
    const links: string[] = [];
    for (let i = 0; i < 3; i++) {
      const from = t.mail.mails.length;
      expect((await ask('links@example.com')).status).toBe(202);
      links.push(await t.mail.linkTo('links@example.com', '/reset-password?token=', from));
    }
    expect(new Set(links.map(tokenOf)).size).toBe(3);

    // The newest is used: the two older ones stop working.
    expect((await confirm(tokenOf(links[2]!), 'the newest password')).status).toBe(200);
    for (const older of links.slice(0, 2)) {
      const refused = await confirm(tokenOf(older), 'an older password');
      expect([refused.status, refused.body.error.code]).toEqual([400, 'invalid_token']);
    }
    expect((await signIn('links@example.com', 'the newest password')).status).toBe(200);
    expect((await first.graphql(VIEWER)).status).toBe(401);

    // An older link used first ends the newer ones too.
    const [older, newer] = [await mailedLink(), await mailedLink()];
    expect((await confirm(older, 'the older one wins')).status).toBe(200);
    expect((await confirm(newer, 'the newer one')).body.error.code).toBe('invalid_token');
    expect((await signIn('links@example.com', 'the older one wins')).status).toBe(200);
  });
});

async function mailedLink(): Promise<string> {
  const from = t.mail.mails.length;
  await ask('links@example.com');
  return tokenOf(await t.mail.linkTo('links@example.com', '/reset-password?token=', from));
}
