import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { grantPlanCredits } from '../../../src/billing/wallet.ts';
import { destinations } from '../../../src/config/destinations.ts';
import { audit, launchConsoleBrowser, visible, type ConsoleBrowser } from '../../helpers/browser.ts';
import { startFakeHubspot } from '../../helpers/fakes/hubspot.ts';
import { startMailServer } from '../../helpers/identity.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

/**
 * Destinations in a real browser, against the local HubSpot fake: an owner opens Connections, signs in
 * with HubSpot (the fake consents at once and sends the browser back through the gateway's callback) and
 * lands back with the connection listed; a token HubSpot does not take is refused at its field; the owner
 * makes a destination with a column sent elsewhere than by default, starts a map-listing run that names
 * it, sees the run's delivery end on the run's page, follows its link to the destination's page and sees
 * it there with the rows not delivered and why; then starts a pipeline with the destination picked and
 * sees the pipeline's table delivered on the destination's page. Every page passes axe; nothing leaves
 * the gateway's origin but the sign-in at the fake.
 * CONSOLE_SCREENSHOTS=1 writes these pages to docs/images/ at 1440×900.
 */

const PASSWORD = 'correct horse battery';
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
const APP = { appId: 9, clientId: 'console-client', clientSecret: 'console-secret', redirectUris: [] as string[] };

let fake: Awaited<ReturnType<typeof startFakeHubspot>>;
let mail: Awaited<ReturnType<typeof startMailServer>>;
let t: TestApp;
let ui: ConsoleBrowser;
let owner: Page;

beforeAll(async () => {
  fake = await startFakeHubspot({ apps: [APP] });
  mail = await startMailServer();
  t = await startTestApp({
    config: {
      mail: { smtpUrl: mail.url, from: 'leadgate <no-reply@console.test>' },
      destinations: destinations({
        SECRETS_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        HUBSPOT_BASE_URL: fake.url,
        HUBSPOT_CLIENT_ID: APP.clientId,
        HUBSPOT_CLIENT_SECRET: APP.clientSecret,
      }),
    },
  });
  // The gateway's public URL is its own address (known once it listens): HubSpot sends the browser back there.
  APP.redirectUris.push(`${t.url}/connections/callback`);
  ui = await launchConsoleBrowser(t.url, { allow: [fake.url] });
  owner = await ui.newPage();
  if (SCREENSHOTS) await owner.setViewportSize({ width: 1440, height: 900 });
  owner.on('dialog', (dialog) => void dialog.accept());
});
afterAll(async () => {
  await ui?.close();
  await t?.stop();
  await mail?.close();
  await fake?.close();
});

const shot = async (page: Page, name: string) => {
  if (SCREENSHOTS) await page.screenshot({ path: `docs/images/console-${name}.png`, fullPage: false });
};

/** Goes to a page of the console through its navigation, waits for its heading and audits it. */
async function open(page: Page, link: string) {
  await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: link, exact: true }).click();
  await visible(page.getByRole('heading', { name: link, exact: true, level: 2 }));
  await audit(page);
}

/** A form control by its label (a required field's label ends in an asterisk). */
const field = (page: Page | Locator, label: string) =>
  page.getByLabel(new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*\\*?$`));

describe('connections and destinations in the console', { timeout: 120_000 }, () => {
  it('signs in with HubSpot from the Connections page and lands back with the connection listed', async () => {
    await owner.goto('/sign-up');
    await field(owner, 'Your name').fill('Grace Hopper');
    await field(owner, 'Team name').fill('Delivery Co');
    await field(owner, 'Email').fill('grace@console.test');
    await field(owner, 'Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Sign up' }).click();
    await visible(owner.getByRole('heading', { name: 'Overview', level: 2 }));
    const [account] = await t.app.core.sql`select id from account where name = 'Delivery Co'`;
    await grantPlanCredits(t.app.core.db, account!.id as string, 20_000_000n, 'test credits');
    // Verified as the mailed link would (flows.test.ts follows it): the pages load without the banner asking to.
    await t.app.core.sql`update app_user set email_verified_at = now() where email = 'grace@console.test'`;

    await open(owner, 'Connections');
    await visible(owner.getByText('No connections yet.'));
    // A token HubSpot does not take is refused at its field, in plain words.
    await field(owner, 'Token').fill('pat-na1-00000000-0000-0000-0000-000000000000');
    await owner.getByRole('button', { name: 'Connect with the token' }).click();
    await visible(owner.getByText('HubSpot does not take this token'));
    await audit(owner);

    await field(owner, 'Name').fill('Sales portal');
    await owner.getByRole('button', { name: 'Sign in with HubSpot' }).click();
    await owner.waitForURL(/\/connections\?connected=con_[A-Za-z0-9]+$/);
    await visible(owner.getByRole('status').getByText('Sales portal is connected.'));
    const listed = owner.getByRole('table', { name: 'Connections' });
    await visible(listed.getByRole('cell', { name: 'Sales portal', exact: true }));
    await visible(listed.getByRole('cell', { name: /^Signed in,/ }));
    await visible(listed.getByRole('button', { name: 'Disconnect Sales portal' }));
    await audit(owner);
    await shot(owner, 'connections');
    // The browser went through HubSpot's consent page, and HubSpot's token endpoint was called by the gateway.
    expect(fake.requests.map((r) => r.path)).toEqual(expect.arrayContaining(['/oauth/authorize', '/oauth/v1/token']));
  });

  it('makes a destination, starts a run that names it and sees its delivery end on the run’s page and the destination’s', async () => {
    await open(owner, 'Destinations');
    const form = owner.getByRole('form', { name: 'New destination' });
    await field(form, 'Name').fill('Dentists to HubSpot');
    await form.getByLabel('What to do with rows').selectOption({ label: 'HubSpot contacts (upserted by email)' });
    await visible(form.getByLabel('HubSpot connection'));
    await form.getByLabel('Where a tool’s columns go').selectOption({ label: 'Map-listing scraper' });
    const mapping = form.getByRole('table', { name: 'Where the columns of Map-listing scraper go' });
    // The defaults come from the API: a place's name is the contact's company.
    await expect.poll(() => mapping.getByLabel('Field for name').inputValue()).toBe('company');
    await mapping.getByLabel('Field for phone').selectOption('mobilephone');
    await audit(owner);
    await form.getByRole('button', { name: 'Make destination' }).click();
    await owner.waitForURL(/\/destinations\/dest_[A-Za-z0-9]+$/);
    await visible(owner.getByRole('heading', { name: 'Destination Dentists to HubSpot', level: 2 }));
    await visible(owner.getByText('maps phone → mobilephone', { exact: false }));
    await visible(owner.getByText('No deliveries yet', { exact: false }));
    await audit(owner);

    await open(owner, 'Tools');
    await owner.getByRole('link', { name: 'Open Map-listing scraper' }).click();
    await visible(owner.getByRole('heading', { name: 'Map-listing scraper', level: 2 }));
    await field(owner, 'Search terms').fill('dentist');
    await field(owner, 'Location').fill('Denver, CO');
    await field(owner, 'Places per search term').fill('20');
    await owner.getByRole('group', { name: 'Deliver the rows to' }).getByLabel('Dentists to HubSpot').check();
    await audit(owner);
    await owner.getByRole('button', { name: 'Start', exact: true }).click();
    await owner.waitForURL(/\/runs\/[^/]+$/);
    const runId = new URL(owner.url()).pathname.split('/').pop()!;
    await visible(owner.getByText('Succeeded', { exact: true }));

    // The run's page shows its delivery once the run has ended (queued with its end), followed live to its end.
    const ofRun = owner.getByRole('region', { name: 'Deliveries' }).getByRole('table', { name: 'Deliveries' });
    await visible(ofRun.getByRole('columnheader', { name: 'Destination' }));
    await visible(ofRun.getByText('Succeeded', { exact: true }));
    await visible(ofRun.getByText(/^[1-9]\d* of \d+ sent$/));
    await visible(ofRun.getByText(/^\d+ created, \d+ updated$/));
    await visible(ofRun.getByText(/^[1-9]\d* skipped, \d+ refused$/));
    await audit(owner);
    await shot(owner, 'run-delivery');

    // Its destination's link opens the destination's page, where the same delivery is listed by its run.
    await ofRun.getByRole('link', { name: 'Dentists to HubSpot', exact: true }).click();
    await owner.waitForURL(/\/destinations\/dest_[A-Za-z0-9]+$/);
    await visible(owner.getByRole('heading', { name: 'Destination Dentists to HubSpot', level: 2 }));
    const deliveries = owner.getByRole('table', { name: 'Deliveries' });
    await visible(deliveries.getByRole('link', { name: `Run ${runId}`, exact: true }));
    await visible(deliveries.getByText('Succeeded', { exact: true }));
    await visible(deliveries.getByText(/^[1-9]\d* of \d+ sent$/));
    await visible(deliveries.getByText(/^Row \d+: skipped, no email to match a contact by$/));
    await audit(owner);
    expect(fake.records.contacts.size).toBeGreaterThan(0);
  });

  it('starts a pipeline with the destination picked and sees its table delivered on the destination’s page', async () => {
    await open(owner, 'Pipelines');
    const step = (n: number) => owner.getByRole('group', { name: `Step ${n}` });
    await step(1).getByLabel('Tool', { exact: true }).selectOption({ label: 'Map-listing scraper' });
    await field(step(1), 'Search terms').fill('dentist');
    await field(step(1), 'Location').fill('Denver, CO');
    await field(step(1), 'Places per search term').fill('5');
    await owner.getByRole('button', { name: 'Add step' }).click();
    await step(2).getByLabel('Tool', { exact: true }).selectOption({ label: 'Domain email finder' });
    await field(step(2), 'Job title').fill('Owner');
    // The same picker as a tool's form, in the pipeline's words.
    await visible(owner.getByText('Destinations the pipeline’s table (its steps’ rows joined) goes to when it ends.'));
    await owner.getByRole('group', { name: 'Deliver the rows to' }).getByLabel('Dentists to HubSpot').check();
    await visible(owner.getByRole('status', { name: 'Quote' }).getByText(/^Held at the start: \$[\d.]+/));
    await audit(owner);
    await owner.getByRole('button', { name: 'Start', exact: true }).click();
    await owner.waitForURL(/\/pipelines\/plp_[A-Za-z0-9]+$/);
    const pipelineId = new URL(owner.url()).pathname.split('/').pop()!;
    await visible(owner.getByRole('status', { name: 'Pipeline status' }).getByText('Succeeded', { exact: true }));

    await open(owner, 'Destinations');
    await shot(owner, 'destinations');
    await owner.getByRole('table', { name: 'Destinations' }).getByRole('link', { name: 'Dentists to HubSpot' }).click();
    // Queued when the pipeline ended, beside the run's: its row links the pipeline and is followed to its end.
    const ofPipeline = owner
      .getByRole('table', { name: 'Deliveries' })
      .getByRole('row')
      .filter({ has: owner.getByRole('link', { name: `Pipeline ${pipelineId}`, exact: true }) });
    await visible(ofPipeline.getByText('Succeeded', { exact: true }));
    await visible(ofPipeline.getByText(/^[1-9]\d* of \d+ sent$/));
    await audit(owner);
    await shot(owner, 'destination');
    const delivered = await t.app.core.sql`select d.status, d.run_id, t.name from delivery d
      join destination t on t.id = d.destination_id where d.pipeline_id = ${pipelineId}`;
    expect(delivered).toEqual([{ status: 'succeeded', run_id: null, name: 'Dentists to HubSpot' }]);
  });

  it('loaded nothing from outside the gateway but HubSpot’s sign-in', () => {
    expect(ui.offOrigin).toEqual([]);
  });
});
