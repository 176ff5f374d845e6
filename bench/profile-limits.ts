/**
 * Where the money and limit checks spend their time: the `limits` suite's two gateways (checks ON
 * and OFF, own database each), loaded one after the other while recording
 *   - the gateway's main-thread CPU profile (node:inspector), summed by package / source file,
 *   - CPU time of the gateway thread and of the Postgres server processes, per request,
 *   - pg_stat_statements: execution time per statement, per request,
 *   - what the database sessions were doing (pg_stat_activity sampled every few ms).
 *
 *   node --import tsx bench/profile-limits.ts [status|start …] [--secs 8] [--cpuprofile-dir DIR]
 *
 * Embedded Postgres only for the process CPU figures (they read /proc); a diagnostic, not part of
 * `npm run bench`.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import postgres from 'postgres';
import type { Sql } from '../db/client.ts';
import { createRateLimiter } from '../src/accounts/rate-limit.ts';
import { openBenchServer } from './lib/env.ts';
import { resetRuns, startVariant, START_BODY, START_ROUTE, type Variant, type VariantKey } from './lib/limits.ts';
import { load, type LoadTarget } from './lib/load.ts';
import { round } from './lib/stats.ts';

type Workload = 'status' | 'start';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const value = args[i + 1];
  args.splice(i, 2);
  return value;
};
const SECS = Number(flag('--secs') ?? 8);
const PROFILE_DIR = flag('--cpuprofile-dir');
const WORKLOADS = (args.length > 0 ? args : ['status', 'start']) as Workload[];
const CONNECTIONS = 20;

// ---------- /proc CPU accounting ----------

const TICK_US = 1e6 / 100; // USER_HZ

async function procStat(file: string) {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (!text) return undefined;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), cpuUs: (Number(fields[11]) + Number(fields[12])) * TICK_US };
}

/** CPU µs of this process's main thread (the gateway; autocannon runs in a worker thread). */
const mainThreadCpuUs = async () => (await procStat(`/proc/self/task/${process.pid}/stat`))!.cpuUs;

/** CPU µs of the postmaster's children (backends, autovacuum, writers), dead ones excluded. */
async function postgresCpuUs(postmaster: number) {
  let total = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = await procStat(`/proc/${pid}/stat`);
    if (stat?.ppid === postmaster) total += stat.cpuUs;
  }
  return total;
}

// ---------- CPU profile summary ----------

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function bucketOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native/v8)';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const root = url.indexOf('/work/main/');
  return root >= 0 ? url.slice(root + '/work/main/'.length) : url;
}

function summarise(profile: Profile) {
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + profile.timeDeltas[i]!);
  const buckets = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    const { url, functionName, lineNumber } = node.callFrame;
    const bucket = bucketOf(url, functionName);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${bucket}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }
  return { buckets, functions };
}

// ---------- pg_stat_activity sampling ----------

function sampleActivity(admin: postgres.Sql, database: string) {
  const counts = new Map<string, number>();
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const rows = await admin<{ state: string; wait: string | null; query: string }[]>`
        select state, wait_event_type || ':' || wait_event as wait, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) as query
        from pg_stat_activity
        where datname = ${database} and backend_type = 'client backend' and pid <> pg_backend_pid() and state <> 'idle'`;
      samples++;
      for (const r of rows) {
        const key = `${r.state.padEnd(19)} ${(r.wait ?? 'CPU').padEnd(26)} ${r.query}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return { samples, counts };
  };
}

// ---------- one measured load ----------

interface Measured {
  key: VariantKey | 'on+prepared';
  workload: Workload;
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  serialReqPerSec: number;
  serialMeanMs: number;
  gatewayCpuUsPerReq: number;
  postgresCpuUsPerReq: number;
  buckets: Map<string, number>;
  functions: Map<string, number>;
  statements: { calls: number; totalMs: number; meanMs: number; query: string }[];
  activity: { samples: number; counts: Map<string, number> };
}

function target(v: Variant, workload: Workload, runId: string): LoadTarget {
  const headers = { authorization: `Bearer ${v.apiKey}` };
  return workload === 'status'
    ? { url: `${v.baseUrl}/api/v1/scrape/status/${runId}`, headers }
    : { url: `${v.baseUrl}${START_ROUTE}`, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(START_BODY) };
}

async function measure(
  session: Session,
  admin: postgres.Sql,
  postmaster: number,
  v: Variant,
  database: string,
  workload: Workload,
  runId: string,
  key: Measured['key'] = v.key,
): Promise<Measured> {
  const t = target(v, workload, runId);
  if (workload === 'start') await resetRuns(v);
  await load(t, CONNECTIONS, 2); // warm-up
  if (workload === 'start') await resetRuns(v);
  const serial = await load(t, 1, 3);
  if (workload === 'start') await resetRuns(v);
  await v.app.core.sql`select pg_stat_statements_reset()`;
  const stopSampling = sampleActivity(admin, database);
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  const cpu0 = [await mainThreadCpuUs(), await postgresCpuUs(postmaster)] as const;
  const result = await load(t, CONNECTIONS, SECS);
  const cpu1 = [await mainThreadCpuUs(), await postgresCpuUs(postmaster)] as const;
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
  const activity = await stopSampling();
  if (PROFILE_DIR) await writeFile(path.join(PROFILE_DIR, `limits-${workload}-${key}.cpuprofile`), JSON.stringify(profile));
  const statements = await admin<{ calls: number; totalMs: number; meanMs: number; query: string }[]>`
    select s.calls::int as calls, s.total_exec_time as "totalMs", s.mean_exec_time as "meanMs", left(regexp_replace(s.query, '\\s+', ' ', 'g'), 110) as query
    from pg_stat_statements s join pg_database d on d.oid = s.dbid
    where d.datname = ${database} and s.query not like '%pg_stat_statements_reset%'
    order by s.total_exec_time desc limit 12`;
  const { buckets, functions } = summarise(profile);
  return {
    key,
    workload,
    requests: result.requests,
    reqPerSec: result.reqPerSec,
    p50Ms: result.p50Ms,
    serialReqPerSec: serial.reqPerSec,
    serialMeanMs: serial.meanMs,
    gatewayCpuUsPerReq: round((cpu1[0] - cpu0[0]) / result.requests),
    postgresCpuUsPerReq: round((cpu1[1] - cpu0[1]) / result.requests),
    buckets,
    functions,
    statements,
    activity,
  };
}

function report(on: Measured, off: Measured, extra: Measured[]) {
  const perReq = (m: Measured, us: number) => round(us / m.requests, 1);
  const lines = [
    ``,
    `=== ${on.workload}: ${CONNECTIONS} connections × ${SECS} s (and 1 connection × 3 s) ===`,
    `                      req/s   p50 ms   1 conn: req/s  mean ms   gateway CPU µs/req   Postgres CPU µs/req`,
    ...[on, off, ...extra].map(
      (m) =>
        `  ${m.key.toUpperCase().padEnd(12)} ${String(m.reqPerSec).padStart(10)} ${String(m.p50Ms).padStart(8)} ${String(m.serialReqPerSec).padStart(15)} ${String(m.serialMeanMs).padStart(8)} ${String(m.gatewayCpuUsPerReq).padStart(20)} ${String(m.postgresCpuUsPerReq).padStart(21)}`,
    ),
    ``,
    `  gateway main-thread self time by package/file, µs per request (ON, OFF, ON−OFF):`,
  ];
  const keys = new Set([...on.buckets.keys(), ...off.buckets.keys()]);
  const rows = [...keys].map((k) => {
    const a = perReq(on, on.buckets.get(k) ?? 0);
    const b = perReq(off, off.buckets.get(k) ?? 0);
    return { k, a, b, d: round(a - b, 1) };
  });
  rows.sort((x, y) => Math.abs(y.d) - Math.abs(x.d));
  for (const r of rows.slice(0, 14)) lines.push(`    ${r.k.padEnd(48)} ${String(r.a).padStart(8)} ${String(r.b).padStart(8)} ${String(r.d).padStart(8)}`);
  for (const m of [on, off]) {
    lines.push('', `  ${m.key.toUpperCase()}: top functions by self time, µs per request`);
    const top = [...m.functions.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
    for (const [fn, us] of top) lines.push(`    ${String(perReq(m, us)).padStart(7)}  ${fn}`);
  }
  for (const m of [on, off, ...extra]) {
    lines.push('', `  ${m.key.toUpperCase()}: pg_stat_statements (execution only), per request: calls, µs; and mean µs per call`);
    for (const s of m.statements) {
      lines.push(`    ${(s.calls / m.requests).toFixed(2).padStart(6)} ${String(round((s.totalMs * 1000) / m.requests, 1)).padStart(8)} ${String(round(s.meanMs * 1000, 1)).padStart(8)}  ${s.query}`);
    }
    const total = m.statements.reduce((sum, s) => sum + s.totalMs, 0);
    lines.push(`    total exec (top 12): ${round((total * 1000) / m.requests, 1)} µs per request`);
  }
  for (const m of [on, off]) {
    const { samples, counts } = m.activity;
    lines.push('', `  ${m.key.toUpperCase()}: non-idle sessions, average count over ${samples} samples (state, wait, query)`);
    const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
    for (const [k, n] of top) lines.push(`    ${(n / samples).toFixed(2).padStart(6)}  ${k}`);
  }
  console.log(lines.join('\n'));
}

async function main() {
  const server = await openBenchServer({ statStatements: true });
  const started: Variant[] = [];
  const databases: string[] = [];
  let admin: postgres.Sql | undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  try {
    for (const key of ['on', 'off'] as const) {
      const v = await startVariant(server, key, 1e9);
      started.push(v);
      const [{ db }] = (await v.app.core.sql`select current_database() as db`) as unknown as [{ db: string }];
      databases.push(db);
    }
    for (const v of started) await v.app.core.sql`vacuum analyze`;
    await started[0]!.app.core.sql`checkpoint`;
    await started[0]!.app.core.sql`create extension if not exists pg_stat_statements`;
    await started[1]!.app.core.sql`create extension if not exists pg_stat_statements`;
    const url = new URL(started[0]!.app.core.databaseUrl);
    url.pathname = '/postgres';
    admin = postgres(url.toString(), { max: 1, onnotice: () => {} });
    await admin`create extension if not exists pg_stat_statements`;
    const [{ pid }] = (await admin`select pg_backend_pid() as pid`) as unknown as [{ pid: number }];
    const postmaster = (await procStat(`/proc/${pid}/stat`))?.ppid ?? -1;

    const runIds: string[] = [];
    for (const v of started) {
      const response = await fetch(`${v.baseUrl}${START_ROUTE}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${v.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(START_BODY),
      });
      runIds.push(((await response.json()) as { runId: string }).runId);
    }
    for (const workload of WORKLOADS) {
      // Status polling reads the run started above; start rounds truncate runs, so they go last.
      const measured = [];
      for (const [i, v] of started.entries()) measured.push(await measure(session, admin, postmaster, v, databases[i]!, workload, runIds[i]!));
      // What-if, bench-only: the same ON gateway with the rate limiter's upsert sent as a prepared
      // statement (postgres.js `prepare: true`): one round trip and no re-parse per request instead of
      // a Parse/Describe round trip followed by Bind/Execute.
      const on = started[0]!;
      const stock = on.app.core.rateLimiter;
      const sql = on.app.core.sql;
      const preparing = { unsafe: (text: string, values: never[]) => sql.unsafe(text, values, { prepare: true }) } as unknown as Sql;
      on.app.core.rateLimiter = createRateLimiter(preparing, on.app.core.config.rateLimitPerMinute);
      try {
        measured.push(await measure(session, admin, postmaster, on, databases[0]!, workload, runIds[0]!, 'on+prepared'));
      } finally {
        on.app.core.rateLimiter = stock;
      }
      report(measured[0]!, measured[1]!, measured.slice(2));
    }
  } finally {
    await session.post('Profiler.disable').catch(() => {});
    session.disconnect();
    await admin?.end();
    for (const v of started) await v.app.stop().catch(() => {});
    await server.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
