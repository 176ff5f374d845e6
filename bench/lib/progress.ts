import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startMapsRun } from './api.ts';
import type { BenchEnv } from './env.ts';
import { round, spread, type Spread } from './stats.ts';

export interface ProgressOptions {
  runs: number;
  warmups: number;
  rows: number;
}

export interface ProgressSample {
  startMs: number;
  firstProgressMs: number;
  succeededMs: number;
  events: number;
}

export interface ProgressResult {
  options: ProgressOptions;
  input: Record<string, unknown>;
  startResponse: Spread;
  firstProgress: Spread;
  succeeded: Spread;
  samples: ProgressSample[];
}

interface RunProgress {
  runProgress: { status: string; handled: number };
}

const QUERY = 'subscription($id: ID!) { runProgress(id: $id) { status handled } }';

function connect(env: BenchEnv): Promise<Client> {
  const client = createClient({
    url: `${env.baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${env.apiKey}` },
    retryAttempts: 0,
    lazy: false,
  });
  return new Promise((resolve, reject) => {
    const settle = (err?: Error) => {
      offs.forEach((off) => off());
      if (!err) return resolve(client);
      void client.dispose();
      reject(err);
    };
    const offs = [
      client.on('connected', () => settle()),
      client.on('closed', (event) => {
        const { code, reason } = event as { code?: number; reason?: string };
        settle(new Error(`graphql-ws closed before connecting: ${code} ${reason}`));
      }),
      client.on('error', (err) => settle(err instanceof Error ? err : new Error(String(err)))),
    ];
  });
}

/** One run, timed from just before the start request to its first progress event and to SUCCEEDED. */
async function timeRun(env: BenchEnv, client: Client, input: Record<string, unknown>, rows: number): Promise<ProgressSample> {
  const t0 = performance.now();
  const { runId } = await startMapsRun(env, input);
  const startMs = performance.now() - t0;
  return new Promise((resolve, reject) => {
    let firstProgressMs: number | undefined;
    let succeededMs: number | undefined;
    let last: RunProgress['runProgress'] | undefined;
    let events = 0;
    const fail = (err: unknown) => {
      clearTimeout(timer);
      unsubscribe();
      reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
    };
    const timer = setTimeout(() => fail(new Error(`run ${runId}: no SUCCEEDED event within 30 s`)), 30_000);
    const unsubscribe = client.subscribe<RunProgress>({ query: QUERY, variables: { id: runId } }, {
      next: ({ data, errors }) => {
        if (errors?.length || !data) return fail(new Error(`run ${runId}: ${JSON.stringify(errors)}`));
        const now = performance.now() - t0;
        last = data.runProgress;
        events++;
        if (last.handled > 0) firstProgressMs ??= now;
        if (last.status === 'SUCCEEDED') succeededMs ??= now;
      },
      error: fail,
      complete: () => {
        clearTimeout(timer);
        if (firstProgressMs === undefined || succeededMs === undefined || last?.handled !== rows) {
          reject(new Error(`run ${runId} ended as ${JSON.stringify(last)} after ${events} events, expected SUCCEEDED with handled ${rows}`));
        } else {
          resolve({ startMs: round(startMs, 2), firstProgressMs: round(firstProgressMs, 2), succeededMs: round(succeededMs, 2), events });
        }
      },
    });
  });
}

/** Latency of a `rows`-row maps run as seen by a graphql-ws subscriber. */
export async function benchProgress(env: BenchEnv, options: ProgressOptions): Promise<ProgressResult> {
  const input = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: options.rows };
  const client = await connect(env);
  try {
    for (let i = 0; i < options.warmups; i++) await timeRun(env, client, input, options.rows);
    const samples: ProgressSample[] = [];
    for (let i = 0; i < options.runs; i++) samples.push(await timeRun(env, client, input, options.rows));
    const pick = (key: keyof ProgressSample) => {
      const s = spread(samples.map((x) => x[key]));
      return { p50: round(s.p50), p90: round(s.p90), max: round(s.max) };
    };
    return { options, input, startResponse: pick('startMs'), firstProgress: pick('firstProgressMs'), succeeded: pick('succeededMs'), samples };
  } finally {
    await client.dispose();
  }
}
