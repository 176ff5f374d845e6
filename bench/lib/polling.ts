import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import postgres from 'postgres';
import type { Run } from '../../db/schema/runs.ts';
import { restRunView, snapshotOf } from '../../src/runs/view.ts';
import { getRunView, startMapsRun, waitForStatus } from './api.ts';
import type { BenchEnv } from './env.ts';
import { load, type LoadRound } from './load.ts';
import { median, round } from './stats.ts';

export interface PollingOptions {
  connections: number;
  durationSecs: number;
  warmupSecs: number;
  rounds: number;
}

export interface TargetResult {
  label: string;
  url: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  rounds: LoadRound[];
}

export interface PollingResult {
  runId: string;
  options: PollingOptions;
  rest: TargetResult;
  bare: TargetResult;
  ratio: number;
}

/** A plain node:http server answering `/status/<id>` with one postgres.js query and the REST Run object. */
async function startBareServer(databaseUrl: string, publicUrl: string, poolSize: number) {
  const sql = postgres(databaseUrl, { max: poolSize, onnotice: () => {}, transform: postgres.camel });
  const server: Server = createServer(async (req, res) => {
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
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sql.end({ timeout: 5 });
    },
  };
}

/** REST status polling against a bare node:http + postgres.js baseline, alternated round by round. */
export async function benchPolling(env: BenchEnv, options: PollingOptions): Promise<PollingResult> {
  const { runId } = await startMapsRun(env, {
    searchStringsArray: ['dentist'],
    locationQuery: 'Denver, CO',
    maxCrawledPlacesPerSearch: 20,
  });
  await waitForStatus(env, runId, 'SUCCEEDED');
  const bare = await startBareServer(env.database.url, env.app.core.config.publicUrl, options.connections);
  try {
    const targets = [
      { label: 'REST GET /api/v1/scrape/status/:runId', url: `${env.baseUrl}/api/v1/scrape/status/${runId}`, headers: { authorization: `Bearer ${env.apiKey}` } },
      { label: 'bare node:http + 1 postgres.js query', url: `${bare.url}/status/${runId}`, headers: {} },
    ] as const;
    const viaRest = await getRunView(env, runId);
    const viaBare: unknown = await (await fetch(targets[1].url)).json();
    if (!isDeepStrictEqual(viaRest, viaBare)) {
      throw new Error(`the two targets disagree: ${JSON.stringify(viaRest)} vs ${JSON.stringify(viaBare)}`);
    }
    for (const t of targets) await load(t, options.connections, options.warmupSecs);
    const rounds: LoadRound[][] = [[], []];
    for (let i = 0; i < options.rounds; i++) {
      for (const [k, t] of targets.entries()) rounds[k]!.push(await load(t, options.connections, options.durationSecs));
    }
    const [rest, base] = targets.map((t, k): TargetResult => ({
      label: t.label,
      url: t.url,
      reqPerSec: round(median(rounds[k]!.map((r) => r.reqPerSec))),
      p50Ms: round(median(rounds[k]!.map((r) => r.p50Ms))),
      p99Ms: round(median(rounds[k]!.map((r) => r.p99Ms))),
      rounds: rounds[k]!,
    })) as [TargetResult, TargetResult];
    return { runId, options, rest, bare: base, ratio: round(rest.reqPerSec / base.reqPerSec, 2) };
  } finally {
    await bare.close();
  }
}
