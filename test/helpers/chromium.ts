import { accessSync, constants } from 'node:fs';

/** The Chromium the browser suites drive: `CHROMIUM_PATH`, else Debian's package. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Why the browser suites cannot run, as one line that names the fix; undefined when `CHROMIUM` is an
 * executable file. `npm test` (test/helpers/checks.ts) stops on it before anything else runs.
 */
export function chromiumMissing(): string | undefined {
  try {
    accessSync(CHROMIUM, constants.X_OK);
    return undefined;
  } catch {
    return (
      `Chromium not found at ${CHROMIUM}: the console's browser tests need it. Install it ` +
      '(`sudo apt-get install chromium`, as .ci/run does) or set CHROMIUM_PATH to a Chromium or Chrome binary; ' +
      '`npm run test:fast` runs without it.'
    );
  }
}
