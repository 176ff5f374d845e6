import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { startBenchEnv, type BenchEnv } from './lib/env.ts';
import { benchPolling, type PollingResult } from './lib/polling.ts';
import { benchProgress, type ProgressResult } from './lib/progress.ts';

const POLLING = { connections: 20, durationSecs: 8, warmupSecs: 2, rounds: 2 };
const PROGRESS = { runs: 30, warmups: 3, rows: 100 };
const GOALS = { pollingRatio: 0.5, firstProgressP50Ms: 50 };

const pad = (cells: (string | number)[], widths: number[]) =>
  cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ');
const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

function table(database: string, polling: PollingResult, progress: ProgressResult): string {
  const pw = [40, 10, 8, 8];
  const lw = [28, 8, 8, 8];
  const { rest, bare } = polling;
  const o = polling.options;
  return [
    `leadgate bench: ${database} Postgres, node ${process.version}, ${os.cpus().length} CPUs`,
    '',
    `1. Status polling: ${o.connections} connections, ${o.rounds} × ${o.durationSecs} s per target alternated, medians`,
    pad(['target', 'req/s', 'p50 ms', 'p99 ms'], pw),
    pad([`A ${rest.label}`, rest.reqPerSec, rest.p50Ms, rest.p99Ms], pw),
    pad([`B ${bare.label}`, bare.reqPerSec, bare.p50Ms, bare.p99Ms], pw),
    `   A/B = ${polling.ratio.toFixed(2)}×   (goal ≥ ${GOALS.pollingRatio}×: ${verdict(polling.ratio >= GOALS.pollingRatio)})`,
    `   rounds A: ${rest.rounds.map((r) => r.reqPerSec).join(', ')} req/s   B: ${bare.rounds.map((r) => r.reqPerSec).join(', ')} req/s`,
    '',
    `2. ${progress.options.rows}-row maps run over graphql-ws: ${progress.options.runs} runs after ${progress.options.warmups} warm-ups, from just before POST`,
    pad(['event', 'p50 ms', 'p90 ms', 'max ms'], lw),
    pad(['start response (POST)', progress.startResponse.p50, progress.startResponse.p90, progress.startResponse.max], lw),
    pad(['first progress (handled>0)', progress.firstProgress.p50, progress.firstProgress.p90, progress.firstProgress.max], lw),
    pad(['SUCCEEDED', progress.succeeded.p50, progress.succeeded.p90, progress.succeeded.max], lw),
    `   goal p50 first progress < ${GOALS.firstProgressP50Ms} ms: ${verdict(progress.firstProgress.p50 < GOALS.firstProgressP50Ms)}`,
  ].join('\n');
}

async function measure(env: BenchEnv) {
  const polling = await benchPolling(env, POLLING);
  const progress = await benchProgress(env, PROGRESS);
  return { polling, progress };
}

async function main() {
  const env = await startBenchEnv();
  const { polling, progress } = await measure(env).finally(() => env.close());
  console.log(table(env.database.kind, polling, progress));
  const dir = new URL('./results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    database: env.database.kind,
    goals: {
      ...GOALS,
      pollingRatioMet: polling.ratio >= GOALS.pollingRatio,
      firstProgressP50Met: progress.firstProgress.p50 < GOALS.firstProgressP50Ms,
    },
    polling,
    progress,
  };
  await writeFile(new URL('latest.json', dir), `${JSON.stringify(results, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
