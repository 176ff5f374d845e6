/**
 * `processes`: a run's CPU end to end (start → SUCCEEDED → download), split by gateway, worker and
 * Postgres, and whether the same load spread over more gateway and worker processes on one Postgres
 * keeps the same throughput for the same CPU (nothing but Postgres shared between them).
 *
 *   - One Postgres (the bench's embedded server, or DATABASE_URL's, which must run on this machine for
 *     its CPU to be read) and one database: migrated, the small catalog, one scale-plan account per client.
 *   - G gateway processes (`src/main.ts`, LEADGATE_INLINE_WORKER=false) and W worker processes
 *     (`src/cli/index.ts worker`, METRICS_PORT for its readiness), started afresh for every round of
 *     a configuration and stopped after it.
 *   - The load, in this process: K clients each doing runs back to back, POST /api/v1/scrape/maps (20
 *     places), GET /api/v1/scrape/status/{runId}?waitForFinish=30 until SUCCEEDED, GET
 *     /api/downloads/{runId} (its CSV rows counted); each request to the next gateway in turn, so a run
 *     is started, awaited and downloaded on different gateways. Any non-2xx answer, other status or
 *     row count, or a process exiting, fails the suite.
 *   - Then, on the same processes (warm), the same load at a fixed pace: runs started at R a second
 *     whatever the others do (an open loop, keys in turn), R the same for every configuration (half
 *     the priming round's rate unless given): whether each configuration keeps the pace, and its CPU
 *     per run at that load. Saturated, two CPUs shared by up to ten processes measure how the
 *     processes contend for them as much as what a run costs; at a pace every configuration carries,
 *     the CPU a run costs is compared at the same throughput.
 *   - CPU: utime + stime + cutime + cstime (/proc/<pid>/stat) of each gateway's and worker's process
 *     tree and of the postmaster's (every backend, background process and autovacuum worker, exited
 *     ones included), read before and after each measured window; ms per run = the difference ÷ runs
 *     completed in the window, and for each half of it (equal once the processes are warm). This
 *     process's own CPU (the clients) is reported apart. Then the idle
 *     rate of each kind with no run going, and the machine's idle time in the window (/proc/stat): near
 *     0, the runs had all the CPU there was, so nothing held them waiting.
 *   - Wake-ups: the times each kind's threads were put on a CPU (/proc/<pid>/task/<tid>/schedstat),
 *     per run at the pace. A process does a run's work in fewer, fuller turns when it carries more runs.
 *   - The machine, first: what a fixed unit of work costs a fresh process back to back and after sleeps
 *     of 1 to 100 ms (probeMachine). Where a unit after a sleep costs more, so does every turn of a
 *     process that sleeps longer between runs, whatever its code.
 *
 *   - The baseline apart: S(1x1), S stacks of one gateway and one worker, each on a database of its
 *     own on the same server, with its own clients and 1/S of the load: the same processes as S × S,
 *     each carrying the same load, on the same machine, sharing nothing but the server. S × S ÷ S(1x1)
 *     is what working together costs (a run's requests on different gateways, one job queue, one
 *     database's listening sessions); what more processes cost on two CPUs falls on both alike.
 *
 * Configurations alternate in rotating order every round, so the drift of a shared machine falls on all,
 * after a priming round that is not kept (the freshly seeded database's first minute under load).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { connect, type Sql } from '../../db/client.ts';
import { freePort } from '../../db/embedded.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import { seedCatalog } from '../../db/seed/index.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import {
  alternate,
  databaseKind,
  median,
  openBenchServer,
  pad,
  progress,
  quantiles,
  round,
  sleep,
  verdict,
  type DatabaseKind,
  type Suite,
} from './harness.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ProcessesOptions {
  /** Gateways × workers, as "GxW". */
  configs: string[];
  clients: number;
  places: number;
  warmupSecs: number;
  measureSecs: number;
  /** After the load: the processes' own CPU with no run going (timers, heartbeats, polling). */
  idleSecs: number;
  rounds: number;
  /** A round of the first configuration before the kept ones, not kept. */
  primed: boolean;
  /** Runs started a second in the paced window; unset: half the priming round's runs/s. */
  pacedRate?: number;
  /** The paced load before its window, so the runs in flight match the pace. */
  pacedSettleSecs: number;
}

const FULL: ProcessesOptions = {
  configs: ['1x1', '2x2', '4x4', '1x4', '4x1', '2(1x1)', '4(1x1)'],
  clients: 8,
  places: 20,
  warmupSecs: 20,
  measureSecs: 20,
  idleSecs: 4,
  rounds: 2,
  primed: true,
  pacedSettleSecs: 5,
};
const QUICK: ProcessesOptions = {
  configs: ['1x1', '2x2', '2(1x1)'],
  clients: 8,
  places: 20,
  warmupSecs: 2,
  measureSecs: 4,
  idleSecs: 2,
  rounds: 1,
  primed: false,
  pacedRate: 10,
  pacedSettleSecs: 1,
};
/** The paced rate when not given: this share of the priming round's (1 × 1, saturated) runs/s. */
const PACED_SHARE = 0.5;
/**
 * The goal: at the same pace, every configuration keeps it (KEPT_PACE of it), and the processes of
 * G × G working together on one database cost, per run, within this fraction of the same processes
 * apart (G stacks of 1 × 1, each on a database of its own with a G-th of the load): what working
 * together costs, measured against a baseline run side by side that pays what the machine charges
 * for more processes. Lowest ÷ highest over all configurations is reported beside it (and was the
 * goal until the baseline existed: on two CPUs it measures the machine as much as the service).
 */
const GOAL_FLAT = 0.85;
/**
 * 1 × 1 is measured at the pace ÷ this too: the load each process of 4 × 4 carries at the pace, so
 * what more processes cost can be told apart from what a process costs at a smaller load.
 */
const SHARE = 4;
const KEPT_PACE = 0.97;
/**
 * A configuration: G gateways × W workers on one database (`GxW`), or S such stacks apart (`S(GxW)`),
 * each on a database of its own on the same server, with its own clients and a share of the load:
 * the same processes on the same machine, sharing nothing but the server. What more processes cost
 * the machine (two CPUs taken in turn, caches lost between them) shows there too; what comes of the
 * processes working together (a run's requests on different gateways, one job queue, every listening
 * session woken by every commit that notifies) does not.
 */
export function parseConfig(config: string): { stacks: number; gateways: number; workers: number } {
  const one = /^(\d+)x(\d+)$/.exec(config);
  const apart = /^(\d+)\((\d+)x(\d+)\)$/.exec(config);
  const [stacks, gateways, workers] = one
    ? [1, Number(one[1]), Number(one[2])]
    : apart
      ? apart.slice(1).map(Number)
      : [];
  if (!stacks || !gateways || !workers) throw new Error(`processes: configuration ${config}: expected GxW or S(GxW)`);
  return { stacks, gateways, workers };
}

/** Postgres cores of the capacity table. */
const CORES = [4, 8, 16, 32];
/** How long a process may take to start: 8 at once on 2 loaded CPUs take a minute or more. */
const START_SECS = 180;
const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED-OUT']);

/** CPU milliseconds per run, by process kind; `client` is this process (the load), apart from `total`. */
export interface CpuPerRun {
  gateway: number;
  worker: number;
  postgres: number;
  total: number;
  client: number;
}

/** The paced window of a round: the same processes at R runs started a second. */
export interface PacedRound {
  rate: number;
  runs: number;
  secs: number;
  /** Runs completed a second in the window: R when the configuration keeps the pace. */
  runsPerSec: number;
  cpuMsPerRun: CpuPerRun;
  netMsPerRun: number;
  machineIdlePct: number;
  /** A run end to end (start, status until SUCCEEDED, download), ms. */
  latencyMs: { p50: number; p95: number };
  halves: [number, number];
  /** Times the threads of each kind were put on a CPU, per run. */
  wakeupsPerRun: Wakeups;
}

/** Per run, by process kind: how often its threads were put on a CPU (they woke, or were preempted and resumed). */
export interface Wakeups {
  gateway: number;
  worker: number;
  postgres: number;
}

export interface ConfigRound {
  /** The paced window (absent in the priming round, which sets its rate). */
  paced?: PacedRound;
  /** 1 × 1 only: a second paced window at the pace ÷ SHARE. */
  shared?: PacedRound;
  runs: number;
  secs: number;
  runsPerSec: number;
  cpuMsPerRun: CpuPerRun;
  /** CPU ms per second of the gateways, the workers and Postgres with no run going. */
  idleMsPerSec: { gateway: number; worker: number; postgres: number };
  /** cpuMsPerRun's total less what the idle rate would have used in the window. */
  netMsPerRun: number;
  /** CPU of every measured process (clients included) ÷ (window × the machine's CPUs). */
  busyPct: number;
  /** The machine's idle time in the window (/proc/stat idle + iowait): near 0, the runs had all the CPU there was. */
  machineIdlePct: number;
  /**
   * Total CPU ms per run in the window's first half and in its second: equal once every process is
   * warm (V8 compiles a process's hot code after enough calls of it, so more processes, each doing a
   * share of the runs, take longer to get there).
   */
  halves: [number, number];
}

export interface ConfigFigures {
  config: string;
  /** Stacks apart, each of `gateways` × `workers` on a database of its own (1: together; absent in figures saved before). */
  stacks?: number;
  gateways: number;
  workers: number;
  /** Medians of the rounds. */
  runsPerSec: number;
  cpuMsPerRun: CpuPerRun;
  idleMsPerSec: ConfigRound['idleMsPerSec'];
  netMsPerRun: number;
  busyPct: number;
  machineIdlePct: number;
  /** Medians of the rounds' paced windows. */
  paced: {
    runsPerSec: number;
    cpuMsPerRun: CpuPerRun;
    netMsPerRun: number;
    machineIdlePct: number;
    latencyMs: { p50: number; p95: number };
    wakeupsPerRun: Wakeups;
  };
  /** Medians of the windows at the pace ÷ SHARE (1 × 1 only). */
  shared?: ConfigFigures['paced'] & { rate: number };
  rounds: ConfigRound[];
}

export interface ProcessesResult {
  date: string;
  database: DatabaseKind;
  cpus: number;
  clockTicks: number;
  loadAverage: { before: number[]; after: number[] };
  options: ProcessesOptions;
  configs: ConfigFigures[];
  /** Lowest ÷ highest median over the configurations, saturated. */
  flatness: { runsPerSec: number; totalCpu: number; netCpu: number };
  /** The same at the pace `rate`: CPU per run, and the lowest runs/s completed ÷ the rate. */
  paced: { rate: number; totalCpu: number; netCpu: number; keptPace: number };
  /**
   * At the pace, each configuration of G × G beside its G stacks of 1 × 1 apart: together ÷ apart, by
   * kind, and lowest ÷ highest of the two totals (the goal's figure). Absent when no configuration apart ran.
   */
  together?: {
    config: string;
    apart: string;
    ratio: CpuPerRun;
    flat: number;
    wakeups: { together: Wakeups; apart: Wakeups };
  }[];
  /** The highest Postgres CPU per run of any configuration, and which. */
  postgresMsPerRun: { ms: number; config: string };
  /** N · 1000 ÷ postgresMsPerRun: an upper bound, CPU only. */
  capacity: { cores: number; runsPerSec: number }[];
  /** What a fixed unit of work costs after each sleep, before the configurations (absent in figures saved before it). */
  machine?: MachineProbe[];
}

export interface MachineProbe {
  /** The sleep before each unit, ms; 0: back to back. */
  gapMs: number;
  cpuUsPerUnit: number;
}

// ---------------------------------------------------------------------------------------------
// CPU from /proc

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Every process's parent and CPU ticks, its reaped children's included. */
async function processTable(): Promise<Map<number, { ppid: number; ticks: number }>> {
  const table = new Map<number, { ppid: number; ticks: number }>();
  await Promise.all(
    (await readdir('/proc'))
      .filter((e) => /^\d+$/.test(e))
      .map(async (entry) => {
        const text = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
        if (!text) return;
        // After the command name: ppid [1], utime [11], stime [12], cutime [13], cstime [14].
        const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
        table.set(Number(entry), {
          ppid: Number(f[1]),
          ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
        });
      }),
  );
  return table;
}

/** Times the threads of a live process were put on a CPU: the third figure of each `/proc/<pid>/task/<tid>/schedstat`. */
async function timeslices(pid: number): Promise<number> {
  const tids = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const counts = await Promise.all(
    tids.map((tid) =>
      readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').then(
        (text) => Number(text.trim().split(' ')[2]) || 0,
        () => 0,
      ),
    ),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** Timeslices of live processes, by pid. */
type Slices = Map<number, number>;

/** Timeslices between two readings: each process's own growth, so one that exited in between (an autovacuum worker) takes nothing away. */
function slicesBetween(from: Slices, to: Slices): number {
  let total = 0;
  for (const [pid, count] of to) total += Math.max(0, count - (from.get(pid) ?? 0));
  return total;
}

/** The process table, and a function giving a process and its descendants. */
async function processTree() {
  const table = await processTable();
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of table) (children.get(ppid) ?? children.set(ppid, []).get(ppid)!).push(pid);
  const members = (pid: number): number[] => [pid, ...(children.get(pid) ?? []).flatMap(members)];
  const cpuMs = (pids: number[]) =>
    (pids.reduce((sum, pid) => sum + (table.get(pid)?.ticks ?? 0), 0) * 1000) / clockTicks;
  return { members, cpuMs };
}

/**
 * CPU milliseconds of each root's process tree, and its live processes' timeslices (those of a
 * process that exits are lost with it: here, a few autovacuum workers).
 */
async function treeUsage(roots: number[]): Promise<{ cpuMs: number; slices: Slices }[]> {
  const { members, cpuMs } = await processTree();
  return Promise.all(
    roots.map(async (root) => {
      const pids = members(root);
      const slices = await Promise.all(pids.map(timeslices));
      return { cpuMs: cpuMs(pids), slices: new Map(pids.map((pid, i) => [pid, slices[i]!])) };
    }),
  );
}

/**
 * CPU milliseconds so far of each root's process tree, as `treeUsage` reads them (utime + stime +
 * cutime + cstime, `/proc/<pid>/stat`, in clock ticks: 10 ms at CLK_TCK 100), without the timeslices.
 */
export async function treeCpuMs(roots: number[]): Promise<number[]> {
  const { members, cpuMs } = await processTree();
  return roots.map((root) => cpuMs(members(root)));
}

/** The postmaster of the server `sql` reaches (the parent of its backend), when it runs on this machine. */
export async function localPostmaster(sql: Sql): Promise<number | undefined> {
  const [row] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const stat = await readFile(`/proc/${row!.pid}/stat`, 'utf8').catch(() => undefined);
  return stat ? Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) : undefined;
}

/** The machine's idle (idle + iowait) and total ticks since boot, all CPUs. */
async function machineTicks(): Promise<{ idle: number; total: number }> {
  const f = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return { idle: f[3]! + f[4]!, total: f.reduce((a, b) => a + b, 0) };
}

// ---------------------------------------------------------------------------------------------
// The machine: what the same work costs after a process sleeps

/** The sleeps between units of work the probe tries, ms (0: back to back). */
const PROBE_GAPS_MS = [0, 1, 5, 20, 100];

/**
 * CPU µs a fixed unit of JavaScript (about 0.2 ms of arithmetic, no allocation) costs in a fresh
 * process, done back to back and after each sleep of PROBE_GAPS_MS. On CPUs that keep a sleeping
 * process's caches warm and its clock up, every figure is the same; where they differ, a process that
 * carries a smaller load, and so sleeps longer between turns, pays more for the same work, whatever the
 * code.
 */
async function probeMachine(): Promise<MachineProbe[]> {
  const code = `
    const unit = () => { let s = 0; for (let i = 0; i < 200000; i++) s += i % 7; return s; };
    const cell = new Int32Array(new SharedArrayBuffer(4));
    let sink = 0;
    for (let i = 0; i < 1000; i++) sink += unit();
    const out = [];
    for (const gapMs of ${JSON.stringify(PROBE_GAPS_MS)}) {
      const n = gapMs === 0 ? 2000 : Math.max(20, Math.round(1500 / gapMs));
      const t0 = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        if (gapMs > 0) Atomics.wait(cell, 0, 0, gapMs);
        sink += unit();
      }
      const used = process.cpuUsage(t0);
      out.push({ gapMs, cpuUsPerUnit: Math.round(((used.user + used.system) / n) * 10) / 10 });
    }
    process.stdout.write(JSON.stringify(sink > 0 ? out : []));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  // 'close', not 'exit': the output has been read to its end.
  const [status] = (await once(child, 'close')) as [number | null];
  if (status !== 0) throw new Error(`processes: the machine probe exited with ${status}`);
  return JSON.parse(text) as MachineProbe[];
}

const clientCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

// ---------------------------------------------------------------------------------------------
// Gateway and worker processes

/** A database of the suite, migrated and seeded, with its clients' keys. */
interface Stack {
  databaseUrl: string;
  apiKeys: string[];
}

export interface Child {
  child: ChildProcess;
  /** The gateway's base URL; the worker's ops server. */
  url: string;
}

/**
 * The processes this suite started, killed when it ends however it ends: here on failure, on exit,
 * and on SIGINT/SIGTERM (then the signal is raised again when nothing else handles it).
 */
export class Fleet {
  private readonly live = new Set<ChildProcess>();
  private readonly stopping = new Set<ChildProcess>();
  private fail: (err: Error) => void = () => {};
  /** Rejects when a process exits unasked or a client fails; armed afresh every round. */
  failed: Promise<never> = this.arm();
  private readonly killAll = () => {
    for (const child of this.live) child.kill('SIGKILL');
  };
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.killAll();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };

  constructor() {
    process.on('exit', this.killAll);
    process.once('SIGINT', this.onSignal);
    process.once('SIGTERM', this.onSignal);
  }

  /** A fresh `failed` for the next round. */
  arm(): Promise<never> {
    this.failed = new Promise<never>((_, reject) => (this.fail = reject));
    this.failed.catch(() => {});
    return this.failed;
  }

  reject(err: Error) {
    this.fail(err);
  }

  private spawn(name: string, args: string[], env: Record<string, string>): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.live.add(child);
    child.once('exit', (code, signal) => {
      this.live.delete(child);
      if (!this.stopping.has(child)) this.fail(new Error(`${name} exited (${code ?? signal})`));
    });
    return child;
  }

  /** A gateway without worker over `databaseUrl`, ready when it prints its URL; `env` adds to its environment. */
  async gateway(name: string, databaseUrl: string, env: Record<string, string> = {}): Promise<Child> {
    const child = this.spawn(name, ['src/main.ts'], {
      ...env,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      LEADGATE_INLINE_WORKER: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '1000000000',
      WS_MAX_SOCKETS_PER_KEY: '1000000000',
      WS_MAX_SOCKETS_PER_ADDRESS: '1000000000',
    });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} did not listen within ${START_SECS} s`)),
        START_SECS * 1000,
      );
      child.once('exit', (code, signal) =>
        reject(new Error(`${name} exited before listening (${code ?? signal}): ${out}`)),
      );
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const found = /leadgate is listening on (\S+)/.exec(out)?.[1];
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      });
    });
    // Its later output (warnings) is read and dropped, so a full pipe never blocks it.
    child.stdout!.removeAllListeners('data').resume();
    return { child, url };
  }

  /** A standalone worker running `concurrency` jobs at once, ready when its /ready answers 200; `env` adds to its environment. */
  async worker(
    name: string,
    databaseUrl: string,
    concurrency: number,
    env: Record<string, string> = {},
  ): Promise<Child> {
    const port = await freePort();
    const child = this.spawn(name, ['src/cli/index.ts', 'worker'], {
      ...env,
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      METRICS_PORT: String(port),
      WORKER_CONCURRENCY: String(concurrency),
      LOG_LEVEL: 'warn',
    });
    child.stdout!.resume();
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + START_SECS * 1000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`${name} exited before it was ready (${child.exitCode ?? child.signalCode})`);
      if (Date.now() > deadline) throw new Error(`${name}: ${url}/ready did not answer 200 within ${START_SECS} s`);
      const ok = await fetch(`${url}/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return { child, url };
      await sleep(100);
    }
  }

  /** SIGTERM (each shuts down cleanly), SIGKILL after 10 s. */
  async stop(children: Child[]) {
    await Promise.all(
      children.map(async ({ child }) => {
        this.stopping.add(child);
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  close() {
    this.killAll();
    process.off('exit', this.killAll);
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }
}

// ---------------------------------------------------------------------------------------------
// The load

async function call(url: string, init: RequestInit, what: string): Promise<string> {
  const response = await fetch(url, init);
  const text = await response.text();
  if (!response.ok) throw new Error(`${what} → ${response.status}: ${text}`);
  return text;
}

/** One run end to end, each request to the next gateway. */
async function oneRun(next: () => string, apiKey: string, places: number) {
  const auth = { authorization: `Bearer ${apiKey}` };
  const body = JSON.stringify({ searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: places });
  const started = JSON.parse(
    await call(
      `${next()}/api/v1/scrape/maps`,
      { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body },
      'POST /api/v1/scrape/maps',
    ),
  ) as { runId: string; status: string };
  let status = started.status;
  while (status !== 'SUCCEEDED') {
    if (TERMINAL.has(status)) throw new Error(`run ${started.runId} ended ${status}`);
    status = (
      JSON.parse(
        await call(
          `${next()}/api/v1/scrape/status/${started.runId}?waitForFinish=30`,
          { headers: auth },
          `GET status of ${started.runId}`,
        ),
      ) as { status: string }
    ).status;
  }
  const csv = await call(
    `${next()}/api/downloads/${started.runId}?format=csv`,
    { headers: auth },
    `GET /api/downloads/${started.runId}`,
  );
  const rows = (parse(csv, { columns: true }) as unknown[]).length;
  if (rows !== places) throw new Error(`run ${started.runId}: ${rows} rows downloaded, expected ${places}`);
}

interface Sample {
  at: number;
  machine: { idle: number; total: number };
  runs: number;
  gateway: number;
  worker: number;
  postgres: number;
  client: number;
  /** Timeslices so far, by kind and process. */
  slices: Record<keyof Wakeups, Slices>;
}

/** CPU ms per run between two samples, by kind, with the total of the three and the clients apart. */
function perRun(from: Sample, to: Sample): CpuPerRun {
  const count = Math.max(1, to.runs - from.runs);
  const per = (k: 'gateway' | 'worker' | 'postgres' | 'client') => round((to[k] - from[k]) / count, 2);
  const cpu = {
    gateway: per('gateway'),
    worker: per('worker'),
    postgres: per('postgres'),
    total: 0,
    client: per('client'),
  };
  cpu.total = round(cpu.gateway + cpu.worker + cpu.postgres, 2);
  return cpu;
}

/** A window's figures: runs, CPU per run, its halves, the machine's idle share. */
function windowFigures(before: Sample, mid: Sample, after: Sample, what: string) {
  const runs = after.runs - before.runs;
  if (runs === 0) throw new Error(`${what}: no run completed in the window`);
  const secs = (after.at - before.at) / 1000;
  const machineIdlePct = round(
    ((after.machine.idle - before.machine.idle) / (after.machine.total - before.machine.total)) * 100,
  );
  const halves: [number, number] = [perRun(before, mid).total, perRun(mid, after).total];
  const slicesPerRun = (k: keyof Wakeups) => round(slicesBetween(before.slices[k], after.slices[k]) / runs, 1);
  return {
    runs,
    secs,
    runsPerSec: round(runs / secs),
    cpuMsPerRun: perRun(before, after),
    machineIdlePct,
    halves,
    wakeupsPerRun: {
      gateway: slicesPerRun('gateway'),
      worker: slicesPerRun('worker'),
      postgres: slicesPerRun('postgres'),
    },
  };
}

/**
 * Runs started at `rate` a second on a fixed schedule, keys in turn, each end to end on its own
 * (an open loop: a slow run does not hold the next one back); `onDone` gets each run's duration.
 */
function pacedLoad(
  rate: number,
  keys: string[],
  run: (key: string) => Promise<void>,
  onDone: (ms: number) => void,
  onError: (err: Error) => void,
) {
  const t0 = performance.now();
  let started = 0;
  let inFlight = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let drained: (() => void) | undefined;
  const tick = () => {
    while (!stopped && t0 + (started * 1000) / rate <= performance.now()) {
      const key = keys[started++ % keys.length]!;
      const at = performance.now();
      inFlight++;
      // Ten seconds of runs behind: the configuration does not keep this pace.
      if (inFlight > rate * 10)
        return onError(new Error(`${inFlight} runs in flight at ${rate} runs/s: the pace is not kept`));
      run(key).then(
        () => {
          inFlight--;
          onDone(performance.now() - at);
          if (inFlight === 0) drained?.();
        },
        (err: Error) => onError(err),
      );
    }
    if (!stopped) timer = setTimeout(tick, Math.max(0, t0 + (started * 1000) / rate - performance.now()));
  };
  tick();
  return {
    /** Starts no more runs; resolves when those in flight have ended. */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
    },
  };
}

/**
 * One round of one configuration: its processes started, warmed up, measured saturated, then at the
 * pace `rate` (when given), then idle, and stopped.
 */
async function measureConfig(
  fleet: Fleet,
  databases: Stack[],
  postmaster: number,
  options: ProcessesOptions,
  config: string,
  rate?: number,
  sharedRate?: number,
): Promise<ConfigRound> {
  const { stacks: s, gateways: g, workers: w } = parseConfig(config);
  // Together: one database, every client. Apart: a database a stack, each with its share of the clients (8 over 4: 2 each).
  const stacks =
    s === 1
      ? [databases[0]!]
      : databases.slice(1, 1 + s).map((d, k) => ({ ...d, apiKeys: d.apiKeys.filter((_, i) => i % s === k) }));
  if (stacks.length < s) throw new Error(`processes: ${config}: ${s} databases apart were not made`);
  fleet.arm();
  const started: Child[] = [];
  const start = <T extends Child>(p: Promise<T>) =>
    p.then((c) => {
      started.push(c);
      return c;
    });
  try {
    // Every worker can take every client's run at once: job slots never limit a configuration.
    const t0 = performance.now();
    const fleets = await Promise.all(
      stacks.map(async ({ databaseUrl, apiKeys }, k) => {
        const name = (kind: string, i: number) => `${kind} ${i + 1}${s > 1 ? ` of stack ${k + 1}` : ''}`;
        const [gateways, workers] = await Promise.all([
          Promise.all(Array.from({ length: g }, (_, i) => start(fleet.gateway(name('gateway', i), databaseUrl)))),
          Promise.all(
            Array.from({ length: w }, (_, i) => start(fleet.worker(name('worker', i), databaseUrl, options.clients))),
          ),
        ]);
        let turn = 0;
        // Each request to the next gateway of the client's stack.
        return { gateways, workers, apiKeys, next: () => gateways[turn++ % gateways.length]!.url };
      }),
    );
    const gateways = fleets.flatMap((f) => f.gateways);
    const workers = fleets.flatMap((f) => f.workers);
    progress(
      `  processes: ${config}: ${gateways.length + workers.length} processes ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    let runs = 0;
    let stop = false;
    const clients = fleets.flatMap(({ apiKeys, next }) =>
      apiKeys.map(async (key) => {
        try {
          while (!stop) {
            await oneRun(next, key, options.places);
            runs++;
          }
        } catch (err) {
          fleet.reject(err as Error);
        }
      }),
    );
    const sample = async (): Promise<Sample> => {
      const at = performance.now();
      const done = runs;
      const client = clientCpuMs();
      const machine = await machineTicks();
      const [pg, ...rest] = await treeUsage([
        postmaster,
        ...gateways.map((c) => c.child.pid!),
        ...workers.map((c) => c.child.pid!),
      ]);
      const cpu = (xs: { cpuMs: number }[]) => xs.reduce((a, b) => a + b.cpuMs, 0);
      const slices = (xs: { slices: Slices }[]) => new Map(xs.flatMap((x) => [...x.slices]));
      const [gs, ws] = [rest.slice(0, gateways.length), rest.slice(gateways.length)];
      return {
        at,
        machine,
        runs: done,
        postgres: pg!.cpuMs,
        gateway: cpu(gs),
        worker: cpu(ws),
        client,
        slices: { gateway: slices(gs), worker: slices(ws), postgres: pg!.slices },
      };
    };
    const wait = (secs: number) => Promise.race([sleep(secs * 1000), fleet.failed]);
    /** Samples at the start, the middle and the end of a window of `measureSecs`. */
    const measure = async () => {
      const before = await sample();
      await wait(options.measureSecs / 2);
      const mid = await sample();
      await wait(options.measureSecs / 2);
      return [before, mid, await sample()] as const;
    };
    try {
      await wait(options.warmupSecs);
      const [before, mid, after] = await measure();
      stop = true;
      await Promise.race([Promise.all(clients), fleet.failed]);

      const pacedWindow = async (at: number): Promise<PacedRound> => {
        const ended: { at: number; ms: number }[] = [];
        // Apart, each stack carries its share of the pace with its own clients.
        const loads = fleets.map(({ apiKeys, next }) =>
          pacedLoad(
            at / fleets.length,
            apiKeys,
            (key) => oneRun(next, key, options.places),
            (ms) => {
              runs++;
              ended.push({ at: performance.now(), ms });
            },
            (err) => fleet.reject(err),
          ),
        );
        try {
          await wait(options.pacedSettleSecs);
          const [pBefore, pMid, pAfter] = await measure();
          const f = windowFigures(pBefore, pMid, pAfter, `${config} at ${at} runs/s`);
          const q = quantiles(ended.filter((e) => e.at > pBefore.at && e.at <= pAfter.at).map((e) => e.ms));
          return { rate: at, ...f, netMsPerRun: 0, latencyMs: { p50: round(q.p50), p95: round(q.p95) } };
        } finally {
          await Promise.race([Promise.all(loads.map((load) => load.stop())), fleet.failed]);
        }
      };
      let paced = rate === undefined ? undefined : await pacedWindow(rate);
      let shared = sharedRate === undefined ? undefined : await pacedWindow(sharedRate);

      await wait(1);
      const idleFrom = await sample();
      await wait(options.idleSecs);
      const idleTo = await sample();
      const idleSecs = (idleTo.at - idleFrom.at) / 1000;
      const rate_ = (k: 'gateway' | 'worker' | 'postgres') => round((idleTo[k] - idleFrom[k]) / idleSecs, 2);
      const idle = { gateway: rate_('gateway'), worker: rate_('worker'), postgres: rate_('postgres') };
      const idlePerSec = idle.gateway + idle.worker + idle.postgres;
      /** The total less what the idle rate would have used in the window. */
      const net = (w: { cpuMsPerRun: CpuPerRun; secs: number; runs: number }) =>
        round(w.cpuMsPerRun.total - (idlePerSec * w.secs) / w.runs, 2);

      const saturated = windowFigures(before, mid, after, config);
      const busyPct = round(
        (((saturated.cpuMsPerRun.total + saturated.cpuMsPerRun.client) * saturated.runs) /
          (saturated.secs * 1000 * os.cpus().length)) *
          100,
      );
      if (paced) paced = { ...paced, netMsPerRun: net(paced), secs: round(paced.secs, 2) };
      if (shared) shared = { ...shared, netMsPerRun: net(shared), secs: round(shared.secs, 2) };
      return {
        runs: saturated.runs,
        secs: round(saturated.secs, 2),
        runsPerSec: saturated.runsPerSec,
        cpuMsPerRun: saturated.cpuMsPerRun,
        idleMsPerSec: idle,
        netMsPerRun: net(saturated),
        busyPct,
        machineIdlePct: saturated.machineIdlePct,
        halves: saturated.halves,
        ...(paced ? { paced } : {}),
        ...(shared ? { shared } : {}),
      };
    } finally {
      stop = true;
    }
  } finally {
    await fleet.stop(started);
  }
}

const figures = (config: string, rounds: ConfigRound[]): ConfigFigures => {
  const { stacks, gateways, workers } = parseConfig(config);
  const med = (k: keyof CpuPerRun) => round(median(rounds.map((r) => r.cpuMsPerRun[k])), 2);
  return {
    config,
    stacks,
    gateways,
    workers,
    runsPerSec: round(median(rounds.map((r) => r.runsPerSec))),
    cpuMsPerRun: {
      gateway: med('gateway'),
      worker: med('worker'),
      postgres: med('postgres'),
      total: med('total'),
      client: med('client'),
    },
    idleMsPerSec: {
      gateway: round(median(rounds.map((r) => r.idleMsPerSec.gateway)), 2),
      worker: round(median(rounds.map((r) => r.idleMsPerSec.worker)), 2),
      postgres: round(median(rounds.map((r) => r.idleMsPerSec.postgres)), 2),
    },
    netMsPerRun: round(median(rounds.map((r) => r.netMsPerRun)), 2),
    busyPct: round(median(rounds.map((r) => r.busyPct))),
    machineIdlePct: round(median(rounds.map((r) => r.machineIdlePct))),
    paced: pacedFigures(rounds.map((r) => r.paced!)),
    ...(rounds[0]?.shared
      ? { shared: { rate: rounds[0].shared.rate, ...pacedFigures(rounds.map((r) => r.shared!)) } }
      : {}),
    rounds,
  };
};

const pacedFigures = (rounds: PacedRound[]): ConfigFigures['paced'] => {
  const med = (f: (r: PacedRound) => number, digits = 2) => round(median(rounds.map(f)), digits);
  return {
    runsPerSec: med((r) => r.runsPerSec),
    cpuMsPerRun: {
      gateway: med((r) => r.cpuMsPerRun.gateway),
      worker: med((r) => r.cpuMsPerRun.worker),
      postgres: med((r) => r.cpuMsPerRun.postgres),
      total: med((r) => r.cpuMsPerRun.total),
      client: med((r) => r.cpuMsPerRun.client),
    },
    netMsPerRun: med((r) => r.netMsPerRun),
    machineIdlePct: med((r) => r.machineIdlePct, 1),
    latencyMs: { p50: med((r) => r.latencyMs.p50, 1), p95: med((r) => r.latencyMs.p95, 1) },
    wakeupsPerRun: {
      gateway: med((r) => r.wakeupsPerRun.gateway, 1),
      worker: med((r) => r.wakeupsPerRun.worker, 1),
      postgres: med((r) => r.wakeupsPerRun.postgres, 1),
    },
  };
};

const label = (c: { stacks?: number; gateways: number; workers: number }) =>
  (c.stacks ?? 1) > 1 ? `${c.stacks} × (${c.gateways} × ${c.workers})` : `${c.gateways} × ${c.workers}`;
/** The configurations of one database: those the goal and the capacity are read from (not the baselines apart). */
const onOneDatabase = (configs: ConfigFigures[]) => configs.filter((c) => (c.stacks ?? 1) === 1);
const wakeups = (w: Wakeups | undefined) => (w ? `${w.gateway}/${w.worker}/${w.postgres}` : '');

const cpuLine = (c: CpuPerRun) => `gateway ${c.gateway} + worker ${c.worker} + Postgres ${c.postgres} = ${c.total} ms`;
const ratioLine = (c: CpuPerRun) =>
  `gateway ${c.gateway}, worker ${c.worker}, Postgres ${c.postgres}, total ${c.total}`;
const divided = (a: CpuPerRun, b: CpuPerRun): CpuPerRun => ({
  gateway: round(a.gateway / b.gateway, 2),
  worker: round(a.worker / b.worker, 2),
  postgres: round(a.postgres / b.postgres, 2),
  total: round(a.total / b.total, 2),
  client: round(a.client / b.client, 2),
});

/** 1 × 1 at the pace ÷ SHARE beside the configuration whose processes each carry that load at the pace. */
function perProcessLoad(r: ProcessesResult): string[] {
  const one = r.configs.find((c) => c.config === '1x1')?.shared;
  const many =
    r.configs.find((c) => c.config === `${SHARE}x${SHARE}`) ??
    onOneDatabase(r.configs).find((c) => c.gateways === SHARE || c.workers === SHARE);
  if (!one) return [];
  return [
    `   1 × 1 at ${one.rate} runs/s (the pace ÷ ${SHARE}, what each process of ${SHARE} × ${SHARE} carries at the pace): ${one.runsPerSec} runs/s, ${cpuLine(one.cpuMsPerRun)} a run (net ${one.netMsPerRun}), wake-ups a run ${wakeups(one.wakeupsPerRun)}`,
    ...(many
      ? [
          `   ${label(many)} at the pace: ${cpuLine(many.paced.cpuMsPerRun)}; ÷ 1 × 1 at ${one.rate} runs/s: ${ratioLine(divided(many.paced.cpuMsPerRun, one.cpuMsPerRun))}`,
        ]
      : []),
  ];
}

/** Each configuration of G × G beside the same processes apart, at the pace. */
function togetherLines(r: ProcessesResult): string[] {
  return (r.together ?? []).map((t) => {
    const [c, a] = [r.configs.find((x) => x.config === t.config)!, r.configs.find((x) => x.config === t.apart)!];
    return `   ${label(c)} together ÷ ${label(a)} apart (the same processes, each with the same load, sharing only the server): ${ratioLine(t.ratio)}; lowest ÷ highest ${t.flat.toFixed(3)}; wake-ups a run ${wakeups(t.wakeups.together)} against ${wakeups(t.wakeups.apart)}`;
  });
}

/** What the probe found: the same work's CPU back to back and after each sleep, with its ratio to back to back. */
function machineLine(probe: MachineProbe[] | undefined): string[] {
  const first = probe?.[0];
  if (!probe || !first) return [];
  const after = probe
    .slice(1)
    .map((m) => `after ${m.gapMs} ms asleep ${m.cpuUsPerUnit} µs (× ${round(m.cpuUsPerUnit / first.cpuUsPerUnit, 2)})`);
  return [
    `   this machine: a fixed unit of JavaScript costs ${first.cpuUsPerUnit} µs of CPU back to back; ${after.join(', ')}`,
  ];
}

/** Figures saved before the paced window existed have no `paced`: they meet nothing. */
/** The goal's CPU figure: the lowest together ÷ apart, undefined when no configuration apart ran. */
const togetherFlat = (r: ProcessesResult) =>
  r.together?.length ? Math.min(...r.together.map((t) => t.flat)) : undefined;
const pacedMet = (r: ProcessesResult) =>
  r.paced !== undefined && r.paced.keptPace >= KEPT_PACE && (togetherFlat(r) ?? r.paced.totalCpu) >= GOAL_FLAT;

export const processes: Suite<ProcessesResult> = {
  name: 'processes',
  key: 'processes',
  quick: true,
  flags: ['warmup-secs', 'measure-secs', 'paced-rate'],
  async run(context) {
    const base = context.quick ? QUICK : FULL;
    const options: ProcessesOptions = {
      ...base,
      warmupSecs: context.count('warmup-secs') ?? base.warmupSecs,
      measureSecs: context.count('measure-secs') ?? base.measureSecs,
      pacedRate: context.count('paced-rate') ?? base.pacedRate,
    };
    const loadBefore = os.loadavg().map((x) => round(x, 2));
    progress('processes: what the same work costs after a sleep, on this machine');
    const machine = await probeMachine();
    const server = await openBenchServer();
    const fleet = new Fleet();
    try {
      // The database every configuration together uses, with a key a client; then, for the configurations
      // apart, a database a stack, the clients shared out between them.
      const apart = Math.max(1, ...options.configs.map((c) => parseConfig(c).stacks));
      const databases: Stack[] = [];
      let postmaster = 0;
      for (let d = 0; d < (apart > 1 ? 1 + apart : 1); d++) {
        const databaseUrl = await server.createDatabase();
        await migrateDatabase(databaseUrl);
        const { db, sql } = connect(databaseUrl, { max: 2 });
        try {
          progress(
            `processes: seeding the small catalog, one account per client${d === 0 ? '' : ` (a database apart, ${d} of ${apart})`}`,
          );
          await seedCatalog(sql, { scale: 'small' });
          const apiKeys: string[] = [];
          for (let i = 0; i < options.clients; i++)
            apiKeys.push(
              (
                await createAccount(db, {
                  name: `bench-processes-${d}-${i + 1}`,
                  plan: 'scale',
                  creditsMicros: 10n ** 13n,
                })
              ).apiKey,
            );
          databases.push({ databaseUrl, apiKeys });
          await sql`vacuum analyze`;
          await sql`checkpoint`.catch(() => {});
          const local = await localPostmaster(sql);
          if (local === undefined)
            throw new Error('processes: the Postgres server must run on this machine (its CPU is read from /proc)');
          postmaster = local;
        } finally {
          await sql.end();
        }
      }
      // A priming round, not kept: the database's first minute under load (autovacuum and statistics of the
      // freshly seeded tables, cold caches) fell on whichever configuration came first (its Postgres CPU
      // a run 13 ms where the same configuration's later round took 8).
      // Its saturated rate sets the pace, unless given: half of it, which every configuration carries.
      if (options.primed) {
        progress(`processes: priming round (${options.configs[0]}, not kept)`);
        const priming = await measureConfig(fleet, databases, postmaster, options, options.configs[0]!);
        options.pacedRate ??= Math.max(1, Math.floor(priming.runsPerSec * PACED_SHARE));
      }
      const rate = options.pacedRate ?? 10;
      const kept = await alternate(options.configs, options.rounds, async (config, i) => {
        const r = await measureConfig(
          fleet,
          databases,
          postmaster,
          options,
          config,
          rate,
          config === '1x1' ? round(rate / SHARE, 2) : undefined,
        );
        const c = r.cpuMsPerRun;
        const p = r.paced!;
        progress(
          `  processes: round ${i + 1} ${config}: ${r.runsPerSec} runs/s, CPU ms per run gateway ${c.gateway} + worker ${c.worker} + Postgres ${c.postgres} = ${c.total} (halves ${r.halves.join(' / ')}; net of idle ${r.netMsPerRun}; clients ${c.client}), idle ms/s ${r.idleMsPerSec.gateway} + ${r.idleMsPerSec.worker} + ${r.idleMsPerSec.postgres}, busy ${r.busyPct} %, machine idle ${r.machineIdlePct} %; ` +
            [p, ...(r.shared ? [r.shared] : [])]
              .map(
                (x) =>
                  `at ${x.rate} runs/s: ${x.runsPerSec} runs/s, ${x.cpuMsPerRun.gateway} + ${x.cpuMsPerRun.worker} + ${x.cpuMsPerRun.postgres} = ${x.cpuMsPerRun.total} ms (halves ${x.halves.join(' / ')}; net ${x.netMsPerRun}), wake-ups a run ${wakeups(x.wakeupsPerRun)}, run p50 ${x.latencyMs.p50} ms p95 ${x.latencyMs.p95} ms, machine idle ${x.machineIdlePct} %; `,
              )
              .join('') +
            `load ${os.loadavg()[0]!.toFixed(2)}`,
        );
        return r;
      });
      const configs = options.configs.map((c) => figures(c, kept[c]!));
      const ratio = (xs: number[]) => round(Math.min(...xs) / Math.max(...xs), 3);
      // The goal and the capacity are read from the configurations on one database; those apart are their baseline.
      const one = onOneDatabase(configs);
      const worst = one.reduce((a, b) => (b.cpuMsPerRun.postgres > a.cpuMsPerRun.postgres ? b : a));
      const pairs = one.flatMap((c) => {
        const apart =
          c.gateways > 1 && c.gateways === c.workers
            ? configs.find((a) => a.stacks === c.gateways && a.gateways === 1 && a.workers === 1)
            : undefined;
        if (!apart) return [];
        const [t, a] = [c.paced.cpuMsPerRun, apart.paced.cpuMsPerRun];
        return [
          {
            config: c.config,
            apart: apart.config,
            ratio: divided(t, a),
            flat: ratio([t.total, a.total]),
            wakeups: { together: c.paced.wakeupsPerRun, apart: apart.paced.wakeupsPerRun },
          },
        ];
      });
      return {
        date: new Date().toISOString(),
        database: databaseKind(),
        cpus: os.cpus().length,
        clockTicks,
        loadAverage: { before: loadBefore, after: os.loadavg().map((x) => round(x, 2)) },
        options,
        configs,
        flatness: {
          runsPerSec: ratio(one.map((c) => c.runsPerSec)),
          totalCpu: ratio(one.map((c) => c.cpuMsPerRun.total)),
          netCpu: ratio(one.map((c) => c.netMsPerRun)),
        },
        paced: {
          rate,
          totalCpu: ratio(one.map((c) => c.paced.cpuMsPerRun.total)),
          netCpu: ratio(one.map((c) => c.paced.netMsPerRun)),
          keptPace: round(Math.min(...configs.map((c) => c.paced.runsPerSec)) / rate, 3),
        },
        ...(pairs.length > 0 ? { together: pairs } : {}),
        postgresMsPerRun: { ms: worst.cpuMsPerRun.postgres, config: worst.config },
        capacity: CORES.map((cores) => ({
          cores,
          runsPerSec: Math.floor((cores * 1000) / worst.cpuMsPerRun.postgres),
        })),
        machine,
      };
    } finally {
      fleet.close();
      await server.close();
    }
  },
  format(r) {
    const o = r.options;
    const w = [14, 8, 9, 8, 10, 8, 8, 9, 7, 16];
    const rounds = (c: ConfigFigures) =>
      c.rounds
        .map(
          (x) =>
            `${x.runsPerSec} runs/s ${x.cpuMsPerRun.total} ms (halves ${x.halves.join(' / ')}; net ${x.netMsPerRun}, machine idle ${x.machineIdlePct} %)`,
        )
        .join(', ');
    const worst = r.configs.find((c) => c.config === r.postgresMsPerRun.config)!;
    return [
      `14. Runs end to end over gateway and worker processes on one ${r.database} Postgres: ${o.clients} clients doing ${o.places}-place maps runs back to back`,
      `   (start, status with waitForFinish, CSV download; each request to the next gateway), ${o.rounds} × ${o.measureSecs} s per configuration${o.primed ? ' (after a priming round)' : ''} after ${o.warmupSecs} s`,
      `   of warm-up, fresh processes each round, rotating order; CPU from /proc (CLK_TCK ${r.clockTicks}), ms per completed run; load ${r.loadAverage.before[0]} → ${r.loadAverage.after[0]}`,
      `   CPU ms per run: gateways, workers, Postgres, their total, the total less the idle rate (net), the clients; idle: CPU ms/s with no run going`,
      pad(
        [
          'gw × workers',
          'runs/s',
          'gateway',
          'worker',
          'Postgres',
          'total',
          'net',
          'clients',
          'busy %',
          'idle gw/wk/pg',
        ],
        w,
      ),
      ...r.configs.map((c) =>
        pad(
          [
            label(c),
            c.runsPerSec,
            c.cpuMsPerRun.gateway,
            c.cpuMsPerRun.worker,
            c.cpuMsPerRun.postgres,
            c.cpuMsPerRun.total,
            c.netMsPerRun,
            c.cpuMsPerRun.client,
            c.busyPct,
            `${c.idleMsPerSec.gateway}/${c.idleMsPerSec.worker}/${c.idleMsPerSec.postgres}`,
          ],
          w,
        ),
      ),
      ...r.configs.map((c) => `   rounds ${label(c)}: ${rounds(c)}`),
      `   saturated, lowest ÷ highest: runs/s ${r.flatness.runsPerSec.toFixed(3)}, total CPU per run ${r.flatness.totalCpu.toFixed(3)}, net ${r.flatness.netCpu.toFixed(3)}   (${r.cpus} CPUs shared by up to ${Math.max(...r.configs.map((c) => c.gateways + c.workers)) + 2} processes: see the pace below)`,
      `   The same processes at a pace of ${r.paced.rate} runs started a second (an open loop, ${o.pacedSettleSecs} s to settle, ${o.measureSecs} s measured); run: start to download, ms;`,
      `   wake-ups: the times the gateways', workers' and Postgres' threads were put on a CPU, per run`,
      pad(
        [
          'gw × workers',
          'runs/s',
          'gateway',
          'worker',
          'Postgres',
          'total',
          'net',
          'run p50',
          'run p95',
          'machine idle %',
          'wake-ups gw/wk/pg',
        ],
        [14, 8, 9, 8, 10, 8, 8, 9, 9, 16, 18],
      ),
      ...r.configs.map((c) => {
        const p = c.paced;
        return pad(
          [
            label(c),
            p.runsPerSec,
            p.cpuMsPerRun.gateway,
            p.cpuMsPerRun.worker,
            p.cpuMsPerRun.postgres,
            p.cpuMsPerRun.total,
            p.netMsPerRun,
            p.latencyMs.p50,
            p.latencyMs.p95,
            p.machineIdlePct,
            wakeups(p.wakeupsPerRun),
          ],
          [14, 8, 9, 8, 10, 8, 8, 9, 9, 16, 18],
        );
      }),
      ...r.configs.map(
        (c) =>
          `   rounds ${label(c)} at the pace: ${c.rounds.map((x) => `${x.paced!.runsPerSec} runs/s ${x.paced!.cpuMsPerRun.total} ms (halves ${x.paced!.halves.join(' / ')}; net ${x.paced!.netMsPerRun})`).join(', ')}`,
      ),
      ...perProcessLoad(r),
      ...togetherLines(r),
      `   at the pace, lowest ÷ highest of the configurations on one database: total CPU per run ${r.paced.totalCpu.toFixed(3)}, net ${r.paced.netCpu.toFixed(3)}; lowest runs/s ÷ the pace ${r.paced.keptPace.toFixed(3)}`,
      `   goal: every configuration keeps the pace (≥ ${KEPT_PACE}) and ${togetherFlat(r) !== undefined ? `each G × G together costs within ${GOAL_FLAT} of the same processes apart (lowest ÷ highest ${togetherFlat(r)!.toFixed(3)})` : `lowest ÷ highest ≥ ${GOAL_FLAT} (no configuration apart ran)`}: ${verdict(pacedMet(r))}`,
      ...machineLine(r.machine),
      `   runs/s one Postgres of N cores would carry at ${r.postgresMsPerRun.ms} ms of Postgres CPU a run (${label(worst)}, the highest), CPU only (an upper bound: no I/O or lock waits):`,
      `   ${r.capacity.map((c) => `${c.cores} cores ${c.runsPerSec.toLocaleString('en-US')}`).join(', ')}`,
    ].join('\n');
  },
  goals: (r) => ({
    minRatio: GOAL_FLAT,
    together: togetherFlat(r),
    pacedTotalCpu: r.paced?.totalCpu,
    keptPace: r.paced?.keptPace,
    met: pacedMet(r),
  }),
};
