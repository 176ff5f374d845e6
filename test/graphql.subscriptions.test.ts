import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { DENVER_DENTISTS, startTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
let key: string;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key } = await t.account());
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
});
afterAll(() => t?.stop());

function client(authorization: string | undefined, onClose?: (code: number) => void): Client {
  const c = createClient({
    url: `${t.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: authorization ? { authorization } : {},
    retryAttempts: 0,
    lazy: false,
    onNonLazyError: () => {},
    on: { closed: (event) => onClose?.((event as { code: number }).code) },
  });
  clients.push(c);
  return c;
}

const PROGRESS = 'subscription($id: ID!) { runProgress(id: $id) { id status handled requested statusMessage outputUrl } }';

interface Progress {
  id: string;
  status: string;
  handled: number;
  requested: number;
  statusMessage: string;
  outputUrl: string | null;
}

/** Collects every event of a subscription until it completes or errors. */
function collect(c: Client, query: string, variables: Record<string, unknown>) {
  const events: Progress[] = [];
  const errors: unknown[] = [];
  const done = new Promise<void>((resolve) => {
    c.subscribe<{ runProgress: Progress }>(
      { query, variables },
      {
        next: (result) => {
          if (result.errors) errors.push(...result.errors);
          if (result.data) events.push(result.data.runProgress);
        },
        error: (err) => {
          errors.push(err);
          resolve();
        },
        complete: resolve,
      },
    );
  });
  return { events, errors, done };
}

describe('runProgress over graphql-ws', () => {
  it('streams progress and the final SUCCEEDED, then completes', async () => {
    const c = client(`Bearer ${key}`);
    // Many single-row pages make many progress events.
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist', 'plumber', 'bakery'], maxCrawledPlacesPerSearch: 120 },
    });
    const runId = started.body.runId;
    const sub = collect(c, PROGRESS, { id: runId });
    await sub.done;
    expect(sub.errors).toEqual([]);
    const last = sub.events.at(-1)!;
    expect(last).toMatchObject({ id: runId, status: 'SUCCEEDED', outputUrl: `${t.url}/api/downloads/${runId}` });
    expect(last.handled).toBeGreaterThan(100);
    // Counts never go backwards, and only the last event is terminal.
    for (let i = 1; i < sub.events.length; i++) expect(sub.events[i]!.handled).toBeGreaterThanOrEqual(sub.events[i - 1]!.handled);
    expect(sub.events.filter((e) => e.status === 'SUCCEEDED')).toHaveLength(1);
    const rest = await t.request('GET', `/api/v1/scrape/status/${runId}`, { key });
    expect(rest.body.handled).toBe(last.handled);
  });

  it('sees intermediate progress when subscribed before the worker starts', async () => {
    await t.app.core.sql`select 1`; // warm pool
    const c = client(key); // a bare key is accepted too
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist', 'plumber', 'bakery', 'florist', 'gym'], maxCrawledPlacesPerSearch: 200 },
    });
    const sub = collect(c, PROGRESS, { id: started.body.runId });
    await sub.done;
    expect(sub.errors).toEqual([]);
    const running = sub.events.filter((e) => e.status === 'RUNNING' && e.handled > 0);
    expect(running.length).toBeGreaterThan(0);
    expect(sub.events.at(-1)!.status).toBe('SUCCEEDED');
  });

  it('shares one execution among identical subscriptions, each subscriber still getting the whole stream', async () => {
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist', 'plumber', 'bakery', 'florist'], maxCrawledPlacesPerSearch: 150 },
    });
    const runId = started.body.runId;
    const subs = Array.from({ length: 5 }, () => collect(client(`Bearer ${key}`), PROGRESS, { id: runId }));
    // One more that leaves at once must not end the others' stream.
    const leaver = client(`Bearer ${key}`);
    const stop = leaver.subscribe({ query: PROGRESS, variables: { id: runId } }, { next: () => {}, error: () => {}, complete: () => {} });
    stop();
    await Promise.all(subs.map((sub) => sub.done));
    for (const sub of subs) {
      expect(sub.errors).toEqual([]);
      expect(sub.events.at(-1)).toMatchObject({ id: runId, status: 'SUCCEEDED' });
      expect(sub.events.filter((e) => e.status === 'SUCCEEDED')).toHaveLength(1);
      for (let i = 1; i < sub.events.length; i++) expect(sub.events[i]!.handled).toBeGreaterThanOrEqual(sub.events[i - 1]!.handled);
    }
  });

  it('emits the final state at once and completes for a finished run', async () => {
    const started = await t.request('POST', '/api/v1/scrape/maps', { key, body: DENVER_DENTISTS });
    const finished = await t.waitForRun(key, started.body.runId);
    const sub = collect(client(`Bearer ${key}`), PROGRESS, { id: started.body.runId });
    await sub.done;
    expect(sub.events).toHaveLength(1);
    expect(sub.events[0]).toMatchObject({ status: 'SUCCEEDED', handled: finished.handled });
  });

  it('answers not_found for another account’s run and for an unknown one', async () => {
    const other = await t.account();
    const started = await t.request('POST', '/api/v1/scrape/maps', { key: other.apiKey, body: DENVER_DENTISTS });
    for (const id of [started.body.runId, 'doesNotExist12345']) {
      const sub = collect(client(`Bearer ${key}`), PROGRESS, { id });
      await sub.done;
      expect(sub.events).toEqual([]);
      expect(sub.errors).toHaveLength(1);
      expect(JSON.stringify(sub.errors[0])).toContain('not_found');
    }
  });

  it('refuses a connection without a valid key', async () => {
    for (const auth of [undefined, `Bearer lg_live_${'B'.repeat(32)}`]) {
      let closeCode = 0;
      const sub = collect(client(auth, (code) => (closeCode = code)), PROGRESS, { id: 'x' });
      await sub.done;
      expect(sub.events).toEqual([]);
      expect(closeCode).toBe(4403);
    }
  });

  it('serves queries over the socket with the same context', async () => {
    const c = client(`Bearer ${key}`);
    const result = await new Promise<any>((resolve, reject) =>
      c.subscribe({ query: '{ viewer { id plan } }' }, { next: resolve, error: reject, complete: () => {} }),
    );
    expect(result.data.viewer.plan).toBe('scale');
  });
});
