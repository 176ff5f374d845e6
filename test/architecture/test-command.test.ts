import { describe, expect, it } from 'vitest';
import { spawnService } from '../helpers/process.ts';

/**
 * `npm test` needs Chromium for the console's browser suites. Without it the run stops before anything
 * else, in one line that names the fix, and a browser suite run alone fails with the same line rather
 * than playwright's launch error.
 */
const MISSING = '/nonexistent/chromium';
const LINE =
  `Chromium not found at ${MISSING}: the console's browser tests need it. Install it ` +
  '(`sudo apt-get install chromium`, as .ci/run does) or set CHROMIUM_PATH to a Chromium or Chrome binary; ' +
  '`npm run test:fast` runs without it.';

describe('the test command without Chromium', () => {
  it('stops at once, before lint and the type checks, with one line naming the fix', async () => {
    const started = Date.now();
    const checks = spawnService(['--import', 'tsx', 'test/helpers/checks.ts'], {
      CHROMIUM_PATH: MISSING,
      TEST_FAST: undefined,
    });
    expect(await checks.exited()).toBe(1);
    expect(checks.stderr()).toBe(`${LINE}\n`);
    expect(checks.stdout()).toBe('');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('makes a browser suite fail with the same line', async () => {
    const launch = spawnService(
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        "import { launchConsoleBrowser } from './test/helpers/browser.ts';\n" +
          "await launchConsoleBrowser('http://127.0.0.1:9').catch((err) => { console.error(err.message); process.exit(3); });",
      ],
      { CHROMIUM_PATH: MISSING },
    );
    expect(await launch.exited()).toBe(3);
    expect(launch.stderr()).toBe(`${LINE}\n`);
  });
});
