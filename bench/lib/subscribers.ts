/**
 * `subscribers`: one run's progress fanned out to 1,000 graphql-ws subscribers, against a bare `ws`
 * broadcast of the same messages at the same pace from this process.
 *
 * Three processes, as in service: this one is the gateway (built without a worker; also the bare
 * server), `subscriber-engine.ts` executes the run as a worker would (`executeRun` on its own Core,
 * a maps run whose source hands out a page of 50 places every `paceMs`: one progress event per
 * batch, spaced) and stamps each event when its transaction has committed, and
 * `subscriber-clients.ts` holds the clients and stamps every message it receives. All three read
 * `process.hrtime` (CLOCK_MONOTONIC, one clock for the machine; checked at start), so a delay is a
 * receipt stamp minus a commit stamp. The engine has nothing else to do, so its stamp is not held
 * back by the fan-out it causes; the clients' parsing does not share the gateway's event loop; and
 * the gateway's memory per connection is its own.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WebSocketServer } from 'ws';
import { runTimeSecs, type RunSnapshot } from '../../src/runs/view.ts';
import { alternate, databaseKind, median, n, pad, quantiles, request, round, sleep, startGateway, verdict, type DatabaseKind, type Gateway, type Quantiles, type Suite } from './harness.ts';
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
  /** Each pace measured on its own. */
  paces: Pace[];
  /** Rounds per variant and pace, alternated G B, B G, …; preceded by one short warm-up of each variant. */
  rounds: number;
  warmupEvents: number;
  /** Connections the clients open at once. */
  concurrency: number;
  goalP95Ms: number;
}

export interface PerConnection {
  heapKB: number;
  externalKB: number;
  rssKB: number;
}

export interface RoundResult {
  mode: Mode;
  events: number;
  expected: number;
  delivered: number;
  lost: number;
  duplicates: number;
  unexpected: number;
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
  server: { elu: number; cpuMsPerEvent: number };
  clients: { elu: number; cpuMsPerEvent: number };
  errors: string[];
}

export interface VariantResult {
  label: string;
  latency: Quantiles;
  expected: number;
  delivered: number;
  memory: PerConnection;
  rounds: RoundResult[];
}

export interface PaceResult extends Pace {
  graphql: VariantResult;
  bare: VariantResult;
  /** graphql / bare. */
  ratio: { p50: number; p95: number };
  /** graphql p95 ≤ goal and every event delivered to every subscriber. */
  goalMet: boolean;
}

export interface SubscribersResult {
  options: SubscribersOptions;
  database: DatabaseKind;
  openFilesLimit: number | null;
  query: string;
  paces: PaceResult[];
  /**
   * Per connection in the gateway process: medians over the measured rounds, and the warm-up's graphql
   * round, the first time this process opened the connections (later rounds reuse memory already
   * taken from the system, so their RSS grows less).
   */
  memory: { graphql: PerConnection; bare: PerConnection; graphqlFirstOpen: PerConnection };
}

const QUERY = 'subscription($id: ID!) { runProgress(id: $id) { id status statusMessage handled requested itemCount cost runTimeSecs } }';
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

const perConnection = (before: Awaited<ReturnType<typeof settledMemory>>, after: typeof before, count: number): PerConnection => ({
  heapKB: round((after.heap - before.heap) / count / 1024, 1),
  externalKB: round((after.external - before.external) / count / 1024, 1),
  rssKB: round((after.rss - before.rss) / count / 1024, 1),
});

async function openFilesLimit(): Promise<number | null> {
  try {
    const limits = await readFile('/proc/self/limits', 'utf8');
    const soft = /^Max open files\s+(\S+)/m.exec(limits)?.[1];
    return soft === undefined || soft === 'unlimited' ? null : Number(soft);
  } catch {
    return null;
  }
}

type Payload<C> = C extends { seq: number } ? Omit<C, 'seq'> : never;

/** A child process driven by numbered commands over IPC; each answer carries its command's `seq`. */
class Child<C extends { cmd: string; seq: number }, R extends { seq: number; ok: boolean }> {
  private seq = 0;
  private waiting = new Map<number, { resolve: (reply: Extract<R, { ok: true }>) => void; reject: (err: Error) => void }>();
  private readonly child: ChildProcess;

  constructor(file: string, private readonly name: string) {
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
      if (clock === undefined || clock < t0 || clock > t1) throw new Error(`${this.name}: clocks disagree: child ${clock}, parent ${t0}…${t1}`);
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

type Clients = Child<ClientCommand, ClientReply>;
type Engine = Child<EngineCommand, EngineReply>;

type Env = Gateway;

/** What a client selects with QUERY, in its order. */
const view = (s: RunSnapshot) => ({
  id: s.id,
  status: s.status.replace('-', '_'),
  statusMessage: s.statusMessage,
  handled: s.handled,
  requested: s.requested,
  itemCount: s.itemCount,
  cost: s.cost,
  runTimeSecs: runTimeSecs(s),
});

async function startRun(env: Env, events: number): Promise<string> {
  const { json } = await request<{ runId?: string; status?: string }>(env, 'POST', '/api/v1/scrape/maps', { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: events * PAGE });
  if (!json.runId || json.status !== 'RUNNING') throw new Error(`start: ${JSON.stringify(json)}`);
  return json.runId;
}

interface Measured {
  publications: Publication[];
  collected: Collected;
  openSecs: number;
  memory: PerConnection;
  server: { elu: number; cpuMs: number };
  dispatched?: Map<string, number>;
  engineTx?: number[];
}

function pairLatencies(m: Measured): number[] {
  const out: number[] = [];
  for (const p of m.publications) for (const t of m.collected.receipts[p.key] ?? []) out.push(t - p.at);
  return out;
}

function summarise(mode: Mode, m: Measured, subscribers: number): RoundResult {
  const last: number[] = [];
  const dispatched: number[] = [];
  let delivered = 0;
  const published = new Set<string>();
  for (const p of m.publications) {
    published.add(p.key);
    const times = m.collected.receipts[p.key] ?? [];
    delivered += times.length;
    if (times.length > 0) last.push(Math.max(...times) - p.at);
    const at = m.dispatched?.get(p.key);
    if (at !== undefined) dispatched.push(at - p.at);
  }
  const unexpected = Object.entries(m.collected.receipts)
    .filter(([key]) => !published.has(key))
    .reduce((sum, [, times]) => sum + times.length, 0);
  const expected = m.publications.length * subscribers;
  const events = m.publications.length;
  return {
    mode,
    events,
    expected,
    delivered,
    lost: expected - delivered,
    duplicates: m.collected.perClient.reduce((sum, c) => sum + c.duplicates, 0),
    unexpected,
    latency: quantiles(pairLatencies(m)),
    lastReceipt: quantiles(last),
    ...(m.dispatched ? { dispatched: quantiles(dispatched) } : {}),
    ...(m.engineTx ? { engineTx: quantiles(m.engineTx) } : {}),
    openSecs: round(m.openSecs, 1),
    memory: m.memory,
    messageBytes: m.collected.messageBytes,
    server: { elu: round(m.server.elu, 2), cpuMsPerEvent: round(m.server.cpuMs / events, 2) },
    clients: { elu: round(m.collected.elu, 2), cpuMsPerEvent: round(m.collected.cpuMs / events, 2) },
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
    new Promise<unknown>((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
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
  return () => {
    const used = process.cpuUsage(cpu);
    return { elu: performance.eventLoopUtilization(elu).utilization, cpuMs: (used.user + used.system) / 1000 };
  };
}

/** `leadgate_events`, the channel of src/runs/events.ts. */
const EVENTS_CHANNEL = 'leadgate_events';

/** One maps run executed by the engine process, its progress followed by `subscribers` graphql-ws clients. */
async function graphqlRound(env: Env, clients: Clients, engine: Engine, gc: () => void, options: SubscribersOptions, { paceMs, events }: Pace): Promise<Measured> {
  const { core } = env.app;
  const runId = await startRun(env, events);
  const before = await settledMemory(gc);
  const url = `${env.baseUrl.replace(/^http/, 'ws')}/graphql`;
  const { opened } = await clients.send({ cmd: 'open', mode: 'graphql', url, apiKey: env.apiKey, query: QUERY, runId, count: options.subscribers, concurrency: options.concurrency });
  const memory = perConnection(before, await settledMemory(gc), options.subscribers);

  // On the gateway's own LISTEN connection, after the event bus: the NOTIFY has arrived and been
  // handed to every subscriber's queue.
  const dispatched = new Map<string, number>();
  const { unlisten } = await core.sql.listen(EVENTS_CHANNEL, (payload) => {
    const envelope = JSON.parse(payload) as { type: string; detail: RunSnapshot };
    if (envelope.type === `runProgress:${runId}`) dispatched.set(eventKey(envelope.detail), nowMs());
  });

  await clients.send({ cmd: 'mark' });
  const profile = await startProfile();
  const stop = serverMark();
  const { publications = [], yields = [] } = await engine.send({ cmd: 'run', runId, paceMs });
  const { collected } = await clients.send({ cmd: 'collect', timeoutMs: 60_000 });
  const server = stop();
  await profile?.stop(`graphql-${paceMs}ms-${events}`);
  await unlisten();
  await clients.send({ cmd: 'close' });

  const last = publications.at(-1)?.snapshot;
  if (last?.status !== 'SUCCEEDED' || last.handled !== events * PAGE) throw new Error(`run ${runId} ended as ${JSON.stringify(last)}`);
  const batches = publications.filter((p) => p.snapshot.status === 'RUNNING');
  const engineTx = batches.map((p, i) => p.at - yields[i]!);
  return { publications, collected: collected!, openSecs: opened!.ms / 1000, memory, server, dispatched, engineTx };
}

/** The same messages, at the same pace, from a bare `ws` server in this process to `subscribers` bare clients. */
async function bareRound(clients: Clients, gc: () => void, options: SubscribersOptions, paceMs: number, snapshots: RunSnapshot[]): Promise<Measured> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  try {
    const before = await settledMemory(gc);
    const { port } = wss.address() as AddressInfo;
    const { opened } = await clients.send({ cmd: 'open', mode: 'bare', url: `ws://127.0.0.1:${port}`, count: options.subscribers, concurrency: options.concurrency });
    if (wss.clients.size !== options.subscribers) throw new Error(`bare server sees ${wss.clients.size} clients`);
    const memory = perConnection(before, await settledMemory(gc), options.subscribers);
    // graphql-ws's own message: {"id":<uuid>,"type":"next","payload":{"data":{"runProgress":{…}}}}
    const messages = snapshots.map((snapshot) => ({
      key: eventKey(snapshot),
      snapshot,
      text: JSON.stringify({ id: randomUUID(), type: 'next', payload: { data: { runProgress: view(snapshot) } } }),
    }));

    await clients.send({ cmd: 'mark' });
    const stop = serverMark();
    const start = nowMs();
    const publications: Publication[] = [];
    for (const [i, message] of messages.entries()) {
      await sleep(start + (i + 1) * paceMs - nowMs());
      const at = nowMs();
      for (const socket of wss.clients) socket.send(message.text);
      publications.push({ key: message.key, snapshot: message.snapshot, at });
    }
    const { collected } = await clients.send({ cmd: 'collect', timeoutMs: 60_000 });
    const server = stop();
    await clients.send({ cmd: 'close' });
    return { publications, collected: collected!, openSecs: opened!.ms / 1000, memory, server };
  } finally {
    for (const socket of wss.clients) socket.terminate();
    await new Promise((resolve) => wss.close(resolve));
  }
}

function memoryOf(rounds: RoundResult[]): PerConnection {
  const pick = (key: keyof PerConnection) => round(median(rounds.map((r) => r.memory[key])), 1);
  return { heapKB: pick('heapKB'), externalKB: pick('externalKB'), rssKB: pick('rssKB') };
}

function variant(label: string, rounds: RoundResult[], pooled: number[]): VariantResult {
  return {
    label,
    latency: quantiles(pooled),
    expected: rounds.reduce((sum, r) => sum + r.expected, 0),
    delivered: rounds.reduce((sum, r) => sum + r.delivered, 0),
    memory: memoryOf(rounds),
    rounds,
  };
}

/** 1,000 graphql-ws subscribers to one run's progress against a bare ws broadcast, rounds alternated. */
async function benchSubscribers(options: SubscribersOptions): Promise<SubscribersResult> {
  const limit = await openFilesLimit();
  // This process holds the server side of every connection (plus Postgres and the app's own); the
  // client process the other side.
  if (limit !== null && limit < options.subscribers + 500) {
    throw new Error(`open-file limit ${limit} is too low for ${options.subscribers} connections per process: raise it (ulimit -n ${options.subscribers + 1000}) or lower the count`);
  }
  const gc = gcFunction();
  // The gateway without a worker: the engine process executes the run.
  const env = await startGateway({ account: { name: 'bench', creditsMicros: 100_000_000_000n } });
  const clients: Clients = new Child('./subscriber-clients.ts', 'subscriber clients');
  const engine: Engine = new Child('./subscriber-engine.ts', 'run engine');
  try {
    const log = (line: string) => console.error(`[subscribers] ${line}`);
    const rtt = [await clients.checkClock(), await engine.checkClock()];
    await engine.send({ cmd: 'connect', databaseUrl: env.databaseUrl });
    log(`clocks agree (IPC round trip ≤ ${Math.max(...rtt).toFixed(2)} ms); open-file limit ${limit ?? 'unlimited'}`);

    // Warm-up of both paths (JIT, connection setup), not reported but checked.
    const warmPace = { paceMs: options.paces[0]!.paceMs, events: options.warmupEvents };
    const warm = await graphqlRound(env, clients, engine, gc, options, warmPace);
    const warmBare = await bareRound(clients, gc, options, warmPace.paceMs, warm.publications.map((p) => p.snapshot));
    for (const [mode, m] of [['graphql', warm], ['bare', warmBare]] as const) {
      const r = summarise(mode, m, options.subscribers);
      log(`warm-up ${mode}: ${r.delivered}/${r.expected} delivered, p95 ${r.latency.p95} ms; heap ${r.memory.heapKB}, RSS ${r.memory.rssKB} KB/conn`);
    }

    const paces: PaceResult[] = [];
    for (const pace of options.paces) {
      const rounds = { graphql: [] as RoundResult[], bare: [] as RoundResult[] };
      const pooled = { graphql: [] as number[], bare: [] as number[] };
      let snapshots: RunSnapshot[] = [];
      await alternate(['graphql', 'bare'] as Mode[], options.rounds, async (mode, r) => {
        // The bare server sends the snapshots of the latest graphql round (the first round starts with graphql).
        const m = mode === 'graphql' ? await graphqlRound(env, clients, engine, gc, options, pace) : await bareRound(clients, gc, options, pace.paceMs, snapshots);
        if (mode === 'graphql') snapshots = m.publications.map((p) => p.snapshot);
        const result = summarise(mode, m, options.subscribers);
        rounds[mode].push(result);
        pooled[mode].push(...pairLatencies(m));
        log(
          `${pace.paceMs} ms, round ${r + 1} ${mode}: ${result.delivered}/${result.expected} delivered, ` +
            `p50 ${result.latency.p50} p95 ${result.latency.p95} p99 ${result.latency.p99} max ${result.latency.max} ms; ` +
            `heap ${result.memory.heapKB} KB/conn; server ${result.server.cpuMsPerEvent} ms CPU/event, ELU ${result.server.elu}; clients ELU ${result.clients.elu}`,
        );
      });
      const g = variant(`graphql-ws runProgress, ${options.subscribers} subscribers`, rounds.graphql, pooled.graphql);
      const b = variant(`bare ws broadcast, ${options.subscribers} clients`, rounds.bare, pooled.bare);
      paces.push({
        ...pace,
        graphql: g,
        bare: b,
        ratio: { p50: round(g.latency.p50 / b.latency.p50, 2), p95: round(g.latency.p95 / b.latency.p95, 2) },
        goalMet: g.latency.p95 <= options.goalP95Ms && g.delivered === g.expected,
      });
    }
    const all = (mode: 'graphql' | 'bare') => paces.flatMap((p) => p[mode].rounds);
    return {
      options,
      database: databaseKind(),
      openFilesLimit: limit,
      query: QUERY,
      paces,
      memory: { graphql: memoryOf(all('graphql')), bare: memoryOf(all('bare')), graphqlFirstOpen: warm.memory },
    };
  } finally {
    await clients.stop();
    await engine.stop();
    await env.close();
  }
}

const OPTIONS: SubscribersOptions = { subscribers: 1000, paces: [{ paceMs: 100, events: 100 }, { paceMs: 500, events: 30 }], rounds: 2, warmupEvents: 10, concurrency: 50, goalP95Ms: 100 };

function formatSubscribers(result: SubscribersResult): string {
  const o = result.options;
  const w = [28, 9, 9, 9, 9, 15, 11, 9];
  const tableRow = (cells: (string | number)[]) => pad(cells, w);
  const row = (label: string, v: VariantResult) => {
    const cpu = median(v.rounds.map((r) => r.server.cpuMsPerEvent));
    const elu = round(median(v.rounds.map((r) => r.server.elu)), 2);
    return tableRow([label, v.latency.p50, v.latency.p95, v.latency.p99, v.latency.max, `${n(v.delivered)}/${n(v.expected)}`, round(cpu, 1), elu]);
  };
  const lines = [
    `8. Run progress fan-out to ${n(o.subscribers)} subscribers of one run: publication → receipt over every (event, client) pair,`,
    `   ${o.rounds} rounds per target and pace alternated, pooled (ms); gateway CPU per event and event-loop utilisation: medians of rounds`,
  ];
  for (const p of result.paces) {
    const g = p.graphql;
    lines.push(
      `   one event every ${p.paceMs} ms, ${p.events} batches + the end per run`,
      tableRow(['target', 'p50', 'p95', 'p99', 'max', 'delivered', 'CPU ms/ev', 'ELU']),
      row('A graphql-ws runProgress', g),
      row('B bare ws broadcast', p.bare),
      `   A/B p95 = ${p.ratio.p95.toFixed(2)}×, p50 = ${p.ratio.p50.toFixed(2)}×   (goal A p95 ≤ ${o.goalP95Ms} ms, nothing lost: ${verdict(p.goalMet)})`,
      `   A per round: p95 ${g.rounds.map((r) => r.latency.p95).join(', ')}; last client per event p50 ${g.rounds.map((r) => r.lastReceipt.p50).join(', ')}; ` +
        `commit → NOTIFY dispatched p50 ${g.rounds.map((r) => r.dispatched?.p50).join(', ')}; engine batch transaction p50 ${g.rounds.map((r) => r.engineTx?.p50).join(', ')}`,
      `   B per round: p95 ${p.bare.rounds.map((r) => r.latency.p95).join(', ')}; last client per event p50 ${p.bare.rounds.map((r) => r.lastReceipt.p50).join(', ')}; clients ELU A ${g.rounds.map((r) => r.clients.elu).join(', ')}, B ${p.bare.rounds.map((r) => r.clients.elu).join(', ')}`,
    );
  }
  const odd = result.paces.flatMap((p) => [...p.graphql.rounds, ...p.bare.rounds]).filter((r) => r.duplicates > 0 || r.unexpected > 0 || r.errors.length > 0);
  for (const r of odd) lines.push(`   ! ${r.mode} round: ${r.duplicates} duplicates, ${r.unexpected} unexpected messages, errors: ${r.errors.join('; ') || 'none'}`);
  const m = result.memory;
  const bytes = result.paces[0]?.graphql.rounds[0]?.messageBytes;
  lines.push(
    `   gateway memory per connection (heap / external / RSS, KB): A ${m.graphql.heapKB} / ${m.graphql.externalKB} / ${m.graphql.rssKB}, B ${m.bare.heapKB} / ${m.bare.externalKB} / ${m.bare.rssKB};`,
    `   A on first opening ${m.graphqlFirstOpen.heapKB} / ${m.graphqlFirstOpen.externalKB} / ${m.graphqlFirstOpen.rssKB}; message ${bytes ?? '?'} B in both`,
  );
  return lines.join('\n');
}

export const subscribers: Suite<SubscribersResult> = {
  name: 'subscribers',
  key: 'subscribers',
  run: () => benchSubscribers(OPTIONS),
  format: formatSubscribers,
  goals: (r) => ({ p95Ms: r.options.goalP95Ms, met: Object.fromEntries(r.paces.map((p) => [`every ${p.paceMs} ms`, p.goalMet])) }),
};
