import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../src/runs/engine/index.ts';
import { getTool, TOOLS } from '../../src/tools/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { holdingSources } from '../helpers/sources.ts';

/**
 * Every tool of the spec's cancellable list, cancelled mid-run: ABORTED within the batch in hand,
 * the rows stored so far downloadable and billed, nothing more. The engine runs in this process
 * over sources that hold back the next read once the run has stored rows, so the cancel lands
 * between two batches of a real run.
 */

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account({ creditsMicros: 1_000_000_000n }));
});
afterAll(() => t?.stop());

const itemCount = async (runId: string) =>
  (await t.app.core.sql`select item_count from run where id = ${runId}`)[0]!.item_count as number;

/** The catalog sources, each read held back (until `release`) once the run has stored a row. */
const holdingRun = (runId: string) =>
  holdingSources(t.app.core.sources, async () => ((await itemCount(runId)) > 0 ? runId : undefined));

const addresses = async (n: number) =>
  (
    await t.app.core
      .sql`select street || ', ' || city || ', ' || state || ' ' || zip as a from property order by id limit ${n}`
  ).map((r) => r.a as string);

/** One input per cancellable catalog tool, big enough on the small seed to take several reads. */
const CASES: Record<string, () => Promise<unknown>> = {
  maps: async () => ({ searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 120 }),
  'store-leads': async () => ({ totalLeads: 1_200, emails: false }),
  'business-for-sale': async () => ({ startUrls: ['https://www.example.com/businesses-for-sale'], maxItems: 400 }),
  'commercial-property': async () => ({
    startUrls: ['https://www.example.com/properties', 'https://www.example.com/properties/for-lease'],
  }),
  'local-reviews': async () => ({
    searchTerms: ['dentist', 'plumber'],
    locations: ['Denver, CO', 'Austin, TX'],
    searchLimit: 50,
  }),
  'property-lookup': async () => ({ addresses: await addresses(250) }),
  'home-services': async () => ({ keyword: 'plumbing', maxItems: 0 }),
  'realty-agents': async () => ({ location: 'Denver, CO', searchLimit: 500 }),
};

describe('cancel, on each cancellable tool', () => {
  it('covers every catalog tool of the cancellable list', () => {
    const network = new Set(['website-finder']);
    const cancellable = TOOLS.filter((tool) => tool.cancellable && !tool.linkedOnly && !network.has(tool.name)).map(
      (tool) => tool.name,
    );
    expect(Object.keys(CASES).sort()).toEqual(cancellable.sort());
  });

  it.each(Object.keys(CASES))(
    '%s: ABORTED with the rows stored before the cancel, downloadable and billed for those only',
    async (name) => {
      const tool = getTool(name);
      const started = await t.request('POST', tool.rest.path, { key, body: await CASES[name]!() });
      expect(started.status, started.text).toBe(200);
      const runId = started.body.runId as string;
      const gate = holdingRun(runId);
      const execution = executeRun({ ...t.app.core, sources: gate.sources }, runId);
      const outcome = await Promise.race([
        gate.held().then(() => 'held' as const),
        execution.then(() => 'finished' as const),
      ]);
      expect(outcome, 'the run reads again after storing rows (input too small to cancel mid-run)').toBe('held');

      const cancel = await t.request('POST', `/api/v1/scrape/cancel/${runId}`, { key });
      expect(cancel.body).toMatchObject({ runId, status: 'ABORTING' });
      gate.release();
      await execution;

      const status = await t.request('GET', `/api/v1/scrape/status/${runId}`, { key });
      expect(status.body.status).toBe('ABORTED');
      const kept = await itemCount(runId);
      expect(kept).toBeGreaterThan(0);
      expect(status.body.statusMessage).toMatch(/^Cancelled: \d+ \w[\w ]* kept$/);

      const results = await t.request('GET', `/api/downloads/${runId}?format=json`, { key });
      expect(results.status).toBe(200);
      expect(results.body).toHaveLength(kept);
      const input = tool.input.parse((await t.app.core.sql`select input from run where id = ${runId}`)[0]!.input);
      const expected = (results.body as Record<string, unknown>[]).reduce(
        (sum, row) => sum + tool.price.rowCost(row, input),
        0n,
      );
      const [run] = await t.app.core.sql`select charged_micros from run where id = ${runId}`;
      expect(BigInt(run!.charged_micros)).toBe(expected);
    },
  );
});
