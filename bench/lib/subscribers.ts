/**
 * `subscribers`: runs' progress fanned out to N graphql-ws subscribers (`npm run bench` 10,000;
 * `--subscribers N`), spread evenly over K runs (default one run per 1,000 subscribers; `--runs K`),
 * against a bare `ws` broadcast of the same messages at the same pace from this process.
 *
 * Three kinds of process, as in service: this one is the gateway (built without a worker; also the
 * bare server), `subscriber-engine.ts` executes the runs as a worker would (`executeRun` on its own
 * Core, maps runs whose source hands out a page of 50 places every `paceMs`, the K runs' pages evenly
 * staggered: one progress event per batch, spaced) and stamps each event when its transaction has
 * committed, and `subscriber-clients.ts` (one process per 5,000 clients) holds the clients and stamps
 * every message it receives. All read `process.hrtime` (CLOCK_MONOTONIC, one clock for the machine;
 * checked at start), so a delay is a receipt stamp minus a commit stamp. The engine has nothing else
 * to do, so its stamp is not held back by the fan-out it causes; the clients' parsing does not share
 * the gateway's event loop; and the gateway's memory per connection is its own. Every client checks
 * that it received every event of its run, once, in order.
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocketServer, type WebSocket } from 'ws';
import type { RunSnapshot } from '../../src/runs/view.ts';
import {
  alternate,
  databaseKind,
  median,
  n,
  pad,
  quantiles,
  request,
  round,
  sleep,
  startGateway,
  verdict,
  type DatabaseKind,
  type Gateway,
  type Quantiles,
  type Suite,
} from './harness.ts';
import type { ClientCommand, ClientReply, Collected, Mode } from './subscriber-clients.ts';
import { eventKey, type EngineCommand, type EngineReply, type Publication } from './subscriber-engine.ts';

export interface Pace {
  /** One batch (one progress event) every paceMs. */
  paceMs: number;
  /** Progress events per run (batches of 50 places); the run's end adds one more. */
  events: number;
}

export interface SubscribersOptions {
  subscribers: number;
  /** Runs followed, each by subscribers / runs clients. */
  runs: number;
  /** Child processes holding the clients, each an equal share. */
  clientProcesses: number;
  /** Each pace measured on its own. */
  paces: Pace[];
  /** Rounds per variant and pace, alternated G B, B G, …; preceded by one short warm-up of each variant. */
  rounds: number;
  warmupEvents: number;
  /** Connections each client process opens at once. */
  concurrency: number;
  goalP95Ms: number;
  /** Gateway heap per connection, KB. */
  goalHeapKB: number;
}

export interface PerConnection {
  heapKB: number;
  externalKB: number;
  rssKB: number;
}

export interface RoundResult {
  mode: Mode;
  events: number;
  /** Σ over events of the subscribers of its run. */
  expected: number;
  /** Receipts of published events (duplicates included). */
  delivered: number;
  /** (client, event of its run) pairs not received. */
  lost: number;
  duplicates: number;
  unexpected: number;
  /** Clients that received exactly their run's events, once each, in order; clients that received one after a later one. */
  complete: number;
  outOfOrder: number;
  /** Publication (commit, or the broadcast call) → receipt, every (event, client) pair, ms. */
  latency: Quantiles;
  /** Per event, publication → its last client's receipt, ms. */
  lastReceipt: Quantiles;
  /** graphql: per event, commit → the NOTIFY handed to every subscriber's queue in the gateway, ms. */
  dispatched?: Quantiles;
  /** graphql: per batch, the source handing it out → its transaction committed (engine process), ms. */
  engineTx?: Quantiles;
  openSecs: number;
  memory: PerConnection;
  messageBytes: number;
  /** From the first event to the last receipt: event-loop utilisation and CPU per event, both processes. */
  /** The gateway's event-loop delay (perf_hooks, 10 ms resolution) over the round: its longest stall and its p99. */
  server: { elu: number; cpuMsPerEvent: number; loopDelayMaxMs: number; loopDelayP99Ms: number };
  clients: { elu: number; cpuMsPerEvent: number; loopDelayMaxMs: number };
  errors: string[];
}

export interface VariantResult {
  label: string;
  latency: Quantiles;
  expected: number;
  delivered: number;
  lost: number;
  /** Every round's clients complete (every event of its run, once, in order). */
  allComplete: boolean;
  memory: PerConnection;
  rounds: RoundResult[];
}

export interface PaceResult extends Pace {
  graphql: VariantResult;
  bare: VariantResult;
  /** graphql / bare. */
  ratio: { p50: number; p95: number };
  /** graphql p95 ≤ goal and every subscriber got every event of its run, once, in order. */
  goalMet: boolean;
}

export interface SubscribersResult {
  options: SubscribersOptions;
  database: DatabaseKind;
  /** The open-file limit of this process (raised when it was too low) and its children, before and as run. */
  openFilesLimit: number | null;
  openFilesRaisedFrom?: number | null;
  query: string;
  paces: PaceResult[];
  /**
   * Per connection in the gateway process: medians over the measured rounds, and the warm-up's graphql
   * round, the first time this process opened the connections (later rounds reuse memory already
   * taken from the system, so their RSS grows less).
   */
  memory: { graphql: PerConnection; bare: PerConnection; graphqlFirstOpen: PerConnection };
  /** graphql heap per connection (median of rounds) ≤ goalHeapKB. */
  heapGoalMet: boolean;
}

const QUERY =
  'subscription($id: ID!) { runProgress(id: $id) { id status statusMessage handled requested itemCount cost runTimeSecs } }';
const PAGE = 50; // the maps runner's page: one batch, one event

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/** `global.gc`, exposed at run time when node was started without `--expose-gc`. */
function gcFunction(): () => void {
  if (typeof globalThis.gc === 'function') return globalThis.gc as () => void;
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

async function settledMemory(gc: () => void) {
  const samples: NodeJS.MemoryUsage[] = [];
  for (let i = 0; i < 3; i++) {
    await sleep(100);
    gc();
    gc();
    samples.push(process.memoryUsage());
  }
  const mid = (key: keyof NodeJS.MemoryUsage) => median(samples.map((s) => s[key]));
  return { heap: mid('heapUsed'), external: mid('external'), rss: mid('rss') };
}

const perConnection = (
  before: Awaited<ReturnType<typeof settledMemory>>,
  after: typeof before,
  count: number,
): PerConnection => ({
  heapKB: round((after.heap - before.heap) / count / 1024, 1),
  externalKB: round((after.external - before.external) / count / 1024, 1),
  rssKB: round((after.rss - before.rss) / count / 1024, 1),
});

/** This process's open-file limits (soft, hard); null when unlimited or unknown. */
async function openFilesLimits(): Promise<{ soft: number | null; hard: number | null }> {
  try {
    const limits = await readFile('/proc/self/limits', 'utf8');
    const match = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limits);
    const value = (text: string | undefined) => (text === undefined || text === 'unlimited' ? null : Number(text));
    return { soft: value(match?.[1]), hard: value(match?.[2]) };
  } catch {
    return { soft: null, hard: null };
  }
}

/**
 * Raises this process's open-file limit to `wanted` when it is lower (children forked later inherit
 * it): `prlimit` on its own pid, the soft limit up to the hard one unprivileged, beyond with
 * CAP_SYS_RESOURCE (root). Returns the limit before and after; throws with the `ulimit -n` to run
 * first when it cannot.
 */
async function ensureOpenFiles(wanted: number): Promise<{ before: number | null; after: number | null }> {
  const { soft, hard } = await openFilesLimits();
  if (soft === null || soft >= wanted) return { before: soft, after: soft };
  const target = hard !== null && hard >= wanted ? `${wanted}:${hard}` : `${wanted}:${wanted}`;
  try {
    await promisify(execFile)('prlimit', ['--pid', String(process.pid), `--nofile=${target}`]);
  } catch {
    // no prlimit, or not allowed beyond the hard limit
  }
  const after = (await openFilesLimits()).soft;
  if (after !== null && after < wanted) {
    throw new Error(
      `the open-file limit is ${after}, too low for ${wanted} descriptors, and could not be raised (hard limit ${hard ?? 'unlimited'}): run \`ulimit -n ${wanted}\` (as root, or after raising the hard limit) first, or lower --subscribers`,
    );
  }
  return { before: soft, after };
}

type Payload<C> = C extends { seq: number } ? Omit<C, 'seq'> : never;

/** A child process driven by numbered commands over IPC; each answer carries its command's `seq`. */
class Child<C extends { cmd: string; seq: number }, R extends { seq: number; ok: boolean }> {
  private seq = 0;
  private waiting = new Map<
    number,
    { resolve: (reply: Extract<R, { ok: true }>) => void; reject: (err: Error) => void }
  >();
  private readonly child: ChildProcess;

  constructor(
    file: string,
    private readonly name: string,
  ) {
    this.child = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    this.child.on('message', (reply: R & { error?: string }) => {
      const waiter = this.waiting.get(reply.seq);
      if (!waiter) return;
      this.waiting.delete(reply.seq);
      if (reply.ok) waiter.resolve(reply as Extract<R, { ok: true }>);
      else waiter.reject(new Error(`${this.name}: ${reply.error}`));
    });
    this.child.on('exit', (code, signal) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`${this.name} exited (${code ?? signal})`));
      this.waiting.clear();
    });
  }

  send(command: Payload<C>): Promise<Extract<R, { ok: true }>> {
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject });
      this.child.send({ ...command, seq });
    });
  }

  /** Both processes read CLOCK_MONOTONIC: the child's reading must fall between two of ours. */
  async checkClock(): Promise<number> {
    let worst = 0;
    for (let i = 0; i <= 20; i++) {
      const t0 = nowMs();
      const { clock } = (await this.send({ cmd: 'clock' } as Payload<C>)) as { clock?: number };
      const t1 = nowMs();
      if (clock === undefined || clock < t0 || clock > t1)
        throw new Error(`${this.name}: clocks disagree: child ${clock}, parent ${t0}…${t1}`);
      if (i > 0) worst = Math.max(worst, t1 - t0); // the first waits for the child to load
    }
    return worst;
  }

  async stop() {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    if (this.child.connected) this.child.disconnect();
    await Promise.race([exited, sleep(10_000)]);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
  }
}

type Engine = Child<EngineCommand, EngineReply>;
type OpenCommand = Extract<ClientCommand, { cmd: 'open' }>;

/** The clients, spread over several processes: each opens, marks, collects and closes its share. */
class Clients {
  private readonly children: Child<ClientCommand, ClientReply>[];

  constructor(processes: number) {
    this.children = Array.from(
      { length: processes },
      (_, i) => new Child<ClientCommand, ClientReply>('./subscriber-clients.ts', `subscriber clients ${i + 1}`),
    );
  }

  async checkClock(): Promise<number> {
    let worst = 0;
    for (const child of this.children) worst = Math.max(worst, await child.checkClock());
    return worst;
  }

  /** Client i follows runIds[i]; process j opens clients j, j + P, j + 2P, …, all processes at once. */
  async open(command: Omit<OpenCommand, 'seq' | 'cmd'>): Promise<{ ms: number }> {
    const t0 = nowMs();
    const p = this.children.length;
    await Promise.all(
      this.children.map((child, j) =>
        child.send({ ...command, cmd: 'open', runIds: command.runIds.filter((_, i) => i % p === j) }),
      ),
    );
    return { ms: nowMs() - t0 };
  }

  async mark() {
    await Promise.all(this.children.map((child) => child.send({ cmd: 'mark' })));
  }

  async collect(timeoutMs: number, expected: Record<string, string[]>): Promise<Collected> {
    const parts = (
      await Promise.all(this.children.map((child) => child.send({ cmd: 'collect', timeoutMs, expected })))
    ).map((reply) => reply.collected!);
    const receipts: Record<string, number[]> = {};
    for (const part of parts) {
      for (const [key, times] of Object.entries(part.receipts)) {
        const all = receipts[key] ?? [];
        for (const t of times) all.push(t);
        receipts[key] = all;
      }
    }
    const sum = (key: 'clients' | 'complete' | 'ended' | 'outOfOrder' | 'missing' | 'duplicates' | 'cpuMs') =>
      parts.reduce((total, part) => total + part[key], 0);
    return {
      receipts,
      clients: sum('clients'),
      complete: sum('complete'),
      ended: sum('ended'),
      outOfOrder: sum('outOfOrder'),
      missing: sum('missing'),
      duplicates: sum('duplicates'),
      payloads: Object.assign({}, ...parts.map((part) => part.payloads)) as Record<string, unknown>,
      messageBytes: parts.find((part) => part.messageBytes > 0)?.messageBytes ?? 0,
      errors: parts.flatMap((part) => part.errors).slice(0, 10),
      // The processes' mean: the share of a core each was busy.
      elu: parts.reduce((total, part) => total + part.elu, 0) / parts.length,
      loopDelayMaxMs: Math.max(...parts.map((part) => part.loopDelayMaxMs)),
      cpuMs: sum('cpuMs'),
      wallMs: Math.max(...parts.map((part) => part.wallMs)),
    };
  }

  async close() {
    await Promise.all(this.children.map((child) => child.send({ cmd: 'close' })));
  }

  async stop() {
    await Promise.all(this.children.map((child) => child.stop()));
  }
}

type Env = Gateway;

async function startRun(env: Env, events: number): Promise<string> {
  const { json } = await request<{ runId?: string; status?: string }>(env, 'POST', '/api/v1/scrape/maps', {
    searchStringsArray: ['dentist'],
    maxCrawledPlacesPerSearch: events * PAGE,
  });
  if (!json.runId || json.status !== 'RUNNING') throw new Error(`start: ${JSON.stringify(json)}`);
  return json.runId;
}

/** Client i follows run i mod K. */
const clientRuns = (runIds: string[], subscribers: number) =>
  Array.from({ length: subscribers }, (_, i) => runIds[i % runIds.length]!);

/** Each run's event keys in the order they were published. */
function expectedKeys(publications: Publication[]): Record<string, string[]> {
  const expected: Record<string, string[]> = {};
  for (const p of publications) {
    const keys = expected[p.runId] ?? [];
    keys.push(p.key);
    expected[p.runId] = keys;
  }
  return expected;
}

interface Measured {
  publications: Publication[];
  /** Clients following each run. */
  followers: Record<string, number>;
  collected: Collected;
  openSecs: number;
  memory: PerConnection;
  server: { elu: number; cpuMs: number; loopDelayMaxMs: number; loopDelayP99Ms: number };
  dispatched?: Map<string, number>;
  engineTx?: number[];
}

const countFollowers = (runIds: string[]) => {
  const followers: Record<string, number> = {};
  for (const runId of runIds) followers[runId] = (followers[runId] ?? 0) + 1;
  return followers;
};

function pairLatencies(m: Measured): number[] {
  const out: number[] = [];
  for (const p of m.publications) for (const t of m.collected.receipts[p.key] ?? []) out.push(t - p.at);
  return out;
}

function summarise(mode: Mode, m: Measured): RoundResult {
  const last: number[] = [];
  const dispatched: number[] = [];
  let delivered = 0;
  let expected = 0;
  const published = new Set<string>();
  for (const p of m.publications) {
    published.add(p.key);
    expected += m.followers[p.runId] ?? 0;
    const times = m.collected.receipts[p.key] ?? [];
    delivered += times.length;
    if (times.length > 0) last.push(times.reduce((a, b) => Math.max(a, b), -Infinity) - p.at);
    const at = m.dispatched?.get(p.key);
    if (at !== undefined) dispatched.push(at - p.at);
  }
  const unexpected = Object.entries(m.collected.receipts)
    .filter(([key]) => !published.has(key))
    .reduce((sum, [, times]) => sum + times.length, 0);
  const events = m.publications.length;
  return {
    mode,
    events,
    expected,
    delivered,
    lost: m.collected.missing,
    duplicates: m.collected.duplicates,
    unexpected,
    complete: m.collected.complete,
    outOfOrder: m.collected.outOfOrder,
    latency: quantiles(pairLatencies(m)),
    lastReceipt: quantiles(last),
    ...(m.dispatched ? { dispatched: quantiles(dispatched) } : {}),
    ...(m.engineTx ? { engineTx: quantiles(m.engineTx) } : {}),
    openSecs: round(m.openSecs, 1),
    memory: m.memory,
    messageBytes: m.collected.messageBytes,
    server: {
      elu: round(m.server.elu, 2),
      cpuMsPerEvent: round(m.server.cpuMs / events, 2),
      loopDelayMaxMs: round(m.server.loopDelayMaxMs),
      loopDelayP99Ms: round(m.server.loopDelayP99Ms),
    },
    clients: {
      elu: round(m.collected.elu, 2),
      cpuMsPerEvent: round(m.collected.cpuMs / events, 2),
      loopDelayMaxMs: round(m.collected.loopDelayMaxMs),
    },
    errors: m.collected.errors,
  };
}

/**
 * With SUBSCRIBERS_PROFILE=<dir>, a CPU profile of this process while a graphql round's events fan
 * out (not the connection setup or the forced collections), written as <dir>/<label>-<time>.cpuprofile.
 */
async function startProfile() {
  const dir = process.env.SUBSCRIBERS_PROFILE;
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
  await post('Profiler.enable');
  await post('Profiler.start');
  return {
    async stop(label: string) {
      const { profile } = (await post('Profiler.stop')) as { profile: object };
      session.disconnect();
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, `${label}-${Date.now()}.cpuprofile`), JSON.stringify(profile));
    },
  };
}

function serverMark() {
  const elu = performance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  return () => {
    const used = process.cpuUsage(cpu);
    delay.disable();
    return {
      elu: performance.eventLoopUtilization(elu).utilization,
      cpuMs: (used.user + used.system) / 1000,
      loopDelayMaxMs: delay.max / 1e6,
      loopDelayP99Ms: delay.percentile(99) / 1e6,
    };
  };
}

/** `leadgate_events`, the channel of src/events/bus.ts. */
const EVENTS_CHANNEL = 'leadgate_events';

/** K maps runs executed by the engine process at once, their progress followed by `subscribers` graphql-ws clients. */
async function graphqlRound(
  env: Env,
  clients: Clients,
  engine: Engine,
  gc: () => void,
  options: SubscribersOptions,
  { paceMs, events }: Pace,
): Promise<Measured> {
  const { core } = env.app;
  const runIds: string[] = [];
  for (let k = 0; k < options.runs; k++) runIds.push(await startRun(env, events));
  const assigned = clientRuns(runIds, options.subscribers);
  const before = await settledMemory(gc);
  const url = `${env.baseUrl.replace(/^http/, 'ws')}/graphql`;
  const opened = await clients.open({
    mode: 'graphql',
    url,
    apiKey: env.apiKey,
    query: QUERY,
    runIds: assigned,
    concurrency: options.concurrency,
  });
  const memory = perConnection(before, await settledMemory(gc), options.subscribers);

  // On the gateway's own LISTEN connection, after the event bus: the NOTIFY has arrived and been
  // handed to every subscriber's queue.
  const dispatched = new Map<string, number>();
  const channels = new Set(runIds.map((id) => `runProgress:${id}`));
  const { unlisten } = await core.sql.listen(EVENTS_CHANNEL, (payload) => {
    const envelope = JSON.parse(payload) as { type: string; detail: RunSnapshot };
    if (channels.has(envelope.type)) dispatched.set(eventKey(envelope.detail), nowMs());
  });

  await clients.mark();
  const profile = await startProfile();
  const stop = serverMark();
  const { publications = [], yields = {} } = await engine.send({ cmd: 'run', runIds, paceMs });
  const collected = await clients.collect(60_000, expectedKeys(publications));
  const server = stop();
  await profile?.stop(`graphql-${paceMs}ms-${events}`);
  await unlisten();
  await clients.close();

  const engineTx: number[] = [];
  for (const runId of runIds) {
    const mine = publications.filter((p) => p.runId === runId);
    const last = mine.at(-1)?.snapshot;
    if (last?.status !== 'SUCCEEDED' || last.handled !== events * PAGE)
      throw new Error(`run ${runId} ended as ${JSON.stringify(last)}`);
    const running = mine.filter((p) => p.snapshot.status === 'RUNNING');
    for (const [i, p] of running.entries()) engineTx.push(p.at - yields[runId]![i]!);
  }
  return {
    publications,
    followers: countFollowers(assigned),
    collected,
    openSecs: opened.ms / 1000,
    memory,
    server,
    dispatched,
    engineTx,
  };
}

/**
 * The same messages (the payloads graphql-ws sent in the latest graphql round, in its message), on the
 * same schedule (each run's events every paceMs, the runs staggered alike), from a bare `ws` server in
 * this process to `subscribers` bare clients, each on its run's channel.
 */
async function bareRound(
  clients: Clients,
  gc: () => void,
  options: SubscribersOptions,
  paceMs: number,
  latest: Measured,
): Promise<Measured> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const channels = new Map<string, Set<WebSocket>>();
  wss.on('connection', (socket, req) => {
    const runId = new URL(req.url ?? '/', 'ws://bench').searchParams.get('run') ?? '';
    const channel = channels.get(runId) ?? new Set();
    channels.set(runId, channel);
    channel.add(socket);
    socket.once('close', () => channel.delete(socket));
  });
  try {
    const runIds = [...new Set(latest.publications.map((p) => p.runId))];
    const assigned = clientRuns(runIds, options.subscribers);
    const before = await settledMemory(gc);
    const { port } = wss.address() as AddressInfo;
    const opened = await clients.open({
      mode: 'bare',
      url: `ws://127.0.0.1:${port}`,
      runIds: assigned,
      concurrency: options.concurrency,
    });
    if (wss.clients.size !== options.subscribers) throw new Error(`bare server sees ${wss.clients.size} clients`);
    const memory = perConnection(before, await settledMemory(gc), options.subscribers);
    // graphql-ws's own message: {"id":<uuid>,"type":"next","payload":{"data":{"runProgress":{…}}}}
    const schedule = runIds.flatMap((runId, k) =>
      latest.publications
        .filter((p) => p.runId === runId)
        .map((p, i) => {
          const payload = latest.collected.payloads[p.key];
          if (payload === undefined) throw new Error(`no graphql-ws payload of event ${p.key} to send`);
          return {
            due: (k * paceMs) / runIds.length + (i + 1) * paceMs,
            runId,
            key: p.key,
            snapshot: p.snapshot,
            text: JSON.stringify({ id: randomUUID(), type: 'next', payload }),
          };
        }),
    );
    schedule.sort((a, b) => a.due - b.due);

    await clients.mark();
    const stop = serverMark();
    const start = nowMs();
    const publications: Publication[] = [];
    for (const message of schedule) {
      await sleep(start + message.due - nowMs());
      const at = nowMs();
      for (const socket of channels.get(message.runId) ?? []) socket.send(message.text);
      publications.push({ runId: message.runId, key: message.key, snapshot: message.snapshot, at });
    }
    const collected = await clients.collect(60_000, expectedKeys(publications));
    const server = stop();
    await clients.close();
    return { publications, followers: countFollowers(assigned), collected, openSecs: opened.ms / 1000, memory, server };
  } finally {
    for (const socket of wss.clients) socket.terminate();
    await new Promise((resolve) => wss.close(resolve));
  }
}

function memoryOf(rounds: RoundResult[]): PerConnection {
  const pick = (key: keyof PerConnection) => round(median(rounds.map((r) => r.memory[key])), 1);
  return { heapKB: pick('heapKB'), externalKB: pick('externalKB'), rssKB: pick('rssKB') };
}

function variant(label: string, rounds: RoundResult[], pooled: number[], subscribers: number): VariantResult {
  return {
    label,
    latency: quantiles(pooled),
    expected: rounds.reduce((sum, r) => sum + r.expected, 0),
    delivered: rounds.reduce((sum, r) => sum + r.delivered, 0),
    lost: rounds.reduce((sum, r) => sum + r.lost, 0),
    allComplete: rounds.every((r) => r.complete === subscribers && r.unexpected === 0),
    memory: memoryOf(rounds),
    rounds,
  };
}

/** Descriptors per process: this one holds the server side of every connection (plus Postgres and the app's own). */
const descriptorsWanted = (subscribers: number) => subscribers + 1000;

/** N graphql-ws subscribers over K runs against a bare ws broadcast, rounds alternated. */
export async function benchSubscribers(options: SubscribersOptions): Promise<SubscribersResult> {
  const log = (line: string) => console.error(`[subscribers] ${line}`);
  const limits = await ensureOpenFiles(descriptorsWanted(options.subscribers));
  const gc = gcFunction();
  // The gateway without a worker: the engine process executes the runs.
  const env = await startGateway({
    account: { name: 'bench', creditsMicros: 100_000_000_000n },
    config: { maxRunningRuns: Math.max(10, options.runs) },
  });
  const clients = new Clients(options.clientProcesses);
  const engine: Engine = new Child('./subscriber-engine.ts', 'run engine');
  try {
    const rtt = [await clients.checkClock(), await engine.checkClock()];
    await engine.send({ cmd: 'connect', databaseUrl: env.databaseUrl, poolSize: options.runs + 3 });
    log(
      `clocks agree (IPC round trip ≤ ${Math.max(...rtt).toFixed(2)} ms); open-file limit ${limits.after ?? 'unlimited'}` +
        `${limits.before !== limits.after ? ` (raised from ${limits.before})` : ''}; ${n(options.subscribers)} subscribers over ${options.runs} run(s), ${options.clientProcesses} client process(es)`,
    );

    // Warm-up of both paths (JIT, connection setup), not reported but checked.
    const warmPace = { paceMs: options.paces[0]!.paceMs, events: options.warmupEvents };
    const warm = await graphqlRound(env, clients, engine, gc, options, warmPace);
    const warmBare = await bareRound(clients, gc, options, warmPace.paceMs, warm);
    for (const [mode, m] of [
      ['graphql', warm],
      ['bare', warmBare],
    ] as const) {
      const r = summarise(mode, m);
      log(
        `warm-up ${mode}: opened in ${r.openSecs} s; ${r.delivered}/${r.expected} delivered, ${r.complete} clients complete; ` +
          `p95 ${r.latency.p95} ms; heap ${r.memory.heapKB}, RSS ${r.memory.rssKB} KB/conn`,
      );
    }

    const paces: PaceResult[] = [];
    for (const pace of options.paces) {
      const rounds = { graphql: [] as RoundResult[], bare: [] as RoundResult[] };
      const pooled = { graphql: [] as number[], bare: [] as number[] };
      let latest: Measured | undefined;
      await alternate(['graphql', 'bare'] as Mode[], options.rounds, async (mode, r) => {
        // The bare server sends the events of the latest graphql round (the first round starts with graphql).
        const m =
          mode === 'graphql'
            ? await graphqlRound(env, clients, engine, gc, options, pace)
            : await bareRound(clients, gc, options, pace.paceMs, latest!);
        if (mode === 'graphql') latest = m;
        const result = summarise(mode, m);
        rounds[mode].push(result);
        for (const ms of pairLatencies(m)) pooled[mode].push(ms);
        log(
          `${pace.paceMs} ms, round ${r + 1} ${mode}: opened in ${result.openSecs} s; ${result.delivered}/${result.expected} delivered, ` +
            `${result.complete} clients complete, ${result.outOfOrder} out of order; ` +
            `p50 ${result.latency.p50} p95 ${result.latency.p95} p99 ${result.latency.p99} max ${result.latency.max} ms; ` +
            `heap ${result.memory.heapKB} KB/conn; server ${result.server.cpuMsPerEvent} ms CPU/event, ELU ${result.server.elu}, loop delay p99 ${result.server.loopDelayP99Ms} max ${result.server.loopDelayMaxMs} ms; clients ELU ${result.clients.elu}, loop delay max ${result.clients.loopDelayMaxMs} ms`,
        );
      });
      const g = variant(
        `graphql-ws runProgress, ${options.subscribers} subscribers`,
        rounds.graphql,
        pooled.graphql,
        options.subscribers,
      );
      const b = variant(
        `bare ws broadcast, ${options.subscribers} clients`,
        rounds.bare,
        pooled.bare,
        options.subscribers,
      );
      paces.push({
        ...pace,
        graphql: g,
        bare: b,
        ratio: { p50: round(g.latency.p50 / b.latency.p50, 2), p95: round(g.latency.p95 / b.latency.p95, 2) },
        goalMet: g.latency.p95 <= options.goalP95Ms && g.allComplete,
      });
    }
    const all = (mode: 'graphql' | 'bare') => paces.flatMap((p) => p[mode].rounds);
    const memory = { graphql: memoryOf(all('graphql')), bare: memoryOf(all('bare')), graphqlFirstOpen: warm.memory };
    return {
      options,
      database: databaseKind(),
      openFilesLimit: limits.after,
      ...(limits.before !== limits.after ? { openFilesRaisedFrom: limits.before } : {}),
      query: QUERY,
      paces,
      memory,
      heapGoalMet: memory.graphql.heapKB <= options.goalHeapKB,
    };
  } finally {
    await clients.stop();
    await engine.stop();
    await env.close();
  }
}

/** `npm run bench` runs 10,000 subscribers. */
export const DEFAULT_SUBSCRIBERS = 10_000;

/**
 * The options for `subscribers` clients (and `runs`, default one per 1,000 subscribers). Up to 2,000
 * subscribers, the paces of the 1,000-subscriber suite (every 100 ms and every 500 ms); beyond, one
 * pace of one event per run every 2 s (10 runs: 5 events and 5,000 messages a second). `paceMs` sets
 * one pace instead, with about 20 s of events.
 */
export function subscribersOptions(
  subscribers = DEFAULT_SUBSCRIBERS,
  runs?: number,
  quick = false,
  paceMs?: number,
): SubscribersOptions {
  const k = runs ?? Math.max(1, Math.round(subscribers / 1000));
  if (k > subscribers) throw new Error(`--runs ${k}: more runs than subscribers (${subscribers})`);
  const small = subscribers <= 2000;
  const paces: Pace[] =
    paceMs !== undefined
      ? [{ paceMs, events: Math.min(100, Math.max(5, Math.round(20_000 / paceMs))) }]
      : small
        ? [
            { paceMs: 100, events: 100 },
            { paceMs: 500, events: 30 },
          ]
        : [{ paceMs: 2000, events: 10 }];
  return {
    subscribers,
    runs: k,
    clientProcesses: Math.max(1, Math.ceil(subscribers / 5000)),
    paces: quick ? paces.slice(0, 1).map((p) => ({ ...p, events: Math.min(p.events, 5) })) : paces,
    rounds: quick ? 1 : 2,
    warmupEvents: quick ? 2 : small ? 10 : 5,
    concurrency: 50,
    goalP95Ms: 100,
    goalHeapKB: 10,
  };
}

function formatSubscribers(result: SubscribersResult): string {
  const o = result.options;
  const w = [28, 9, 9, 9, 9, 19, 11, 9];
  const tableRow = (cells: (string | number)[]) => pad(cells, w);
  const row = (label: string, v: VariantResult) => {
    const cpu = median(v.rounds.map((r) => r.server.cpuMsPerEvent));
    const elu = round(median(v.rounds.map((r) => r.server.elu)), 2);
    return tableRow([
      label,
      v.latency.p50,
      v.latency.p95,
      v.latency.p99,
      v.latency.max,
      `${n(v.delivered)}/${n(v.expected)}`,
      round(cpu, 1),
      elu,
    ]);
  };
  const perRun = Math.round(o.subscribers / o.runs);
  const lines = [
    `8. Run progress fan-out to ${n(o.subscribers)} subscribers${o.runs > 1 ? `, ${n(perRun)} on each of ${o.runs} runs (staggered evenly)` : ' of one run'}: publication → receipt over every (event, client) pair,`,
    `   ${o.rounds} round(s) per target and pace alternated, pooled (ms); gateway CPU per event and event-loop utilisation: medians of rounds;`,
    `   clients in ${o.clientProcesses} process(es); open-file limit ${result.openFilesLimit ?? 'unlimited'}${result.openFilesRaisedFrom !== undefined ? ` (raised from ${result.openFilesRaisedFrom})` : ''}`,
  ];
  for (const p of result.paces) {
    const g = p.graphql;
    const complete = (v: VariantResult) => v.rounds.map((r) => `${n(r.complete)}`).join(', ');
    lines.push(
      `   one event every ${p.paceMs} ms per run, ${p.events} batches + the end per run`,
      tableRow(['target', 'p50', 'p95', 'p99', 'max', 'delivered', 'CPU ms/ev', 'ELU']),
      row('A graphql-ws runProgress', g),
      row('B bare ws broadcast', p.bare),
      `   A/B p95 = ${p.ratio.p95.toFixed(2)}×, p50 = ${p.ratio.p50.toFixed(2)}×   (goal A p95 ≤ ${o.goalP95Ms} ms, nothing lost: ${verdict(p.goalMet)})`,
      `   clients with every event of their run, once, in order: A ${complete(g)} of ${n(o.subscribers)} per round; B ${complete(p.bare)}; lost A ${n(g.lost)}, B ${n(p.bare.lost)}`,
      `   A per round: p95 ${g.rounds.map((r) => r.latency.p95).join(', ')}; last client per event p50 ${g.rounds.map((r) => r.lastReceipt.p50).join(', ')}; ` +
        `commit → NOTIFY dispatched p50 ${g.rounds.map((r) => r.dispatched?.p50).join(', ')}; engine batch transaction p50 ${g.rounds.map((r) => r.engineTx?.p50).join(', ')}`,
      `   B per round: p95 ${p.bare.rounds.map((r) => r.latency.p95).join(', ')}; last client per event p50 ${p.bare.rounds.map((r) => r.lastReceipt.p50).join(', ')}; clients ELU A ${g.rounds.map((r) => r.clients.elu).join(', ')}, B ${p.bare.rounds.map((r) => r.clients.elu).join(', ')}`,
      `   connections opened in (s): A ${g.rounds.map((r) => r.openSecs).join(', ')}; B ${p.bare.rounds.map((r) => r.openSecs).join(', ')}`,
    );
  }
  const odd = result.paces
    .flatMap((p) => [...p.graphql.rounds, ...p.bare.rounds])
    .filter((r) => r.duplicates > 0 || r.unexpected > 0 || r.outOfOrder > 0 || r.errors.length > 0);
  for (const r of odd)
    lines.push(
      `   ! ${r.mode} round: ${r.duplicates} duplicates, ${r.unexpected} unexpected messages, ${r.outOfOrder} clients out of order, errors: ${r.errors.join('; ') || 'none'}`,
    );
  const m = result.memory;
  const bytes = result.paces[0]?.graphql.rounds[0]?.messageBytes;
  lines.push(
    `   gateway memory per connection after gc() (heap / external / RSS, KB): A ${m.graphql.heapKB} / ${m.graphql.externalKB} / ${m.graphql.rssKB}, B ${m.bare.heapKB} / ${m.bare.externalKB} / ${m.bare.rssKB}`,
    `   (goal A heap ≤ ${o.goalHeapKB} KB: ${verdict(result.heapGoalMet)}); A on first opening ${m.graphqlFirstOpen.heapKB} / ${m.graphqlFirstOpen.externalKB} / ${m.graphqlFirstOpen.rssKB}; message ${bytes ?? '?'} B in both`,
  );
  return lines.join('\n');
}

export const subscribers: Suite<SubscribersResult> = {
  name: 'subscribers',
  key: 'subscribers',
  flags: ['subscribers', 'runs', 'pace'],
  quick: true,
  run: (context) =>
    benchSubscribers(
      subscribersOptions(context.count('subscribers'), context.count('runs'), context.quick, context.count('pace')),
    ),
  format: formatSubscribers,
  goals: (r) => ({
    p95Ms: r.options.goalP95Ms,
    heapKB: r.options.goalHeapKB,
    subscribers: r.options.subscribers,
    met: { ...Object.fromEntries(r.paces.map((p) => [`every ${p.paceMs} ms`, p.goalMet])), heap: r.heapGoalMet },
  }),
};
