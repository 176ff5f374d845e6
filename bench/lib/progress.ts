/**
 * `progress`: how soon a graphql-ws subscriber sees a 100-row maps run progress and succeed, timed
 * from just before the start POST (the gateway with its inline worker). No baseline: the goal is absolute.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { pad, request, round, spread, verdict, type Gateway, type Spread, type Suite } from './harness.ts';

const OPTIONS = { runs: 30, warmups: 3, rows: 100 };
const GOAL_FIRST_PROGRESS_P50_MS = 50;
const QUERY = 'subscription($id: ID!) { runProgress(id: $id) { status handled } }';

export interface ProgressSample {
  startMs: number;
  firstProgressMs: number;
  succeededMs: number;
  events: number;
}

export interface ProgressResult {
  options: typeof OPTIONS;
  input: Record<string, unknown>;
  startResponse: Spread;
  firstProgress: Spread;
  succeeded: Spread;
  samples: ProgressSample[];
}

function connect(gw: Gateway): Promise<Client> {
  const client = createClient({
    url: `${gw.baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${gw.apiKey}` },
    retryAttempts: 0,
    lazy: false,
  });
  return new Promise((resolve, reject) => {
    const settle = (err?: Error) => {
      for (const off of offs) off();
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
async function timeRun(
  gw: Gateway,
  client: Client,
  input: Record<string, unknown>,
  rows: number,
): Promise<ProgressSample> {
  const t0 = performance.now();
  const { json } = await request<{ runId: string }>(gw, 'POST', '/api/v1/scrape/maps', input);
  const runId = json.runId;
  const startMs = performance.now() - t0;
  return new Promise((resolve, reject) => {
    let firstProgressMs: number | undefined;
    let succeededMs: number | undefined;
    let last: { status: string; handled: number } | undefined;
    let events = 0;
    const fail = (err: unknown) => {
      clearTimeout(timer);
      unsubscribe();
      reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
    };
    const timer = setTimeout(() => fail(new Error(`run ${runId}: no SUCCEEDED event within 30 s`)), 30_000);
    const unsubscribe = client.subscribe<{ runProgress: { status: string; handled: number } }>(
      { query: QUERY, variables: { id: runId } },
      {
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
            reject(
              new Error(
                `run ${runId} ended as ${JSON.stringify(last)} after ${events} events, expected SUCCEEDED with handled ${rows}`,
              ),
            );
          } else {
            resolve({
              startMs: round(startMs, 2),
              firstProgressMs: round(firstProgressMs, 2),
              succeededMs: round(succeededMs, 2),
              events,
            });
          }
        },
      },
    );
  });
}

export const progress: Suite<ProgressResult> = {
  name: 'progress',
  key: 'progress',
  async run(context) {
    const gw = await context.gateway();
    const input = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: OPTIONS.rows };
    const client = await connect(gw);
    try {
      for (let i = 0; i < OPTIONS.warmups; i++) await timeRun(gw, client, input, OPTIONS.rows);
      const samples: ProgressSample[] = [];
      for (let i = 0; i < OPTIONS.runs; i++) samples.push(await timeRun(gw, client, input, OPTIONS.rows));
      const pick = (key: keyof ProgressSample) => spread(samples.map((x) => x[key]));
      return {
        options: OPTIONS,
        input,
        startResponse: pick('startMs'),
        firstProgress: pick('firstProgressMs'),
        succeeded: pick('succeededMs'),
        samples,
      };
    } finally {
      await client.dispose();
    }
  },
  format(r) {
    const w = [28, 8, 8, 8];
    const row = (label: string, s: Spread) => pad([label, s.p50, s.p90, s.max], w);
    return [
      `2. ${r.options.rows}-row maps run over graphql-ws: ${r.options.runs} runs after ${r.options.warmups} warm-ups, from just before POST`,
      pad(['event', 'p50 ms', 'p90 ms', 'max ms'], w),
      row('start response (POST)', r.startResponse),
      row('first progress (handled>0)', r.firstProgress),
      row('SUCCEEDED', r.succeeded),
      `   goal p50 first progress < ${GOAL_FIRST_PROGRESS_P50_MS} ms: ${verdict(r.firstProgress.p50 < GOAL_FIRST_PROGRESS_P50_MS)}`,
    ].join('\n');
  },
  goals: (r) => ({
    firstProgressP50Ms: GOAL_FIRST_PROGRESS_P50_MS,
    met: r.firstProgress.p50 < GOAL_FIRST_PROGRESS_P50_MS,
  }),
};
