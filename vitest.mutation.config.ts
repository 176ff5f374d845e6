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
  'test/billing/amounts.test.ts',
  'test/billing/ledger.test.ts',
  'test/billing/wallet.test.ts',
  'test/billing/credits.test.ts',
  'test/accounts/writes.test.ts',
  'test/accounts/lone-writes.test.ts',
  'test/runs/queue-slots.test.ts',
  'test/runs/start.test.ts',
  'test/runs/lifecycle.test.ts',
  'test/runs/control.test.ts',
  'test/runs/control-rules.test.ts',
  'test/runs/engine-execute.test.ts',
  'test/runs/engine-stops.test.ts',
  'test/runs/queue-order.test.ts',
  // starts bounded and quoted, their webhooks; run lists, batched rows and inputs
  'test/faces/rest/conformance-legacy.test.ts',
  'test/faces/graphql/dataloaders.test.ts',
  'test/faces/graphql/results.test.ts',
  // rate limit, allowances, idempotency
  'test/accounts/rate-limit.test.ts',
  'test/billing/allowances.test.ts',
  'test/accounts/idempotency-keys.test.ts',
  // access checks
  'test/faces/ownership.test.ts',
  'test/faces/rest/errors.test.ts',
  'test/webhooks/webhooks.test.ts',
  // CSV export
  'test/runs/exports-formats.test.ts',
  'test/runs/exports-csv-escaping.test.ts',
  // the outbound guard
  'test/net/guard-addresses.test.ts',
  'test/net/guard.test.ts',
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
