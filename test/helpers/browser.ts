import { existsSync } from 'node:fs';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { CONSOLE_DIST } from '../../src/console-routes/files.ts';
import { CHROMIUM, chromiumMissing } from './chromium.ts';
import { waitFor } from './wait.ts';

export { CHROMIUM };

/**
 * A real browser on the console: Debian's Chromium driven by playwright-core, headless, one per test
 * file. Every context refuses (and records) any request or socket leaving the gateway's origin, so a
 * test fails if the console loads anything from elsewhere (a CDN, a font, an analytics script);
 * `audit` runs axe on the page shown and fails on a serious or critical violation.
 */

export interface ConsoleBrowser {
  browser: Browser;
  /** A fresh browser profile (its own cookies) on the gateway at `origin`; `javaScriptEnabled` false turns scripts off. */
  newPage(options?: { javaScriptEnabled?: boolean }): Promise<Page>;
  /** Requests that tried to leave the origin, by any page of any context; a test expects none. */
  offOrigin: string[];
  close(): Promise<void>;
}

/**
 * `options.allow`: origins besides the gateway's a test lets the browser reach (a provider's local fake
 * its sign-in goes through); everything else is refused and recorded.
 */
export async function launchConsoleBrowser(
  baseUrl: string,
  options: { allow?: readonly string[] } = {},
): Promise<ConsoleBrowser> {
  if (!existsSync(`${CONSOLE_DIST}index.html`))
    throw new Error('The console is not built: run `npm run build:console` (npm install does it).');
  const missing = chromiumMissing();
  if (missing) throw new Error(missing);
  const origin = new URL(baseUrl).origin;
  const allowed = new Set([origin, ...(options.allow ?? []).map((url) => new URL(url).origin)]);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  const offOrigin: string[] = [];
  const contexts: BrowserContext[] = [];
  return {
    browser,
    offOrigin,
    async newPage(options = {}) {
      const context = await browser.newContext({
        baseURL: origin,
        acceptDownloads: true,
        viewport: { width: 1280, height: 900 },
        javaScriptEnabled: options.javaScriptEnabled ?? true,
      });
      contexts.push(context);
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (allowed.has(new URL(url).origin) || url.startsWith('data:') || url.startsWith('blob:'))
          return route.continue();
        offOrigin.push(url);
        return route.abort('blockedbyclient');
      });
      await context.routeWebSocket(
        (url) => url.host !== new URL(origin).host,
        (ws) => {
          offOrigin.push(ws.url());
          return ws.close();
        },
      );
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      return page;
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close();
    },
  };
}

/** The serious and critical axe violations of the page as shown (WCAG 2.1 A and AA rules), as readable lines. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
    .analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} — ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
    );
}

/** Fails when the page shown has a serious or critical accessibility violation. */
export async function audit(page: Page): Promise<void> {
  const violations = await accessibilityViolations(page);
  if (violations.length > 0)
    throw new Error(`accessibility violations on ${new URL(page.url()).pathname}:\n${violations.join('\n')}`);
}

/** Waits until `locator` is visible (a console page shows what the test asks for). */
export const visible = (locator: Locator, timeout = 30_000) => locator.first().waitFor({ state: 'visible', timeout });

/** Polls an attribute of `locator` until it satisfies `test`. */
export function attributeBecomes(
  locator: Locator,
  name: string,
  test: (value: string | null) => boolean,
  what: string,
  timeoutMs = 30_000,
) {
  return waitFor(() => locator.getAttribute(name), test, { timeoutMs, intervalMs: 50, what });
}
