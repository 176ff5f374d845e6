import { readFile } from 'node:fs/promises';
import Papa from 'papaparse';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { audit, type ConsoleBrowser, launchConsoleBrowser, visible } from '../../helpers/browser.ts';

/**
 * The enrichment page in a real browser: a CSV whose headers need mapping ("Work Email", "Person Linkedin
 * Url", "Company Website") is mapped column by column on its own; a row with nothing to match on is
 * skipped and named by its line in the file while the rest are enriched (a person also by name at their
 * company); the file is kept in the history, still there after navigating away and back, and downloaded
 * again from it. Every state passes axe; nothing leaves the gateway's origin.
 * CONSOLE_SCREENSHOTS=1 writes the whole page to docs/images/console-enrichment.png, 1440 px wide.
 */

const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
let t: TestApp;
let ui: ConsoleBrowser;
let page: Page;

beforeAll(async () => {
  t = await startTestApp();
  ui = await launchConsoleBrowser(t.url);
  page = await ui.newPage();
  if (SCREENSHOTS) await page.setViewportSize({ width: 1440, height: 900 });
});
afterAll(async () => {
  await ui?.close();
  await t?.stop();
});

const open = async (name: string) => {
  await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name, exact: true }).click();
  await visible(page.getByRole('heading', { name, level: 2 }));
};

describe('the enrichment page', { timeout: 120_000 }, () => {
  it('enriches a file with a bad row, names the row by its line, and keeps the file in the history', async () => {
    await page.goto('/sign-up');
    await page.getByLabel(/^Your name/).fill('Ada Sales');
    await page.getByLabel(/^Team name/).fill('Pipeline Co');
    await page.getByLabel(/^Email/).fill('ada@pipeline.test');
    await page.getByLabel(/^Password/).fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await visible(page.getByRole('heading', { name: 'Overview', level: 2 }));
    // Verified as the mailed link would be, on the plan that includes lead enrichment.
    await t.app.core.sql`update app_user set email_verified_at = now() where email = 'ada@pipeline.test'`;
    await t.app.core.sql`update account set plan = 'growth' where name = 'Pipeline Co'`;
    await page.reload();
    await visible(page.getByRole('heading', { name: 'Overview', level: 2 }));

    const [a] = await t.app.core.sql`select email from person where email is not null order by id limit 1`;
    const [b] = await t.app.core.sql`select linkedin_url from person where linkedin_url is not null
      and email is distinct from ${a!.email} order by id desc limit 1`;
    const [c] = await t.app.core.sql`select p.first_name, p.last_name, c.domain from person p
      join company c on c.id = p.company_id where p.seniority = 'entry' order by p.id limit 1`;

    await open('Enrichment');
    await visible(page.getByText('No files enriched yet.'));
    const csv = [
      'Work Email,Person Linkedin Url,First Name,Last Name,Company Website,Notes',
      `${a!.email},,,,,first`,
      `,${b!.linkedin_url},,,,second`,
      `,,${c!.first_name},${c!.last_name},${c!.domain},third`,
      ',,,,,no key at all',
      'nobody@nowhere.invalid,,,,,fifth',
    ].join('\n');
    await page.locator('input[type=file]').setInputFiles({
      name: 'people.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`${csv}\n`),
    });
    await visible(page.getByText('people.csv: 5 rows'));
    // Every column mapped from its header; the ones the file lacks are not used.
    const columns: [string, string][] = [
      ['Email column', 'Work Email'],
      ['LinkedIn URL column', 'Person Linkedin Url'],
      ['Mobile number column', ''],
      ['Company domain column', 'Company Website'],
      ['Full name column', ''],
      ['First name column', 'First Name'],
      ['Last name column', 'Last Name'],
      ['Company name column', ''],
    ];
    for (const [label, header] of columns) expect(await page.getByLabel(label).inputValue(), label).toBe(header);
    await audit(page);

    await page.getByRole('button', { name: 'Enrich 5 rows' }).click();
    await visible(page.getByRole('status').getByText(/^3 of 5 rows match · 1 skipped · [\d,]+ matches left today$/));
    const skipped = page.getByRole('list', { name: 'Skipped rows' });
    expect(await skipped.getByRole('listitem').allInnerTexts()).toEqual([
      'Row 5: no email, LinkedIn URL, mobile, company domain, or name and company to match on',
    ]);
    const enriched = page.getByRole('table', { name: 'Enriched rows (first 50)' });
    // Line 4 was matched by the name at the company, not by the company's most senior person.
    await visible(enriched.getByRole('row', { name: new RegExp(`^4 Matched ${c!.first_name} ${c!.last_name}\\b`) }));
    await visible(enriched.getByRole('row', { name: /^5 Skipped/ }));
    await visible(enriched.getByRole('row', { name: /^6 Not found/ }));
    const [job] = await t.app.core.sql`select file_name, total, matched, not_found, skipped from enrichment_job`;
    expect(job).toEqual({ file_name: 'people.csv', total: 5, matched: 3, not_found: 1, skipped: 1 });
    const history = page.getByRole('table', { name: 'Enrichment history' });
    await visible(history.getByRole('row', { name: /^people\.csv People 5 3 1 1/ }));
    if (SCREENSHOTS) await page.screenshot({ path: 'docs/images/console-enrichment.png', fullPage: true });
    await audit(page);

    // Away and back: the history is the server's, not the page's.
    await open('Overview');
    await open('Enrichment');
    await visible(history.getByRole('row', { name: /^people\.csv People 5 3 1 1 just now/ }));
    expect(await page.getByText('people.csv: 5 rows').count()).toBe(0);
    await audit(page);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      history.getByRole('button', { name: 'Download people.csv enriched' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('people-enriched.csv');
    const rows = Papa.parse<Record<string, string>>(await readFile((await download.path())!, 'utf8'), {
      header: true,
      skipEmptyLines: true,
    }).data;
    expect(rows.map((r) => [r.row, r.match_status, r.matched_by])).toEqual([
      ['1', 'matched', 'email'],
      ['2', 'matched', 'social'],
      ['3', 'matched', 'name'],
      ['4', 'skipped', ''],
      ['5', 'not_found', ''],
    ]);
    expect(rows[0]).toMatchObject({ email: a!.email, lead_email: a!.email });
    expect(rows[1]).toMatchObject({ social: b!.linkedin_url, lead_linkedinUrl: b!.linkedin_url });
    expect(rows[2]).toMatchObject({ lead_fullName: `${c!.first_name} ${c!.last_name}` });
    expect(rows[3]!.skip_reason).toBe(
      'no email, LinkedIn URL, mobile, company domain, or name and company to match on',
    );
    expect(ui.offOrigin).toEqual([]);
  });
});
