import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, CONSOLE_DIST, CONSOLE_ROUTES } from '../../../src/console-routes/files.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { audit, launchConsoleBrowser, visible, type ConsoleBrowser } from '../../helpers/browser.ts';

/**
 * The console as the gateway serves it: its page at each of its routes under its own strict policy,
 * hashed files cached for a year, the API's routes and answers unchanged, the first load's script
 * under 250 KB gzipped; in the browser, the page runs under that policy without a violation and
 * loads nothing from elsewhere.
 */

let t: TestApp;
let ui: ConsoleBrowser;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ui = await launchConsoleBrowser(t.url);
});
afterAll(async () => {
  await ui?.close();
  await t?.stop();
});

/** The scripts the page loads before anything else: its module entry and the chunks it preloads. */
function initialScripts(html: string): string[] {
  const entry = [...html.matchAll(/<script type="module"[^>]* src="([^"]+)"/g)].map((m) => m[1]!);
  const preloaded = [...html.matchAll(/<link rel="modulepreload"[^>]* href="([^"]+)"/g)].map((m) => m[1]!);
  return [...entry, ...preloaded];
}

describe('serving', () => {
  it('answers the page at every console route with the console policy, and leaves the API alone', async () => {
    for (const route of CONSOLE_ROUTES) {
      const path = route.replace(':token', 'tok').replace(':tool', 'maps').replace(':runId', 'run_1');
      const res = await t.request('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy'), path).toBe(CONSOLE_CSP);
      expect(res.headers.get('cache-control'), path).toBe('no-cache');
      expect(res.text).toContain('<div id="root"></div>');
      // No inline script: every script is a file of the gateway's.
      expect(res.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    }
    const api = await t.request('GET', '/api/v1/wallet');
    expect(api.status).toBe(401);
    expect(api.body.error.code).toBe('unauthenticated');
    expect(api.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
    const unknown = await t.request('GET', '/no-such-page');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/json/);
  });

  it('serves the hashed files for a year, under the console policy; an unknown file is a 404', async () => {
    const html = readFileSync(`${CONSOLE_DIST}index.html`, 'utf8');
    const [script] = initialScripts(html);
    const res = await fetch(`${t.url}${script}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    // Read to the end: a response left unread holds its connection open, and the gateway's stop waits for it.
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect((await fetch(`${t.url}/assets/missing-00000000.js`)).status).toBe(404);
  });

  it('keeps the first load’s script under 250 KB gzipped', () => {
    const html = readFileSync(`${CONSOLE_DIST}index.html`, 'utf8');
    const scripts = initialScripts(html);
    expect(scripts.length).toBeGreaterThan(0);
    const gzipped = scripts.reduce(
      (sum, src) => sum + gzipSync(readFileSync(`${CONSOLE_DIST}${src.slice(1)}`), { level: 9 }).length,
      0,
    );
    console.log(`console: initial JavaScript ${(gzipped / 1024).toFixed(1)} KB gzipped in ${scripts.length} file(s)`);
    expect(gzipped).toBeLessThanOrEqual(250 * 1024);
  });
});

describe('in the browser', () => {
  it('runs under the policy without a violation, loads nothing from elsewhere, and its sign-in page passes axe', async () => {
    const page = await ui.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('pageerror', (err) => violations.push(err.message));
    // Signed out, every console route leads to sign-in.
    await page.goto('/runs');
    await visible(page.getByRole('heading', { name: 'Sign in' }));
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await visible(page.getByLabel('Email'));
    await audit(page);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await visible(page.getByRole('heading', { name: 'Create your account' }));
    await audit(page);
    expect(violations).toEqual([]);
    expect(ui.offOrigin).toEqual([]);
  });
});
