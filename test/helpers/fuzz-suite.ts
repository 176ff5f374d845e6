import { afterAll, beforeAll } from 'vitest';
import { startTestApp, type TestApp } from './app.ts';
import { createLane, FUZZ_CASES, FUZZ_LANES, FUZZ_SEED, LanePool, Statuses, type Lane } from './fuzz.ts';

/** The gateway, lanes and tally of one fuzz suite: set up before its tests, reported and stopped after them. */
export interface FuzzSuite {
  readonly t: TestApp;
  readonly lanes: Lane[];
  readonly pool: LanePool;
  readonly statuses: Statuses;
}

/** Registers the set-up of a fuzz suite of `face` (REST, GraphQL, MCP), whose cases are counted per `unit`. */
export function fuzzSuite(face: string, unit: string): FuzzSuite {
  const suite = { statuses: new Statuses() } as { t: TestApp; lanes: Lane[]; pool: LanePool; statuses: Statuses };
  beforeAll(async () => {
    suite.t = await startTestApp({ worker: false });
    suite.lanes = await Promise.all(Array.from({ length: FUZZ_LANES }, () => createLane(suite.t)));
    suite.pool = new LanePool(suite.lanes);
    console.log(
      `${face} fuzz: seed ${FUZZ_SEED} (replay with FUZZ_SEED=${FUZZ_SEED}), ${FUZZ_CASES} cases per ${unit}`,
    );
  });
  afterAll(async () => {
    const summary = suite.statuses.summary(`${face} answers`);
    if (summary) console.log(summary);
    await suite.t?.stop();
  });
  return suite;
}
