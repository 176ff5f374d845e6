// @ts-check
/**
 * Mutation testing of the modules that hold the service's promises (docs/testing.md).
 * `npm run mutation` runs them all; one module: `MUTATION_TESTS=<its test files> npx stryker run --mutate <file>`
 * (not `--testFiles`: Stryker 9.6.1 then activates static mutants too late and reports them as survivors).
 * Static mutants (module-level constants, run only while a file loads) need every selected test run
 * again with a fresh environment; they are left out unless MUTATION_STATIC=1, which per-module runs of
 * modules with fast tests set.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: {
    configFile: 'vitest.mutation.config.ts',
    // The tests import the services through the app and helpers; run the configured files, not only "related" ones.
    related: false,
  },
  coverageAnalysis: 'perTest',
  ignoreStatic: process.env.MUTATION_STATIC !== '1',
  mutate: [
    // money and ledger
    'src/billing/money.ts',
    'src/billing/wallet.ts',
    'src/billing/hold.ts',
    // holds and the run queue
    'src/runs/queue.ts',
    'src/runs/engine/execute.ts',
    'src/runs/engine/batches.ts',
    'src/runs/engine/finish.ts',
    'src/runs/engine/stops.ts',
    'src/runs/start.ts',
    'src/runs/read.ts',
    'src/accounts/writes.ts',
    // rate limit and allowances
    'src/accounts/rate-limit.ts',
    'src/billing/allowances.ts',
    // idempotency
    'src/accounts/idempotency.ts',
    // access checks: cancel (runs/engine/stops.ts, above), status, waits and item streams of a run (not the
    // subscriptions below them), and a webhook's registration, deletion and delivery log (not the delivery worker)
    'src/runs/follow.ts:1-135',
    'src/webhooks/subscriptions.ts:43-159',
    'src/webhooks/deliveries.ts:74-126',
    // CSV export
    'src/runs/exports.ts',
    // the outbound guard
    'src/net/guard.ts',
    'src/net/address.ts',
  ],
  ignorePatterns: ['.data', 'bench/results', 'coverage', 'reports', '*.log', '.stryker-tmp*'],
  // A test runner is a vitest instance with its own embedded Postgres; two fit this 2-core machine.
  concurrency: 2,
  timeoutMS: 15_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 20,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  cleanTempDir: 'always',
};
