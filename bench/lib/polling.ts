/**
 * `polling`: REST status polling through the whole gateway (Bearer auth, routing, the
 * ownership-checked run lookup, serialisation) against a bare node:http handler in the same process
 * reading the same run row with one postgres.js query and answering the same JSON (checked equal).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import postgres from 'postgres';
import type { Run } from '../../db/tables/runs.ts';
import { restRunView } from '../../src/http/views.ts';
import { snapshotOf } from '../../src/runs/view.ts';
import {
  compareLoad,
  gatewayTarget,
  pad,
  request,
  round,
  sleep,
  verdict,
  type Gateway,
  type LoadFigures,
  type LoadOptions,
  type Suite,
} from './harness.ts';

const OPTIONS: LoadOptions = { connections: 20, durationSecs: 8, warmupSecs: 2, rounds: 2 };
const GOAL_RATIO = 0.5;

export interface TargetResult extends LoadFigures {
  label: string;
  url: string;
}

export interface PollingResult {
  runId: string;
  options: LoadOptions;
  rest: TargetResult;
  bare: TargetResult;
  ratio: number;
}

/** The baseline: a plain node:http server answering `/status/<id>` with one postgres.js query and the REST Run object. */
async function startBareServer(databaseUrl: string, publicUrl: string, poolSize: number) {
  // int8 columns (the micro-dollar amounts) as BigInt, as drizzle reads them for snapshotOf.
  const sql = postgres(databaseUrl, {
    max: poolSize,
    onnotice: () => {},
    transform: postgres.camel,
    types: { bigint: postgres.BigInt },
  });
  const server = createServer(async (req, res) => {
    try {
      const id = decodeURIComponent((req.url ?? '').replace(/^\/status\//, ''));
      const [row] = await sql<Run[]>`select * from run where id = ${id}`;
      const body = row ? JSON.stringify(restRunView(publicUrl, snapshotOf(row))) : '{"error":"not_found"}';
      res.writeHead(row ? 200 : 404, { 'content-type': 'application/json; charset=utf-8' }).end(body);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sql.end({ timeout: 5 });
    },
  };
}

/** A finished 20-row maps run to poll. */
async function finishedRun(gw: Gateway): Promise<string> {
  const { json } = await request<{ runId: string }>(gw, 'POST', '/api/v1/scrape/maps', {
    searchStringsArray: ['dentist'],
    locationQuery: 'Denver, CO',
    maxCrawledPlacesPerSearch: 20,
  });
  for (const deadline = Date.now() + 30_000; ; await sleep(50)) {
    const { json: view } = await request<{ status: string; statusMessage: string }>(
      gw,
      'GET',
      `/api/v1/scrape/status/${json.runId}`,
    );
    if (view.status === 'SUCCEEDED') return json.runId;
    if (['FAILED', 'ABORTED', 'TIMED-OUT'].includes(view.status) || Date.now() > deadline)
      throw new Error(`run ${json.runId} is ${view.status} (${view.statusMessage})`);
  }
}

export const polling: Suite<PollingResult> = {
  name: 'polling',
  key: 'polling',
  async run(context) {
    const gw = await context.gateway();
    const runId = await finishedRun(gw);
    const bare = await startBareServer(gw.databaseUrl, gw.app.core.config.publicUrl, OPTIONS.connections);
    try {
      const targets = {
        rest: gatewayTarget(gw, 'GET', `/api/v1/scrape/status/${runId}`),
        bare: { url: `${bare.url}/status/${runId}` },
      };
      const viaRest = (await request(gw, 'GET', `/api/v1/scrape/status/${runId}`)).json;
      const viaBare: unknown = await (await fetch(targets.bare.url)).json();
      if (!isDeepStrictEqual(viaRest, viaBare))
        throw new Error(`the two targets disagree: ${JSON.stringify(viaRest)} vs ${JSON.stringify(viaBare)}`);
      const figures = await compareLoad(targets, OPTIONS);
      return {
        runId,
        options: OPTIONS,
        rest: { label: 'REST GET /api/v1/scrape/status/:runId', url: targets.rest.url, ...figures.rest },
        bare: { label: 'bare node:http + 1 postgres.js query', url: targets.bare.url, ...figures.bare },
        ratio: round(figures.rest.reqPerSec / figures.bare.reqPerSec, 2),
      };
    } finally {
      await bare.close();
    }
  },
  format({ rest, bare, ratio, options: o }) {
    const w = [40, 10, 8, 8];
    return [
      `1. Status polling: ${o.connections} connections, ${o.rounds} × ${o.durationSecs} s per target alternated, medians`,
      pad(['target', 'req/s', 'p50 ms', 'p99 ms'], w),
      pad([`A ${rest.label}`, rest.reqPerSec, rest.p50Ms, rest.p99Ms], w),
      pad([`B ${bare.label}`, bare.reqPerSec, bare.p50Ms, bare.p99Ms], w),
      `   A/B = ${ratio.toFixed(2)}×   (goal ≥ ${GOAL_RATIO}×: ${verdict(ratio >= GOAL_RATIO)})`,
      `   rounds A: ${rest.rounds.map((r) => r.reqPerSec).join(', ')} req/s   B: ${bare.rounds.map((r) => r.reqPerSec).join(', ')} req/s`,
    ].join('\n');
  },
  goals: (r) => ({ ratio: GOAL_RATIO, met: r.ratio >= GOAL_RATIO }),
};
