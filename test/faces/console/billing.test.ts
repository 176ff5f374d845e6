import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { audit, launchConsoleBrowser, visible, type ConsoleBrowser } from '../../helpers/browser.ts';
import { paymentsAt, startFakeStripe, type FakeStripe } from '../../helpers/fake-stripe.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

/**
 * From trial to paid in a real browser, against the local Stripe fake: a new sign-up (TRIAL) sees on
 * Overview and Billing what the trial buys and that buying credits needs a plan, compares the plans
 * (prices, monthly credits, bonus, what each adds: from the API's declarations), chooses Growth, pays on
 * the fake's Checkout page, comes back to Billing on the growth plan, and buys credits after confirming
 * in a modal. Every console page passes axe; nothing leaves the gateway's origin but the Stripe fake.
 * CONSOLE_SCREENSHOTS=1 writes the billing page to docs/images/console-billing-plans.png at 1440×900.
 */

const PASSWORD = 'correct horse battery';
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

let stripe: FakeStripe;
let t: TestApp;
let ui: ConsoleBrowser;
let page: Page;

beforeAll(async () => {
  stripe = await startFakeStripe();
  t = await startTestApp({
    config: {
      payments: paymentsAt(stripe),
    },
  });
  stripe.hookUrl = `${t.url}/hooks/stripe`;
  ui = await launchConsoleBrowser(t.url, { allow: [stripe.url] });
  page = await ui.newPage();
  if (SCREENSHOTS) await page.setViewportSize({ width: 1440, height: 900 });
});
afterAll(async () => {
  await ui?.close();
  await stripe?.idle();
  await t?.stop();
  await stripe?.close();
});

describe('a trial sign-up chooses a plan and buys credits', { timeout: 120_000 }, () => {
  it('sees what the trial buys, pays for Growth through Checkout and buys credits after a confirmation', async () => {
    await page.goto('/sign-up');
    await page.getByLabel(/^Your name/).fill('Mary Jackson');
    await page.getByLabel(/^Team name/).fill('Trial Co');
    await page.getByLabel(/^Email/).fill('mary@console.test');
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await visible(page.getByRole('heading', { name: 'Overview', level: 2 }));
    // Verified as the mailed link would (flows.test.ts follows it), so the trial credits are there.
    await t.app.core.sql`update app_user set email_verified_at = now() where email = 'mary@console.test'`;
    await page.reload();

    // Overview: the prompt to choose a plan, saying what the trial buys.
    const prompt = page.getByRole('alert').filter({ hasText: 'Choose a plan' });
    await visible(prompt.getByText(/Your trial has the growth plan’s tools/));
    await audit(page);
    await prompt.getByRole('link', { name: 'See the plans' }).click();
    await visible(page.getByRole('heading', { name: 'Billing', level: 2 }));

    // Billing: the plans as the API declares them; buying credits waits for a plan.
    const plans = page.getByRole('list', { name: 'Plans' });
    const growth = plans.getByRole('listitem', { name: 'Growth plan' });
    await visible(growth.getByText('$149.00 a month'));
    await visible(growth.getByText('$149.00 of plan credits each paid month'));
    await visible(growth.getByText('10% bonus on credits you buy'));
    await visible(growth.getByText('Everything in Starter, and:'));
    await visible(growth.getByText('Your trial'));
    await visible(plans.getByRole('listitem', { name: 'Scale plan' }).getByText('30% bonus on credits you buy'));
    await visible(page.getByText('Buying credits needs an active plan: choose one above.'));
    expect(await page.getByRole('button', { name: 'Buy credits' }).isDisabled()).toBe(true);
    await visible(page.getByRole('button', { name: 'Manage billing' }));
    await audit(page);
    if (SCREENSHOTS) await page.screenshot({ path: 'docs/images/console-billing-plans.png' });

    // Choosing Growth goes to Stripe Checkout (the fake's page), which sends the browser back once paid.
    await growth.getByRole('button', { name: 'Choose the growth plan' }).click();
    await page.waitForURL(`${stripe.url}/c/pay/**`);
    await page.getByRole('button', { name: 'Pay and subscribe' }).click();
    await page.waitForURL(/\/billing\?checkout=complete$/);
    await visible(page.getByRole('status').getByText('Payment received: the account is on the growth plan.'));
    await visible(growth.getByText('Your plan'));
    await audit(page);

    // Buying credits now works, after a confirmation in a modal.
    await page.getByLabel('Amount to buy (USD)').fill('100');
    await visible(page.getByRole('status', { name: 'Quote' }).getByText(/You pay \$100\.00/));
    await page.getByRole('button', { name: 'Buy credits' }).click();
    const confirm = page.getByRole('dialog', { name: 'Buy credits?' });
    await visible(confirm.getByText('You pay $100.00 and $110.00 of credits are added to the wallet.'));
    // axe reads colours as shown: after the modal's fade-in.
    await page.waitForFunction(() => {
      const dialog = document.querySelector('[role="dialog"]');
      return dialog !== null && getComputedStyle(dialog).opacity === '1' && !dialog.getAnimations().length;
    });
    await audit(page);
    if (SCREENSHOTS) await page.screenshot({ path: 'docs/images/console-buy-credits-confirm.png' });
    await confirm.getByRole('button', { name: 'Pay $100.00' }).click();
    await visible(page.getByRole('status').getByText(/Purchased 100\.00 USD of credits/));
    const [wallet] = await t.app.core.sql`
      select w.purchased_micros::text as purchased from wallet w join account a on a.id = w.account_id
      where a.name = 'Trial Co'`;
    expect(wallet!.purchased).toBe('110000000');
    expect(ui.offOrigin).toEqual([]);
  });

  it('shows a new key once with a quick start, clears it when revoked, and asks in modals', async () => {
    await page.goto('/keys');
    await visible(page.getByRole('heading', { name: 'API keys', level: 2 }));
    await page.getByLabel(/^Key name/).fill('Laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByTestId('new-key-secret');
    await visible(secret);
    const value = (await secret.textContent()) ?? '';
    expect(value).toMatch(/^lg_live_/);
    await visible(
      page.getByLabel('Quick start').getByText(`curl -H "Authorization: Bearer ${value}" ${t.url}/api/v1/wallet`),
    );
    await audit(page);
    if (SCREENSHOTS) await page.screenshot({ path: 'docs/images/console-keys-quick-start.png' });
    // The snippet works as shown.
    expect((await t.request('GET', '/api/v1/wallet', { key: value })).status).toBe(200);

    await page.getByRole('button', { name: 'Revoke Laptop' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the key “Laptop”?' });
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await visible(page.getByRole('table', { name: 'API keys' }).getByText(/^Revoked/));
    expect(await page.getByTestId('new-key-secret').count()).toBe(0);
    expect(await page.getByText(value).count()).toBe(0);
  });

  it('offers the sole owner neither removal nor a role change of their own row; invitations are sent again, their link shown to copy', async () => {
    await page.goto('/members');
    await visible(page.getByRole('heading', { name: 'Members', level: 2 }));
    const members = page.getByRole('table', { name: 'Members' });
    await visible(members.getByText('Make another member owner first'));
    expect(await members.getByRole('button', { name: 'Remove mary@console.test' }).count()).toBe(0);
    expect(await members.getByLabel('Role of mary@console.test').isDisabled()).toBe(true);

    await page.getByLabel(/^Email/).fill('kathy@console.test');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const invitations = page.getByRole('table', { name: 'Pending invitations' });
    await visible(invitations.getByText('kathy@console.test'));
    // The link mailed is shown once to share another way; sending again makes a new one and stops the first.
    const shown = () => page.getByRole('status').locator('pre').textContent();
    await visible(page.getByRole('status').getByRole('button', { name: 'Copy the invitation link' }));
    const first = (await shown())!.trim();
    expect(first).toMatch(/\/invitations\/[\w-]{20,}$/);
    await invitations.getByRole('button', { name: 'Send the invitation of kathy@console.test again' }).click();
    await visible(page.getByRole('status').getByText(/The invitation of kathy@console\.test was sent again/));
    const second = (await shown())!.trim();
    expect(second).not.toBe(first);
    const preview = (link: string) => page.request.get(`/auth/invitations/${link.split('/').pop()}`);
    expect((await preview(first)).status()).toBe(404);
    const valid = await preview(second);
    expect(valid.status()).toBe(200);
    expect(await valid.json()).toMatchObject({ email: 'kathy@console.test', role: 'member' });
    await audit(page);
    if (SCREENSHOTS) await page.screenshot({ path: 'docs/images/console-members-invitations.png' });

    await invitations.getByRole('button', { name: 'Revoke the invitation of kathy@console.test' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the invitation of kathy@console.test?' });
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await invitations.getByText('kathy@console.test').waitFor({ state: 'detached' });
    expect(ui.offOrigin).toEqual([]);
  });
});
