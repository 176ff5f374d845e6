/**
 * `pipeline`: what a pipeline's orchestration costs, and how soon a schedule's tick gives its first row.
 *
 *   - One Postgres (the bench's embedded server, or DATABASE_URL's; its CPU is read only when it runs on
 *     this machine) and one database: migrated, the small catalog, one scale-plan account. A gateway
 *     process (`src/main.ts`, `LEADGATE_INLINE_WORKER=false`) and a worker process (`src/cli/index.ts
 *     worker`), as `processes` starts them, on a local network: a DNS server, a scripted SMTP server
 *     (STARTTLS) and a web server in this process (test/fixtures/net.ts), a site, a mail domain and an
 *     owner for every local business with a website (every fifth mail server catch-all), admitted by the
 *     outbound guard's test allow-list (`OUTBOUND_ALLOW`; https goes to a closed port and is refused at once).
 *   - What the bench hears of the account's runs and pipelines comes from its own event bus (a `Core`
 *     in this process, LISTEN on the account's channel): nothing is asked of the gateway or the worker
 *     to watch, so their CPU is the work itself.
 *
 * 1. Chain (`pipeline` ÷ `hand`): the same three steps, maps (8 places of a category in a city) → the
 *    domain email finder (job title Owner) → the email validator, for each of 30 inputs (5 categories × 6
 *    cities), one chain at a time, the two ways alternated in rotating order (each input both ways in a
 *    round) after 5 warm-ups of each (another category):
 *      pipeline  `POST /api/v1/pipelines` with the three steps, until the pipeline's end is heard;
 *      hand      `POST /api/v1/scrape/maps`; at its run's end `GET /api/downloads/{runId}?format=json`,
 *                its websites as domains (as the pipeline reads them: the step link's values, each
 *                website's root domain, repeats once, in order), `POST /api/v1/scrape/website-finder`;
 *                at its end its rows' `email`s the same way, `POST /api/v1/scrape/email-validator`,
 *                until its end is heard.
 *    CPU of the gateway's and the worker's process trees, and the postmaster's (every backend, the
 *    bench's own included), from /proc (as `processes` reads them) before each chain and 200 ms after
 *    its end; wall time from the first request to the end heard. Each pair of chains must have done the
 *    same work: the same three tools, each step fed the same values, the same rows from each step, all
 *    SUCCEEDED; otherwise the suite fails. Goal: pipeline ÷ hand, gateway + worker CPU a chain (means),
 *    ≤ 1.1. Beside it the same of 10 % trimmed means (a process's one-off major GC, about 200 ms, lands on
 *    one chain of either way), the idle rate of each process (5 s, nothing running), and the means net of it.
 * 2. First row (`schedule` ÷ `hand`): a saved maps task (20 places) and its schedule (yearly, so the
 *    worker's own minute job never finds it due); 30 samples a way after 10 warm-ups, alternated:
 *      schedule  `fireDueSchedules(core, tick)` (what the worker's `fire_schedules` job calls, here in
 *                this process with the driven tick: the schedule's next) → the run's first row;
 *      hand      `POST /api/v1/scrape/maps` with the task's input → the run's first row.
 *    The first row: the first event of the run with `itemCount > 0`, heard on the bench's event bus
 *    (the commit that stored it). Each run ends before the next sample. Goal: schedule p50 ≤ hand p50.
 *
 * `--chains N`, `--samples N`; `--quick`: 4 chains and 6 samples a way, to check that it runs.
 */
import os from 'node:os';
import net from 'node:net';
import { connect } from '../../db/client.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import type { PipelineStatus } from '../../db/tables/workflows.ts';
import { seedCatalog } from '../../db/seed/index.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import { loopbackConfig } from '../../src/config.ts';
import type { Core } from '../../src/core.ts';
import { createCore } from '../../src/create-core.ts';
import { createLogger } from '../../src/logger.ts';
import { isTerminal } from '../../src/runs/view.ts';
import { companyDomain } from '../../src/tools/lib/email/domains.ts';
import { findLink, linkValues, type StepLink } from '../../src/tools/steps.ts';
import { isPipelineEnded } from '../../src/workflows/pipelines.ts';
import { fireDueSchedules } from '../../src/workflows/schedules.ts';
import {
  LOOPBACK,
  mxTo,
  startDns,
  startSmtp,
  startWeb,
  type MailboxMode,
  type Sites,
  type Zone,
} from '../../test/fixtures/net.ts';
import {
  alternate,
  databaseKind,
  median,
  openBenchServer,
  pad,
  progress,
  request,
  round,
  sleep,
  spread,
  verdict,
  type DatabaseKind,
  type Spread,
  type Suite,
} from './harness.ts';
import { Fleet, localPostmaster, treeCpuMs, type Child } from './processes.ts';

const FULL = { chains: 30, chainWarmups: 5, places: 8, samples: 30, warmups: 10, idleSecs: 5, settleMs: 200 };
const QUICK = { chains: 4, chainWarmups: 1, places: 8, samples: 6, warmups: 2, idleSecs: 1, settleMs: 200 };
type Options = typeof FULL;

const GOAL_CHAIN_CPU_RATIO = 1.1;
const GOAL_FIRST_ROW_RATIO = 1.0;

const CATEGORIES = ['dentist', 'plumber', 'accountant', 'florist', 'veterinarian'];
const CITIES = [
  'Denver, CO',
  'Austin, TX',
  'Seattle, WA',
  'Boston, MA',
  'Miami, FL',
  'Phoenix, AZ',
  'Portland, OR',
  'Nashville, TN',
];
/** The maps input of chain `i`: every category in a city, then the next city. */
const chainInput = (i: number, places: number) => ({
  searchStringsArray: [CATEGORIES[i % CATEGORIES.length]!],
  locationQuery: CITIES[Math.floor(i / CATEGORIES.length) % CITIES.length]!,
  maxCrawledPlacesPerSearch: places,
});
/** The input of warm-up `i` (from 1): a category no kept chain asks for. */
const warmupInput = (i: number, places: number) => ({
  searchStringsArray: ['electrician'],
  locationQuery: CITIES[i % CITIES.length]!,
  maxCrawledPlacesPerSearch: places,
});
const FINDER_INPUT = { jobTitle: 'Owner' };
const FIRST_ROW_INPUT = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 20 };

const MAPS_TO_FINDER = findLink('maps', 'website-finder') as StepLink;
const FINDER_TO_VALIDATOR = findLink('website-finder', 'email-validator') as StepLink;

const WAYS = ['pipeline', 'hand'] as const;
type Way = (typeof WAYS)[number];
const STARTS = ['schedule', 'hand'] as const;
type Start = (typeof STARTS)[number];

/** CPU milliseconds by process; `postgres` null when the server is not on this machine. */
export interface Cpu {
  gateway: number;
  worker: number;
  postgres: number | null;
}

export interface ChainFigures {
  chains: number;
  /** Means a chain. */
  cpuMs: Cpu & { gatewayWorker: number; netGatewayWorker: number };
  wallMs: Spread;
  /** Requests to the gateway a chain. */
  requests: number;
}

export interface PipelineResult {
  date: string;
  database: DatabaseKind;
  cpus: number;
  loadAverage: { before: number[]; after: number[] };
  options: Options;
  /** Sites (and mail domains) of the local network. */
  sites: number;
  chain: {
    pipeline: ChainFigures;
    hand: ChainFigures;
    /** Pipeline ÷ hand of the means. */
    ratio: {
      gatewayWorker: number;
      net: number;
      gateway: number;
      worker: number;
      postgres: number | null;
      wall: number;
    };
    /**
     * Gateway + worker, pipeline ÷ hand of the means less the highest and the lowest tenth of each way's
     * chains: a one-off pause of a process (a major GC, about 200 ms, once a minute or so after it
     * starts) falls on one chain, either way, and moves the plain means by several percent.
     */
    trimmedRatio: number;
    /** CPU ms a second of each process with nothing running. */
    idleMsPerSec: Cpu;
    /** Rows of each step (maps, finder, validator) a chain, each way the same; values fed to steps 2 and 3. */
    work: { rows: [number, number, number]; domains: number; emails: number };
  };
  firstRow: {
    schedule: { startMs: Spread; firstRowMs: Spread };
    hand: { startMs: Spread; firstRowMs: Spread };
    /** Schedule ÷ hand, p50 of first row. */
    ratio: number;
    /** Median of the rounds' schedule ÷ hand. */
    roundRatio: number;
    rows: number;
  };
}

// ---------------------------------------------------------------------------------------------
// The local network: a site, a mail domain and an owner per local business with a website

const FIRST = ['Ann', 'Ben', 'Cara', 'Dev', 'Elena', 'Felix', 'Grace', 'Hugo', 'Iris', 'Jonah', 'Kira', 'Liam'];
const LAST = ['Alder', 'Brooks', 'Castillo', 'Dunn', 'Ellison', 'Fischer', 'Garza', 'Holt', 'Iverson', 'Jensen', 'Kim'];
const MX = 'mx.pipeline.test';

const page = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;

/** A business's site: a home page, a team page naming the owner with a mailto link, a contact page. */
function ownerSite(name: string, domain: string, owner: { first: string; last: string; local: string }) {
  const nav = '<nav><a href="/team">Our team</a> <a href="/contact">Contact</a></nav>';
  return {
    '/robots.txt': 'User-agent: *\nAllow: /\n',
    '/': page(name, `${nav}<h1>${name}</h1><p>Serving the city since 2004.</p>`),
    '/team': page(
      `${name}: our team`,
      `<section class="team-grid">
        <div class="team-member"><h3>${owner.first} ${owner.last}</h3><p class="position">Owner</p>
          <a href="mailto:${owner.local}@${domain}">Email ${owner.first}</a></div>
        <div class="team-member"><h3>Pat Lee</h3><p class="position">Office Manager</p></div>
      </section>`,
    ),
    '/contact': page(`Contact ${name}`, `<p>Write to info@${domain}.</p>`),
  };
}

interface World {
  zone: Zone;
  sites: Sites;
  mailboxes: Record<string, MailboxMode>;
}

/** Fills the world for every local business with a website; returns how many sites. */
async function fillWorld(core: Core, world: World): Promise<number> {
  const rows = await core.sql<{ id: number; name: string; website: string }[]>`
    select id, name, website from local_business where website is not null order by id`;
  world.zone[MX] = LOOPBACK;
  let sites = 0;
  for (const { id, name, website } of rows) {
    const domain = companyDomain(website);
    if (!domain) continue;
    const first = FIRST[id % FIRST.length]!;
    const last = LAST[(id * 7) % LAST.length]!;
    const local = (id % 3 === 0 ? first : `${first}.${last}`).toLowerCase();
    world.zone[domain] = { ...LOOPBACK, ...mxTo(MX) };
    world.sites[domain] = ownerSite(name, domain, { first, last, local });
    // Most servers say which mailboxes exist; every fifth accepts any address (catch-all).
    world.mailboxes[domain] = id % 5 === 4 ? { mode: 'catch-all' } : { mode: 'list', users: [local, 'info'] };
    sites++;
  }
  return sites;
}

/** A loopback port nobody listens on: https attempts are refused at once and the crawler goes on over http. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The environment pointing the service at the local servers (test/fixtures/net.ts `localNetwork`, as variables). */
const networkEnv = (ports: { dns: number; smtp: number; web: number; closed: number }): Record<string, string> => ({
  DNS_SERVERS: `127.0.0.1:${ports.dns}`,
  DNS_TIMEOUT_MS: '1000',
  SMTP_PORT: String(ports.smtp),
  SMTP_HELO_NAME: 'checker.leadgate.test',
  SMTP_MAIL_FROM: 'verify@leadgate.test',
  SMTP_TIMEOUT_MS: '2000',
  SMTP_GREYLIST_RETRY_MS: '200',
  WEB_TIMEOUT_MS: '2000',
  WEB_HTTP_PORT: String(ports.web),
  WEB_HTTPS_PORT: String(ports.closed),
  OUTBOUND_ALLOW: [ports.smtp, ports.web, ports.closed].map((p) => `127.0.0.1:${p}`).join(','),
});

// ---------------------------------------------------------------------------------------------
// What the bench hears: the account's runs and pipelines, on its own event bus

interface RunHeard {
  firstRowAt?: number;
  endedAt?: number;
  status?: string;
}

class Listener {
  private readonly runs = new Map<string, RunHeard>();
  private readonly pipelines = new Map<string, { endedAt: number; status: string }>();
  private readonly waiters = new Set<() => void>();
  private failure: Error | undefined;
  private constructor(private readonly stops: (() => Promise<unknown>)[]) {}

  static async open(core: Core, accountId: string): Promise<Listener> {
    const [runs, pipelines] = await Promise.all([
      core.events.subscribe('runEvents', accountId),
      core.events.subscribe('pipelineEvents', accountId),
    ]);
    const listener = new Listener([() => runs.return(), () => pipelines.return()]);
    void (async () => {
      for await (const { run } of runs) {
        const at = performance.now();
        const heard = listener.runs.get(run.id) ?? {};
        if (run.itemCount > 0) heard.firstRowAt ??= at;
        if (isTerminal(run.status)) Object.assign(heard, { endedAt: heard.endedAt ?? at, status: run.status });
        listener.runs.set(run.id, heard);
        listener.wake();
      }
    })().catch((err: Error) => listener.fail(err));
    void (async () => {
      for await (const event of pipelines) {
        if (isPipelineEnded(event.status as PipelineStatus) && !listener.pipelines.has(event.pipelineId))
          listener.pipelines.set(event.pipelineId, { endedAt: performance.now(), status: event.status });
        listener.wake();
      }
    })().catch((err: Error) => listener.fail(err));
    return listener;
  }

  private wake() {
    for (const waiter of [...this.waiters]) waiter();
  }

  private fail(err: Error) {
    this.failure = err;
    this.wake();
  }

  /** `check`'s value once it has one (checked again at every event), or a failure after `timeoutMs`. */
  private until<T>(check: () => T | undefined, what: string, timeoutMs = 60_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(look);
      };
      const look = () => {
        if (this.failure) {
          done();
          return reject(this.failure);
        }
        const value = check();
        if (value === undefined) return;
        done();
        resolve(value);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`pipeline: ${what} not heard within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiters.add(look);
      look();
    });
  }

  /** When the run's first stored row was heard. */
  firstRow = (runId: string) => this.until(() => this.runs.get(runId)?.firstRowAt, `run ${runId}'s first row`);

  /** The run's end, which must be SUCCEEDED. */
  async runEnd(runId: string): Promise<number> {
    const heard = await this.until(() => {
      const r = this.runs.get(runId);
      return r?.endedAt === undefined ? undefined : r;
    }, `run ${runId}'s end`);
    if (heard.status !== 'SUCCEEDED') throw new Error(`pipeline: run ${runId} ended ${heard.status}`);
    return heard.endedAt!;
  }

  /** The pipeline's end, which must be SUCCEEDED. */
  async pipelineEnd(id: string): Promise<number> {
    const ended = await this.until(() => this.pipelines.get(id), `pipeline ${id}'s end`);
    if (ended.status !== 'SUCCEEDED') throw new Error(`pipeline: pipeline ${id} ended ${ended.status}`);
    return ended.endedAt;
  }

  async close() {
    await Promise.all(this.stops.map((stop) => stop()));
  }
}

// ---------------------------------------------------------------------------------------------
// The two ways of a chain

interface Api {
  baseUrl: string;
  apiKey: string;
}

/** What a chain did, read from the database once it has ended: each step's tool, the values fed to it, its rows. */
interface StepWork {
  tool: string;
  fed: string[];
  rows: number;
  status: string;
}

interface ChainRound {
  wallMs: number;
  /** From the sample before the chain to the one after it, ms. */
  windowMs: number;
  cpu: Cpu;
  requests: number;
  steps: StepWork[];
}

type RunRow = { id: string; tool: string; status: string; input: Record<string, unknown>; item_count: number };

const fedValues = (run: RunRow): string[] => {
  const field = run.tool === 'website-finder' ? 'domains' : run.tool === 'email-validator' ? 'emails' : undefined;
  return field ? ((run.input[field] as string[] | undefined) ?? []) : [];
};
const stepsOf = (runs: RunRow[]): StepWork[] =>
  runs.map((r) => ({ tool: r.tool, fed: fedValues(r), rows: r.item_count, status: r.status }));

/** The three steps as a pipeline: the start, then its end heard. */
async function pipelineChain(api: Api, listener: Listener, input: Record<string, unknown>) {
  const { json } = await request<{ pipeline: { id: string } }>(api, 'POST', '/api/v1/pipelines', {
    steps: [{ tool: 'maps', input }, { tool: 'website-finder', input: FINDER_INPUT }, { tool: 'email-validator' }],
  });
  await listener.pipelineEnd(json.pipeline.id);
  return { requests: 1, pipelineId: json.pipeline.id };
}

/** The same three steps by hand: each run started with the values of the rows of the one before, read from the gateway. */
async function handChain(api: Api, listener: Listener, input: Record<string, unknown>) {
  let requests = 0;
  const start = async (tool: string, body: Record<string, unknown>) => {
    requests++;
    const { json } = await request<{ runId: string }>(api, 'POST', `/api/v1/scrape/${tool}`, body);
    await listener.runEnd(json.runId);
    return json.runId;
  };
  const rowsOf = async (runId: string) => {
    requests++;
    return (await request<Record<string, unknown>[]>(api, 'GET', `/api/downloads/${runId}?format=json`)).json;
  };
  const runIds = [await start('maps', input)];
  // As the pipeline reads a step's rows: the link's values, in order, each once, at most what the next tool takes.
  const domains = linkValues(MAPS_TO_FINDER, await rowsOf(runIds[0]!)).slice(0, MAPS_TO_FINDER.max);
  if (domains.length > 0) {
    runIds.push(await start('website-finder', { ...FINDER_INPUT, domains }));
    const emails = linkValues(FINDER_TO_VALIDATOR, await rowsOf(runIds[1]!)).slice(0, FINDER_TO_VALIDATOR.max);
    if (emails.length > 0) runIds.push(await start('email-validator', { emails }));
  }
  return { requests, runIds };
}

// ---------------------------------------------------------------------------------------------
// The suite

const meanOf = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

function chainFigures(rounds: ChainRound[], idle: Cpu): ChainFigures {
  const mean = (f: (r: ChainRound) => number) => meanOf(rounds.map(f));
  const tenth = (f: (r: ChainRound) => number) => round(mean(f), 1);
  const gatewayWorker = mean((r) => r.cpu.gateway + r.cpu.worker);
  const idleShare = ((idle.gateway + idle.worker) * mean((r) => r.windowMs)) / 1000;
  return {
    chains: rounds.length,
    cpuMs: {
      gateway: tenth((r) => r.cpu.gateway),
      worker: tenth((r) => r.cpu.worker),
      postgres: rounds.some((r) => r.cpu.postgres === null) ? null : tenth((r) => r.cpu.postgres!),
      gatewayWorker: round(gatewayWorker, 1),
      netGatewayWorker: round(gatewayWorker - idleShare, 1),
    },
    wallMs: spread(rounds.map((r) => r.wallMs)),
    requests: tenth((r) => r.requests),
  };
}

/** Both ways of every input did the same work, or the suite fails; the work of one. */
function sameWork(kept: Record<Way, ChainRound[]>): PipelineResult['chain']['work'] {
  const tools = ['maps', 'website-finder', 'email-validator'];
  kept.pipeline.forEach((a, i) => {
    const b = kept.hand[i]!;
    const what = `chain ${i + 1} (${JSON.stringify(chainInput(i, 0).searchStringsArray)} in ${chainInput(i, 0).locationQuery})`;
    for (const [way, steps] of [
      ['pipeline', a.steps],
      ['hand', b.steps],
    ] as const) {
      if (steps.map((s) => s.tool).join() !== tools.join())
        throw new Error(`pipeline: ${what}, ${way}: steps ${steps.map((s) => s.tool).join(' → ')}`);
      const failed = steps.find((s) => s.status !== 'SUCCEEDED');
      if (failed) throw new Error(`pipeline: ${what}, ${way}: ${failed.tool} ended ${failed.status}`);
      if (steps.some((s) => s.rows === 0)) throw new Error(`pipeline: ${what}, ${way}: a step gave no rows`);
    }
    if (JSON.stringify(a.steps) !== JSON.stringify(b.steps))
      throw new Error(
        `pipeline: ${what}: the two ways did different work: pipeline ${JSON.stringify(a.steps)}, hand ${JSON.stringify(b.steps)}`,
      );
  });
  const steps = kept.pipeline.map((r) => r.steps);
  const mean = (f: (s: StepWork[]) => number) => round(meanOf(steps.map(f)), 1);
  return {
    rows: [mean((s) => s[0]!.rows), mean((s) => s[1]!.rows), mean((s) => s[2]!.rows)],
    domains: mean((s) => s[1]!.fed.length),
    emails: mean((s) => s[2]!.fed.length),
  };
}

async function benchPipeline(options: Options): Promise<PipelineResult> {
  const loadBefore = os.loadavg().map((x) => round(x, 2));
  const world: World = { zone: {}, sites: {}, mailboxes: {} };
  const dns = await startDns(world.zone);
  const smtp = await startSmtp(world.mailboxes);
  const web = await startWeb(world.sites);
  const env = networkEnv({ dns: dns.port, smtp: smtp.port, web: web.port, closed: await closedPort() });
  const server = await openBenchServer();
  const fleet = new Fleet();
  const started: Child[] = [];
  let core: Core | undefined;
  let listener: Listener | undefined;
  try {
    const databaseUrl = await server.createDatabase();
    await migrateDatabase(databaseUrl);
    progress('pipeline: seeding the small catalog');
    const { db, sql } = connect(databaseUrl, { max: 2 });
    let account: { apiKey: string; account: { id: string } };
    try {
      await seedCatalog(sql, { scale: 'small' });
      account = await createAccount(db, { name: 'bench-pipeline', plan: 'scale', creditsMicros: 10n ** 13n });
      await sql`vacuum analyze`;
    } finally {
      await sql.end();
    }
    // This process's Core: what the bench hears, the schedule's ticks, the checks.
    core = await createCore(loopbackConfig(databaseUrl), databaseUrl, createLogger('silent'), { poolSize: 4 });
    const sites = await fillWorld(core, world);
    const postmaster = await localPostmaster(core.sql);
    progress(`pipeline: ${sites} sites and mail domains; starting a gateway and a worker process`);
    const [gateway, worker] = await Promise.all([
      fleet.gateway('gateway', databaseUrl, env),
      fleet.worker('worker', databaseUrl, 4, env),
    ]);
    started.push(gateway, worker);
    const api: Api = { baseUrl: gateway.url, apiKey: account.apiKey };
    listener = await Listener.open(core, account.account.id);
    const heard = listener;

    const cpuNow = async (): Promise<Cpu> => {
      const [g, w, p] = await treeCpuMs([gateway.child.pid!, worker.child.pid!, postmaster ?? -1]);
      return { gateway: g!, worker: w!, postgres: postmaster === undefined ? null : p! };
    };
    const minus = (a: Cpu, b: Cpu): Cpu => ({
      gateway: a.gateway - b.gateway,
      worker: a.worker - b.worker,
      postgres: a.postgres === null || b.postgres === null ? null : a.postgres - b.postgres,
    });
    /** Rejects when a process exits unasked. */
    const failed = () => fleet.failed;

    // Idle: the processes' own timers, heartbeats and polling with nothing running.
    await sleep(1000);
    const idleFrom = await cpuNow();
    const idleAt = performance.now();
    await sleep(options.idleSecs * 1000);
    const idleUsed = minus(await cpuNow(), idleFrom);
    const idleSecs = (performance.now() - idleAt) / 1000;
    const idleMsPerSec: Cpu = {
      gateway: round(idleUsed.gateway / idleSecs, 2),
      worker: round(idleUsed.worker / idleSecs, 2),
      postgres: idleUsed.postgres === null ? null : round(idleUsed.postgres / idleSecs, 2),
    };

    // 1. Chains.
    progress(`pipeline: ${options.chains} chains a way, alternated, after a warm-up of each`);
    const chains = await alternate(
      WAYS,
      options.chains,
      async (way, i): Promise<ChainRound> => {
        const input = i < 0 ? warmupInput(-i, options.places) : chainInput(i, options.places);
        const before = await cpuNow();
        const t0 = performance.now();
        const done = await Promise.race([
          way === 'pipeline' ? pipelineChain(api, heard, input) : handChain(api, heard, input),
          failed(),
        ]);
        const wallMs = performance.now() - t0;
        // What follows the end heard (the job marked done) falls in the chain's window.
        await sleep(options.settleMs);
        const cpu = minus(await cpuNow(), before);
        const windowMs = performance.now() - t0;
        const runs =
          'pipelineId' in done
            ? await core!.sql<RunRow[]>`
                select id, tool, status, input, item_count from run where pipeline_id = ${done.pipelineId} order by pipeline_step`
            : await core!.sql<RunRow[]>`
                select id, tool, status, input, item_count from run where id = any(${done.runIds})
                order by array_position(${done.runIds}::text[], id)`;
        const round_: ChainRound = { wallMs, windowMs, cpu, requests: done.requests, steps: stepsOf(runs) };
        if (i >= 0)
          progress(
            `  pipeline: chain ${i + 1} ${way}: ${Math.round(wallMs)} ms, CPU ms gateway ${cpu.gateway} + worker ${cpu.worker} (Postgres ${cpu.postgres}); rows ${round_.steps.map((s) => s.rows).join(' → ')}`,
          );
        return round_;
      },
      options.chainWarmups,
    );
    const work = sameWork(chains);
    const figures = {
      pipeline: chainFigures(chains.pipeline, idleMsPerSec),
      hand: chainFigures(chains.hand, idleMsPerSec),
    };
    const [a, b] = [figures.pipeline.cpuMs, figures.hand.cpuMs];
    const trimmed = (rounds: ChainRound[]) => {
      const cut = Math.floor(rounds.length / 10);
      const sorted = rounds.map((r) => r.cpu.gateway + r.cpu.worker).sort((x, y) => x - y);
      return meanOf(sorted.slice(cut, sorted.length - cut));
    };

    // 2. First row.
    progress(`pipeline: first row, ${options.samples} samples a way after ${options.warmups} warm-ups`);
    await request(api, 'POST', '/api/v1/tasks', { name: 'bench-first-row', tool: 'maps', input: FIRST_ROW_INPUT });
    const { json: made } = await request<{ schedule: { id: string; nextFireAt: string } }>(
      api,
      'POST',
      '/api/v1/schedules',
      { task: 'bench-first-row', cron: '0 0 1 1 *', timezone: 'UTC' },
    );
    let tick = new Date(made.schedule.nextFireAt);
    let rows = 0;
    const samples = await alternate(
      STARTS,
      options.samples,
      async (way) => {
        const t0 = performance.now();
        let runId: string;
        if (way === 'schedule') {
          const fired = await fireDueSchedules(core!, tick);
          if (fired.length !== 1 || fired[0]!.outcome !== 'started' || !fired[0]!.runId)
            throw new Error(`pipeline: the tick ${tick.toISOString()} did not start a run: ${JSON.stringify(fired)}`);
          runId = fired[0]!.runId;
        } else {
          runId = (await request<{ runId: string }>(api, 'POST', '/api/v1/scrape/maps', FIRST_ROW_INPUT)).json.runId;
        }
        const startMs = performance.now() - t0;
        const firstRowMs = (await Promise.race([heard.firstRow(runId), failed()])) - t0;
        await Promise.race([heard.runEnd(runId), failed()]);
        const [run] = await core!.sql<{ n: number }[]>`select item_count as n from run where id = ${runId}`;
        if (rows > 0 && run!.n !== rows) throw new Error(`pipeline: run ${runId} gave ${run!.n} rows, others ${rows}`);
        rows = run!.n;
        if (way === 'schedule') {
          const [next] = await core!.sql<{ at: string }[]>`
            select next_fire_at as at from schedule where id = ${made.schedule.id}`;
          tick = new Date(next!.at);
        }
        return { startMs, firstRowMs };
      },
      options.warmups,
    );
    const pick = (way: Start) => ({
      startMs: spread(samples[way].map((s) => s.startMs)),
      firstRowMs: spread(samples[way].map((s) => s.firstRowMs)),
    });
    const firstRow = { schedule: pick('schedule'), hand: pick('hand') };

    return {
      date: new Date().toISOString(),
      database: databaseKind(),
      cpus: os.cpus().length,
      loadAverage: { before: loadBefore, after: os.loadavg().map((x) => round(x, 2)) },
      options,
      sites,
      chain: {
        ...figures,
        ratio: {
          gatewayWorker: round(a.gatewayWorker / b.gatewayWorker, 3),
          net: round(a.netGatewayWorker / b.netGatewayWorker, 3),
          gateway: round(a.gateway / b.gateway, 2),
          worker: round(a.worker / b.worker, 2),
          postgres: a.postgres === null || b.postgres === null ? null : round(a.postgres / b.postgres, 2),
          wall: round(figures.pipeline.wallMs.p50 / figures.hand.wallMs.p50, 2),
        },
        trimmedRatio: round(trimmed(chains.pipeline) / trimmed(chains.hand), 3),
        idleMsPerSec,
        work,
      },
      firstRow: {
        ...firstRow,
        ratio: round(firstRow.schedule.firstRowMs.p50 / firstRow.hand.firstRowMs.p50, 3),
        roundRatio: round(median(samples.schedule.map((s, i) => s.firstRowMs / samples.hand[i]!.firstRowMs)), 3),
        rows,
      },
    };
  } finally {
    await listener?.close().catch(() => {});
    await fleet.stop(started).catch(() => {});
    fleet.close();
    await core?.close().catch(() => {});
    await server.close();
    await web.close();
    await smtp.close();
    await dns.close();
  }
}

const chainMet = (r: PipelineResult) => r.chain.ratio.gatewayWorker <= GOAL_CHAIN_CPU_RATIO;
const firstRowMet = (r: PipelineResult) => r.firstRow.ratio <= GOAL_FIRST_ROW_RATIO;

export const pipeline: Suite<PipelineResult> = {
  name: 'pipeline',
  key: 'pipeline',
  quick: true,
  flags: ['chains', 'samples'],
  run(context) {
    const base = context.quick ? QUICK : FULL;
    return benchPipeline({
      ...base,
      chains: context.count('chains') ?? base.chains,
      samples: context.count('samples') ?? base.samples,
    });
  },
  format(r) {
    const c = r.chain;
    const o = r.options;
    const w = [10, 8, 9, 9, 11, 7, 14, 10, 10, 9];
    const pg = (x: number | null) => (x === null ? '-' : x);
    const row = (way: Way, f: ChainFigures) =>
      pad(
        [
          way,
          f.cpuMs.gateway,
          f.cpuMs.worker,
          f.cpuMs.gatewayWorker,
          f.cpuMs.netGatewayWorker,
          pg(f.cpuMs.postgres),
          `${f.wallMs.p50} / ${f.wallMs.p90}`,
          f.wallMs.max,
          f.requests,
          f.chains,
        ],
        w,
      );
    const s = [28, 12, 12, 12];
    const line = (label: string, x: Spread) => pad([label, x.p50, x.p90, x.max], s);
    return [
      `16. Pipelines: maps (${o.places} places) → domain email finder (Owner) → email validator on a local network (${r.sites} sites), gateway and worker processes, ${r.database} Postgres; load ${r.loadAverage.before[0]} → ${r.loadAverage.after[0]}`,
      `   ${o.chains} inputs, one chain at a time, pipeline and by hand alternated; CPU ms a chain (mean; /proc, to ${o.settleMs} ms after its end), wall ms from the first request to the end heard`,
      pad(
        [
          'way',
          'gateway',
          'worker',
          'gw + wk',
          'net of idle',
          'Postgres',
          'wall p50 / p90',
          'wall max',
          'requests',
          'chains',
        ],
        w,
      ),
      row('pipeline', c.pipeline),
      row('hand', c.hand),
      `   rows a chain, each way the same (checked chain by chain: tools, values fed, rows): ${c.work.rows.join(' → ')}; ${c.work.domains} domains, ${c.work.emails} addresses fed`,
      `   pipeline ÷ hand: gateway + worker ${c.ratio.gatewayWorker} (net of idle ${c.ratio.net}; 10 % trimmed means ${c.trimmedRatio}); gateway ${c.ratio.gateway}, worker ${c.ratio.worker}, Postgres ${pg(c.ratio.postgres)}; wall p50 ${c.ratio.wall}`,
      `   idle CPU ms/s: gateway ${c.idleMsPerSec.gateway}, worker ${c.idleMsPerSec.worker}, Postgres ${pg(c.idleMsPerSec.postgres)}`,
      `   goal pipeline ÷ hand, gateway + worker CPU ≤ ${GOAL_CHAIN_CPU_RATIO}×: ${verdict(chainMet(r))}`,
      `   first row of a ${r.firstRow.rows}-row maps run: ${o.samples} samples a way after ${o.warmups} warm-ups, alternated, ms`,
      pad(['start', 'p50', 'p90', 'max'], s),
      line('schedule tick: fired', r.firstRow.schedule.startMs),
      line('schedule tick: first row', r.firstRow.schedule.firstRowMs),
      line('hand POST: answered', r.firstRow.hand.startMs),
      line('hand POST: first row', r.firstRow.hand.firstRowMs),
      `   schedule ÷ hand, first row p50: ${r.firstRow.ratio} (rounds p50 ${r.firstRow.roundRatio}); goal ≤ ${GOAL_FIRST_ROW_RATIO}: ${verdict(firstRowMet(r))}`,
    ].join('\n');
  },
  goals: (r) => ({
    chainCpuRatio: GOAL_CHAIN_CPU_RATIO,
    firstRowRatio: GOAL_FIRST_ROW_RATIO,
    met: chainMet(r) && firstRowMet(r),
  }),
};
