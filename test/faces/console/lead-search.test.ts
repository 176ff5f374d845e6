import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { audit, launchConsoleBrowser, visible, type ConsoleBrowser } from '../../helpers/browser.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

/**
 * The lead search in Chromium: opening it spends none of the daily allowance (the free preview); the
 * facets narrow the total; a search saved, cleared and chosen again after a reload; rows selected and
 * exported, the cost said before, the allowance spent equal to the rows and the file holding exactly
 * them; a person's drawer, whose contact details cost 1 record, said first; the selection handed to the
 * enrichment page and to a domain email finder run over the companies' domains. Controls by role and
 * name, axe on every state shown, nothing leaving the origin. CONSOLE_SCREENSHOTS=1 writes the page to
 * docs/images/console-leads.png at 1440×900.
 */

const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
const ALLOWANCE = 1000;
let t: TestApp;
let ui: ConsoleBrowser;
let page: Page;
let accountId: string;

beforeAll(async () => {
  // No worker: the domain email finder's run is started, not crawled.
  t = await startTestApp({ worker: false, config: { dailyDatabaseRecords: ALLOWANCE } });
  ui = await launchConsoleBrowser(t.url);
  page = await ui.newPage();
  await page.setViewportSize({ width: 1440, height: 900 });
});
afterAll(async () => {
  await ui?.close();
  await t?.stop();
});

const one = async <T>(query: Promise<T[]>) => (await query)[0]!;
const spent = async () =>
  (
    await one(t.app.core.sql<{ used: number }[]>`select coalesce(sum(used), 0)::int as used from daily_usage
      where account_id = ${accountId} and kind = 'database'`)
  ).used;
const receivedIds = async () =>
  (
    await t.app.core.sql<{ id: string }[]>`select person_id::text as id from delivered_lead
      where account_id = ${accountId} order by person_id`
  ).map((r) => r.id);
const total = (n: number) =>
  page.getByRole('status').getByText(`${n.toLocaleString('en-US')} leads match`, { exact: true });
const rows = () => page.getByRole('table', { name: 'Leads' }).locator('tbody tr');
/** axe reads colours as shown: after a modal's or drawer's fade-in. */
const settled = () =>
  page.waitForFunction(() =>
    [...document.querySelectorAll('[role="dialog"]')].every(
      (dialog) => getComputedStyle(dialog).opacity === '1' && dialog.getAnimations().length === 0,
    ),
  );

describe('the lead search', { timeout: 180_000 }, () => {
  it('browses free, narrows by facets, saves a search, exports a selection, opens a person', async () => {
    await page.goto('/sign-up');
    await page.getByLabel(/^Your name/).fill('Alex Krycek');
    await page.getByLabel(/^Team name/).fill('Prospect Co');
    await page.getByLabel(/^Email/).fill('alex@prospect.test');
    await page.getByLabel(/^Password/).fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await visible(page.getByRole('heading', { name: 'Overview', level: 2 }));
    await t.app.core.sql`update app_user set email_verified_at = now() where email = 'alex@prospect.test'`;
    ({ id: accountId } = await one(
      t.app.core.sql<{ id: string }[]>`select id from account where name = 'Prospect Co'`,
    ));
    await t.app.core.sql`update wallet set plan_micros = 20000000 where account_id = ${accountId}`;

    // Opening the page searches everyone, and spends nothing.
    await page.goto('/leads');
    const everyone = (await one(t.app.core.sql<{ n: number }[]>`select count(*)::int as n from person`)).n;
    await visible(total(everyone));
    await visible(page.getByText(`${ALLOWANCE.toLocaleString('en-US')} records left today`));
    expect(await rows().count()).toBe(25);
    expect(await spent()).toBe(0);
    expect(await receivedIds()).toEqual([]);
    await audit(page);

    // The facets narrow the total: directors, then directors with an email.
    const directors = (
      await one(t.app.core.sql<{ n: number }[]>`select count(*)::int as n from person where seniority = 'director'`)
    ).n;
    const withEmail = await t.app.core.sql<{ id: string }[]>`select p.id::text as id from person p
      where p.seniority = 'director' and p.email is not null order by p.id`;
    await page.getByRole('group', { name: 'Seniority' }).getByRole('checkbox', { name: 'Director' }).check();
    await visible(total(directors));
    await page.getByRole('checkbox', { name: 'Has an email' }).check();
    await visible(total(withEmail.length));
    expect(withEmail.length).toBeLessThan(directors);
    expect(directors).toBeLessThan(everyone);
    expect(await spent()).toBe(0);

    // Saved, cleared, and after a reload chosen again: the same filters and total.
    await page.getByLabel('Name of this search').fill('Directors with email');
    await page.getByRole('button', { name: 'Save search' }).click();
    await page
      .getByLabel('Saved searches')
      .locator('option', { hasText: 'Directors with email (Alex Krycek)' })
      .waitFor({ state: 'attached' });
    await page.getByRole('button', { name: 'Clear filters (2)' }).click();
    await visible(total(everyone));
    await page.reload();
    await visible(total(everyone));
    await page.getByLabel('Saved searches').selectOption({ label: 'Directors with email (Alex Krycek)' });
    await visible(total(withEmail.length));
    expect(await page.getByRole('checkbox', { name: 'Director' }).isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: 'Has an email' }).isChecked()).toBe(true);

    // Three rows selected: the cost is said before anything is spent, then exactly those three are.
    for (const i of [0, 1, 2]) await rows().nth(i).getByRole('checkbox').check();
    const cost = `Exporting 3 people uses 3 of your ${ALLOWANCE.toLocaleString('en-US')} records left today.`;
    await visible(page.getByRole('region', { name: 'Selected people' }).getByText(cost));
    if (SCREENSHOTS) await page.screenshot({ path: 'docs/images/console-leads.png' });
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Export 3 people?' });
    await visible(dialog.getByText(cost));
    await settled();
    await audit(page);
    expect(await spent()).toBe(0);
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      dialog.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const chosen = withEmail.slice(0, 3).map((r) => r.id);
    const csv = (await readFile((await file.path())!, 'utf8')).trim().split(/\r?\n/);
    const emails = await t.app.core.sql<{ email: string }[]>`select email from person
      where id = any(${chosen}::bigint[]) order by id`;
    expect(csv).toHaveLength(4);
    expect(csv.slice(1).map((line) => emails.find((e) => line.includes(e.email)) !== undefined)).toEqual([
      true,
      true,
      true,
    ]);
    expect(await spent()).toBe(3);
    expect(await receivedIds()).toEqual(chosen);
    await visible(page.getByText(`${(ALLOWANCE - 3).toLocaleString('en-US')} records left today`));

    // A person's drawer: their company from the preview, the contact details for 1 record, said first.
    const fourth = withEmail[3]!.id;
    const person = await one(t.app.core.sql<{ name: string; email: string; company: string }[]>`
      select p.first_name || ' ' || p.last_name as name, p.email, c.name as company
      from person p join company c on c.id = p.company_id where p.id = ${fourth}`);
    await rows()
      .nth(3)
      .getByRole('button', { name: `Open ${person.name}` })
      .click();
    const drawer = page.getByRole('dialog', { name: person.name });
    await visible(drawer.getByRole('heading', { name: person.company }));
    await visible(drawer.getByText(`Uses 1 of your ${(ALLOWANCE - 3).toLocaleString('en-US')} records left today.`));
    expect(await drawer.getByText(person.email).count()).toBe(0);
    await settled();
    await audit(page);
    await drawer.getByRole('button', { name: 'Show contact details' }).click();
    await visible(drawer.getByRole('table', { name: 'Contact details' }).getByText(person.email));
    expect(await spent()).toBe(4);
    await drawer.getByRole('button', { name: 'Close' }).click();

    // The selection handed on: a domain email finder run over the selected people's company domains.
    const domains = (
      await t.app.core.sql<{ domain: string }[]>`select distinct c.domain from person p join company c
        on c.id = p.company_id where p.id = any(${chosen}::bigint[])`
    ).map((r) => r.domain);
    await page.getByRole('button', { name: 'Find contacts at their companies' }).click();
    const finder = page.getByRole('dialog', { name: 'Find contacts at their companies' });
    await finder.getByLabel('Job title').fill('CEO');
    await finder.getByRole('button', { name: 'Quote' }).click();
    await visible(finder.getByText(/^At most \$\d/));
    await settled();
    await audit(page);
    await finder.getByRole('button', { name: 'Start the run' }).click();
    await page.waitForURL(/\/runs\/[A-Za-z0-9]{17}$/);
    const runId = new URL(page.url()).pathname.split('/').at(-1)!;
    const run = await one(t.app.core.sql<{ tool: string; input: { domains: string[]; jobTitle: string } }[]>`
      select tool, input from run where id = ${runId} and account_id = ${accountId}`);
    expect(run.tool).toBe('website-finder');
    expect([...run.input.domains].sort()).toEqual([...domains].sort());
    expect(run.input.jobTitle).toBe('CEO');

    // Or a pipeline: the finder, then the emails it finds validated, quoted and held as one.
    await page.goto('/leads');
    await visible(total(everyone));
    await rows().nth(0).getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Find contacts at their companies' }).click();
    const chained = page.getByRole('dialog', { name: 'Find contacts at their companies' });
    await chained.getByLabel('Job title').fill('Owner');
    await chained.getByRole('checkbox', { name: /^Then validate the emails found/ }).check();
    await chained.getByRole('button', { name: 'Quote' }).click();
    await visible(chained.getByText(/^At most \$\d.*each step is billed for what it does\.$/));
    await settled();
    await audit(page);
    await chained.getByRole('button', { name: 'Start the pipeline' }).click();
    await page.waitForURL(/\/pipelines\/plp_\w+$/);
    const pipelineId = new URL(page.url()).pathname.split('/').at(-1)!;
    const pipeline = await one(t.app.core.sql<{ steps: { tool: string; input: { jobTitle?: string } }[] }[]>`
      select steps from pipeline where id = ${pipelineId} and account_id = ${accountId}`);
    expect(pipeline.steps.map((step) => step.tool)).toEqual(['website-finder', 'email-validator']);
    expect(pipeline.steps[0]!.input.jobTitle).toBe('Owner');

    // Enrich hands the selection to the enrichment page as a file would be: its columns mapped, nothing spent.
    await page.goto('/leads');
    await visible(total(everyone));
    await rows().nth(0).getByRole('checkbox').check();
    await rows().nth(1).getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Enrich' }).click();
    await page.waitForURL(/\/enrichment$/);
    await visible(page.getByText('lead search (2 people): 2 rows'));
    expect(await page.getByLabel('Full name column').inputValue()).toBe('Full name');
    expect(await page.getByLabel('Company domain column').inputValue()).toBe('Company domain');
    await visible(page.getByRole('button', { name: 'Enrich 2 rows' }));
    await audit(page);
    expect(await spent()).toBe(4);
    expect(ui.offOrigin).toEqual([]);
  });
});
