/**
 * `mcp-agent-bytes`: how many bytes an agent reads from the MCP server (the tool list and the tools'
 * answers) doing issue 39's task, "find 20 dentists in Denver with websites, find the owners' emails,
 * validate them, give me a CSV". Goal: the new way reads at most a third of what the old way did.
 *
 * Every agent is the official SDK client (`Client`, `StreamableHTTPClientTransport`) whose `fetch`
 * counts every byte of every response body as the client reads it (JSON-RPC envelopes and `initialize`
 * with its instructions included; the client drops the bodies of the 202 to `initialized` and of the
 * 405 to its GET unread), on the same gateway (inline worker) and the same world, alternated over
 * rounds (2, medians). No progress token is sent, so no call is answered as an event stream. Also
 * counted, apart: the answers' `structuredContent`, the same data as their JSON text, sent twice.
 *
 *   baseline  the server as an agent had to use it before MCP v2: every tool listed (`/mcp?tools=all`),
 *             each start without waitSecs, check_run_status with waitSecs 30 until the run ends,
 *             download_results from offset 0 to the last nextOffset with every column (its default 100
 *             rows / 50 KB a page), the rows read inline and the CSV written by the agent.
 *   new       as the server's instructions say: the default tool list (`/mcp`), each start with
 *             waitSecs 45 (a run that ends in time answers its first 20 rows and a CSV resource_link),
 *             download_results with `fields` for what the first rows lacked, and the CSV handed to the
 *             user as the link (its bytes never enter the agent's context; the bench downloads it
 *             outside the count, to check it holds every address).
 *   lean      no goal: the default tool list, each start without waitSecs, then check_run_status with
 *             waitSecs 45 (the run and its link, no rows), download_results with `fields` only, the link.
 *
 * The steps: scrape_maps (30 Denver dentists: a fifth of the catalog's places have no website), then
 * find_domain_emails (the first 20 websites, job title "Owner"), then validate_emails (the owners'
 * addresses). The world is local, as the email tools' tests set it up (test/fixtures/net.ts): a DNS
 * server, a scripted SMTP server and a web server hosting a site per Denver dentist (the owner on its
 * team page, a mailto link; every fifth mail server catch-all), admitted by the outbound guard's test
 * allow-list. The catalog: local businesses at `medium` (40 per city and category, enough Denver
 * dentists), everything else at `small`. Every agent must find the same 20 websites and the same
 * owners' addresses, and a link must download as many rows as addresses validated, or the suite fails.
 *
 * On its own, `node --import tsx bench/mcp-agent-bytes.ts [--agents baseline,new,lean] [--rounds N]
 * [--json FILE]` (prints, saves nothing): `--agents baseline` also runs on a checkout from before MCP
 * v2 (962179a), which ignores `?tools=` and knows no waitSecs or fields: the issue's "before".
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { seedCatalog } from '../db/seed/index.ts';
import {
  LOOPBACK,
  localNetwork,
  mxTo,
  startDns,
  startSmtp,
  startWeb,
  type MailboxMode,
  type Sites,
  type Zone,
} from '../test/fixtures/net.ts';
import {
  alternate,
  median,
  n,
  pad,
  progress,
  readFlags,
  round,
  runStandalone,
  startGateway,
  verdict,
  type Gateway,
  type Suite,
} from './lib/harness.ts';

const TASK = "find 20 dentists in Denver with websites, find the owners' emails, validate them, give me a CSV";
const DENTISTS = 20;
const MAPS_INPUT = { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 30 };
const OWNER_TITLE = 'Owner';
const GOAL_RATIO = 0.33;
const ROUNDS = 2;
const ENDED = new Set(['SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED-OUT']);

const AGENTS = ['baseline', 'new', 'lean'] as const;
type AgentName = (typeof AGENTS)[number];
const STEPS = ['connect', 'toolList', 'maps', 'owners', 'validation'] as const;
type Step = (typeof STEPS)[number];
const STEP_LABELS: Record<Step, string> = {
  connect: 'connect (initialize)',
  toolList: 'tool list',
  maps: 'dentists: scrape_maps',
  owners: 'owners: find_domain_emails',
  validation: 'validation: validate_emails',
};

type Row = Record<string, unknown>;

/** Response-body bytes, of which the answers' structuredContent (the same data as their JSON text), and HTTP requests. */
export interface Bytes {
  bytes: number;
  structured: number;
  requests: number;
}

export interface AgentRound {
  steps: Record<Step, Bytes>;
  total: Bytes;
  tools: number;
  /** Tool calls per tool name. */
  calls: Record<string, number>;
  websites: string[];
  emails: string[];
  /** The CSV's data rows: written by the baseline agent, downloaded from the link by the others. */
  csvRows: number;
  /** Validation statuses of the rows the agent read (none for lean, which reads no validation row). */
  statuses: Record<string, number>;
}

export interface AgentFigures {
  url: string;
  /** Medians of the rounds. */
  steps: Record<Step, Bytes>;
  total: Bytes;
  rounds: AgentRound[];
}

export interface AgentBytesResult {
  task: string;
  commit: string | null;
  mapsInput: typeof MAPS_INPUT;
  rounds: number;
  world: { dentistSites: number };
  agents: Partial<Record<AgentName, AgentFigures>>;
  /** new ÷ baseline and lean ÷ baseline, total bytes (medians). */
  ratio: number | null;
  leanRatio: number | null;
  goalRatio: number;
}

// ---------------------------------------------------------------------------------------------
// Counting what the client reads

/** Response-body bytes by step, counted as the client reads them; `step` is read when a request starts. */
class Meter {
  step: Step = 'connect';
  readonly bytes = Object.fromEntries(STEPS.map((s) => [s, 0])) as Record<Step, number>;
  readonly requests = Object.fromEntries(STEPS.map((s) => [s, 0])) as Record<Step, number>;
  /** Of those bytes, the answers' structuredContent: the same data as their JSON text, sent twice. */
  readonly structured = Object.fromEntries(STEPS.map((s) => [s, 0])) as Record<Step, number>;

  readonly fetch: typeof fetch = async (input, init) => {
    const step = this.step;
    this.requests[step] += 1;
    const response = await fetch(input, init);
    if (!response.body || [204, 205, 304].includes(response.status)) return response;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          this.bytes[step] += chunk.byteLength;
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

type Answer = {
  isError?: boolean;
  content: { type: string; text?: string; uri?: string }[];
  structuredContent?: Record<string, unknown>;
};

/** A connected agent: its client, its meter, and what it called. */
class Agent {
  readonly meter = new Meter();
  readonly calls: Record<string, number> = {};
  private constructor(readonly client: Client) {}

  static async connect(url: string, apiKey: string): Promise<Agent> {
    const client = new Client({ name: 'bench-agent', version: '1.0.0' });
    const agent = new Agent(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
        fetch: agent.meter.fetch,
      }),
    );
    return agent;
  }

  /** A tool's answer: its JSON text (every version of the server sends it) and its resource links. */
  async call(name: string, args: Record<string, unknown>): Promise<{ body: Row; links: string[] }> {
    this.calls[name] = (this.calls[name] ?? 0) + 1;
    const answer = (await this.client.callTool({ name, arguments: args })) as Answer;
    if (answer.structuredContent)
      this.meter.structured[this.meter.step] += Buffer.byteLength(JSON.stringify(answer.structuredContent));
    const text = answer.content.find((c) => c.type === 'text')?.text ?? '{}';
    if (answer.isError) throw new Error(`${name} answered an error: ${text}`);
    const links = answer.content.filter((c) => c.type === 'resource_link').map((c) => c.uri ?? '');
    return { body: JSON.parse(text) as Row, links };
  }
}

const rowsOf = (page: Row) => (page.rows ?? []) as Row[];
const nextOffsetOf = (page: Row) => (typeof page.nextOffset === 'number' ? page.nextOffset : null);

/** The first `DENTISTS` dentists with a website, and their websites. */
const withWebsites = (rows: readonly Row[]) => rows.filter((r) => typeof r.website === 'string' && r.website);
const countStatuses = (rows: readonly Row[]) => {
  const counts: Record<string, number> = {};
  for (const r of rows) counts[String(r.status)] = (counts[String(r.status)] ?? 0) + 1;
  return counts;
};
const ownerEmails = (rows: readonly Row[]) => [
  ...new Set(rows.flatMap((r) => (r.status === 'found' && typeof r.email === 'string' ? [r.email] : []))),
];

// ---------------------------------------------------------------------------------------------
// The two agents

/** As before MCP v2: start, poll with waitSecs, then every row with every column, page by page. */
async function runToTheEnd(agent: Agent, tool: string, args: Row): Promise<Row[]> {
  const { body: start } = await agent.call(tool, args);
  const runId = String(start.runId);
  let status = String(start.status);
  while (!ENDED.has(status))
    status = String((await agent.call('check_run_status', { runId, waitSecs: 30 })).body.status);
  if (status !== 'SUCCEEDED') throw new Error(`${tool} run ${runId} ended ${status}`);
  const rows: Row[] = [];
  for (let offset: number | null = 0; offset !== null; ) {
    const { body } = await agent.call('download_results', { runId, offset });
    rows.push(...rowsOf(body));
    offset = nextOffsetOf(body);
  }
  return rows;
}

/** What an agent found and handed over. */
type Outcome = Pick<AgentRound, 'websites' | 'emails' | 'csvRows' | 'statuses'>;

async function baselineAgent(agent: Agent): Promise<Outcome> {
  agent.meter.step = 'maps';
  const places = await runToTheEnd(agent, 'scrape_maps', MAPS_INPUT);
  const dentists = withWebsites(places).slice(0, DENTISTS);
  const websites = dentists.map((d) => String(d.website));
  agent.meter.step = 'owners';
  const owners = await runToTheEnd(agent, 'find_domain_emails', { domains: websites, jobTitle: OWNER_TITLE });
  const emails = ownerEmails(owners);
  agent.meter.step = 'validation';
  const checks = await runToTheEnd(agent, 'validate_emails', { emails });
  // The CSV the agent writes for the user: a dentist, its owner, the owner's address and its status.
  const statusOf = new Map(checks.map((c) => [String(c.email).toLowerCase(), c.status]));
  const ownerOf = new Map(owners.filter((o) => o.status === 'found').map((o) => [String(o.domain), o]));
  const csv = dentists.map((d) => {
    const owner = ownerOf.get(new URL(String(d.website)).hostname.replace(/^www\./, ''));
    const email = typeof owner?.email === 'string' ? owner.email : '';
    return [d.name, d.website, d.phone, owner?.full_name ?? '', email, statusOf.get(email.toLowerCase()) ?? ''];
  });
  // Its rows with an owner's address and that address's status.
  const csvRows = csv.filter((row) => row[4] && row[5]).length;
  return { websites, emails, csvRows, statuses: countStatuses(checks) };
}

/**
 * With MCP v2: a start that waits (`wait`) answers its first rows and a link; else check_run_status
 * waits and links the file. download_results with `fields` reads the columns the next step needs,
 * from where the rows in hand end, until `enough`.
 */
async function runV2(
  agent: Agent,
  wait: boolean,
  tool: string,
  args: Row,
  fields: string[],
  enough: (rows: readonly Row[]) => boolean,
): Promise<{ rows: Row[]; links: string[] }> {
  // Waiting, it asks the start for the columns it needs, as the instructions say.
  const waiting = { ...args, waitSecs: 45, ...(fields.length > 0 ? { fields } : {}) };
  let { body, links } = await agent.call(tool, wait ? waiting : args);
  const runId = String(body.runId);
  while (!ENDED.has(String(body.status)))
    ({ body, links } = await agent.call('check_run_status', { runId, waitSecs: 45 }));
  if (body.status !== 'SUCCEEDED') throw new Error(`${tool} run ${runId} ended ${String(body.status)}`);
  const first = body.results as Row | undefined;
  const rows = first ? [...rowsOf(first)] : [];
  let offset = first ? nextOffsetOf(first) : 0;
  while (offset !== null && !enough(rows)) {
    const { body: page } = await agent.call('download_results', { runId, offset, fields });
    rows.push(...rowsOf(page));
    offset = nextOffsetOf(page);
  }
  if (links.length === 0) throw new Error(`${tool} run ${runId}: no CSV link in its answer`);
  return { rows, links };
}

/** `new` (wait: starts with waitSecs) and `lean` (starts without, then check_run_status with waitSecs). */
async function v2Agent(agent: Agent, wait: boolean): Promise<Outcome> {
  agent.meter.step = 'maps';
  const places = await runV2(
    agent,
    wait,
    'scrape_maps',
    MAPS_INPUT,
    ['website'],
    (rows) => withWebsites(rows).length >= DENTISTS,
  );
  const websites = withWebsites(places.rows)
    .slice(0, DENTISTS)
    .map((d) => String(d.website));
  agent.meter.step = 'owners';
  const owners = await runV2(
    agent,
    wait,
    'find_domain_emails',
    { domains: websites, jobTitle: OWNER_TITLE },
    ['status', 'email'],
    () => false,
  );
  const emails = ownerEmails(owners.rows);
  agent.meter.step = 'validation';
  const checks = await runV2(agent, wait, 'validate_emails', { emails }, ['status'], () => true);
  // The user gets the link; the bench opens it, outside the count, to check it holds every address.
  const csv = await fetch(checks.links[0]!);
  if (!csv.ok) throw new Error(`the CSV link answered ${csv.status}`);
  const csvRows = (await csv.text()).trimEnd().split('\n').length - 1;
  if (csvRows !== emails.length) throw new Error(`the CSV link has ${csvRows} rows for ${emails.length} addresses`);
  return { websites, emails, csvRows, statuses: countStatuses(checks.rows) };
}

const sum = (all: readonly Bytes[]): Bytes => ({
  bytes: all.reduce((t, x) => t + x.bytes, 0),
  structured: all.reduce((t, x) => t + x.structured, 0),
  requests: all.reduce((t, x) => t + x.requests, 0),
});
const medianOf = (all: readonly Bytes[]): Bytes => ({
  bytes: median(all.map((x) => x.bytes)),
  structured: median(all.map((x) => x.structured)),
  requests: median(all.map((x) => x.requests)),
});

async function runAgent(name: AgentName, url: string, apiKey: string): Promise<AgentRound> {
  const agent = await Agent.connect(url, apiKey);
  try {
    agent.meter.step = 'toolList';
    const { tools } = await agent.client.listTools();
    const outcome = await (name === 'baseline' ? baselineAgent(agent) : v2Agent(agent, name === 'new'));
    const { meter } = agent;
    const steps = Object.fromEntries(
      STEPS.map((s) => [s, { bytes: meter.bytes[s], structured: meter.structured[s], requests: meter.requests[s] }]),
    ) as AgentRound['steps'];
    return { steps, total: sum(Object.values(steps)), tools: tools.length, calls: agent.calls, ...outcome };
  } finally {
    await agent.client.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The world: a site, a mail domain and an owner per Denver dentist

const FIRST = ['Ann', 'Ben', 'Cara', 'Dev', 'Elena', 'Felix', 'Grace', 'Hugo', 'Iris', 'Jonah', 'Kira', 'Liam'];
const LAST = ['Alder', 'Brooks', 'Castillo', 'Dunn', 'Ellison', 'Fischer', 'Garza', 'Holt', 'Iverson', 'Jensen', 'Kim'];

const page = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;

/** A dental practice's site: a home page, a team page naming the owner with a mailto link, about and contact. */
function dentalSite(name: string, domain: string, owner: { first: string; last: string; local: string }) {
  const nav = '<nav><a href="/team">Our team</a> <a href="/about">About us</a> <a href="/contact">Contact</a></nav>';
  return {
    '/robots.txt': 'User-agent: *\nAllow: /\n',
    '/': page(name, `${nav}<h1>${name}</h1><p>Family and cosmetic dentistry in Denver.</p>`),
    '/team': page(
      `${name}: our team`,
      `<section class="team-grid">
        <div class="team-member"><h3>${owner.first} ${owner.last}</h3><p class="position">Owner &amp; Lead Dentist</p>
          <a href="mailto:${owner.local}@${domain}">Email ${owner.first}</a></div>
        <div class="team-member"><h3>Sam Rivera</h3><p class="position">Dental Hygienist</p></div>
        <div class="team-member"><h3>Pat Lee</h3><p class="position">Office Manager</p></div>
      </section>`,
    ),
    '/about': page(`About ${name}`, `<p>Serving Denver families since 2004. Write to info@${domain}.</p>`),
    '/contact': page(`Contact ${name}`, `<p>Appointments: front desk at ${domain.split('.').join(' dot ')}.</p>`),
  };
}

/** Fills the local servers' maps for every Denver dentist with a website; returns how many. */
async function dentalWorld(gw: Gateway, world: { zone: Zone; sites: Sites; mailboxes: Record<string, MailboxMode> }) {
  const rows = await gw.app.core.sql<{ name: string; website: string }[]>`
    select name, website from local_business where city = 'Denver' and category = 'Dentist' and website is not null
    order by id`;
  world.zone['mx.dental.test'] = LOOPBACK;
  for (const [i, { name, website }] of rows.entries()) {
    const domain = new URL(website).hostname.replace(/^www\./, '');
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[(i * 7) % LAST.length]!;
    const local = (i % 3 === 0 ? first : `${first}.${last}`).toLowerCase();
    world.zone[domain] = { ...LOOPBACK, ...mxTo('mx.dental.test') };
    world.sites[domain] = dentalSite(name, domain, { first, last, local });
    // Most practices' servers say which mailboxes exist; every fifth accepts any address (catch-all).
    world.mailboxes[domain] = i % 5 === 4 ? { mode: 'catch-all' } : { mode: 'list', users: [local, 'info'] };
  }
  return rows.length;
}

function commitOf(): string | null {
  try {
    return execFileSync('git', ['log', '-1', '--format=%h %cs'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

export async function benchAgentBytes(
  options: { agents?: readonly AgentName[]; rounds?: number } = {},
): Promise<AgentBytesResult> {
  const agents = options.agents ?? AGENTS;
  const rounds = options.rounds ?? ROUNDS;
  const world = { zone: {} as Zone, sites: {} as Sites, mailboxes: {} as Record<string, MailboxMode> };
  const dns = await startDns(world.zone);
  const smtp = await startSmtp(world.mailboxes);
  const web = await startWeb(world.sites);
  let gw: Gateway | undefined;
  try {
    gw = await startGateway({
      worker: true,
      config: { network: localNetwork({ dns: dns.port, smtp: smtp.port, web: web.port }) },
      account: { name: 'bench-mcp-agent', creditsMicros: 1_000_000_000n },
    });
    progress('mcp-agent-bytes: seeding local businesses at medium, the rest at small…');
    await seedCatalog(gw.app.core.sql, { scale: 'medium', tables: ['local_business', 'local_business_review'] });
    await seedCatalog(gw.app.core.sql, { scale: 'small' });
    const dentistSites = await dentalWorld(gw, world);
    const url = (agent: AgentName) => `${gw!.baseUrl}/mcp${agent === 'baseline' ? '?tools=all' : ''}`;
    const { apiKey } = gw;
    const kept = await alternate(agents, rounds, async (agent, i) => {
      const result = await runAgent(agent, url(agent), apiKey);
      progress(
        `mcp-agent-bytes: round ${i + 1}/${rounds} ${agent}: ${n(result.total.bytes)} bytes in ${result.total.requests} requests`,
      );
      return result;
    });
    const figures: Partial<Record<AgentName, AgentFigures>> = {};
    for (const agent of agents) {
      const all = kept[agent];
      const steps = Object.fromEntries(STEPS.map((s) => [s, medianOf(all.map((r) => r.steps[s]))])) as Record<
        Step,
        Bytes
      >;
      figures[agent] = {
        url: url(agent).slice(gw.baseUrl.length),
        steps,
        total: medianOf(all.map((r) => r.total)),
        rounds: all,
      };
    }
    // Every agent of every round found the same 20 websites and the same owners' addresses.
    const all = Object.values(figures).flatMap((f) => f.rounds);
    const key = (r: AgentRound) => JSON.stringify([[...r.websites].sort(), [...r.emails].sort()]);
    for (const r of all) {
      if (r.websites.length !== DENTISTS) throw new Error(`an agent found ${r.websites.length} websites`);
      if (r.emails.length === 0) throw new Error('an agent found no owner email');
      if (key(r) !== key(all[0]!)) throw new Error('the agents did not find the same dentists and owners');
    }
    const ratioTo = (f?: AgentFigures) =>
      f && figures.baseline ? round(f.total.bytes / figures.baseline.total.bytes, 3) : null;
    return {
      task: TASK,
      commit: commitOf(),
      mapsInput: MAPS_INPUT,
      rounds,
      world: { dentistSites },
      agents: figures,
      ratio: ratioTo(figures.new),
      leanRatio: ratioTo(figures.lean),
      goalRatio: GOAL_RATIO,
    };
  } finally {
    await gw?.close();
    await web.close();
    await smtp.close();
    await dns.close();
  }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

export const mcpAgentBytes: Suite<AgentBytesResult> = {
  name: 'mcp-agent-bytes',
  key: 'mcpAgentBytes',
  run: () => benchAgentBytes(),
  format(r) {
    const shown = AGENTS.filter((a) => r.agents[a]);
    const { baseline } = r.agents;
    const w = [28, ...shown.map(() => 17), ...shown.filter((a) => a !== 'baseline' && baseline).map(() => 7)];
    const cell = (x: Bytes) => `${kb(x.bytes)} (${x.requests} req)`;
    const ratio = (x: Bytes, base?: Bytes) => (base && base.bytes > 0 ? (x.bytes / base.bytes).toFixed(2) : '-');
    const line = (label: string, pick: (f: AgentFigures) => Bytes) =>
      pad(
        [
          label,
          ...shown.map((a) => cell(pick(r.agents[a]!))),
          ...(baseline
            ? shown.filter((a) => a !== 'baseline').map((a) => ratio(pick(r.agents[a]!), pick(baseline)))
            : []),
        ],
        w,
      );
    const text = (f: AgentFigures) => kb(f.total.bytes - f.total.structured);
    const calls = (f: AgentFigures) =>
      Object.entries(f.rounds[0]!.calls)
        .map(([name, count]) => `${name} ×${count}`)
        .join(', ');
    return [
      `15. MCP agent bytes: "${r.task}" (SDK client over Streamable HTTP; ${r.rounds} rounds, medians${r.commit ? `; ${r.commit}` : ''})`,
      pad(
        [
          'step',
          ...shown.map((a) => `${a} ${r.agents[a]!.url}`),
          ...(baseline ? shown.filter((a) => a !== 'baseline').map((a) => `${a}÷b`) : []),
        ],
        w,
      ),
      ...STEPS.map((s) => line(STEP_LABELS[s], (f) => f.steps[s])),
      line('total', (f) => f.total),
      ...shown.flatMap((a) => {
        const f = r.agents[a]!;
        const first = f.rounds[0]!;
        const statuses = Object.entries(first.statuses).map(([status, count]) => `${count} ${status}`);
        return [
          `   ${a}: ${first.tools} tools listed; ${calls(f)}`,
          `     ${text(f)} without the structuredContent copies; rounds ${f.rounds.map((x) => n(x.total.bytes)).join(' / ')} bytes; ` +
            `CSV ${first.csvRows} rows${statuses.length ? `; addresses read ${statuses.join(', ')}` : ''}`,
        ];
      }),
      `   ${r.world.dentistSites} dentist sites served locally; lean ÷ baseline ${r.leanRatio ?? '-'}`,
      `   goal new ÷ baseline ≤ ${r.goalRatio}: ${verdict(r.ratio === null ? null : r.ratio <= r.goalRatio)}${r.ratio === null ? '' : ` (${r.ratio})`}`,
    ].join('\n');
  },
  goals: (r) => ({ ratio: r.goalRatio, met: r.ratio === null ? null : r.ratio <= r.goalRatio }),
};

if (path.resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  const flags = readFlags(
    'usage: node --import tsx bench/mcp-agent-bytes.ts [--agents baseline,new,lean] [--rounds N] [--json FILE]',
    { agents: { type: 'string' }, rounds: { type: 'string' } },
  );
  const agents = flags.list('agents') ?? [...AGENTS];
  for (const a of agents) if (!(AGENTS as readonly string[]).includes(a)) flags.fail(`unknown agent "${a}"`);
  await runStandalone(
    mcpAgentBytes,
    () => benchAgentBytes({ agents: agents as AgentName[], rounds: flags.count('rounds') ?? ROUNDS }),
    { json: flags.json, save: false },
  );
}
