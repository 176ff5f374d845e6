import { defineConfig } from 'vitest/config';

/**
 * Files that count or time what live processes do in the background (fetches, wake-ups, samples,
 * heartbeats, a replica's replay, a stop's deadline): they run after the others, one at a time, in one
 * process of their own (docs/testing.md). Each stops all it started, as in `pairs`.
 */
const ALONE = [
  'test/workers/job-routing.test.ts',
  'test/http/metrics.test.ts',
  'test/runs/crash-safety.test.ts',
  'test/http/shutdown-graceful.test.ts',
  'test/http/outage-database-restart.test.ts',
  'test/sources/upstream-reattach.test.ts',
  'test/db/replica-reads.test.ts',
  'test/db/replica-downloads.test.ts',
];

/** Files that drive the console in Chromium (key-rights in one test, OAuth's consent page in two). */
const BROWSER = [
  'test/faces/console/serving.test.ts',
  'test/faces/console/flows.test.ts',
  'test/accounts/key-rights.test.ts',
  'test/faces/mcp/oauth.test.ts',
  'test/faces/console/destinations.test.ts',
  'test/faces/console/opt-out.test.ts',
  'test/faces/console/do-not-contact.test.ts',
  'test/faces/console/audit.test.ts',
  'test/faces/console/overview-mobile.test.ts',
  'test/faces/console/billing.test.ts',
  'test/faces/console/tool-form.test.ts',
  'test/faces/console/enrichment.test.ts',
];

/** Files that start child processes: the CLI, gateways and workers of their own, a fresh embedded Postgres. */
const PROCESSES = [
  'test/faces/cli/accounts.test.ts',
  'test/faces/cli/import.test.ts',
  'test/faces/mcp/stdio.test.ts',
  'test/faces/limits.test.ts',
  'test/faces/isolation.test.ts',
  'test/db/fresh-machine-embedded.test.ts',
  'test/sources/upstream-config.test.ts',
  'test/sources/upstream-apify.test.ts',
  'test/billing/credits.test.ts',
  'test/destinations/crash.test.ts',
  'test/privacy/drop-cycle.test.ts',
  'test/faces/cli/privacy.test.ts',
  'test/runs/multi-process.test.ts',
  'test/billing/multi-process.test.ts',
  'test/architecture/test-command.test.ts',
];

/**
 * `npm run test:fast` sets TEST_FAST=1: the edit-test loop leaves out the browser, child-process and
 * alone files, and runs the fuzz suites at 5 cases a route.
 */
const FAST = process.env.TEST_FAST === '1';

export default defineConfig({
  resolve: {
    // graphql 16 has no "exports" map: Node loads index.js, Vite would pick index.mjs. One copy only.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Several suites drive real child processes (gateways, workers, imports); a shared CI machine can be slow.
    testTimeout: 60_000,
    hookTimeout: 90_000,
    teardownTimeout: 30_000,
    env: FAST ? { FUZZ_CASES: process.env.FUZZ_CASES ?? '5' } : {},
    // Transformed modules kept in node_modules from one run to the next, keyed by their content:
    // `vitest --clearCache` empties it.
    experimental: { fsModuleCache: true },
    projects: [
      {
        extends: true,
        test: {
          // Two files at a time, in worker processes that keep the service's modules loaded from one
          // file to the next: no file reads module state another left (no mocks, no env changes, the
          // metrics registry only as differences), and each stops what it started.
          name: 'pairs',
          include: ['test/**/*.test.ts'],
          exclude: [...ALONE, ...(FAST ? [...BROWSER, ...PROCESSES] : [])],
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      ...(FAST
        ? []
        : [
            {
              extends: true as const,
              test: { name: 'alone', include: ALONE, isolate: false, maxWorkers: 1, sequence: { groupOrder: 1 } },
            },
          ]),
    ],
  },
});
