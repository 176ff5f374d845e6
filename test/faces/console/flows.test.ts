import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { startWorker, type WorkerHandle } from '../../../workers/index.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { attributeBecomes, audit, launchConsoleBrowser, visible, type ConsoleBrowser } from '../../helpers/browser.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * The console in a real browser, as its users go through it: sign up, verify the email from the
 * banner's mailed link (the trial credits come with it), create a key and use it on
 * REST, start a map-listing run from its form and watch it live, download its CSV (the same bytes as
 * REST's); a refusal shown at its field; the lead database locked on the starter plan; a member
 * invited by mail who sees neither keys nor billing; a revoked key refused by REST; signing out
 * everywhere. Every page passes axe; no request leaves the gateway's origin.
 * CONSOLE_SCREENSHOTS=1 writes the main pages to docs/images/.
 */

const PASSWORD = 'correct horse battery';
const OWNER = 'ada@console.test';
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

interface Inbox {
  port: number;
  mails: string[];
  close(): Promise<void>;
}

/** A local SMTP server that keeps every message it is given (quoted-printable soft breaks joined). */
async function startInbox(): Promise<Inbox> {
  const mails: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push(
          Buffer.concat(chunks)
            .toString('utf8')
            .replace(/=\r?\n/g, '')
            .replace(/=3D/g, '='),
        );
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    mails,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let t: TestApp;
let ui: ConsoleBrowser;
let inbox: Inbox;
let worker: WorkerHandle | undefined;
let owner: Page;
let key: string;

beforeAll(async () => {
  inbox = await startInbox();
  // No worker at first: the run page is seen waiting, then the worker starts and the page follows it live.
  t = await startTestApp({
    worker: false,
    config: { mail: { smtpUrl: `smtp://127.0.0.1:${inbox.port}`, from: 'leadgate <no-reply@console.test>' } },
  });
  ui = await launchConsoleBrowser(t.url);
  owner = await ui.newPage();
  owner.on('dialog', (dialog) => void dialog.accept());
});
afterAll(async () => {
  await ui?.close();
  await worker?.stop();
  await t?.stop();
  await inbox?.close();
});

const shot = async (page: Page, name: string) => {
  if (SCREENSHOTS) await page.screenshot({ path: `docs/images/console-${name}.png`, fullPage: false });
};

/** Goes to a page of the console through its navigation, waits for its heading and audits it. */
async function open(page: Page, link: string, heading = link) {
  await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: link, exact: true }).click();
  await visible(page.getByRole('heading', { name: heading, exact: true, level: 2 }));
  await audit(page);
}

/** A form control by its label (a required field's label ends in an asterisk), in a page or a part of one. */
const field = (page: Page | Locator, label: string) =>
  page.getByLabel(new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*\\*?$`));

/** The path and query of the newest link to `path` mailed to `email`, once it has come. */
async function mailedLink(email: string, path: string, after = 0): Promise<string> {
  const mail = await waitFor(
    () =>
      inbox.mails
        .slice(after)
        .reverse()
        .find((m) => m.includes(`To: ${email}`) && m.includes(path)) ?? '',
    Boolean,
    { what: `a mail to ${email}` },
  );
  const link = new URL(new RegExp(`https?://[^\\s"<>]+${path.replace(/[?]/g, '\\?')}[A-Za-z0-9_-]+`).exec(mail)![0]);
  expect(link.origin).toBe(new URL(t.url).origin);
  return `${link.pathname}${link.search}`;
}

/** Signs up in the console; the banner asks to verify the email, and the mailed link does (the trial credits with it). */
async function signUp(page: Page, email: string, team: string) {
  const before = inbox.mails.length;
  await page.goto('/sign-up');
  await visible(page.getByRole('heading', { name: 'Create your account' }));
  await audit(page);
  await field(page, 'Your name').fill('Ada Lovelace');
  await field(page, 'Team name').fill(team);
  await field(page, 'Email').fill(email);
  await field(page, 'Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await visible(page.getByRole('heading', { name: 'Overview', level: 2 }));
  const banner = page.getByRole('region', { name: 'Verify your email to receive your trial credits' });
  await visible(banner.getByText(`We mailed a link to ${email}.`, { exact: false }));
  await audit(page);
  // Sent again from the banner: the newest link works like the first.
  const first = await mailedLink(email, '/verify-email?token=', before);
  await banner.getByRole('button', { name: 'Send the link again' }).click();
  await visible(banner.getByRole('status').getByText(`A new link is on its way to ${email}.`));
  const newest = await waitFor(
    () => mailedLink(email, '/verify-email?token=', before),
    (link) => link !== first,
    { what: 'the second link' },
  );
  await page.goto(newest);
  await visible(
    page
      .getByRole('status')
      .getByText(/^Your email is verified: 5\.00 USD of trial credits are in your account's wallet\.$/),
  );
  await audit(page);
  await page.getByRole('link', { name: 'Go to the console' }).click();
  await visible(page.getByRole('heading', { name: 'Overview', level: 2 }));
  expect(await page.getByRole('region', { name: /^Verify your email/ }).count()).toBe(0);
}

// A page waits for what it shows; on a loaded machine (the whole suite on two cores) that can take long.
describe('an owner', { timeout: 120_000 }, () => {
  it('signs up, creates a key that REST accepts, starts a map-listing run from its form, watches it live and downloads the CSV REST serves', async () => {
    await signUp(owner, OWNER, 'Ada Co');

    await open(owner, 'API keys');
    await field(owner, 'Key name').fill('ci');
    await owner.getByRole('button', { name: 'Create key' }).click();
    key = (await owner.getByTestId('new-key-secret').textContent())!.trim();
    expect(key).toMatch(/^lg_live_/);
    await visible(owner.getByRole('table', { name: 'API keys' }).getByRole('cell', { name: 'ci', exact: true }));
    await audit(owner);
    await shot(owner, 'keys');
    const wallet = await t.request('GET', '/api/v1/wallet', { key });
    expect(wallet.status).toBe(200);

    await open(owner, 'Tools');
    await shot(owner, 'tools');
    await owner.getByRole('link', { name: 'Open Map-listing scraper' }).click();
    await visible(owner.getByRole('heading', { name: 'Map-listing scraper', level: 2 }));
    await field(owner, 'Search terms').fill('dentist');
    await field(owner, 'Location').fill('Denver, CO');
    await field(owner, 'Places per search term').fill('50');
    // The quote (a dry run of the start) shows before anything starts.
    await visible(owner.getByRole('status', { name: 'Quote' }).getByText(/^List price: \$\d/));
    await audit(owner);
    const [before] = await t.app.core.sql`select count(*)::int as n from run`;
    expect(before!.n).toBe(0);

    await owner.getByRole('button', { name: 'Start' }).click();
    await owner.waitForURL(/\/runs\/[^/]+$/);
    const runId = decodeURIComponent(new URL(owner.url()).pathname.split('/').pop()!);
    const progress = owner.getByRole('progressbar', { name: 'Run progress' });
    const rows = owner.getByRole('table', { name: 'Result rows' }).locator('tbody tr');
    // Waiting for a worker: running, nothing handled, no rows.
    await visible(owner.getByText('Running', { exact: true }));
    expect(await progress.getAttribute('aria-valuenow')).toBe('0');
    expect(await rows.count()).toBe(0);
    await audit(owner);

    // The worker starts; the page, never reloaded, follows the run to its end through its subscriptions.
    worker = await startWorker(t.app.core, { pollInterval: 100 });
    await attributeBecomes(progress, 'aria-valuenow', (v) => v === '100', 'the progress bar to fill');
    await visible(owner.getByText('Succeeded', { exact: true }));
    const stored = await t.request('GET', `/api/downloads/${runId}?format=json`, { key });
    expect(stored.status).toBe(200);
    expect(stored.body.length).toBeGreaterThan(0);
    await waitFor(
      () => rows.count(),
      (n) => n === Math.min(25, stored.body.length),
      { what: 'the rows in the table' },
    );
    await visible(owner.getByText(`Rows 1–${Math.min(25, stored.body.length)} of ${stored.body.length}`));
    // The table shows the rows in their stored order, with the tool's columns named for people.
    expect(await owner.getByRole('table', { name: 'Result rows' }).locator('thead th').first().textContent()).toBe(
      'Name',
    );
    expect(await rows.first().locator('td').first().textContent()).toBe(stored.body[0].name);
    await audit(owner);
    await shot(owner, 'run');

    const [download] = await Promise.all([
      owner.waitForEvent('download'),
      owner.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    const csv = readFileSync((await download.path())!, 'utf8');
    const rest = await t.request('GET', `/api/downloads/${runId}?format=csv`, { key });
    expect(rest.status).toBe(200);
    expect(csv).toBe(rest.text);
    expect(csv.split('\n').length).toBeGreaterThan(stored.body.length);
  });

  it('sees a refused input at its field, and nothing starts', async () => {
    await open(owner, 'Tools');
    await owner.getByRole('link', { name: 'Open Map-listing scraper' }).click();
    const max = field(owner, 'Places per search term');
    await field(owner, 'Search terms').fill('dentist');
    await field(owner, 'Location').fill('Denver, CO');
    await max.fill('-5');
    const [before] = await t.app.core.sql`select count(*)::int as n from run`;
    // Nothing is said before the user acts; Start refuses it at its field, in words.
    await owner.getByRole('button', { name: 'Start' }).click();
    await attributeBecomes(max, 'aria-invalid', (v) => v === 'true', 'the field to be marked invalid');
    const describedBy = (await max.getAttribute('aria-describedby'))!.split(' ').filter(Boolean);
    const messages = await Promise.all(describedBy.map((id) => owner.locator(`[id="${id}"]`).textContent()));
    expect(messages.join(' ')).toMatch(/at least|greater|positive|minimum/i);
    await audit(owner);
    expect(new URL(owner.url()).pathname).toBe('/tools/maps');
    const [after] = await t.app.core.sql`select count(*)::int as n from run`;
    expect(after!.n).toBe(before!.n);
  });

  it('invites a member by mail; the member joins through the link and sees neither keys nor billing', async () => {
    await open(owner, 'Members');
    await field(owner, 'Email to invite').fill('grace@console.test');
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    await visible(owner.getByText('Invitation sent to grace@console.test.'));
    // The owner's own row.
    await visible(owner.getByRole('table', { name: 'Members' }).getByRole('cell', { name: OWNER, exact: true }));
    await audit(owner);
    await shot(owner, 'members');
    // An invitation sent by mistake is revoked from its row; the other stays pending.
    await field(owner, 'Email to invite').fill('typo@console.test');
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    const pending = owner.getByRole('table', { name: 'Pending invitations' });
    await pending.getByRole('button', { name: 'Revoke the invitation of typo@console.test' }).click();
    await owner
      .getByRole('dialog', { name: 'Revoke the invitation of typo@console.test?' })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await pending.getByRole('cell', { name: 'typo@console.test', exact: true }).waitFor({ state: 'detached' });
    await visible(pending.getByRole('cell', { name: 'grace@console.test', exact: true }));
    const link = await mailedLink('grace@console.test', '/invitations/');

    const member = await ui.newPage();
    await member.goto(link);
    await visible(member.getByRole('heading', { name: 'Join Ada Co' }));
    await audit(member);
    await field(member, 'Your name').fill('Grace Hopper');
    await field(member, 'Password').fill(PASSWORD);
    await member.getByRole('button', { name: 'Join Ada Co' }).click();
    await visible(member.getByRole('heading', { name: 'Overview', level: 2 }));
    await audit(member);
    const nav = member.getByRole('navigation', { name: 'Console pages' });
    await visible(nav.getByRole('link', { name: 'Tools', exact: true }));
    for (const hidden of ['API keys', 'Billing', 'Members', 'Webhooks'])
      expect(await nav.getByRole('link', { name: hidden, exact: true }).count(), hidden).toBe(0);
    // Asked for directly, the API refuses: the page says why.
    for (const path of ['/keys', '/billing']) {
      await member.goto(path);
      await visible(member.getByRole('alert').getByText(/ROLE_REQUIRED/));
      await audit(member);
    }
  });

  it('finds runs by tool, searches the lead database, previews an enrichment, creates a webhook and sees billing, every page accessible', async () => {
    await open(owner, 'Runs');
    await owner.getByLabel('Tool', { exact: true }).selectOption({ label: 'Map-listing scraper' });
    await visible(owner.getByText(/^1 runs$/));
    const runs = owner.getByRole('table', { name: 'Runs' });
    expect(await runs.locator('thead th').allTextContents()).toEqual([
      'Run',
      'Tool',
      'Status',
      'Rows',
      'Cost',
      'Started',
    ]);
    await visible(runs.getByRole('cell', { name: 'Map-listing scraper', exact: true }));
    await owner.getByLabel('Tool', { exact: true }).selectOption({ label: 'Email validator' });
    await visible(owner.getByText(/^0 runs$/));
    await audit(owner);

    await open(owner, 'Lead database');
    await visible(owner.getByText(/leads match/));
    // A checkbox, then name, title, company, location and email status (lead-search.test.ts shoots the page).
    expect(await owner.getByRole('table', { name: 'Leads' }).locator('tbody tr').first().locator('td').count()).toBe(6);
    await audit(owner);

    await open(owner, 'Enrichment');
    const [lead] = await t.app.core.sql`select email from person where email is not null order by id limit 1`;
    await owner.locator('input[type=file]').setInputFiles({
      name: 'people.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`Email,Note\n${lead!.email},a\nnobody@nowhere.invalid,b\n`),
    });
    await visible(owner.getByText('people.csv: 2 rows'));
    expect(await owner.getByLabel('Email column').inputValue()).toBe('Email');
    await owner.getByRole('button', { name: 'Preview matches' }).click();
    await visible(owner.getByText('1 of 2 rows match'));
    // The preview masks contact details.
    await visible(
      owner
        .getByRole('table', { name: 'Preview of the matches (masked)' })
        .getByText(/\*\*\*/)
        .first(),
    );
    await audit(owner);

    await open(owner, 'Webhooks');
    await field(owner, 'URL').fill('https://hooks.example.com/leadgate');
    await owner.getByRole('button', { name: 'Create webhook' }).click();
    expect(await owner.getByTestId('webhook-secret').textContent()).toMatch(/^whsec_/);
    const hook = owner.getByRole('region', { name: 'Webhook https://hooks.example.com/leadgate' });
    await visible(hook);
    // A test event is queued and shows in the webhook's delivery log.
    await hook.getByRole('button', { name: 'Send a test event to https://hooks.example.com/leadgate' }).click();
    await visible(hook.getByRole('status').getByText(/^Test event msg_\w+ queued/));
    await visible(
      hook
        .getByRole('table', { name: 'Deliveries to https://hooks.example.com/leadgate' })
        .getByRole('cell', { name: 'WEBHOOK_TEST' }),
    );
    await audit(owner);

    // GraphiQL opens signed in with the session: its schema request carries the CSRF token and is answered.
    const [explorer] = await Promise.all([
      owner.context().waitForEvent('page'),
      owner.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: 'GraphQL explorer' }).click(),
    ]);
    const introspection = await explorer.waitForResponse(
      (res) => new URL(res.url()).pathname === '/graphql' && res.request().method() === 'POST',
    );
    expect(introspection.request().headers()['x-csrf-token']).toBeTruthy();
    expect(introspection.status()).toBe(200);
    expect((await introspection.json()).data.__schema).toBeTruthy();
    await explorer.close();

    await open(owner, 'Billing');
    // The map-listing run's hold, release and charge as one line of the statement, with the balance after it.
    const statement = owner.getByRole('table', { name: 'Statement' });
    const runLine = statement.getByRole('row').filter({ hasText: 'Map-listing scraper' }).first();
    await visible(runLine.getByText(/^Charged \$\d+\.\d{2} \(held \$\d+\.\d{2}, the rest given back\)$/));
    expect(await runLine.locator('span[title*="$"]').count()).toBeGreaterThanOrEqual(4);
    await audit(owner);
    await statement.scrollIntoViewIfNeeded();
    await shot(owner, 'billing-statement');
    // Every entry, as the API lists them: the hold and the charge each a row.
    await owner.getByText('Every entry', { exact: true }).click();
    const ledger = owner.getByRole('table', { name: 'Ledger' });
    await visible(ledger.getByRole('cell', { name: 'Hold', exact: true }).first());
    await visible(ledger.getByRole('cell', { name: 'Charge', exact: true }).first());
    await field(owner, 'Amount to buy (USD)').fill('149');
    // A trial cannot buy credits: the quote says why before anything is paid.
    await visible(owner.getByText(/active subscription/));
    await audit(owner);
  });

  it('saves a tool’s form as a task into a dataset, schedules it, pauses it, runs it now and finds the dataset', async () => {
    await open(owner, 'Tools');
    await owner.getByRole('link', { name: 'Open Map-listing scraper' }).click();
    await visible(owner.getByRole('heading', { name: 'Map-listing scraper', level: 2 }));
    await field(owner, 'Search terms').fill('dentist');
    await field(owner, 'Location').fill('Denver, CO');
    await field(owner, 'Places per search term').fill('5');
    await field(owner, 'Task name').fill('weekly dentists');
    await field(owner, 'Dataset (optional)').fill('dentists');
    await owner.getByRole('button', { name: 'Save as task' }).click();
    await owner.waitForURL(/\/schedules$/);
    const tasks = owner.getByRole('table', { name: 'Tasks' });
    await visible(tasks.getByRole('cell', { name: 'weekly dentists', exact: true }));
    await visible(tasks.getByRole('cell', { name: 'dentists (only new)', exact: true }));
    await audit(owner);

    await field(owner, 'Time zone').fill('America/Denver');
    await owner.getByRole('button', { name: 'Schedule', exact: true }).click();
    const schedules = owner.getByRole('table', { name: 'Schedules' });
    await visible(schedules.getByText('Active', { exact: true }));
    const [row] = await t.app.core.sql`select cron, timezone, next_fire_at from schedule`;
    expect(row).toMatchObject({ cron: '0 9 * * 1', timezone: 'America/Denver' });
    await owner.getByRole('button', { name: 'Pause the schedule of weekly dentists' }).click();
    await visible(schedules.getByText('Paused by hand.', { exact: true }));
    await audit(owner);
    await shot(owner, 'schedules');

    await owner.getByRole('button', { name: 'Run weekly dentists now' }).click();
    await owner.waitForURL(/\/runs\/[^/]+$/);
    await visible(owner.getByText('Succeeded', { exact: true }));
    await open(owner, 'Datasets');
    const datasets = owner.getByRole('table', { name: 'Datasets' });
    await visible(datasets.getByRole('cell', { name: 'dentists', exact: true }));
    await visible(datasets.getByRole('cell', { name: '5', exact: true }).first());
    await audit(owner);
  });

  it('builds a pipeline of three tools from what the API says can follow, sees its quote, follows it live to its end and downloads its table and a dataset’s', async () => {
    await open(owner, 'Pipelines');
    const step = (n: number) => owner.getByRole('group', { name: `Step ${n}` });
    await step(1).getByLabel('Tool', { exact: true }).selectOption({ label: 'Map-listing scraper' });
    await field(step(1), 'Search terms').fill('dentist');
    await field(step(1), 'Location').fill('Denver, CO');
    await field(step(1), 'Places per search term').fill('3');
    // The tool's links (ToolInfo.feeds) say what can follow it: the next step offers only those.
    await visible(
      owner.getByText(
        'After Map-listing scraper can come: Domain email finder (from website), Email validator (from emails).',
      ),
    );
    await owner.getByRole('button', { name: 'Add step' }).click();
    const second = step(2).getByLabel('Tool', { exact: true });
    await waitFor(
      () => second.locator('option').allTextContents(),
      (options) => [...options].sort().join('|') === 'Choose a tool|Domain email finder|Email validator',
      { what: 'the tools that can follow the map-listing scraper' },
    );
    await second.selectOption({ label: 'Domain email finder' });
    // The domains come from the places' websites: the step asks only for its other fields, and says so.
    expect(await field(step(2), 'Company domains').count()).toBe(0);
    await visible(
      step(2).getByText(/^Fed by the rows of step 1: their website fills its domains\. Each place’s website/),
    );
    await field(step(2), 'Job title').fill('Owner');
    await owner.getByRole('button', { name: 'Add step' }).click();
    await step(3).getByLabel('Tool', { exact: true }).selectOption({ label: 'Email validator' });
    const quote = owner.getByRole('status', { name: 'Quote' });
    await visible(quote.getByText(/^Step 1, Map-listing scraper: up to 3 results asked for, at most \$/));
    await visible(quote.getByText(/^Step 3, Email validator: up to 15 inputs, at most \$/));
    await visible(quote.getByText(/^Held at the start: \$[\d.]+/));
    await visible(quote.getByText(/the wallet covers it/));
    await audit(owner);
    await shot(owner, 'pipelines');

    // No worker while it starts: the page is seen with the pipeline waiting, then follows it once one runs.
    await worker?.stop();
    await owner.getByRole('button', { name: 'Start', exact: true }).click();
    await owner.waitForURL(/\/pipelines\/plp_[A-Za-z0-9]+$/);
    const pipelineId = new URL(owner.url()).pathname.split('/').pop()!;
    await visible(owner.getByRole('heading', { name: `Pipeline ${pipelineId}`, level: 2 }));
    // Followed live, never reloaded: the worker runs each step and the page shows the pipeline end.
    const status = owner.getByRole('status', { name: 'Pipeline status' });
    await visible(status.getByText('Running', { exact: true }));
    await visible(owner.getByRole('button', { name: 'Cancel pipeline' }));
    worker = await startWorker(t.app.core, { pollInterval: 100 });
    await visible(status.getByText('Succeeded', { exact: true }));
    const steps = owner.getByRole('table', { name: 'Steps' });
    await visible(steps.getByRole('link', { name: 'Open the run of step 1' }));
    const [row] = await t.app.core.sql`select status, status_message from pipeline where id = ${pipelineId}`;
    expect(row!.status).toBe('SUCCEEDED');
    await visible(status.getByText(row!.status_message as string, { exact: true }));
    await audit(owner);
    await shot(owner, 'pipeline');

    const [download] = await Promise.all([
      owner.waitForEvent('download'),
      owner.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    const header = readFileSync((await download.path())!, 'utf8')
      .split('\n')[0]!
      .split(',');
    expect(header).toContain('maps.name');
    expect(header).toContain('email-validator.status');

    // A step's run is an ordinary run: its page offers what its rows can feed next, started from them.
    await steps.getByRole('link', { name: 'Open the run of step 1' }).click();
    await owner.waitForURL(/\/runs\/[^/]+$/);
    const firstRun = new URL(owner.url()).pathname;
    const next = owner.getByRole('region', { name: 'Next steps' });
    const finder = next.getByRole('form', { name: 'Start Domain email finder from this run' });
    await visible(finder.getByText('This run’s rows give it 3 values from their website.', { exact: false }));
    await audit(owner);
    await field(finder, 'Job title').fill('Owner');
    await finder.getByRole('button', { name: 'Start Domain email finder' }).click();
    await owner.waitForURL((url) => url.pathname !== firstRun && url.pathname.startsWith('/runs/'));
    await visible(owner.getByRole('heading', { name: /^Run /, level: 2 }));
    await visible(owner.getByText('Domain email finder', { exact: true }));

    // The pipelines table lists it, its steps in words, with a link to its page (the page was audited above).
    await owner.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: 'Pipelines' }).click();
    const table = owner.getByRole('table', { name: 'Pipelines' });
    await visible(table.getByRole('link', { name: pipelineId, exact: true }));
    await visible(
      table.getByRole('cell', { name: 'Map-listing scraper → Domain email finder → Email validator', exact: true }),
    );

    // A dataset's rows download from its row of the datasets page.
    await open(owner, 'Datasets');
    const [rows] = await Promise.all([
      owner.waitForEvent('download'),
      owner.getByRole('button', { name: 'Download dentists as CSV' }).click(),
    ]);
    const lines = readFileSync((await rows.path())!, 'utf8')
      .trim()
      .split('\n');
    expect(lines[0]).toContain('name');
    expect(lines.length).toBe(6);
  });

  it('revokes the key, and REST refuses it at once', async () => {
    await open(owner, 'API keys');
    await owner.getByRole('button', { name: 'Revoke ci' }).click();
    await owner.getByRole('dialog', { name: 'Revoke the key “ci”?' }).getByRole('button', { name: 'Revoke' }).click();
    await visible(owner.getByRole('table', { name: 'API keys' }).getByText(/^Revoked/));
    // axe reads the page once the modal has faded out.
    await owner.getByRole('dialog').waitFor({ state: 'detached' });
    await audit(owner);
    const refused = await t.request('GET', '/api/v1/wallet', { key });
    expect(refused.status).toBe(401);
  });

  it('signs out everywhere: every session of the user ends, this one included', async () => {
    const elsewhere = await ui.newPage();
    await elsewhere.goto('/sign-in');
    await field(elsewhere, 'Email').fill(OWNER);
    await field(elsewhere, 'Password').fill(PASSWORD);
    await elsewhere.getByRole('button', { name: 'Sign in' }).click();
    await visible(elsewhere.getByRole('heading', { name: 'Overview', level: 2 }));

    // The other browser was last seen two hours ago (its stored times moved back, as if the clock had moved).
    await t.app.core.sql`
      update console_session set created_at = created_at - interval '2 hours',
        last_seen_at = last_seen_at - interval '2 hours'
      where id = (select s.id from console_session s join app_user u on u.id = s.user_id
                  where u.email = ${OWNER} and s.revoked_at is null order by s.created_at desc limit 1)`;
    await open(owner, 'Sessions');
    const sessions = owner.getByRole('table', { name: 'Sessions' });
    await visible(sessions.getByText('This session'));
    expect(await sessions.locator('tbody tr').count()).toBeGreaterThanOrEqual(2);
    const other = sessions.locator('tbody tr').filter({ has: owner.getByRole('button', { name: /^End the session/ }) });
    const lastSeen = other.locator('td').nth(3);
    expect(await lastSeen.textContent()).toBe('2 hours ago');
    // Used again: "Last seen" moves to now, and "Signed in" stays.
    await elsewhere.reload();
    await visible(elsewhere.getByRole('heading', { name: 'Overview', level: 2 }));
    await expect
      .poll(async () => {
        await owner.reload();
        await visible(sessions);
        return lastSeen.textContent();
      })
      .toMatch(/^(just now|\d+ seconds? ago)$/);
    expect(await other.locator('td').nth(2).textContent()).toBe('2 hours ago');
    await owner.getByRole('button', { name: 'Sign out everywhere' }).click();
    await visible(owner.getByRole('heading', { name: 'Sign in' }));
    for (const page of [owner, elsewhere]) expect((await page.request.get('/auth/session')).status()).toBe(401);
    await elsewhere.reload();
    await visible(elsewhere.getByRole('heading', { name: 'Sign in' }));
  });
});

describe('a starter account', { timeout: 120_000 }, () => {
  it('sees why the lead database is locked', async () => {
    const page = await ui.newPage();
    await signUp(page, 'sam@console.test', 'Starter Co');
    await t.app.core.sql`update account set plan = 'starter' where name = 'Starter Co'`;
    await open(page, 'Lead database');
    await visible(page.getByText('Locked on this plan'));
    await visible(page.getByText(/growth plan/));
    await audit(page);
  });

  it('loaded nothing from outside the gateway in any of these pages', () => {
    expect(ui.offOrigin).toEqual([]);
  });
});
