import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { print } from 'graphql';
import type { FormattedExecutionResult } from 'graphql-ws';
import type { ResultOf } from '@graphql-typed-document-node/core';
import { appWithAccount, DENVER_DENTISTS, type TestApp } from '../../helpers/app.ts';
import { runGates, type RunGates } from '../../helpers/sources.ts';
import { closeCode, collect, disposeClients, wsClient } from '../../helpers/ws.ts';
import { graphql } from '../../helpers/gql/index.ts';

let t: TestApp;
let key: string;
let gates: RunGates;

beforeAll(async () => {
  ({ t, key } = await appWithAccount());
  gates = runGates(t.app.core);
});
afterEach(async () => {
  gates.reset();
  await disposeClients();
});
afterAll(() => t?.stop());

/** Runs started from now on wait before each page of their place search until the test releases them. */
const holdRuns = () => gates.hold();

const Progress = graphql(`
  subscription SubscriptionsProgress($id: ID!) { runProgress(id: $id) { id status handled requested statusMessage outputUrl } }
`);
const Viewer = graphql(`query SubscriptionsViewer { viewer { id plan } }`);

const follow = (id: string, client = wsClient(t.url, key)) => collect(client, Progress, { id }, 'runProgress');

describe('runProgress over graphql-ws', () => {
  it('streams progress and the final SUCCEEDED, then completes', async () => {
    const runs = holdRuns();
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist', 'plumber', 'bakery'], maxCrawledPlacesPerSearch: 120 },
    });
    const runId = started.body.runId;
    const sub = follow(runId);
    // The run as it is comes first: the subscription is in place before any work is let through.
    expect(await sub.first).toMatchObject({ id: runId, status: 'RUNNING', handled: 0 });
    runs.releaseAll();
    const events = await sub.done;
    const last = events.at(-1)!;
    expect(last).toMatchObject({ id: runId, status: 'SUCCEEDED', outputUrl: `${t.url}/api/downloads/${runId}` });
    expect(last.handled).toBeGreaterThan(100);
    // Counts never go backwards, and only the last event is terminal.
    for (let i = 1; i < events.length; i++) expect(events[i]!.handled).toBeGreaterThanOrEqual(events[i - 1]!.handled);
    expect(events.filter((e) => e.status === 'SUCCEEDED')).toHaveLength(1);
    const rest = await t.request('GET', `/api/v1/scrape/status/${runId}`, { key });
    expect(rest.body.handled).toBe(last.handled);
  });

  it('sees intermediate progress when subscribed before the worker starts', async () => {
    const runs = holdRuns();
    const c = wsClient(t.url, undefined, { connectionParams: { authorization: key } }); // a bare key is accepted too
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist', 'plumber', 'bakery', 'florist', 'gym'], maxCrawledPlacesPerSearch: 200 },
    });
    const sub = follow(started.body.runId, c);
    expect(await sub.first).toMatchObject({ status: 'RUNNING', handled: 0 });
    runs.releaseAll();
    const events = await sub.done;
    const running = events.filter((e) => e.status === 'RUNNING' && e.handled > 0);
    expect(running.length).toBeGreaterThan(0);
    expect(events.at(-1)!.status).toBe('SUCCEEDED');
  });

  it('shares one execution among identical subscriptions, each subscriber still getting the whole stream', async () => {
    const runs = holdRuns();
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist', 'plumber', 'bakery', 'florist'], maxCrawledPlacesPerSearch: 150 },
    });
    const runId = started.body.runId;
    const subs = Array.from({ length: 5 }, () => follow(runId));
    // One more that leaves at once must not end the others' stream.
    const leaver = wsClient(t.url, key);
    const stop = leaver.subscribe(
      { query: print(Progress), variables: { id: runId } },
      { next: () => {}, error: () => {}, complete: () => {} },
    );
    stop();
    for (const sub of subs) expect(await sub.first).toMatchObject({ id: runId, status: 'RUNNING', handled: 0 });
    runs.releaseAll();
    for (const sub of subs) {
      const events = await sub.done;
      expect(events.at(-1)).toMatchObject({ id: runId, status: 'SUCCEEDED' });
      expect(events.filter((e) => e.status === 'SUCCEEDED')).toHaveLength(1);
      expect(events.some((e) => e.status === 'RUNNING' && e.handled > 0)).toBe(true);
      for (let i = 1; i < events.length; i++) expect(events[i]!.handled).toBeGreaterThanOrEqual(events[i - 1]!.handled);
    }
  });

  it('emits the final state at once and completes for a finished run', async () => {
    const started = await t.request('POST', '/api/v1/scrape/maps', { key, body: DENVER_DENTISTS });
    const finished = await t.waitForRun(key, started.body.runId);
    const events = await follow(started.body.runId).done;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status: 'SUCCEEDED', handled: finished.handled });
  });

  it('answers NOT_FOUND for another account’s run and for an unknown one', async () => {
    const other = await t.account();
    const started = await t.request('POST', '/api/v1/scrape/maps', { key: other.apiKey, body: DENVER_DENTISTS });
    for (const id of [started.body.runId, 'doesNotExist12345']) {
      const sub = follow(id);
      await expect(sub.done).rejects.toThrow(/"code":"NOT_FOUND"/);
      expect(sub.items).toEqual([]);
    }
  });

  it('refuses a connection without a valid key', async () => {
    for (const key of [undefined, `lg_live_${'B'.repeat(32)}`]) {
      const c = wsClient(t.url, key, { lazy: false, onNonLazyError: () => {} });
      const closed = closeCode(c);
      const sub = follow('x', c);
      await expect(sub.done).rejects.toBeDefined();
      expect(sub.items).toEqual([]);
      expect(await closed).toBe(4401);
    }
  });

  it('serves queries over the socket with the same context', async () => {
    const c = wsClient(t.url, key);
    const result = await new Promise<FormattedExecutionResult<ResultOf<typeof Viewer>, unknown>>((resolve, reject) =>
      c.subscribe<ResultOf<typeof Viewer>>(
        { query: print(Viewer) },
        { next: resolve, error: reject, complete: () => {} },
      ),
    );
    expect(result.data!.viewer.plan).toBe('SCALE');
  });
});
