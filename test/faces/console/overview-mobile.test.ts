import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { audit, launchConsoleBrowser, visible, type ConsoleBrowser } from '../../helpers/browser.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

/**
 * The overview as a newcomer meets it, and the console on a phone. At 1440×900 a fresh owner's
 * getting-started checklist ticks each step from the account's real state (a key made, a call with it,
 * a run, a download) and the recent runs list the run with its tool and status in words and its cost to 2
 * decimals. At 390×844 the navigation is a menu behind a button that opens and closes it by name and
 * closes when a page is chosen, and the overview, the runs, a run's page and the lead database do not
 * scroll the document sideways. Every page passes axe; nothing leaves the gateway's origin.
 * CONSOLE_SCREENSHOTS=1 writes docs/images/console-overview.png and console-mobile.png.
 */

const PASSWORD = 'correct horse battery';
const OWNER = 'ada@overview.test';
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

let t: TestApp;
let ui: ConsoleBrowser;
let owner: Page;
let key: string;
let runId: string;

beforeAll(async () => {
  t = await startTestApp();
  ui = await launchConsoleBrowser(t.url);
  owner = await ui.newPage();
  await owner.setViewportSize({ width: 1440, height: 900 });
});
afterAll(async () => {
  await ui?.close();
  await t?.stop();
});

const step = (page: Page, name: string, state: 'done' | 'to do') =>
  page.getByRole('list', { name: 'Getting started steps' }).getByRole('listitem', { name: `${name}: ${state}` });

/** The document is no wider than the window: nothing makes the page scroll sideways. */
async function noSidewaysScroll(page: Page) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth, `${new URL(page.url()).pathname} scrolls sideways`).toBeLessThanOrEqual(innerWidth);
}

describe('the overview', { timeout: 120_000 }, () => {
  it('checks the getting-started steps off from what the account has done', async () => {
    await owner.goto('/sign-up');
    await owner.getByLabel(/^Your name/).fill('Ada Lovelace');
    await owner.getByLabel(/^Team name/).fill('Overview Co');
    await owner.getByLabel(/^Email/).fill(OWNER);
    await owner.getByLabel(/^Password/).fill(PASSWORD);
    await owner.getByRole('button', { name: 'Sign up' }).click();
    await visible(owner.getByRole('heading', { name: 'Overview', level: 2 }));
    const [membership] = await t.app.core.sql<{ id: string }[]>`
      select account_id as id from membership m join app_user u on u.id = m.user_id where u.email = ${OWNER}`;
    const accountId = membership!.id;
    await t.app.core.sql`update app_user set email_verified_at = now() where email = ${OWNER}`;
    await t.app.core.sql`update account set plan = 'growth' where id = ${accountId}`;
    await t.app.core.sql`update wallet set plan_micros = 25000000 where account_id = ${accountId}`;

    await visible(owner.getByText('0 of 4 steps done.'));
    await visible(step(owner, 'Create an API key', 'to do'));
    await visible(owner.getByText(/^No run yet\./));
    await audit(owner);

    await owner.getByRole('link', { name: 'API keys', exact: true }).first().click();
    await owner.getByLabel(/^Key name/).fill('first');
    await owner.getByRole('button', { name: 'Create key' }).click();
    key = (await owner.getByTestId('new-key-secret').textContent())!.trim();

    await owner.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: 'Overview' }).click();
    await visible(step(owner, 'Create an API key', 'done'));
    await visible(step(owner, 'Call the API with it', 'to do'));
    const curl = await owner.locator('pre').filter({ hasText: '/api/v1/wallet' }).textContent();
    expect(curl).toBe(`curl -s ${t.url.replace(/\/$/, '')}/api/v1/wallet -H "Authorization: Bearer $LEADGATE_KEY"`);
    await visible(owner.getByRole('button', { name: 'Copy the curl command' }));

    // What the curl does, with the key in LEADGATE_KEY; then a run.
    expect((await t.request('GET', '/api/v1/wallet', { key })).status).toBe(200);
    // Started and waited for, not downloaded: the download is the last step, below.
    const start = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 20 },
    });
    expect(start.status).toBe(200);
    runId = start.body.runId;
    expect((await t.waitForRun(key, runId)).status).toBe('SUCCEEDED');

    await owner.reload();
    await visible(step(owner, 'Call the API with it', 'done'));
    await visible(step(owner, 'Start your first run', 'done'));
    await visible(owner.getByText('3 of 4 steps done.'));
    await visible(owner.getByRole('link', { name: 'your latest run' }));

    const recent = owner.getByRole('table', { name: 'Recent runs' });
    const row = recent.getByRole('row').filter({ has: owner.getByRole('link', { name: runId }) });
    await visible(row);
    await visible(row.getByRole('cell', { name: 'Map-listing scraper', exact: true }));
    await visible(row.getByText('Succeeded', { exact: true }));
    // Money in a list has 2 decimals; the exact amount is its title.
    const cost = row.locator('span[title^="$"]');
    expect(await cost.textContent()).toMatch(/^\$\d+\.\d{2}$/);
    expect(await owner.getByRole('progressbar', { name: 'Database records used today' }).count()).toBe(1);
    // This month's spend is what the one run was charged, to the micro-dollar (the exact amount's title).
    const spend = owner
      .locator('.mantine-Card-root')
      .filter({ has: owner.getByRole('heading', { name: 'Spent this month' }) });
    expect(await spend.locator('span[title^="$"]').getAttribute('title')).toBe(await cost.getAttribute('title'));
    await audit(owner);
    if (SCREENSHOTS) await owner.screenshot({ path: 'docs/images/console-overview.png', fullPage: true });

    // The last step: the run's rows downloaded (here with the key); every step done, the checklist goes.
    const [before] = await t.app.core.sql`select first_download_at as at from account where id = ${accountId}`;
    expect(before?.at).toBeNull();
    const rows = await t.request('GET', `/api/v1/runs/${runId}/results`, { key });
    expect(rows.status).toBe(200);
    await owner.reload();
    await visible(owner.getByRole('table', { name: 'Recent runs' }));
    expect(await owner.getByRole('heading', { name: 'Getting started' }).count()).toBe(0);
  });
});

describe('the console on a phone (390×844)', { timeout: 120_000 }, () => {
  let phone: Page;
  const menuButton = () => phone.getByRole('button', { name: /^(Open|Close) the menu$/ });
  const nav = () => phone.getByRole('navigation', { name: 'Console pages' });

  beforeAll(async () => {
    phone = await ui.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto('/sign-in');
    await phone.getByLabel(/^Email/).fill(OWNER);
    await phone.getByLabel(/^Password/).fill(PASSWORD);
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await visible(phone.getByRole('heading', { name: 'Overview', level: 2 }));
  });

  it('hides the navigation behind a menu that opens, closes, and closes when a page is chosen', async () => {
    await visible(phone.getByRole('table', { name: 'Recent runs' }));
    await expect.poll(() => nav().isVisible()).toBe(false);
    expect(await phone.getByRole('banner').getByText(OWNER).isVisible()).toBe(false);
    await noSidewaysScroll(phone);
    await audit(phone);

    await phone.getByRole('button', { name: 'Open the menu' }).click();
    await visible(nav());
    expect(await menuButton().getAttribute('aria-expanded')).toBe('true');
    await visible(nav().getByText(`${OWNER} (owner)`));
    await audit(phone);
    if (SCREENSHOTS) await phone.screenshot({ path: 'docs/images/console-mobile.png' });
    await phone.getByRole('button', { name: 'Close the menu' }).click();
    await expect.poll(() => nav().isVisible()).toBe(false);

    await phone.getByRole('button', { name: 'Open the menu' }).click();
    await nav().getByRole('link', { name: 'Runs', exact: true }).click();
    await visible(phone.getByRole('heading', { name: 'Runs', level: 2 }));
    await expect.poll(() => nav().isVisible()).toBe(false);
    expect(await menuButton().getAttribute('aria-expanded')).toBe('false');
  });

  it('does not scroll sideways on the runs, a run’s page and the lead database', async () => {
    await visible(phone.getByRole('table', { name: 'Runs' }));
    await noSidewaysScroll(phone);
    await audit(phone);

    await phone.getByRole('table', { name: 'Runs' }).getByRole('link', { name: runId }).click();
    await visible(phone.getByRole('heading', { name: `Run ${runId}`, level: 2 }));
    await visible(phone.getByRole('table', { name: 'Result rows' }));
    await noSidewaysScroll(phone);
    await audit(phone);

    await phone.getByRole('button', { name: 'Open the menu' }).click();
    await nav().getByRole('link', { name: 'Lead database', exact: true }).click();
    await visible(phone.getByRole('heading', { name: 'Lead database', level: 2 }));
    await visible(phone.getByRole('table', { name: 'Leads' }));
    await noSidewaysScroll(phone);
    await audit(phone);
    expect(ui.offOrigin).toEqual([]);
  });
});
