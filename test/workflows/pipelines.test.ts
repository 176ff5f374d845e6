import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { companyDomain } from '../../src/tools/lib/email/domains.ts';
import { emailValidatorTool } from '../../src/tools/email-validator.ts';
import { mapsTool } from '../../src/tools/maps.ts';
import { MAX_CONTACTS_PER_DOMAIN, websiteFinderTool } from '../../src/tools/website-finder.ts';
import { LOOPBACK, mxTo, type LocalWeb, type MailboxMode, type Sites, type Zone } from '../fixtures/net.ts';
import { startNetworkedTestApp, type NetworkedTestApp } from '../helpers/network.ts';
import { gate, waitFor } from '../helpers/wait.ts';
import { collect, disposeClients, wsClient } from '../helpers/ws.ts';
import { checkLinks } from '../../src/tools/steps.ts';
import { fireDueSchedules } from '../../src/workflows/schedules.ts';

/**
 * A three-step pipeline (maps → the domain email finder on local sites → the email validator on a local
 * SMTP server): quoted, held as one amount, run step by step, its joined table checked cell by cell, and
 * a second one cancelled part-way with the rest of its hold released.
 */

let t: NetworkedTestApp<LocalWeb>;
let key: string;
let accountId: string;
const zone: Zone = { 'mx.shared.test': LOOPBACK };
const sites: Sites = {};
const mailboxes: Record<string, MailboxMode> = {};
/** Holds the home page of the cancel test's first site until the test lets it go. */
const slowHome = gate();

const MAPS_INPUT = { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 4 };
const SLOW_INPUT = { searchStringsArray: ['plumber'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 2 };
const STEPS = (first: Record<string, unknown>) => [
  { tool: 'maps', input: first },
  { tool: 'website-finder', input: { jobTitle: 'Owner' } },
  { tool: 'email-validator' },
];

/** A small practice site naming its owner, whose address is at the domain. */
const ownerSite = (domain: string, name: string, user: string) => ({
  '/robots.txt': { status: 404 },
  '/': `<html><body><h1>Practice</h1><section class="team-grid"><div class="team-member"><h3>${name}</h3>
    <p class="position">Owner</p><a href="mailto:${user}@${domain}">Email ${name.split(' ')[0]}</a></div></section>
    <footer><a href="mailto:info@${domain}">info</a></footer></body></html>`,
});

/** The maps rows the first step will deliver (runs are deterministic over the catalog). */
async function placesOf(input: Record<string, unknown>) {
  const { rows } = await t.runTool(key, mapsTool.rest.path, input);
  return rows as { name: string; website: string | null; place_id: string }[];
}

let dentists: { name: string; website: string | null; place_id: string }[];
let domains: string[];

beforeAll(async () => {
  t = await startNetworkedTestApp({ zone, mailboxes, sites }, { webTimeoutMs: 120_000 });
  ({ accountId, apiKey: key } = await t.account({ creditsMicros: 20_000_000n }));
  dentists = await placesOf(MAPS_INPUT);
  domains = dentists.flatMap((d) => (d.website ? [companyDomain(d.website) ?? ''] : []));
  expect(domains.length).toBeGreaterThanOrEqual(3);
  // The first two sites name an owner; the first's mailbox knows her, the second's knows nobody; the
  // third site does not resolve at all.
  const [first, second] = domains as [string, string];
  Object.assign(sites, { [first]: ownerSite(first, 'Ann Lee', 'ann'), [second]: ownerSite(second, 'Bo Diaz', 'bo') });
  Object.assign(zone, {
    [first]: { ...LOOPBACK, ...mxTo('mx.shared.test') },
    [second]: { ...LOOPBACK, ...mxTo('mx.shared.test') },
  });
  mailboxes[first] = { mode: 'list', users: ['ann'] };
  mailboxes[second] = { mode: 'list', users: [] };
});
afterAll(async () => {
  slowHome.open();
  await disposeClients();
  await t?.stop();
});

type Pipeline = {
  id: string;
  step: number;
  status: string;
  statusMessage: string;
  quotedCost: number;
  heldCost: number;
  cost: number;
  steps: { tool: string; quotedCost: number; run: { id: string; status: string; cost: number } | null }[];
};

const getPipeline = async (id: string) =>
  (await t.request('GET', `/api/v1/pipelines/${id}`, { key })).body.pipeline as Pipeline;
const until = (id: string, done: (p: Pipeline) => boolean) =>
  waitFor(() => getPipeline(id), done, { timeoutMs: 60_000, what: `pipeline ${id}` });
const ledgerOf = async (pipelineId: string) =>
  (await t.app.core.sql`select kind, plan_micros + purchased_micros as micros, note from ledger_entry
    where pipeline_id = ${pipelineId} order by id`) as unknown as { kind: string; micros: string; note: string }[];

describe('a three-step pipeline', () => {
  it('is quoted step by step as an upper bound', async () => {
    const quote = await t.request('POST', '/api/v1/pipelines/quote', { key, body: { steps: STEPS(MAPS_INPUT) } });
    expect(quote.status, quote.text).toBe(200);
    const places = 4;
    const contacts = places * MAX_CONTACTS_PER_DOMAIN;
    const micros = [
      mapsTool.price.unitMicros * BigInt(places),
      websiteFinderTool.price.unitMicros * BigInt(contacts),
      emailValidatorTool.price.unitMicros * BigInt(contacts),
    ];
    expect(quote.body.steps).toEqual([
      { tool: 'maps', mostItems: places, quotedCost: Number(micros[0]) / 1e6 },
      { tool: 'website-finder', mostItems: places, quotedCost: Number(micros[1]) / 1e6 },
      { tool: 'email-validator', mostItems: contacts, quotedCost: Number(micros[2]) / 1e6 },
    ]);
    expect(quote.body).toMatchObject({
      estimatedCost: Number(micros.reduce((a, b) => a + b, 0n)) / 1e6,
      walletCovers: true,
    });
  });

  it('refuses a step no link leads to, and a fed field given by hand, naming the step', async () => {
    const wrong = await t.request('POST', '/api/v1/pipelines', {
      key,
      body: {
        steps: [
          { tool: 'maps', input: MAPS_INPUT },
          { tool: 'lead-scraper', input: {} },
        ],
      },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details[0]).toMatchObject({ path: 'steps.1.tool' });
    expect(wrong.body.error.details[0].message).toContain('Domain email finder (from website)');
    const fed = await t.request('POST', '/api/v1/pipelines', {
      key,
      body: {
        steps: [
          { tool: 'maps', input: MAPS_INPUT },
          { tool: 'website-finder', input: { jobTitle: 'Owner', domains: ['a.com'] } },
        ],
      },
    });
    expect(fed.body.error.details[0]).toMatchObject({ path: 'steps.1.input.domains' });
    const missing = await t.request('POST', '/api/v1/pipelines', {
      key,
      body: { steps: [{ tool: 'maps', input: MAPS_INPUT }, { tool: 'website-finder' }] },
    });
    expect(missing.body.error.details[0]).toMatchObject({ path: 'steps.1.input.jobTitle' });
    expect(await ledgerCount()).toBe(0);
  });

  it('holds its quote as one amount, runs each step as a billed run, and releases the rest', async () => {
    const before = await t.walletMicros(accountId);
    const started = await t.request('POST', '/api/v1/pipelines', { key, body: { steps: STEPS(MAPS_INPUT) } });
    expect(started.status, started.text).toBe(201);
    const id = started.body.pipeline.id as string;
    const quoted = started.body.pipeline.quotedCost as number;
    expect(started.body.pipeline).toMatchObject({ status: 'RUNNING', heldCost: quoted, step: 0 });
    const [hold] = await ledgerOf(id);
    expect(hold).toMatchObject({ kind: 'hold', micros: String(-Math.round(quoted * 1e6)) });

    const ended = await until(id, (p) => p.status !== 'RUNNING');
    expect(ended.status, ended.statusMessage).toBe('SUCCEEDED');
    expect(ended.steps.map((s) => s.run?.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    const charged = ended.steps.reduce((sum, s) => sum + Math.round((s.run?.cost ?? 0) * 1e6), 0);
    expect(ended.cost * 1e6).toBeCloseTo(charged, 0);
    // Nothing is left held: the wallet lost exactly what the three runs were charged.
    expect(before - (await t.walletMicros(accountId))).toBe(BigInt(charged));
    const entries = await ledgerOf(id);
    const net = entries.reduce((sum, e) => sum + BigInt(e.micros), 0n);
    expect(net).toBe(0n);

    // Each step was fed by the rows of the one before.
    const runs = await t.app.core.sql`select tool, input, pipeline_step from run where pipeline_id = ${id}
      order by pipeline_step`;
    expect(runs.map((r) => r.tool)).toEqual(['maps', 'website-finder', 'email-validator']);
    expect((runs[1]!.input as { domains: string[] }).domains).toEqual(domains);
    expect((runs[2]!.input as { emails: string[] }).emails).toEqual([`ann@${domains[0]}`, `bo@${domains[1]}`]);

    // The joined table, cell by cell.
    const csv = await t.request('GET', `/api/v1/pipelines/${id}/download`, { key });
    expect(csv.status, csv.text).toBe(200);
    const table = parse(csv.text, { columns: true }) as Record<string, string>[];
    expect(Object.keys(table[0]!)).toEqual([
      ...mapsTool.columns.map((c) => `maps.${c.header}`),
      ...websiteFinderTool.columns.map((c) => `website-finder.${c.header}`),
      ...emailValidatorTool.columns.map((c) => `email-validator.${c.header}`),
    ]);
    const pick = (row: Record<string, string>) => ({
      name: row['maps.name'],
      domain: row['website-finder.domain'],
      site: row['website-finder.status'],
      contact: row['website-finder.full_name'],
      email: row['website-finder.email'],
      validated: row['email-validator.email'],
      status: row['email-validator.status'],
    });
    const expected = dentists.map((d) => {
      const domain = d.website ? companyDomain(d.website) : null;
      if (!domain) return { name: d.name, domain: '', site: '', contact: '', email: '', validated: '', status: '' };
      if (domain === domains[0])
        return {
          name: d.name,
          domain,
          site: 'found',
          contact: 'Ann Lee',
          email: `ann@${domain}`,
          validated: `ann@${domain}`,
          status: 'valid',
        };
      if (domain === domains[1])
        return {
          name: d.name,
          domain,
          site: 'found',
          contact: 'Bo Diaz',
          email: `bo@${domain}`,
          validated: `bo@${domain}`,
          status: 'invalid',
        };
      return { name: d.name, domain, site: 'unreachable', contact: '', email: '', validated: '', status: '' };
    });
    expect(table.map(pick)).toEqual(expected);
  });

  it('cancelled part-way: the running step stops, no later step runs, and the rest of the hold is released', async () => {
    const plumbers = await placesOf(SLOW_INPUT);
    const slow = plumbers.flatMap((p) => (p.website ? [companyDomain(p.website) ?? ''] : []))[0];
    expect(slow).toBeTruthy();
    sites[slow!] = { '/robots.txt': { status: 404 }, '/': { body: '<p>slow</p>', until: slowHome.promise } };
    zone[slow!] = LOOPBACK;
    const before = await t.walletMicros(accountId);
    const started = await t.request('POST', '/api/v1/pipelines', { key, body: { steps: STEPS(SLOW_INPUT) } });
    expect(started.status, started.text).toBe(201);
    const id = started.body.pipeline.id as string;
    // The view reads the pipeline and its runs apart: the step's run may show RUNNING a moment before `step` moves.
    const running = await until(id, (p) => p.steps[1]?.run?.status === 'RUNNING' && p.step === 1);
    expect(running.steps[2]?.run ?? null).toBeNull();
    const cancelled = await t.request('POST', `/api/v1/pipelines/${id}/cancel`, { key });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(['ABORTING', 'ABORTED']).toContain(cancelled.body.pipeline.status);
    const ended = await until(id, (p) => p.status === 'ABORTED');
    expect(ended.steps.map((s) => s.run?.status ?? null)).toEqual(['SUCCEEDED', 'ABORTED', null]);
    const charged = ended.steps.reduce((sum, s) => sum + Math.round((s.run?.cost ?? 0) * 1e6), 0);
    expect(before - (await t.walletMicros(accountId))).toBe(BigInt(charged));
    const last = (await ledgerOf(id)).at(-1);
    expect(last).toMatchObject({ kind: 'release', note: 'hold released' });
    expect((await t.request('POST', `/api/v1/pipelines/${id}/cancel`, { key })).body.error.code).toBe(
      'pipeline_finished',
    );
  });
});

const ledgerCount = async () =>
  Number(
    (
      await t.app.core
        .sql`select count(*)::int as n from ledger_entry where pipeline_id is not null and account_id = ${accountId}`
    )[0]!.n,
  );

it('every step link names columns its tools have', () => {
  expect(() => checkLinks()).not.toThrow();
});

describe('on GraphQL', () => {
  const FOLLOW = `subscription ($id: ID!) { pipeline(id: $id) { id status step statusMessage
    steps { tool run { id status itemCount } } } }`;

  it('starts with typed step inputs, follows the pipeline live to its end, and offers a run’s next steps', async () => {
    const quote = await t.graphql(
      key,
      `mutation ($input: StartPipelineInput!) { quotePipeline(input: $input) {
      quote { estimatedCost walletCovers steps { tool mostItems } } userErrors { code field message } } }`,
      {
        input: { steps: [{ tool: 'MAPS', input: MAPS_INPUT }, { tool: 'EMAIL_VALIDATOR' }] },
      },
    );
    expect(quote.body.data.quotePipeline.userErrors).toEqual([]);
    expect(quote.body.data.quotePipeline.quote.steps).toEqual([
      { tool: 'MAPS', mostItems: 4 },
      { tool: 'EMAIL_VALIDATOR', mostItems: 4 * 5 },
    ]);
    const refused = await t.graphql(
      key,
      `mutation ($input: StartPipelineInput!) { startPipeline(input: $input) {
      pipeline { id } userErrors { code field message } } }`,
      {
        input: {
          steps: [
            { tool: 'MAPS', input: MAPS_INPUT },
            { tool: 'WEBSITE_FINDER', input: {} },
          ],
        },
      },
    );
    expect(refused.body.data.startPipeline.userErrors[0]).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: ['input', 'steps', '1', 'input'],
      message: expect.stringContaining('jobTitle'),
    });
    const started = await t.graphql(
      key,
      `mutation ($input: StartPipelineInput!) { startPipeline(input: $input) {
      pipeline { id status steps { tool } } userErrors { code field message } } }`,
      {
        input: {
          steps: [
            { tool: 'MAPS', input: MAPS_INPUT },
            { tool: 'WEBSITE_FINDER', input: { jobTitle: 'Owner' } },
          ],
        },
      },
    );
    expect(started.body.data.startPipeline.userErrors).toEqual([]);
    const id = started.body.data.startPipeline.pipeline.id as string;
    const events = collect<{ status: string; step: number; steps: { run: { status: string } | null }[] }>(
      wsClient(t.url, key),
      FOLLOW,
      { id },
      'pipeline',
    );
    const seen = await events.done;
    expect(seen.at(-1)).toMatchObject({ status: 'SUCCEEDED', step: 1 });
    // It was seen moving: the second step's run appears before the end.
    expect(seen.some((p) => p.status === 'RUNNING' && p.step === 1)).toBe(true);
    const node = await t.graphql(
      key,
      `query ($id: ID!) { node(id: $id) { ... on Pipeline { id status
      downloadPath(format: CSV) steps { run { id nextSteps { tool column values } } } } } }`,
      { id },
    );
    const view = node.body.data.node;
    // The statement shows the pipeline as one line: its hold, its steps' runs and their charges, settled.
    const statement = await t.graphql(
      key,
      `query ($id: ID!) { node(id: $id) { ... on Pipeline { cost } }
      viewer { statement(first: 5) { nodes { kind pipelineId runId amount charged held released stillHeld } } } }`,
      { id },
    );
    const line = statement.body.data.viewer.statement.nodes.find((l: { pipelineId: string }) => l.pipelineId === id);
    expect(line).toMatchObject({ kind: 'PIPELINE', runId: null });
    expect(Number(line.stillHeld)).toBe(0);
    expect(Number(line.charged)).toBeGreaterThan(0);
    expect(Number(line.charged)).toBe(Number(statement.body.data.node.cost));
    expect(line.held).toBe(line.released);
    expect(Number(line.amount)).toBe(-Number(line.charged));
    expect(view.downloadPath).toMatch(new RegExp(`^/api/downloads/${id}\\?`));
    const file = await t.request('GET', view.downloadPath);
    expect(file.status).toBe(200);
    expect(file.text.split('\n')[0]).toContain('website-finder.email');
    expect(view.steps[1].run.nextSteps).toEqual([
      { tool: 'EMAIL_VALIDATOR', column: 'email', values: 2 },
      { tool: 'MOBILE_FINDER', column: 'email', values: 2 },
    ]);
    const next = await t.graphql(
      key,
      `mutation ($run: ID!) { startNextStep(runId: $run, tool: EMAIL_VALIDATOR) {
      run { id } userErrors { code field message } } }`,
      { run: view.steps[1].run.id },
    );
    const nextRun = next.body.data.startNextStep.run.id as string;
    const [row] = await t.app.core.sql`select parent_run_id, input from run where id = ${nextRun}`;
    expect(row).toEqual({
      parent_run_id: view.steps[1].run.id,
      input: { emails: [`ann@${domains[0]}`, `bo@${domains[1]}`] },
    });
  });

  it('another account sees none of it', async () => {
    const other = await t.account();
    const [mine] = await t.app.core.sql`select id from pipeline where account_id = ${accountId} limit 1`;
    const id = String(mine?.id);
    expect((await t.request('GET', `/api/v1/pipelines/${id}`, { key: other.apiKey })).status).toBe(404);
    expect((await t.request('POST', `/api/v1/pipelines/${id}/cancel`, { key: other.apiKey })).status).toBe(404);
    expect((await t.request('GET', `/api/v1/pipelines/${id}/download`, { key: other.apiKey })).status).toBe(404);
    const node = await t.graphql(other.apiKey, `query ($id: ID!) { node(id: $id) { id } }`, { id });
    expect(node.body.data.node).toBeNull();
    const follow = collect(
      wsClient(t.url, other.apiKey),
      `subscription ($id: ID!) { pipeline(id: $id) { id } }`,
      { id },
      'pipeline',
    );
    await expect(follow.done).rejects.toThrow(/pipeline/i);
  });
});

describe('saved, scheduled, into a dataset with only-new', () => {
  it('the second tick runs the later steps only for the new place, and bills only for it', async () => {
    const saved = await t.request('POST', '/api/v1/tasks', {
      key,
      body: {
        name: 'owner-emails',
        tool: 'maps',
        input: { ...MAPS_INPUT, maxCrawledPlacesPerSearch: 500 },
        steps: [{ tool: 'website-finder', input: { jobTitle: 'Owner' } }, { tool: 'email-validator' }],
        datasetName: 'owner-emails',
        onlyNew: true,
      },
    });
    expect(saved.status, saved.text).toBe(201);
    const made = await t.request('POST', '/api/v1/schedules', {
      key,
      body: { task: 'owner-emails', cron: '0 9 * * 1', timezone: 'America/Denver' },
    });
    const tick1 = new Date(made.body.schedule.nextFireAt as string);
    const [first] = (await fireDueSchedules(t.app.core, tick1)).filter((f) => f.scheduleId === made.body.schedule.id);
    expect(first, first?.reason).toMatchObject({ outcome: 'started', runId: expect.stringMatching(/^plp_/) });
    const firstEnd = await until(first!.runId!, (p) => p.status !== 'RUNNING');
    expect(firstEnd.status, firstEnd.statusMessage).toBe('SUCCEEDED');
    const known = (
      await t.app.core.sql`select item_count from run where pipeline_id = ${first!.runId!} and pipeline_step = 0`
    )[0]!.item_count as number;

    // A new practice opens, with a site naming its owner and a mailbox that knows her.
    await t.app.core.sql`
      insert into local_business (place_id, name, category, street, city, state, postal_code, lat, lng, website)
      values ('ChIJnewPracticeDenver1', 'Fresh Smile Dental', 'Dentist', '2 New St', 'Denver', 'CO', '80202', 39.74,
        -104.99, 'https://freshsmile.test/')`;
    sites['freshsmile.test'] = ownerSite('freshsmile.test', 'Cara Moss', 'cara');
    zone['freshsmile.test'] = { ...LOOPBACK, ...mxTo('mx.shared.test') };
    mailboxes['freshsmile.test'] = { mode: 'list', users: ['cara'] };
    const before = await t.walletMicros(accountId);
    const [second] = (await fireDueSchedules(t.app.core, new Date(tick1.getTime() + 7 * 86_400_000))).filter(
      (f) => f.scheduleId === made.body.schedule.id,
    );
    const secondEnd = await until(second!.runId!, (p) => p.status !== 'RUNNING');
    expect(secondEnd.status, secondEnd.statusMessage).toBe('SUCCEEDED');
    const runs = await t.app.core.sql`select tool, input, item_count, skipped_delivered, charged_micros::text as charged
      from run where pipeline_id = ${second!.runId!} order by pipeline_step`;
    expect(runs.map((r) => [r.tool, r.item_count, r.skipped_delivered])).toEqual([
      ['maps', 1, known],
      ['website-finder', 1, 0],
      ['email-validator', 1, 0],
    ]);
    expect((runs[1]!.input as { domains: string[] }).domains).toEqual(['freshsmile.test']);
    expect((runs[2]!.input as { emails: string[] }).emails).toEqual(['cara@freshsmile.test']);
    const expected =
      mapsTool.price.unitMicros + websiteFinderTool.price.unitMicros + emailValidatorTool.price.unitMicros;
    expect(runs.reduce((sum, r) => sum + BigInt(r.charged as string), 0n)).toBe(expected);
    expect(before - (await t.walletMicros(accountId))).toBe(expected);
    const [tagged] = await t.app.core.sql`select task_id, schedule_id from pipeline where id = ${second!.runId!}`;
    expect(tagged).toEqual({ task_id: saved.body.task.id, schedule_id: made.body.schedule.id });
  });
});
