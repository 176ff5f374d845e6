import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { ROOT } from '../../helpers/process.ts';

/**
 * The README's quick tour runs against the demo catalog (`npm start` seeds the small scale, as the
 * test template is): each step sends the body the README shows and gets what its comment says.
 */
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** A request body exactly as the README sends it (`-d '…'`), so that the two cannot drift apart. */
function shown<T extends object>(body: T): T {
  expect(README).toContain(`'${JSON.stringify(body)}'`);
  return body;
}

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key } = await t.account());
});
afterAll(() => t?.stop());

describe("the README's quick tour on the demo catalog", () => {
  it('finds the 18 dentists in Denver its status line shows', async () => {
    const body = shown({ searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 20 });
    const run = await t.runTool(key, '/api/v1/scrape/maps', body);
    expect(run.status).toMatchObject({ status: 'SUCCEEDED', statusMessage: 'Finished: 18 businesses', handled: 18 });
    expect(README).toContain('"statusMessage":"Finished: 18 businesses"');
  });

  it('cancels its broad search right after the start, keeping what was stored', async () => {
    const body = shown({
      searchStringsArray: ['coffee shop', 'florist', 'hair salon', 'bakery', 'gym', 'plumber'],
      maxCrawledPlacesPerSearch: 1000,
    });
    const start = await t.request('POST', '/api/v1/scrape/maps', { key, body });
    const cancel = await t.request('POST', `/api/v1/scrape/cancel/${start.body.runId}`, { key });
    expect([cancel.status, cancel.body.status]).toEqual([200, expect.stringMatching(/^ABORT(ING|ED)$/)]);
    const ended = await t.waitForRun(key, start.body.runId);
    expect(ended).toMatchObject({ status: 'ABORTED', stoppedReason: 'cancelled', complete: false });
    expect(ended.handled).toBeLessThan(1_700);
  });

  it('gets the 10 rows a short-route limit of 10 asks for', async () => {
    const body = shown({ query: 'plumbers in Chicago, IL', limit: 10 });
    const start = await t.request('POST', '/api/v1/maps/run', { key, body });
    await t.waitForRun(key, start.body.runId);
    const run = await t.request('GET', `/api/v1/runs/${start.body.runId}`, { key });
    expect(run.body).toEqual({ status: 'SUCCEEDED', handled: 10 });
  });

  it('enriches the two demo rows it names and reports the third not found', async () => {
    const body = shown({
      rows: [
        { domain: 'northsystemsdigital.com' },
        { email: 'mohammed.sato@crestmanufacturing.co' },
        { email: 'someone@example.com' },
      ],
    });
    const res = await t.request('POST', '/api/v1/enrich', { key, body });
    expect(res.body.rows.map((r: { matched_by: string | null }) => r.matched_by)).toEqual(['domain', 'email', null]);
    expect(res.body.summary).toMatchObject({ total: 3, matched: 2, not_found: 1 });
  });
});
