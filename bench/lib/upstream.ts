/**
 * `upstream`: the maps scraper on an Apify actor (docs/upstream.md), against the local fake of the API
 * (test/helpers/fake-apify.ts) in a child process of its own, so the fake's CPU is not the gateway's.
 * 1. Latency: items pushed to the upstream dataset one at a time, timed to their arrival at a
 *    `runItems` subscriber (graphql-ws) of the run. Goal: p95 ≤ 2 s.
 * 2. CPU: the gateway process's CPU (user + system) to read, map, store and publish 10,000 upstream
 *    items, against storing the same number of rows from the catalog (maps runs over the seeded
 *    catalog, scaled to 10,000 rows). Goal: ≤ 1.5×.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { pad, percentile, request, round, startGateway, verdict, type Gateway, type Suite } from './harness.ts';

const OPTIONS = { latencyItems: 300, intervalMs: 10, cpuItems: 10_000, cpuRounds: 3 };
const GOAL_P95_MS = 2_000;
const GOAL_CPU_RATIO = 1.5;
const ACTOR = 'compass~crawler-google-places';

export interface UpstreamResult {
  options: typeof OPTIONS;
  latency: { p50: number; p95: number; max: number; items: number };
  cpu: { upstreamMsPer10k: number; catalogMsPer10k: number; ratio: number; catalogRows: number };
}

type Reply = { id: number; value?: unknown; error?: string };

/** The fake API in a child process, driven over IPC. */
function startFakeProcess(): Promise<{
  child: ChildProcess;
  call<T>(cmd: string, args?: Record<string, unknown>): Promise<T>;
  url: string;
  token: string;
}> {
  const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-fake-apify-'));
  const script = path.join(dir, 'fake.mjs');
  const helper = new URL('../../test/helpers/fake-apify.ts', import.meta.url).href;
  writeFileSync(
    script,
    `
const { startFakeApify } = await import(${JSON.stringify(helper)});
const fake = await startFakeApify({ actors: [${JSON.stringify(ACTOR)}] });
const place = (n) => ({ title: 'Place ' + n, categoryName: 'Dentist', address: n + ' Main St, Denver, CO 80202', street: n + ' Main St', city: 'Denver', state: 'Colorado', postalCode: '80202', countryCode: 'US', phone: '+1 303-555-0100', website: 'https://place' + n + '.example.com/', totalScore: 4.5, reviewsCount: n % 500, openingHours: [{ day: 'Monday', hours: '9 AM to 5 PM' }], location: { lat: 39.7, lng: -104.9 }, placeId: 'ChIJbench' + n, url: 'https://www.google.com/maps/search/?api=1&query=x&query_place_id=ChIJbench' + n, searchString: 'dentist' });
let next = fake.nextRun();
const commands = {
  async info() { return { url: fake.url, token: fake.token }; },
  async trickle({ count, intervalMs }) {
    const run = await next; next = fake.nextRun();
    const pushed = {};
    for (let i = 0; i < count; i++) { const item = place(i); pushed[item.placeId] = Date.now(); run.push(item); await new Promise((r) => setTimeout(r, intervalMs)); }
    run.set('SUCCEEDED');
    return pushed;
  },
  async bulk({ count, from }) {
    const run = await next; next = fake.nextRun();
    const items = []; for (let i = 0; i < count; i++) items.push(place(from + i));
    run.push(...items); run.set('SUCCEEDED');
    return count;
  },
};
process.on('message', async ({ id, cmd, args }) => {
  try { process.send({ id, value: await commands[cmd](args ?? {}) }); } catch (err) { process.send({ id, error: String(err) }); }
});
process.on('disconnect', () => fake.close().then(() => process.exit(0)));
`,
  );
  const child = fork(script, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let seq = 0;
  const waiting = new Map<number, (reply: Reply) => void>();
  child.on('message', (reply: Reply) => waiting.get(reply.id)?.(reply));
  const call = <T>(cmd: string, args?: Record<string, unknown>) =>
    new Promise<T>((resolve, reject) => {
      const id = ++seq;
      waiting.set(id, (reply) => {
        waiting.delete(id);
        if (reply.error) reject(new Error(reply.error));
        else resolve(reply.value as T);
      });
      child.send({ id, cmd, args });
    });
  child.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return call<{ url: string; token: string }>('info').then((info) => ({ child, call, ...info }));
}

function connect(gw: Gateway): Client {
  return createClient({
    url: `${gw.baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${gw.apiKey}` },
    retryAttempts: 0,
  });
}

async function waitForEnd(gw: Gateway, runId: string) {
  for (;;) {
    const { json } = await request<{ status: string }>(gw, 'GET', `/api/v1/scrape/status/${runId}?waitForFinish=30`);
    if (['SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED-OUT'].includes(json.status)) return json.status;
  }
}

/** CPU milliseconds (user + system) of this process while `fn` runs. */
async function cpuMs(fn: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

export const upstream: Suite<UpstreamResult> = {
  name: 'upstream',
  key: 'upstream',
  async run(context) {
    const fake = await startFakeProcess();
    const gw = await startGateway({
      worker: true,
      config: {
        apify: { token: fake.token, baseUrl: fake.url },
        toolSources: { maps: { engine: 'apify', actorId: undefined } },
      },
      account: { name: 'upstream bench', creditsMicros: 1_000_000_000n },
    });
    try {
      // 1. Latency to a runItems subscriber.
      const { json: started } = await request<{ runId: string }>(gw, 'POST', '/api/v1/scrape/maps', {
        searchStringsArray: ['dentist'],
        maxCrawledPlacesPerSearch: OPTIONS.latencyItems,
      });
      const client = connect(gw);
      const seen = new Map<string, number>();
      const done = new Promise<void>((resolve, reject) => {
        client.subscribe<{ runItems: { results: { placeId: string }[] } }>(
          {
            query: 'subscription($id: ID!) { runItems(id: $id) { results { ... on MapsResult { placeId } } } }',
            variables: { id: started.runId },
          },
          {
            next: ({ data }) => {
              const at = Date.now();
              for (const r of data?.runItems.results ?? []) if (!seen.has(r.placeId)) seen.set(r.placeId, at);
            },
            error: reject,
            complete: resolve,
          },
        );
      });
      const pushed = await fake.call<Record<string, number>>('trickle', {
        count: OPTIONS.latencyItems,
        intervalMs: OPTIONS.intervalMs,
      });
      await done;
      await client.dispose();
      const delays = Object.entries(pushed).map(([id, at]) => (seen.get(id) ?? Number.NaN) - at);
      if (delays.some((d) => Number.isNaN(d)))
        throw new Error(`${delays.filter((d) => Number.isNaN(d)).length} items never reached the subscriber`);

      // 2. CPU per 10,000 items: upstream, then the catalog (the shared gateway over the seeded catalog).
      const rounds = context.quick ? 1 : OPTIONS.cpuRounds;
      const count = context.quick ? 1_000 : OPTIONS.cpuItems;
      let upstreamMs = 0;
      for (let i = 0; i < rounds; i++) {
        upstreamMs += await cpuMs(async () => {
          const { json } = await request<{ runId: string }>(gw, 'POST', '/api/v1/scrape/maps', {
            searchStringsArray: ['dentist'],
            maxCrawledPlacesPerSearch: count,
          });
          await fake.call('bulk', { count, from: (i + 1) * 100_000 });
          if ((await waitForEnd(gw, json.runId)) !== 'SUCCEEDED') throw new Error('upstream run did not succeed');
        });
      }
      const catalogGw = await context.gateway();
      const terms = (
        await catalogGw.app.core.sql<
          { category: string }[]
        >`select category from local_business group by category order by count(*) desc limit 40`
      ).map((r) => r.category);
      let catalogMs = 0;
      let catalogRows = 0;
      for (let i = 0; i < rounds; i++) {
        catalogMs += await cpuMs(async () => {
          const { json } = await request<{ runId: string }>(catalogGw, 'POST', '/api/v1/scrape/maps', {
            searchStringsArray: terms,
            maxCrawledPlacesPerSearch: count,
          });
          if ((await waitForEnd(catalogGw, json.runId)) !== 'SUCCEEDED') throw new Error('catalog run did not succeed');
          const [row] = await catalogGw.app.core.sql<
            { n: number }[]
          >`select item_count as n from run where id = ${json.runId}`;
          catalogRows += row!.n;
        });
      }
      const upstreamPer10k = (upstreamMs / (rounds * count)) * 10_000;
      const catalogPer10k = (catalogMs / catalogRows) * 10_000;
      return {
        options: OPTIONS,
        latency: {
          p50: round(percentile(delays, 50)),
          p95: round(percentile(delays, 95)),
          max: round(Math.max(...delays)),
          items: delays.length,
        },
        cpu: {
          upstreamMsPer10k: round(upstreamPer10k),
          catalogMsPer10k: round(catalogPer10k),
          ratio: round(upstreamPer10k / catalogPer10k, 2),
          catalogRows: catalogRows / rounds,
        },
      };
    } finally {
      await gw.close();
      fake.child.disconnect();
    }
  },
  format(r) {
    const w = [44, 12];
    return [
      `upstream (maps on ${ACTOR}, local fake of the API in a child process)`,
      pad(['item pushed → runItems subscriber, p50 ms', r.latency.p50], w),
      pad(['item pushed → runItems subscriber, p95 ms', r.latency.p95], w),
      pad(['item pushed → runItems subscriber, max ms', r.latency.max], w),
      `   goal p95 ≤ ${GOAL_P95_MS} ms (${r.latency.items} items, one every ${r.options.intervalMs} ms): ${verdict(r.latency.p95 <= GOAL_P95_MS)}`,
      pad(['gateway CPU ms per 10,000 upstream items', r.cpu.upstreamMsPer10k], w),
      pad(['gateway CPU ms per 10,000 catalog rows', r.cpu.catalogMsPer10k], w),
      `   ratio ${r.cpu.ratio}× (catalog runs of ${r.cpu.catalogRows} rows, scaled), goal ≤ ${GOAL_CPU_RATIO}×: ${verdict(r.cpu.ratio <= GOAL_CPU_RATIO)}`,
    ].join('\n');
  },
  goals: (r) => ({
    p95Ms: GOAL_P95_MS,
    cpuRatio: GOAL_CPU_RATIO,
    met: r.latency.p95 <= GOAL_P95_MS && r.cpu.ratio <= GOAL_CPU_RATIO,
  }),
  quick: true,
};
