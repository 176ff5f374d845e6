import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalIdentifiers } from '../../src/privacy/requests.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startMailServer } from '../helpers/identity.ts';

/**
 * The public opt-out page over HTTP, as a browser's forms send it: the same answer, byte for byte, for
 * an address the catalog holds and one it does not, each mailed a link by the worker; limits per
 * address and per client address that say only "try again later"; a link's GET that erases nothing, its
 * POST that erases and suppresses once; used, expired and wrong links refused in words; cross-site
 * POSTs refused before anything is read.
 */

const PATH = '/opt-out/confirm?token=';

let t: TestApp;
let mail: Awaited<ReturnType<typeof startMailServer>>;
let held: string[];
/** Each test comes from a client address of its own (TRUST_PROXY: loopback), so the per-client limit is its own. */
let clients = 0;

beforeAll(async () => {
  mail = await startMailServer();
  t = await startTestApp({
    config: {
      mail: { smtpUrl: mail.url, from: 'leadgate <no-reply@leadgate.test>' },
      trustProxy: ['loopback'],
      optOut: { mailsPerAddress: 2, requestsPerClient: 4, smsProvider: undefined },
    },
  });
  const rows = await t.app.core.sql<{ email: string }[]>`
    select lower(email) as email from person where email is not null order by id limit 3`;
  held = rows.map((r) => r.email);
  expect(held).toHaveLength(3);
});
afterAll(async () => {
  await t?.stop();
  await mail?.close();
});

const newClient = () => `203.0.113.${++clients}`;

interface Page {
  status: number;
  headers: Headers;
  text: string;
}

async function send(
  method: string,
  path: string,
  client: string,
  init: { form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<Page> {
  const headers: Record<string, string> = { origin: t.url, 'x-forwarded-for': client, ...init.headers };
  if (init.form) headers['content-type'] ??= 'application/x-www-form-urlencoded';
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers,
    body: init.form ? new URLSearchParams(init.form).toString() : undefined,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const ask = (email: string, client: string, headers?: Record<string, string>) =>
  send('POST', '/opt-out', client, { form: { email }, headers });

const inCatalog = async (email: string) =>
  (await t.app.core.sql<{ n: number }[]>`select count(*)::int as n from person where lower(email) = ${email}`)[0]!.n;

/** The deployment's and accounts' entries that keep `email` out (the erasure keeps its DROP hash, not the address). */
const suppressed = (email: string) =>
  t.app.core.sql<{ source: string; account_id: string | null }[]>`
    select source, account_id from suppression
    where kind = 'hash' and value = ${normalIdentifiers([{ kind: 'email', value: email }])[0]!.entry}`;

/** The token of the newest link mailed to `email` after mail number `from`. */
const linkFor = async (email: string, from: number) =>
  new URL(await mail.linkTo(email, PATH, from)).searchParams.get('token')!;

describe('the form', () => {
  it('is a page of its own: no script, nothing loaded, its own policy, never cached', async () => {
    const page = await send('GET', '/opt-out', newClient());
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-security-policy')).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'$/,
    );
    expect(page.headers.get('referrer-policy')).toBe('same-origin');
    expect(page.text).toContain('<html lang="en">');
    expect(page.text).toContain('<label for="email">Email address</label>');
    expect(page.text).not.toMatch(/<script|<link|<img|src=/);
  });
});

describe('asking for a link', () => {
  it('answers an address the catalog holds and one it does not with the same bytes, and mails both', async () => {
    const client = newClient();
    const unknown = 'nobody-here@opt-out.test';
    expect(await inCatalog(unknown)).toBe(0);
    expect(await inCatalog(held[0]!)).toBe(1);
    const from = mail.mails.length;
    const known = await ask(held[0]!, client);
    const other = await ask(unknown, client);
    expect(known.status).toBe(200);
    expect(other.status).toBe(known.status);
    expect(other.text).toBe(known.text);
    expect(known.text).toContain('Check your inbox');
    expect(known.text).not.toContain(held[0]);
    // Both mailed, in the same words but the link.
    const toKnown = await linkFor(held[0]!, from);
    const toUnknown = await linkFor(unknown, from);
    expect(toKnown).not.toBe(toUnknown);
    const subject = (to: string) => /^Subject: (.*)$/m.exec(mail.mails.slice(from).find((m) => m.to === to)!.raw)?.[1];
    expect(subject(held[0]!)).toBe(subject(unknown));
  });

  it('shows a refused address at its field, and mails nothing', async () => {
    const client = newClient();
    const page = await ask('not an address', client);
    expect(page.status).toBe(400);
    expect(page.text).toContain('Enter an email address, such as name@example.com.');
    expect(page.text).toContain('aria-invalid="true"');
    expect(page.text).toContain('aria-describedby="email-hint email-error"');
    expect(page.text).toContain('value="not an address"');
  });

  it('limits links per address, the same for a held and an unknown address: try again later', async () => {
    const from = mail.mails.length;
    for (const email of [held[1]!, 'limited@opt-out.test']) {
      expect((await ask(email, newClient())).status).toBe(200);
      expect((await ask(email.toUpperCase(), newClient())).status).toBe(200);
      const limited = await ask(email, newClient());
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.text).toContain('Please try again later');
      expect(limited.text).not.toContain(email);
    }
    // Two links each, not three.
    await mail.linkTo('limited@opt-out.test', PATH, from);
    await mail.linkTo(held[1]!, PATH, from);
    const sentinel = 'sentinel-1@opt-out.test';
    await ask(sentinel, newClient());
    await mail.linkTo(sentinel, PATH, from);
    const count = (to: string) => mail.mails.slice(from).filter((m) => m.to === to).length;
    expect(count('limited@opt-out.test')).toBe(2);
    expect(count(held[1]!)).toBe(2);
  });

  it('limits requests per client address, whatever the addresses', async () => {
    const client = newClient();
    for (let i = 0; i < 4; i++) expect((await ask(`client-${i}@opt-out.test`, client)).status).toBe(200);
    const limited = await ask('client-4@opt-out.test', client);
    expect(limited.status).toBe(429);
    expect(limited.text).toContain('Please try again later');
    // Another client is not limited by it.
    expect((await ask('client-4@opt-out.test', newClient())).status).toBe(200);
  });

  it('refuses a form posted from another site before reading it, and mails nothing', async () => {
    const from = mail.mails.length;
    const evil = await ask('cross-site@opt-out.test', newClient(), { origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.text).toContain('It was sent from another website.');
    const fetchSite = await ask('cross-site@opt-out.test', newClient(), { 'sec-fetch-site': 'cross-site' });
    expect(fetchSite.status).toBe(403);
    // `Origin: null`: a page that hides where it is (sandboxed, or a policy of no referrer).
    expect((await ask('cross-site@opt-out.test', newClient(), { origin: 'null' })).status).toBe(403);
    const sentinel = 'sentinel-2@opt-out.test';
    await ask(sentinel, newClient());
    await mail.linkTo(sentinel, PATH, from);
    expect(mail.mails.slice(from).some((m) => m.to === 'cross-site@opt-out.test')).toBe(false);
  });

  it('takes small forms only', async () => {
    const json = await send('POST', '/opt-out', newClient(), {
      form: { email: 'x@opt-out.test' },
      headers: { 'content-type': 'application/json' },
    });
    expect(json.status).toBe(415);
    const text = await send('POST', '/opt-out', newClient(), {
      form: { email: 'x@opt-out.test' },
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect(text.text).toContain('This request could not be read');
    const large = await send('POST', '/opt-out', newClient(), { form: { email: `${'x'.repeat(5000)}@opt-out.test` } });
    expect(large.status).toBe(413);
    expect(large.text).toContain('This request could not be read');
  });
});

describe('the link', () => {
  it('shows what confirming does on GET and erases nothing; the POST erases and suppresses, once', async () => {
    const email = held[2]!;
    const from = mail.mails.length;
    await ask(email, newClient());
    const token = await linkFor(email, from);
    for (let i = 0; i < 2; i++) {
      const page = await send('GET', `${PATH}${token}`, newClient());
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.text).toContain(email);
      expect(page.text).toContain('<button type="submit">Remove my data</button>');
    }
    expect(await inCatalog(email)).toBe(1);
    expect(await suppressed(email)).toEqual([]);

    // A cross-site POST with the right token is refused and changes nothing.
    const evil = await send('POST', '/opt-out/confirm', newClient(), {
      form: { token },
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(evil.status).toBe(403);
    expect(await inCatalog(email)).toBe(1);

    const done = await send('POST', '/opt-out/confirm', newClient(), { form: { token } });
    expect(done.status).toBe(200);
    expect(done.text).toContain('You have opted out');
    const receipt = /<code>([^<]+)<\/code>/.exec(done.text)?.[1];
    expect(receipt).toBeTruthy();
    expect(await inCatalog(email)).toBe(0);
    expect(await suppressed(email)).toContainEqual({ source: 'opt_out', account_id: null });
    const [event] = await t.app.core.sql`
      select actor_type, actor_label, details from audit_event where action = 'privacy.opt_out' and target_id = ${receipt!}`;
    expect(event).toMatchObject({
      actor_type: 'link',
      actor_label: 'Opt-out page',
      details: { kind: 'email' },
    });
    expect(event!.details.erased).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(event)).not.toContain(email);
    // The address is no longer kept with the link.
    const [row] = await t.app.core
      .sql`select sealed_value, receipt_id from opt_out_request where receipt_id = ${receipt!}`;
    expect(row).toEqual({ sealed_value: null, receipt_id: receipt });

    for (const again of [
      await send('POST', '/opt-out/confirm', newClient(), { form: { token } }),
      await send('GET', `${PATH}${token}`, newClient()),
    ]) {
      expect(again.status).toBe(410);
      expect(again.text).toContain('This link has already been used');
      expect(again.text).toContain(receipt);
    }
  });

  it('refuses an expired link and a wrong one in words, removing nothing', async () => {
    const email = 'expired@opt-out.test';
    const from = mail.mails.length;
    await ask(email, newClient());
    const token = await linkFor(email, from);
    await t.app.core.sql`update opt_out_request set expires_at = now() - interval '1 minute'
      where token_hash = encode(sha256(${token}::bytea), 'hex')`;
    for (const page of [
      await send('GET', `${PATH}${token}`, newClient()),
      await send('POST', '/opt-out/confirm', newClient(), { form: { token } }),
    ]) {
      expect(page.status).toBe(410);
      expect(page.text).toContain('This link has expired');
      expect(page.text).toContain('Nothing was removed');
    }
    expect(await suppressed(email)).toEqual([]);

    const wrong = `${token.slice(0, 42)}${token.endsWith('A') ? 'B' : 'A'}`;
    for (const page of [
      await send('GET', `${PATH}${wrong}`, newClient()),
      await send('POST', '/opt-out/confirm', newClient(), { form: { token: wrong } }),
      await send('GET', `${PATH}short`, newClient()),
      await send('GET', '/opt-out/confirm', newClient()),
    ]) {
      expect(page.status).toBe(400);
      expect(page.text).toContain('This link does not work');
    }
  });
});
