import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { audit, launchConsoleBrowser, visible, type ConsoleBrowser } from '../../helpers/browser.ts';
import { startMailServer } from '../../helpers/identity.ts';

/**
 * The public opt-out page in Chromium, as a person goes through it: from the console's sign-in page to
 * the form, an address the lead database holds sent, the mailed link followed, the removal confirmed
 * with the page's button, and the person gone from the lead search and from enrichment through the
 * API. Every page passes axe, runs under its policy without a violation and loads nothing from
 * elsewhere; with JavaScript off the form works the same.
 * CONSOLE_SCREENSHOTS=1 writes the form to docs/images/opt-out.png.
 */

const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
const LEADS = '/api/v1/database/leads?title=vp&limit=20';

let t: TestApp;
let ui: ConsoleBrowser;
let mail: Awaited<ReturnType<typeof startMailServer>>;
let key: string;
const violations: string[] = [];

beforeAll(async () => {
  mail = await startMailServer();
  t = await startTestApp({ config: { mail: { smtpUrl: mail.url, from: 'leadgate <no-reply@leadgate.test>' } } });
  ({ apiKey: key } = await t.account());
  ui = await launchConsoleBrowser(t.url);
});
afterAll(async () => {
  await ui?.close();
  await t?.stop();
  await mail?.close();
});

/** A page that records every policy violation and script error it meets. */
async function watched(options?: { javaScriptEnabled?: boolean }): Promise<Page> {
  const page = await ui.newPage(options);
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  page.on('pageerror', (err) => violations.push(err.message));
  return page;
}

const leadEmails = async () =>
  ((await t.request('GET', LEADS, { key })).body.leads as { email?: string | null }[]).map((l) => l.email);

const enrichment = async (email: string) =>
  (await t.request('POST', '/api/v1/enrich', { key, body: { rows: [{ email }] } })).body.rows[0]?.match_status;

describe('the opt-out page', () => {
  it('removes a person the lead database holds: asked from the sign-in page, confirmed from the mailed link', async () => {
    const email = (await leadEmails()).find(Boolean)!;
    expect(await enrichment(email)).toBe('matched');

    const page = await watched();
    await page.goto('/sign-in');
    await visible(page.getByRole('heading', { name: 'Sign in' }));
    await page.getByRole('link', { name: 'Opt out of our data' }).click();
    await visible(page.getByRole('heading', { name: 'Opt out of leadgate’s data', level: 1 }));
    expect(new URL(page.url()).pathname).toBe('/opt-out');
    await audit(page);
    if (SCREENSHOTS) {
      await page.setViewportSize({ width: 1280, height: 720 });
      await page.screenshot({ path: 'docs/images/opt-out.png', fullPage: false });
    }

    // A refused address is said at its field, which keeps it and takes the focus.
    const field = page.getByRole('textbox', { name: 'Email address' });
    await field.fill('not an address');
    await page.getByRole('button', { name: 'Send me the link' }).click();
    await visible(page.getByText('Enter an email address, such as name@example.com.'));
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await field.evaluate((el) => el === document.activeElement)).toBe(true);
    await audit(page);

    const from = mail.mails.length;
    await field.fill(email.toUpperCase());
    await page.getByRole('button', { name: 'Send me the link' }).click();
    await visible(page.getByRole('heading', { name: 'Check your inbox', level: 1 }));
    await audit(page);

    const link = new URL(await mail.linkTo(email.toLowerCase(), '/opt-out/confirm?token=', from));
    expect(link.origin).toBe(new URL(t.url).origin);
    await page.goto(`${link.pathname}${link.search}`);
    await visible(page.getByRole('heading', { name: 'Confirm your opt-out', level: 1 }));
    await visible(page.getByText(email.toLowerCase()));
    await audit(page);
    // Opening the link removed nothing.
    expect(await enrichment(email)).toBe('matched');

    await page.getByRole('button', { name: 'Remove my data' }).click();
    await visible(page.getByRole('heading', { name: 'You have opted out', level: 1 }));
    expect(await page.locator('code').textContent()).toMatch(/\S+/);
    await audit(page);

    // Gone from the lead search and from enrichment, for every account.
    expect(await leadEmails()).not.toContain(email);
    expect(await enrichment(email)).toBe('not_found');

    // The link again: used, said in words.
    await page.goto(`${link.pathname}${link.search}`);
    await visible(page.getByRole('heading', { name: 'This link has already been used', level: 1 }));
    await audit(page);
  });

  it('works with JavaScript off', async () => {
    const page = await watched({ javaScriptEnabled: false });
    await page.goto('/opt-out');
    const from = mail.mails.length;
    await page.getByRole('textbox', { name: 'Email address' }).fill('no-script@opt-out.test');
    await page.getByRole('button', { name: 'Send me the link' }).click();
    await visible(page.getByRole('heading', { name: 'Check your inbox', level: 1 }));
    const link = new URL(await mail.linkTo('no-script@opt-out.test', '/opt-out/confirm?token=', from));
    await page.goto(`${link.pathname}${link.search}`);
    await page.getByRole('button', { name: 'Remove my data' }).click();
    await visible(page.getByRole('heading', { name: 'You have opted out', level: 1 }));
  });

  it('met no policy violation and loaded nothing from elsewhere', () => {
    expect(violations).toEqual([]);
    expect(ui.offOrigin).toEqual([]);
  });
});
