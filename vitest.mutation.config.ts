import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The test files that exercise the service's promises (money, holds and the run queue, limits,
 * idempotency, access checks, CSV export, the outbound guard): what `npm run mutation` runs against
 * each mutant. Named one by one, so a new suite joins only when it is added here. Suites built around child processes (gateways, workers, the CLI) are left out: a
 * mutant is active only in the test process, so they could not kill it and would only make every
 * run slower.
 */
export const MUTATION_TESTS = [
  // money and ledger, holds and the run queue
  'test/money.amounts.test.ts',
  'test/money.ledger.test.ts',
  'test/money.wallet.test.ts',
  'test/money.credits.test.ts',
  'test/account-writes.test.ts',
  'test/account-writes.lone-writes.test.ts',
  'test/runs.queue-slots.test.ts',
  'test/runs.start.test.ts',
  'test/runs.lifecycle.test.ts',
  'test/runs.control.test.ts',
  'test/runs.control-rules.test.ts',
  'test/run-engine.execute.test.ts',
  'test/run-engine.stops.test.ts',
  // rate limit, allowances, idempotency
  'test/limits.rate-limit.test.ts',
  'test/limits.allowances.test.ts',
  'test/idempotency.keys.test.ts',
  // access checks
  'test/access.ownership.test.ts',
  'test/rest.errors.test.ts',
  'test/webhooks.test.ts',
  // CSV export
  'test/exports.formats.test.ts',
  'test/exports.csv-escaping.test.ts',
  // the outbound guard
  'test/net.guard-addresses.test.ts',
  'test/net.guard.test.ts',
];

// Not mergeConfig: it would append this include list to the base one instead of replacing it. Nor the
// base's projects: these suites run as one project, with the runner's own settings.
const { projects: _projects, ...test } = base.test ?? {};

export default defineConfig({
  ...base,
  test: {
    ...test,
    // MUTATION_TESTS=test/a.test.ts,test/b.test.ts narrows a run to one module's suites (docs/testing.md).
    include: process.env.MUTATION_TESTS ? process.env.MUTATION_TESTS.split(',') : MUTATION_TESTS,
  },
});
