import ExcelJS from 'exceljs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../../src/shared/ids.ts';
import { parseToolInput } from '../../../src/runs/start.ts';
import { mapsTool } from '../../../src/tools/maps.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { attributeBecomes, audit, type ConsoleBrowser, launchConsoleBrowser, visible } from '../../helpers/browser.ts';

/**
 * A run's page as a dataset view, on a finished map-listing run of 50,000 rows stored directly: the
 * rows page through the server (the browser's heap, measured through CDP, stays under 100 MB), sort by a
 * header (aria-sort), narrow by a search (the total follows), show the columns picked, by their names
 * for people; the Input tab lists what the run was started with by the form's labels, the Log tab its
 * life; XLSX downloads beside CSV and JSON; Run again starts the same input and opens the new run.
 * axe on each view; nothing leaves the gateway's origin. CONSOLE_SCREENSHOTS=1 writes
 * docs/images/console-run-dataset.png.
 */

const PASSWORD = 'correct horse battery';
const OWNER = 'grace@dataset.test';
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
const ROWS = 50_000;
const CITIES = ['Denver', 'Boulder', 'Aurora'];

let t: TestApp;
let ui: ConsoleBrowser;
let page: Page;
let accountId: string;
let runId: string;
const input = parseToolInput(mapsTool, {
  searchStringsArray: ['dentist'],
  locationQuery: 'Denver, CO',
  maxCrawledPlacesPerSearch: 10_000,
});

beforeAll(async () => {
  t = await startTestApp();
  ui = await launchConsoleBrowser(t.url);
  page = await ui.newPage();
  await page.setViewportSize({ width: 1440, height: 900 });
});
afterAll(async () => {
  await ui?.close();
  await t?.stop();
});

/** A finished run of `ROWS` rows as the worker would have stored them, written in one statement. */
async function seedRun() {
  runId = newRunId();
  const { sql } = t.app.core;
  await sql`insert into run (id, account_id, tool, status, status_message, input, handled, requested, item_count,
      created_at, started_at, finished_at, expires_at, settled_at, estimated_micros, charged_micros, billed_units)
    values (${runId}, ${accountId}, 'maps', 'SUCCEEDED', ${`Finished: ${ROWS} businesses`}, ${JSON.stringify(input)}::jsonb,
      ${ROWS}, ${ROWS}, ${ROWS}, now() - interval '10 minutes', now() - interval '10 minutes',
      now() - interval '2 minutes', now() + interval '46 hours', now() - interval '2 minutes', 495000000, 495000000,
      ${ROWS})`;
  await sql`insert into run_item (run_id, seq, data)
    select ${runId}, i - 1, json_build_object(
      'name', 'Dental Care ' || i,
      'category', (array['Dentist', 'Orthodontist', 'Pediatric dentist'])[1 + i % 3],
      'address', i || ' Main St, ' || (${CITIES}::text[])[1 + i % 3] || ', CO 80' || lpad((i % 1000)::text, 3, '0'),
      'street', i || ' Main St',
      'city', (${CITIES}::text[])[1 + i % 3],
      'state', 'CO',
      'postal_code', '80' || lpad((i % 1000)::text, 3, '0'),
      'country_code', 'US',
      'phone', '+1 303-555-' || lpad((i % 10000)::text, 4, '0'),
      'website', 'https://dental' || i || '.example',
      'emails', json_build_array('office@dental' || i || '.example'),
      'rating', round((1 + (i * 37 % 41) / 10.0)::numeric, 1),
      'review_count', (i * 7919) % 1000,
      'hours', json_build_array('Mo-Fr 08:00-17:00', 'Sa 09:00-13:00'),
      'latitude', 39.7 + (i % 100) / 1000.0,
      'longitude', -104.9 - (i % 100) / 1000.0,
      'place_id', 'ChIJ' || md5(i::text),
      'url', 'https://maps.example/place/' || i,
      'search_term', 'dentist')
    from generate_series(1, ${ROWS}) i`;
}

const table = () => page.getByRole('table', { name: 'Result rows' });
const firstCell = (column: number) => table().locator('tbody tr').first().locator('td').nth(column);
const header = (name: string) => table().getByRole('columnheader', { name, exact: true });

/** The page's JS heap in bytes after a full garbage collection, read through the Chrome DevTools Protocol. */
async function heapUsed(): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  await cdp.send('HeapProfiler.collectGarbage');
  const { metrics } = await cdp.send('Performance.getMetrics');
  await cdp.detach();
  return metrics.find((m) => m.name === 'JSHeapUsedSize')!.value;
}

describe('a run’s page as a dataset view', { timeout: 180_000 }, () => {
  it('pages, sorts, searches and picks columns through the server, within 100 MB of heap', async () => {
    await page.goto('/sign-up');
    await page.getByLabel(/^Your name/).fill('Grace Hopper');
    await page.getByLabel(/^Team name/).fill('Dataset Co');
    await page.getByLabel(/^Email/).fill(OWNER);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await visible(page.getByRole('heading', { name: 'Overview', level: 2 }));
    const [member] = await t.app.core.sql<{ id: string }[]>`
      select account_id as id from membership m join app_user u on u.id = m.user_id where u.email = ${OWNER}`;
    accountId = member!.id;
    await t.app.core.sql`update app_user set email_verified_at = now() where email = ${OWNER}`;
    await t.app.core.sql`update wallet set plan_micros = 25000000 where account_id = ${accountId}`;
    await seedRun();

    await page.goto(`/runs/${runId}`);
    await visible(page.getByText('Rows 1–25 of 50,000'));
    expect(await table().locator('tbody tr').count()).toBe(25);
    // Columns by their names for people, not their keys.
    await visible(header('Place ID'));
    await visible(header('Review count'));
    expect(await table().getByRole('columnheader', { name: 'review_count' }).count()).toBe(0);
    expect(await firstCell(0).textContent()).toBe('Dental Care 1');
    await audit(page);

    for (let n = 1; n <= 3; n++) await page.getByRole('button', { name: 'Next page' }).click();
    await visible(page.getByText('Rows 76–100 of 50,000'));
    expect(await firstCell(0).textContent()).toBe('Dental Care 76');
    await page.getByRole('button', { name: 'Previous page' }).click();
    await visible(page.getByText('Rows 51–75 of 50,000'));
    expect(await firstCell(0).textContent()).toBe('Dental Care 51');

    // Sorting by a header starts the view again at its first page, in the order the server sorted.
    const reviews = header('Review count');
    const reviewColumn = mapsTool.columns.findIndex((c) => c.key === 'review_count');
    await reviews.getByRole('button').click();
    await attributeBecomes(reviews, 'aria-sort', (v) => v === 'ascending', 'the ascending sort');
    await visible(page.getByText('Rows 1–25 of 50,000'));
    await expect.poll(() => firstCell(reviewColumn).textContent(), { timeout: 30_000 }).toBe('0');
    await reviews.getByRole('button').click();
    await attributeBecomes(reviews, 'aria-sort', (v) => v === 'descending', 'the descending sort');
    await expect.poll(() => firstCell(reviewColumn).textContent(), { timeout: 30_000 }).toBe('999');
    expect(await header('Name').getAttribute('aria-sort')).toBe('none');
    await page.getByRole('button', { name: 'Next page' }).click();
    await visible(page.getByText('Rows 26–50 of 50,000'));
    await audit(page);

    // A search narrows the rows; the total follows.
    const [boulder] = await t.app.core.sql<{ n: number }[]>`
      select count(*)::int as n from run_item where run_id = ${runId} and data->>'city' = 'Boulder'`;
    await page.getByLabel('Search rows').fill('boulder');
    await visible(page.getByText(`Rows 1–25 of ${boulder!.n.toLocaleString('en-US')} containing “boulder”`));
    const cityColumn = mapsTool.columns.findIndex((c) => c.key === 'city');
    expect(await firstCell(cityColumn).textContent()).toBe('Boulder');
    await page.getByLabel('Search rows').fill('no such dentist anywhere');
    await visible(page.getByText('No rows contain that text.'));
    await page.getByLabel('Search rows').fill('');
    await visible(page.getByText('Rows 1–25 of 50,000'));

    // The column picker: a column left out is not drawn.
    await page.getByRole('button', { name: /^Columns \(19 of 19\)$/ }).click();
    await page.getByRole('group', { name: 'Columns shown' }).getByRole('checkbox', { name: 'Website' }).uncheck();
    await visible(page.getByRole('button', { name: /^Columns \(18 of 19\)$/ }));
    await page.keyboard.press('Escape');
    await expect.poll(() => header('Website').count()).toBe(0);
    await visible(header('Phone'));

    for (let n = 1; n <= 5; n++) {
      await page.getByRole('button', { name: 'Next page' }).click();
      await visible(page.getByText(`Rows ${(n * 25 + 1).toLocaleString('en-US')}–`));
    }
    const heap = await heapUsed();
    expect(heap, `${Math.round(heap / 2 ** 20)} MB of heap`).toBeLessThan(100 * 1024 * 1024);
    // Every page read was whole: no error beside the table.
    expect(await page.getByRole('alert').count()).toBe(0);
    await audit(page);
    if (SCREENSHOTS) {
      await page.setViewportSize({ width: 1440, height: 1900 });
      await table().evaluate((el) => el.closest('.scroll-x')?.scrollTo(0, 0));
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: 'docs/images/console-run-dataset.png' });
      await page.setViewportSize({ width: 1440, height: 900 });
    }
  });

  it('lists the input by the form’s labels and the run’s life in its log', async () => {
    const key = (await t.account()).apiKey;
    const fields = await t.graphql(key, '{ tool(name: MAPS) { inputFields { name label } } }');
    const label = (name: string) =>
      fields.body.data.tool.inputFields.find((f: { name: string }) => f.name === name).label as string;

    await page.getByRole('tab', { name: 'Input' }).click();
    const inputs = page.getByRole('region', { name: 'Input' });
    const searches = inputs
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: label('searchStringsArray') }) });
    await visible(searches.getByRole('cell', { name: 'dentist' }));
    await visible(inputs.getByRole('rowheader', { name: label('locationQuery') }));
    expect(await inputs.getByRole('rowheader', { name: 'searchStringsArray' }).count()).toBe(0);
    await audit(page);

    await page.getByRole('tab', { name: 'Log' }).click();
    const log = page.getByRole('table', { name: 'Run log' });
    await visible(log.getByText(/^Created by a start: 50,000 items asked for/));
    await visible(log.getByText(/^Succeeded: Finished: 50000 businesses\. 50,000 rows stored/));
    await visible(log.getByText(/^Charged 495\.00 USD for 50,000 businesses/));
    await visible(log.getByText(/^Rows to be deleted then/));
    await audit(page);
  });

  it('downloads XLSX beside CSV and JSON', async () => {
    await page.getByRole('tab', { name: 'Rows' }).click();
    await visible(page.getByRole('button', { name: 'Download CSV' }));
    await visible(page.getByRole('button', { name: 'Download JSON' }));
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 120_000 }),
      page.getByRole('button', { name: 'Download XLSX' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`maps-${runId}.xlsx`);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile((await download.path())!);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.rowCount).toBe(ROWS + 1);
    expect(sheet.getRow(1).values).toEqual([undefined, ...mapsTool.columns.map((c) => c.header)]);
    expect(sheet.getRow(2).getCell(1).value).toBe('Dental Care 1');
    expect(sheet.getRow(ROWS + 1).getCell(1).value).toBe(`Dental Care ${ROWS}`);
  });

  it('runs the same input again and opens the new run', async () => {
    await page.getByRole('button', { name: 'Run again' }).click();
    const dialog = page.getByRole('dialog', { name: 'Run Map-listing scraper again?' });
    await visible(dialog.getByText(/holds up to \$\d+\.\d{2} of the wallet/));
    // axe reads colours once the modal has faded in.
    await page.waitForFunction(() => {
      const shown = document.querySelector('[role="dialog"]');
      return shown !== null && getComputedStyle(shown).opacity === '1' && shown.getAnimations().length === 0;
    });
    await audit(page);
    await dialog.getByRole('button', { name: 'Run again' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/runs/') && !url.pathname.endsWith(runId));
    const again = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    const [row] = await t.app.core.sql<{ tool: string; input: unknown }[]>`
      select tool, input from run where id = ${again} and account_id = ${accountId}`;
    expect(row).toEqual({ tool: 'maps', input });
    await visible(page.getByRole('progressbar', { name: 'Run progress' }));
    expect(ui.offOrigin).toEqual([]);
  });
});
