import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { grantPlanCredits } from '../../../src/billing/wallet.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { attributeBecomes, audit, launchConsoleBrowser, visible, type ConsoleBrowser } from '../../helpers/browser.ts';

/**
 * A tool form in Chromium as a new customer meets it: labels and help in words from the tool's
 * declaration (not parameter names), no error before the user acts, a map area as four number fields,
 * a refusal after Start at its field in words, and a quote that says the list price, what the wallet
 * covers and what happens when it runs out. Every state passes axe; nothing leaves the origin.
 * CONSOLE_SCREENSHOTS=1 writes the maps form to docs/images/console-tool-form.png.
 */

const PASSWORD = 'correct horse battery';
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

let t: TestApp;
let ui: ConsoleBrowser;
let page: Page;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ui = await launchConsoleBrowser(t.url);
  page = await ui.newPage();
  await page.goto('/sign-up');
  await page.getByLabel(/^Your name/).fill('Grace Hopper');
  await page.getByLabel(/^Team name/).fill('Forms Co');
  await page.getByLabel(/^Email/).fill('grace@console.test');
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await visible(page.getByRole('heading', { name: 'Overview', level: 2 }));
  const [member] = await t.app.core.sql<{ account_id: string }[]>`
    select m.account_id from membership m join app_user u on u.id = m.user_id where u.email = 'grace@console.test'`;
  // 4.90 USD, the wallet of the report.
  await t.app.core.db.transaction((tx) => grantPlanCredits(tx, member!.account_id, 4_900_000n, 'test credits'));
});
afterAll(async () => {
  await ui?.close();
  await t?.stop();
});

const quote = () => page.getByRole('status', { name: 'Quote' });

describe('a tool form', { timeout: 120_000 }, () => {
  it('opens quiet, with labels, help and examples in words and the map area as four numbers', async () => {
    await page.goto('/tools/maps');
    const form = page.getByRole('form', { name: /^Start / });
    await visible(form.getByRole('textbox', { name: 'Search terms' }));
    await visible(form.getByRole('textbox', { name: 'Location' }));
    await visible(form.getByRole('textbox', { name: 'Places per search term' }));
    const area = form.getByRole('group', { name: 'Map area' });
    for (const corner of ['Corner 1 latitude', 'Corner 1 longitude', 'Corner 2 latitude', 'Corner 2 longitude'])
      await visible(area.getByRole('textbox', { name: corner }));
    expect(await form.getByLabel('searchStringsArray').count()).toBe(0);
    expect(await form.getByRole('textbox', { name: 'Search terms' }).getAttribute('placeholder')).toBe('dentist');
    await page.waitForTimeout(800); // past the quote's debounce
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await form.locator('[aria-invalid="true"]').count()).toBe(0);
    await visible(quote().getByText('Fill in the fields to see the price.'));
    await audit(page);

    await form.getByRole('textbox', { name: 'Search terms' }).fill('dentist');
    await form.getByRole('textbox', { name: 'Location' }).fill('Denver, CO');
    await visible(quote().getByText(/^List price: \$0\.99 at most\. Your wallet covers it/));
    if (SCREENSHOTS) {
      await page.setViewportSize({ width: 1440, height: 1100 });
      await page.screenshot({ path: 'docs/images/console-tool-form.png', fullPage: false });
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    await audit(page);
  });

  it('shows a refusal after Start at its field, in words', async () => {
    await page.goto('/tools/lead-scraper');
    const form = page.getByRole('form', { name: /^Start / });
    const link = form.getByRole('textbox', { name: 'People-search link' });
    await visible(link);
    await page.waitForTimeout(800);
    expect(await page.getByRole('alert').count()).toBe(0);

    // Nothing filled in: Start names the missing field at it, and sends nothing GraphQL would refuse.
    await form.getByRole('button', { name: 'Start' }).click();
    await visible(form.getByText('Enter the people-search link.'));
    expect(await link.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByText(/Variable "\$input"/).count()).toBe(0);

    // The server's refusal of a value, at its field.
    await link.fill('https://app.apollo.io/#/people?personTitles[]=ceo');
    const count = form.getByRole('textbox', { name: 'Number of leads' });
    await count.fill('20');
    await form.getByRole('button', { name: 'Start' }).click();
    // The help text names 500 too: the refusal is there once the field is marked.
    await attributeBecomes(count, 'aria-invalid', (v) => v === 'true', 'the count to be marked invalid');
    await visible(form.getByText(/500/));
    expect(new URL(page.url()).pathname).toBe('/tools/lead-scraper');
    await audit(page);
  });

  it('warns when the wallet does not cover the request, saying what it covers and what happens then', async () => {
    await page.goto('/tools/lead-scraper');
    const form = page.getByRole('form', { name: /^Start / });
    await form
      .getByRole('textbox', { name: 'People-search link' })
      .fill('https://app.apollo.io/#/people?personTitles[]=ceo');
    await form.getByRole('textbox', { name: 'Number of leads' }).fill('5000');
    const warning = quote().getByRole('alert');
    await visible(warning.getByText('Your wallet does not cover this request'));
    const text = (await warning.textContent()) ?? '';
    expect(text).toMatch(/List price: \$\d/);
    expect(text).toMatch(/Your wallet covers \$[\d.]+, about [\d,]+ leads/);
    expect(text).toMatch(/The run stops when that is spent/);
    await audit(page);
    expect(ui.offOrigin).toEqual([]);
  });
  it('asks once for the permissible use of a tool about individuals, then starts it', async () => {
    await page.goto('/tools/criminal-records');
    const form = page.getByRole('form', { name: /^Start / });
    await visible(form.getByText(/not be used for employment, tenant screening/));
    const agree = form.getByRole('checkbox', { name: /I will not use these results for employment/ });
    await form.getByRole('textbox', { name: /name/i }).first().fill('Zelda Farnsworth');
    await form.getByRole('button', { name: 'Start' }).click();
    await visible(form.getByText('Tick this to confirm, then start.'));
    const [before] = await t.app.core
      .sql`select count(*)::int as n from account where permissible_use_acknowledged_at is not null`;
    expect(before?.n).toBe(0);
    await audit(page);

    await agree.check();
    await form.getByRole('button', { name: 'Start' }).click();
    await page.waitForURL(/\/runs\/[A-Za-z0-9]{17}$/);
    const [after] = await t.app.core
      .sql`select count(*)::int as n from account where permissible_use_acknowledged_at is not null`;
    expect(after?.n).toBe(1);
    // Acknowledged once for the account: the form asks no more.
    await page.goto('/tools/people-finder');
    await visible(page.getByRole('form', { name: /^Start / }));
    expect(await page.getByRole('checkbox', { name: /I will not use these results/ }).count()).toBe(0);
    expect(ui.offOrigin).toEqual([]);
  });
});
