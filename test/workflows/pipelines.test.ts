import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { companyDomain } from '../../src/tools/lib/email/domains.ts';
import { emailValidatorTool } from '../../src/tools/email-validator.ts';
import { mapsTool } from '../../src/tools/maps.ts';
import { MAX_CONTACTS_PER_DOMAIN, websiteFinderTool } from '../../src/tools/website-finder.ts';
import { LOOPBACK, mxTo, type LocalWeb, type MailboxMode, type Sites, type Zone } from '../fixtures/net.ts';
import { startNetworkedTestApp, type NetworkedTestApp } from '../helpers/network.ts';
import { gate, waitFor } from '../helpers/wait.ts';

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
    const running = await until(id, (p) => p.steps[1]?.run?.status === 'RUNNING');
    expect(running.step).toBe(1);
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
