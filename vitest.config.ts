import { defineConfig } from 'vitest/config';

/**
 * Files that count or time what live processes do in the background (fetches, wake-ups, samples),
 * or stop and restart processes and databases under a deadline: they run after the others. Every
 * file runs one at a time: two at a time on a 2-core machine took 9 to 11 minutes instead of 14, but
 * failed one run in two, each time in another file that waits on a run under the other file's load
 * (docs/testing.md).
 */
const ALONE = [
  'test/workers/job-routing.test.ts',
  'test/http/metrics.test.ts',
  'test/runs/multi-process.test.ts',
  'test/billing/multi-process.test.ts',
  'test/runs/crash-safety.test.ts',
  'test/http/shutdown-graceful.test.ts',
  'test/http/outage-database-restart.test.ts',
  'test/events/resync-after-outage.test.ts',
  'test/sources/upstream-reattach.test.ts',
  'test/db/replica-reads.test.ts',
  'test/db/replica-downloads.test.ts',
];

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
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
