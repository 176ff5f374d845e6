import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events/topics.ts';
import { getTool, TOOLS } from '../../src/tools/index.ts';
import { startNetworkedTestApp, type NetworkedTestApp } from '../helpers/network.ts';

/**
 * Runners that know a batch is their last, without asking their source again, mark it (`last` of
 * RunBatch), and the engine stores it with the run's end: one transaction and one announcement, the
 * end's. On the account's stream, the run's final counts come with its `finished` event only; a
 * runner that did not mark its last batch would announce them first in a progress event of its own.
 * Each case ends on a known last batch: a limit reached, every input looked up, or a short page.
 */

let t: NetworkedTestApp;
let key: string;
let accountId: string;

beforeAll(async () => {
  // The network tools' domains are unknown to the local DNS server: looked up, not found.
  t = await startNetworkedTestApp({ zone: {}, mailboxes: {} }, { smtpTimeoutMs: 500 });
  ({ apiKey: key, accountId } = await t.account({ creditsMicros: 1_000_000_000n }));
});
afterAll(() => t?.stop());

const one = async <T>(query: Promise<T[]>) => (await query)[0]!;

/** One input per runner that marks its last batch, each taking several batches on the small seed where it can. */
const CASES: Record<string, () => Promise<unknown>> = {
  maps: async () => ({ searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 120 }),
  'lead-scraper': async () => ({ url: 'https://app.apollo.io/#/people?personLocations[]=United%20States', count: 500 }),
  'store-leads': async () => ({ totalLeads: 150, emails: false }),
  'home-services': async () => ({ keyword: 'plumbing', maxItems: 2 }),
  'realty-agents': async () => ({ location: 'Denver, CO', searchLimit: 10 }),
  'deal-finder': async () => {
    const { city, state } = await one(
      t.app.core.sql`select city, state from property group by city, state order by count(*) desc limit 1`,
    );
    return { location: `${city}, ${state}`, minDiscountPercent: 0, maxItems: 40 };
  },
  'criminal-records': async () => {
    const { first, last } = await one(
      t.app.core.sql`select first_name as first, last_name as last from criminal_record order by id limit 1`,
    );
    return { name: `${first} ${last}` };
  },
  'people-finder': async () => {
    const { first, last, state } = await one(
      t.app.core
        .sql`select first_name as first, last_name as last, state from person where state is not null order by id limit 1`,
    );
    return { name: `${first} ${last}`, state };
  },
  'property-lookup': async () => ({
    addresses: (
      await t.app.core
        .sql`select street || ', ' || city || ', ' || state || ' ' || zip as a from property order by id limit 250`
    ).map((r) => r.a as string),
  }),
  'mobile-finder': async () => ({
    inputs: (await t.app.core.sql`select email from person where email is not null order by id limit 30`).map(
      (r) => r.email as string,
    ),
  }),
  'email-validator': async () => ({ emails: ['a@one.test', 'b@two.test', 'c@three.test'] }),
  'email-finder': async () => ({
    contacts: [
      { first_name: 'Ada', last_name: 'One', domain: 'one.test' },
      { first_name: 'Bob', last_name: 'Two', domain: 'two.test' },
    ],
  }),
  'website-finder': async () => ({ domains: ['one.test', 'two.test'], jobTitle: 'CEO' }),
};

describe('a runner’s last batch', () => {
  it('is covered for every tool of the cases', () => {
    for (const name of Object.keys(CASES))
      expect(
        TOOLS.some((tool) => tool.name === name),
        name,
      ).toBe(true);
  });

  it.each(Object.keys(CASES))(
    '%s: comes with the run’s end, in its finished event, with no progress event of its own',
    async (name) => {
      const events = await t.app.core.events.subscribe('runEvents', accountId);
      const heard: RunEvent[] = [];
      try {
        const started = await t.request('POST', getTool(name).rest.path, { key, body: await CASES[name]!() });
        expect(started.status, started.text).toBe(200);
        const runId = started.body.runId as string;
        for await (const event of events) {
          if (event.run.id !== runId) continue;
          heard.push(event);
          if (event.kind === 'finished') break;
        }
      } finally {
        await events.return();
      }
      const end = heard.at(-1)!;
      expect(end.run.status, end.run.statusMessage).toBe('SUCCEEDED');
      // The run stored rows (or handled its input), so a last batch of its own would have been announced.
      expect(end.run.itemCount + end.run.handled).toBeGreaterThan(0);
      const progress = heard.filter((event) => event.kind === 'progress');
      const announcedEnd = progress.filter(
        (event) => event.run.itemCount === end.run.itemCount && event.run.handled === end.run.handled,
      );
      expect(announcedEnd.map((event) => event.run.statusMessage)).toEqual([]);
    },
  );
});
