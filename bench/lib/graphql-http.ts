/**
 * What the GraphQL-over-HTTP suites (`graphql-run`, `graphql-results`) share: a finished run to read,
 * a GraphQL request with the gateway's key, the exact bodies both variants answer (checked on every
 * response under load), and the side-by-side table.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
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
  type LoadTarget,
} from './harness.ts';

/** A finished maps run of `rows` rows (the small catalog's dentists across the country hold more than 150). */
export async function finishedMapsRun(gw: Gateway, rows: number): Promise<string> {
  const { json } = await request<{ runId: string }>(gw, 'POST', '/api/v1/scrape/maps', {
    searchStringsArray: ['dentist'],
    maxCrawledPlacesPerSearch: rows,
  });
  for (const deadline = Date.now() + 30_000; ; await sleep(50)) {
    const { json: view } = await request<{ status: string; statusMessage: string; handled: number }>(
      gw,
      'GET',
      `/api/v1/scrape/status/${json.runId}`,
    );
    if (view.status === 'SUCCEEDED' && view.handled === rows) return json.runId;
    if (view.status !== 'RUNNING' && view.status !== 'READY')
      throw new Error(
        `run ${json.runId} ended ${view.status} with ${view.handled} of ${rows} rows (${view.statusMessage})`,
      );
    if (Date.now() > deadline) throw new Error(`run ${json.runId} still ${view.status} after 30 s`);
  }
}

export interface GraphQLOperation {
  query: string;
  variables?: Record<string, unknown>;
}

/** The load target of an operation: POST /graphql, JSON body, the gateway's key. */
export const graphqlTarget = (gw: Gateway, operation: GraphQLOperation): LoadTarget =>
  gatewayTarget(gw, 'POST', '/graphql', operation);

/** A target's answer once, as text and parsed; throws on a non-2xx status (and, for GraphQL, on `errors`). */
export async function answerOf(target: LoadTarget): Promise<{ text: string; json: unknown }> {
  const response = await fetch(target.url, {
    method: target.method ?? 'GET',
    headers: target.headers,
    body: target.body,
  });
  const text = await response.text();
  if (!response.ok)
    throw new Error(`${target.method ?? 'GET'} ${target.url} → ${response.status}: ${text.slice(0, 500)}`);
  const json: unknown = JSON.parse(text);
  const errors = (json as { errors?: unknown[] } | null)?.errors;
  if (Array.isArray(errors) && errors.length > 0)
    throw new Error(`${target.url}: ${JSON.stringify(errors).slice(0, 1000)}`);
  return { text, json };
}

/**
 * Both targets' answers once: `same` maps them to one shape, which must be equal. Returns the targets
 * with their exact bodies as `expectBody`, so that every answer under load is checked too.
 */
export async function checkedTargets<A, B>(
  graphql: LoadTarget,
  rest: LoadTarget,
  same: { graphql: (json: unknown) => A; rest: (json: unknown) => B },
): Promise<{ graphql: LoadTarget; rest: LoadTarget; bytes: { graphql: number; rest: number } }> {
  const g = await answerOf(graphql);
  const r = await answerOf(rest);
  const viaGraphql = same.graphql(g.json);
  const viaRest = same.rest(r.json);
  if (!isDeepStrictEqual(viaGraphql, viaRest)) {
    throw new Error(
      `GraphQL and REST disagree:\n  GraphQL ${JSON.stringify(viaGraphql).slice(0, 2000)}\n  REST    ${JSON.stringify(viaRest).slice(0, 2000)}`,
    );
  }
  return {
    graphql: { ...graphql, expectBody: g.text },
    rest: { ...rest, expectBody: r.text },
    bytes: { graphql: Buffer.byteLength(g.text), rest: Buffer.byteLength(r.text) },
  };
}

export interface SideResult extends LoadFigures {
  label: string;
  request: string;
  bytes: number;
}

export interface GraphQLVersusRest {
  runId: string;
  options: LoadOptions;
  graphql: SideResult;
  rest: SideResult;
  /** GraphQL req/s ÷ REST req/s (medians of rounds). */
  ratio: number;
  /** Round by round, in the order they ran next to each other. */
  roundRatios: number[];
  goalRatio: number;
}

/**
 * With GRAPHQL_PROFILE=<dir>, a CPU profile of the gateway's thread (autocannon runs in a worker
 * thread of its own, outside it) over each kept GraphQL round, written as <dir>/graphql-<run>-<n>.cpuprofile.
 */
function profiler(dir: string | undefined, runId: string) {
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
  let running = false;
  let kept = 0;
  return {
    async start() {
      // A profile left running by the warm-up (which keeps no figures) is dropped.
      if (running) await post('Profiler.stop');
      await post('Profiler.enable');
      await post('Profiler.start');
      running = true;
    },
    async stop() {
      const { profile } = (await post('Profiler.stop')) as { profile: object };
      running = false;
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, `graphql-${runId}-${++kept}.cpuprofile`), JSON.stringify(profile));
    },
  };
}

/** The same load on both, alternated; the figures and the ratio. */
export async function graphqlVersusRest(
  runId: string,
  targets: { graphql: LoadTarget; rest: LoadTarget },
  bytes: { graphql: number; rest: number },
  labels: { graphql: [string, string]; rest: [string, string] },
  options: LoadOptions,
  goalRatio: number,
): Promise<GraphQLVersusRest> {
  const profile = profiler(process.env.GRAPHQL_PROFILE, runId);
  const figures = await compareLoad(targets, options, {
    before: async (key) => (key === 'graphql' ? profile?.start() : undefined),
    after: async (key) => (key === 'graphql' ? profile?.stop() : undefined),
  });
  const side = (key: 'graphql' | 'rest'): SideResult => ({
    label: labels[key][0],
    request: labels[key][1],
    bytes: bytes[key],
    ...figures[key],
  });
  return {
    runId,
    options,
    graphql: side('graphql'),
    rest: side('rest'),
    ratio: round(figures.graphql.reqPerSec / figures.rest.reqPerSec, 2),
    roundRatios: figures.graphql.rounds.map((r, i) => round(r.reqPerSec / figures.rest.rounds[i]!.reqPerSec, 2)),
    goalRatio,
  };
}

export function formatVersus(title: string, r: GraphQLVersusRest, notes: string[] = []): string {
  const o = r.options;
  const w = [44, 10, 8, 8, 9];
  return [
    `${title}: ${o.connections} connections, ${o.rounds} × ${o.durationSecs} s per target alternated (after ${o.warmupSecs} s each), medians`,
    pad(['target', 'req/s', 'p50 ms', 'p99 ms', 'bytes'], w),
    pad([`A ${r.graphql.label}`, r.graphql.reqPerSec, r.graphql.p50Ms, r.graphql.p99Ms, r.graphql.bytes], w),
    pad([`B ${r.rest.label}`, r.rest.reqPerSec, r.rest.p50Ms, r.rest.p99Ms, r.rest.bytes], w),
    `   A/B = ${r.ratio.toFixed(2)}×   (goal ≥ ${r.goalRatio}×: ${verdict(r.ratio >= r.goalRatio)}); round pairs ${r.roundRatios.map((x) => x.toFixed(2)).join(', ')}`,
    `   rounds A: ${r.graphql.rounds.map((x) => x.reqPerSec).join(', ')} req/s   B: ${r.rest.rounds.map((x) => x.reqPerSec).join(', ')} req/s`,
    `   A ${r.graphql.request}`,
    `   B ${r.rest.request}`,
    ...notes.map((line) => `   ${line}`),
  ].join('\n');
}
