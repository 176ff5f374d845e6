import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { addMembership } from '../../../src/accounts/members.ts';
import { createUser, hashPassword } from '../../../src/accounts/users.ts';
import { audit, launchConsoleBrowser, visible, type ConsoleBrowser } from '../../helpers/browser.ts';
import { startMailServer } from '../../helpers/identity.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

/**
 * The audit log in a real browser: an owner signs up and invites someone, opens the Audit log page from
 * the navigation and sees both events in words, each time relative with the exact time on hover; filters
 * by action and by actor, exports the filtered log as CSV (the file holds those events, and the export
 * shows up in the log); a member sees no Audit log page. Every page passes axe; nothing leaves the
 * gateway's origin.
 */

const PASSWORD = 'correct horse battery';
const OWNER = 'ada@audit.test';
const MEMBER = 'grace@audit.test';

let mail: Awaited<ReturnType<typeof startMailServer>>;
let t: TestApp;
let ui: ConsoleBrowser;
let owner: Page;

beforeAll(async () => {
  mail = await startMailServer();
  t = await startTestApp({
    worker: false,
    config: { mail: { smtpUrl: mail.url, from: 'leadgate <no-reply@console.test>' } },
  });
  ui = await launchConsoleBrowser(t.url);
  owner = await ui.newPage();
});
afterAll(async () => {
  await ui?.close();
  await t?.stop();
  await mail?.close();
});

/** Goes to a page of the console through its navigation, waits for its heading and audits it. */
async function open(page: Page, link: string) {
  await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: link, exact: true }).click();
  await visible(page.getByRole('heading', { name: link, exact: true, level: 2 }));
  await audit(page);
}

const field = (page: Page | Locator, label: string) =>
  page.getByLabel(new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*\\*?$`));

const log = () => owner.getByRole('table', { name: 'Audit log' });
const rows = () => log().locator('tbody tr');

describe('the Audit log page', { timeout: 120_000 }, () => {
  it('shows an owner what happened, in words, with times relative and exact on hover', async () => {
    await owner.goto('/sign-up');
    await field(owner, 'Your name').fill('Ada Lovelace');
    await field(owner, 'Team name').fill('Audit Co');
    await field(owner, 'Email').fill(OWNER);
    await field(owner, 'Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Sign up' }).click();
    await visible(owner.getByRole('heading', { name: 'Overview', level: 2 }));
    await t.app.core.sql`update app_user set email_verified_at = now() where email = ${OWNER}`;

    await open(owner, 'Members');
    await field(owner, 'Email to invite').fill('someone@audit.test');
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    await visible(owner.getByRole('status').getByText('Invitation sent to someone@audit.test.'));

    await open(owner, 'Audit log');
    await visible(owner.getByRole('status').getByText('2 events'));
    const invited = rows().filter({ hasText: 'Member invited' });
    await visible(invited);
    await visible(rows().filter({ hasText: 'Signed in' }));
    await visible(invited.getByRole('cell', { name: 'someone@audit.test', exact: true }));
    // jsonb keeps an object's keys in an order of its own.
    await visible(invited.getByText('role: member, email: someone@audit.test'));
    const when = invited.locator('time');
    expect(await when.textContent()).toBe('just now');
    const exact = new Date((await when.getAttribute('datetime'))!);
    await when.hover();
    const tooltip = owner.getByRole('tooltip');
    await visible(tooltip);
    expect(await tooltip.textContent()).toBe(
      await owner.evaluate((iso) => new Date(iso).toLocaleString(), exact.toISOString()),
    );
    // Audited once it has faded in: half transparent, its text would be read as too faint.
    await owner.waitForFunction(() => {
      const shown = document.querySelector('[role="tooltip"]');
      return shown !== null && getComputedStyle(shown).opacity === '1';
    });
    await audit(owner);
    // The tooltip goes once the pointer leaves; a fading one would be read half transparent by the next audit.
    await owner.mouse.move(0, 0);
    await tooltip.waitFor({ state: 'detached' });
  });

  it('filters by action and by actor, and pages back to everything', async () => {
    await owner.getByLabel('Action').selectOption({ label: 'Member invited' });
    await visible(owner.getByRole('status').getByText('1 event'));
    expect(await rows().count()).toBe(1);
    await owner.getByLabel('Action').selectOption({ label: 'Any action' });
    await visible(owner.getByRole('status').getByText('2 events'));

    await rows()
      .first()
      .getByRole('button', { name: `Show only what ${OWNER} did` })
      .click();
    await visible(owner.getByText(`Actor: ${OWNER}`));
    await visible(owner.getByRole('status').getByText('2 events'));
    await audit(owner);
    await owner.getByRole('button', { name: `Show every actor, not only ${OWNER}` }).click();
    await visible(owner.getByRole('status').getByText('2 events'));
  });

  it('exports the filtered log as CSV, and the export is in the log', async () => {
    await owner.getByLabel('Action').selectOption({ label: 'Member invited' });
    await visible(owner.getByRole('status').getByText('1 event'));
    const [download] = await Promise.all([
      owner.waitForEvent('download'),
      owner.getByRole('button', { name: 'Export the audit log as CSV' }).click(),
    ]);
    const records = parse(readFileSync((await download.path())!, 'utf8'), { columns: true }) as Record<
      string,
      string
    >[];
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ action: 'member.invited', action_text: 'Member invited', actor: OWNER });
    expect(download.suggestedFilename()).toMatch(/^audit-log-acc_\w+\.csv$/);

    await owner.getByLabel('Action').selectOption({ label: 'Audit log exported' });
    await visible(rows().filter({ hasText: 'Audit log exported' }));
    await visible(rows().getByText('format: csv', { exact: false }));
    await audit(owner);
    expect(ui.offOrigin).toEqual([]);
  });

  it('is not offered to a member, who is refused it if they go there', async () => {
    const [account] = await t.app.core.sql`select id from account where name = 'Audit Co'`;
    const user = await createUser(t.app.core.db, {
      email: MEMBER,
      name: 'Grace',
      passwordHash: await hashPassword(PASSWORD, t.app.core.config.passwordCost),
      emailVerifiedAt: new Date(),
    });
    await addMembership(t.app.core.db, account!.id as string, user.id, 'member');
    const member = await ui.newPage();
    await member.goto('/sign-in');
    await field(member, 'Email').fill(MEMBER);
    await field(member, 'Password').fill(PASSWORD);
    await member.getByRole('button', { name: 'Sign in' }).click();
    await visible(member.getByRole('heading', { name: 'Overview', level: 2 }));
    const nav = member.getByRole('navigation', { name: 'Console pages' });
    await visible(nav.getByRole('link', { name: 'Runs', exact: true }));
    expect(await nav.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    await member.goto('/audit-log');
    await visible(member.getByRole('alert').getByText(/owners and admins; your role is member/));
    await audit(member);
    expect(ui.offOrigin).toEqual([]);
  });
});
