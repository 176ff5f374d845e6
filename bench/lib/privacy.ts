/**
 * `privacy`: what the people-in-the-data machinery costs at scale (issue 43), on the `large` catalog
 * (1,000,000 people; `seededCatalog`, shared_buffers 1GB). With `reuse` the kept catalog is copied to a
 * scratch database (`CREATE DATABASE … TEMPLATE`, dropped at the end), since a cycle deletes people.
 *
 *   1. The identifier index built as migration 0035 builds it on a catalog already there: the table
 *      emptied, then its INSERT … SELECT per source (people, property owners, rental hosts), timed.
 *   2. A DROP cycle of 1,000,000 work items (bench/lib/drop-archive.ts: 80 % on an Email list, 20 % on a
 *      Phone list; 20 % name a catalog person, 100 of them a phone two people share): `runDropCycle` as
 *      the command runs it, timed per phase from its progress calls — staging (archive read, items
 *      stored), matching and acting (5,000 at a time: index lookup, deletions, suppressions, statuses),
 *      answering (the response files) — with the bench process's peak RSS (VmHWM, reset first) and the
 *      CPU of both sides. Every answer is checked against the status its work item's ID names, with the
 *      cycle's counts, the people left and the suppression entries added. **Baseline**: the bare match,
 *      the same 1,000,000 hashes COPYed into a table and joined once against `identifier_hash` (before
 *      the cycle; again after it, for the drift).
 *   3. Suppression on a lead search's request path (bench/lib/suppressed-search.ts), with the list a
 *      deployment holds after that cycle (its 1,000,000 `hash` entries) and 3,000 entries on the
 *      searching account's own list (1,000 e-mails, domains, phones of catalog people and companies).
 *   4. What the index's insert trigger adds to an import: 100,000 people inserted in one statement with
 *      the trigger and without it (disabled in the transaction), rolled back, alternated.
 *   5. What a deletion costs where customers received leads: 500,000 `delivered_lead` rows put in, then
 *      200 delivered people deleted as the cycle deletes them, rolled back; the cycle's deletions at that
 *      cost are added to its time for a second verdict.
 *
 * Goals (issue 43): the cycle takes minutes, not hours (≤ 15, also with those deliveries in place);
 * suppression costs a search ≤ 5 % of its p95 (the check's own p95 against the search's).
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
import type { Sql } from '../../db/client.ts';
import type { Scale } from '../../db/seed/index.ts';
import { loopbackConfig } from '../../src/config.ts';
import type { Core } from '../../src/core.ts';
import { createCore } from '../../src/create-core.ts';
import { createLogger } from '../../src/logger.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import { runDropCycle } from '../../src/privacy/drop-cycle.ts';
import { addSuppressions, normalPhone } from '../../src/privacy/suppression.ts';
import { searchCases } from './database.ts';
import { buildDropArchive, DEFAULT_PLAN, expectedStatus, type ArchiveList, type StatusCounts } from './drop-archive.ts';
import {
  alternate,
  catalogHeading,
  median,
  n,
  pad,
  peopleAndCompanies,
  progress,
  round,
  seededCatalog,
  serverCpuSecondsOf,
  serverSettings,
  verdict,
  type CatalogOptions,
  type CatalogRunHeader,
  type SeededCatalog,
  type Suite,
} from './harness.ts';
import { benchSuppressedSearch, growthPrincipal, type SuppressedSearchFigures } from './suppressed-search.ts';

export interface PrivacyOptions extends CatalogOptions {
  /** Work items in the archive. Default 1,000,000. */
  items?: number;
  /** Timed calls per search variant (after `warmups`). Default 100 and 5. */
  iterations?: number;
  warmups?: number;
  /** People inserted per trigger round, and rounds. Default 100,000 and 2. */
  triggerRows?: number;
  triggerRounds?: number;
  /** Short: the `medium` catalog, 50,000 work items, 10 calls a variant, 10,000 people a trigger round, 50,000 deliveries. */
  quick?: boolean;
  log?: (line: string) => void;
}

export interface PrivacyGoals {
  /** The whole cycle, minutes. */
  cycleMinutes: number;
  /** The check's p95 ÷ the search's p95. */
  checkShare: number;
}

const GOALS: PrivacyGoals = { cycleMinutes: 15, checkShare: 0.05 };

export interface Phase {
  seconds: number;
  rowsPerSec: number;
}

export interface PrivacyResult extends CatalogRunHeader {
  settings: Record<string, string>;
  /** Whether the cycle ran on a scratch copy of the kept catalog. */
  scratchCopy: boolean;
  options: { items: number; iterations: number; warmups: number; triggerRows: number; triggerRounds: number };
  goals: PrivacyGoals;
  index: { seconds: number; rows: number; bySource: { source: string; rows: number; seconds: number }[] };
  archive: {
    name: string;
    lists: ArchiveList[];
    expected: StatusCounts & { workItems: number };
    bytes: number;
    pickSeconds: number;
    writeSeconds: number;
  };
  baseline: { copySeconds: number; joinSeconds: number; seconds: number; rowsPerSec: number; matched: number };
  baselineAfter: { seconds: number; rowsPerSec: number };
  cycle: {
    seconds: number;
    rowsPerSec: number;
    staging: Phase;
    matching: Phase;
    answering: Phase;
    /** Matching rows/s over the first and the last tenth of the chunks. */
    matchingFirstTenth: number;
    matchingLastTenth: number;
    workItems: number;
    deleted: number;
    optedOut: number;
    notFound: number;
    recordsDeleted: number;
    peopleBefore: number;
    peopleAfter: number;
    suppressionsAdded: number;
    /** Response rows read back, each with the status its ID names. */
    answersChecked: number;
    rssBeforeMB: number;
    peakRssMB: number;
    /** How the peak was read: VmHWM reset before the cycle, or since the process started. */
    peakProbe: 'VmHWM reset' | 'VmHWM since start';
    benchCpuSeconds: number;
    postgresCpuSeconds: number | null;
  };
  /** Cycle ÷ bare match, whole cycle and its matching phase. */
  ratio: number;
  matchingRatio: number;
  suppression: { hashEntries: number; accountEntries: number; searches: SuppressedSearchFigures[] };
  triggers: { rows: number; indexRows: number; onMs: number[]; offMs: number[]; addedPct: number };
  /** People deleted with `delivered_lead` rows in place (rolled back), and the cycle's deletions at that cost. */
  deliveries: { rows: number; people: number; ms: number; msPerPerson: number; cycleMinutes: number };
  sizes: Record<string, number>;
  met: { cycle: boolean; cycleWithDeliveries: boolean; search: boolean };
}

// ---------------------------------------------------------------------------------------------
// The database

/** A scratch copy of the kept catalog, dropped by `drop` (no other session may be connected to it). */
async function scratchCopy(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new URL(url);
  const source = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = '/postgres';
  const name = `privacy_${Date.now().toString(36)}`;
  const exec = async (statement: string) => {
    const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(statement);
    } finally {
      await sql.end();
    }
  };
  await exec(`create database "${name}" template "${source}" strategy file_copy`);
  const copy = new URL(url);
  copy.pathname = `/${name}`;
  return { url: copy.toString(), drop: () => exec(`drop database if exists "${name}" with (force)`) };
}

const people = async (sql: Sql) => (await peopleAndCompanies(sql)).people;

/** Migration 0035's initial build, on the catalog as it is: the index emptied, then one INSERT … SELECT a source. */
async function buildIndex(sql: Sql): Promise<PrivacyResult['index']> {
  const bySource: PrivacyResult['index']['bySource'] = [];
  const start = performance.now();
  await sql.begin(async (tx) => {
    await tx`truncate identifier_hash`;
    for (const source of ['person', 'property', 'rental_host']) {
      const t0 = performance.now();
      await tx.unsafe(`do $$ begin
        execute 'insert into identifier_hash (source, record_id, list_type, hash) ' || format(identifier_hash_select('${source}'), '${source}');
      end $$`);
      const [row] = await tx<{ n: number }[]>`select count(*)::int as n from identifier_hash where source = ${source}`;
      bySource.push({ source, rows: row?.n ?? 0, seconds: round((performance.now() - t0) / 1000, 1) });
    }
  });
  const seconds = round((performance.now() - start) / 1000, 1);
  await sql`vacuum (analyze) identifier_hash`;
  return { seconds, rows: bySource.reduce((a, s) => a + s.rows, 0), bySource };
}

/** The bare match: the hashes COPYed into a table, then one join against the index (materialised). */
async function bareMatch(sql: Sql, items: () => Iterable<{ id: string; listType: string; hash: string }>) {
  await sql`drop table if exists drop_bench_item, drop_bench_match`;
  await sql`create unlogged table drop_bench_item (item text, list_type text, hash text)`;
  const start = performance.now();
  const copy = await sql`copy drop_bench_item (item, list_type, hash) from stdin`.writable();
  await pipeline(
    Readable.from(
      (function* () {
        let chunk = '';
        for (const i of items()) {
          chunk += `${i.id}\t${i.listType.toLowerCase()}\t${i.hash}\n`;
          if (chunk.length > 1 << 16) {
            yield chunk;
            chunk = '';
          }
        }
        if (chunk) yield chunk;
      })(),
    ),
    copy,
  );
  const copied = performance.now();
  await sql`create unlogged table drop_bench_match as
    select w.item, h.source, h.record_id from drop_bench_item w
    join identifier_hash h on h.hash = w.hash and h.list_type = w.list_type`;
  const end = performance.now();
  const count = await sql<{ n: number }[]>`select count(*)::int as n from drop_bench_item`;
  const rows = count[0]?.n ?? 0;
  return {
    copySeconds: round((copied - start) / 1000, 2),
    joinSeconds: round((end - copied) / 1000, 2),
    seconds: round((end - start) / 1000, 2),
    rowsPerSec: Math.round(rows / ((end - start) / 1000)),
  };
}

/** The bare match's records by the class each item's ID names: what the cycle must find. */
async function checkBareMatch(sql: Sql, expected: StatusCounts) {
  const rows = await sql<{ cls: string; items: number; records: number }[]>`
    select left(item, 1) as cls, count(distinct item)::int as items, count(*)::int as records
    from drop_bench_match group by 1`;
  const of = (cls: string) => rows.find((r) => r.cls === cls) ?? { items: 0, records: 0 };
  const d = of('D');
  const o = of('O');
  if (d.items !== expected.deleted || d.records !== expected.deleted)
    throw new Error(`the bare match found ${d.items} deleted items (${d.records} records), ${expected.deleted} built`);
  if (o.items !== expected.optedOut || o.records !== 2 * expected.optedOut)
    throw new Error(`the bare match found ${o.items} shared items (${o.records} records), ${expected.optedOut} built`);
  if (of('N').items !== 0) throw new Error(`${of('N').items} items built as unknown are held by the index`);
  return d.items + o.items;
}

// ---------------------------------------------------------------------------------------------
// The cycle

const statusMB = async (field: 'VmRSS' | 'VmHWM') => {
  const text = await readFile('/proc/self/status', 'utf8').catch(() => '');
  return round(Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) / 1024, 1);
};

/** Reads every response file back: each row's status must be the one its work item's ID names. */
async function checkAnswers(responses: { path: string; rows: number }[], lists: ArchiveList[]) {
  let checked = 0;
  for (const response of responses) {
    const lines = createInterface({ input: createReadStream(response.path) });
    let first = true;
    const counts = { 3: 0, 4: 0, 5: 0 } as Record<number, number>;
    for await (const line of lines) {
      if (first) {
        if (line !== 'Id,Status') throw new Error(`${response.path}: header ${line}`);
        first = false;
        continue;
      }
      const [id = '', status] = line.split(',');
      if (Number(status) !== expectedStatus(id)) throw new Error(`${response.path}: ${id} answered ${status}`);
      counts[Number(status)] = (counts[Number(status)] ?? 0) + 1;
      checked += 1;
    }
    const list = lists.find((l) => response.path.endsWith(l.file));
    if (!list || counts[3] !== list.deleted || counts[4] !== list.optedOut || counts[5] !== list.notFound)
      throw new Error(`${response.path}: ${JSON.stringify(counts)}, built ${JSON.stringify(list)}`);
  }
  return checked;
}

async function benchCycle(
  core: Core,
  archive: { path: string; lists: ArchiveList[]; expected: StatusCounts & { workItems: number } },
  folder: string,
  log: (line: string) => void,
) {
  const sql = core.sql;
  const peopleBefore = await people(sql);
  const [{ n: hashesBefore = 0 } = {}] = await sql<
    { n: number }[]
  >`select count(*)::int as n from suppression where account_id is null and kind = 'hash'`;
  const rssBeforeMB = await statusMB('VmRSS');
  const peakProbe = await writeFile('/proc/self/clear_refs', '5').then(
    () => 'VmHWM reset' as const,
    () => 'VmHWM since start' as const,
  );
  const cpuBefore = process.cpuUsage();
  const pgBefore = await serverCpuSecondsOf(sql);
  const marks = { staged: 0, answering: 0, chunks: [] as [number, number][] };
  let lastLog = 0;
  const start = performance.now();
  const summary = await runDropCycle(core.db, archive.path, {
    out: `${folder}/answers/`,
    onProgress: (phase, done) => {
      const now = performance.now();
      if (phase === 'reading') marks.staged = now;
      else if (phase === 'matching') marks.chunks.push([done, now]);
      else marks.answering = now;
      if (now - lastLog > 15_000) {
        lastLog = now;
        log(`  ${phase} ${n(done)} (${((now - start) / 1000).toFixed(0)} s)`);
      }
    },
  });
  const end = performance.now();
  const cpu = process.cpuUsage(cpuBefore);
  const pgAfter = await serverCpuSecondsOf(sql);
  const peakRssMB = await statusMB('VmHWM');

  const e = archive.expected;
  for (const key of ['workItems', 'deleted', 'optedOut', 'notFound'] as const)
    if (summary[key] !== e[key])
      throw new Error(`the cycle counted ${summary[key]} ${key}, the archive holds ${e[key]}`);
  if (summary.recordsDeleted !== e.deleted)
    throw new Error(`the cycle deleted ${summary.recordsDeleted} records, ${e.deleted} expected`);
  const peopleAfter = await people(sql);
  if (peopleBefore - peopleAfter !== e.deleted)
    throw new Error(`${peopleBefore - peopleAfter} people left the catalog, ${e.deleted} expected`);
  const [{ n: hashesAfter = 0 } = {}] = await sql<
    { n: number }[]
  >`select count(*)::int as n from suppression where account_id is null and kind = 'hash'`;
  if (hashesAfter - hashesBefore !== e.workItems)
    throw new Error(`${hashesAfter - hashesBefore} hash suppressions added, ${e.workItems} expected`);
  const answersChecked = await checkAnswers(summary.responses, archive.lists);
  if (answersChecked !== e.workItems) throw new Error(`${answersChecked} answers, ${e.workItems} work items`);

  const phase = (from: number, to: number): Phase => ({
    seconds: round((to - from) / 1000, 1),
    rowsPerSec: Math.round(e.workItems / ((to - from) / 1000)),
  });
  const tenth = Math.max(1, Math.floor(marks.chunks.length / 10));
  const rate = (chunks: [number, number][], before: [number, number]) => {
    const last = chunks.at(-1) ?? before;
    return Math.round((last[0] - before[0]) / ((last[1] - before[1]) / 1000));
  };
  const seconds = (end - start) / 1000;
  return {
    seconds: round(seconds, 1),
    rowsPerSec: Math.round(e.workItems / seconds),
    staging: phase(start, marks.staged),
    matching: phase(marks.staged, marks.answering),
    answering: phase(marks.answering, end),
    matchingFirstTenth: rate(marks.chunks.slice(0, tenth), [0, marks.staged]),
    matchingLastTenth: rate(marks.chunks.slice(-tenth), marks.chunks.at(-tenth - 1) ?? [0, marks.staged]),
    workItems: summary.workItems,
    deleted: summary.deleted,
    optedOut: summary.optedOut,
    notFound: summary.notFound,
    recordsDeleted: summary.recordsDeleted,
    peopleBefore,
    peopleAfter,
    suppressionsAdded: hashesAfter - hashesBefore,
    answersChecked,
    rssBeforeMB,
    peakRssMB,
    peakProbe,
    benchCpuSeconds: round((cpu.user + cpu.system) / 1e6, 1),
    postgresCpuSeconds: pgBefore === undefined || pgAfter === undefined ? null : round(pgAfter - pgBefore, 1),
  };
}

// ---------------------------------------------------------------------------------------------
// Searches and imports

/** 1,000 e-mails, domains and phones (E.164) of catalog people and companies on `principal`'s own list. */
async function accountList(core: Core, principal: Principal, each: number): Promise<number> {
  const sql = core.sql;
  const emails = await sql<{ v: string }[]>`
    select lower(email) as v from person where email is not null order by md5(id::text) limit ${each}`;
  const domains = await sql<{ v: string }[]>`select domain as v from company order by md5(id::text) limit ${each}`;
  const mobiles = await sql<{ v: string }[]>`
    select mobile as v from person where mobile is not null order by md5(id::text || 'm') limit ${each}`;
  const entries = [
    ...emails.map((r) => ({ kind: 'email' as const, value: r.v })),
    ...domains.map((r) => ({ kind: 'domain' as const, value: r.v.toLowerCase().replace(/^www\./, '') })),
    ...mobiles.flatMap((r) => {
      const phone = normalPhone(r.v);
      return phone ? [{ kind: 'phone' as const, value: phone }] : [];
    }),
  ];
  let added = 0;
  for (let i = 0; i < entries.length; i += 1000)
    added += await addSuppressions(core.db, principal.accountId, entries.slice(i, i + 1000), 'account');
  return added;
}

/** People inserted in one statement (copies of the first `rows`, new keys), the index's insert trigger on and off; rolled back. */
async function triggerCost(sql: Sql, rows: number, rounds: number): Promise<PrivacyResult['triggers']> {
  const rollback = new Error('rollback');
  let indexRows = 0;
  const samples = await alternate(['on', 'off'] as const, rounds, async (key) => {
    let ms = 0;
    await sql
      .begin(async (tx) => {
        if (key === 'off') await tx`alter table person disable trigger identifier_hash_on_insert`;
        const [before] = await tx<{ n: number }[]>`select count(*)::int as n from identifier_hash`;
        const t0 = performance.now();
        await tx`insert into person (company_id, first_name, last_name, title, seniority, department, email,
            email_status, phone, mobile, linkedin_url, city, state, country)
          select company_id, first_name, last_name, title, seniority, department, 'copy.' || email,
            email_status, phone, mobile, linkedin_url || '/copy', city, state, country
          from person order by id limit ${rows}`;
        ms = performance.now() - t0;
        const [after] = await tx<{ n: number }[]>`select count(*)::int as n from identifier_hash`;
        if (key === 'on') indexRows = (after?.n ?? 0) - (before?.n ?? 0);
        throw rollback;
      })
      .catch((err: unknown) => {
        if (err !== rollback) throw err;
      });
    return round(ms, 0);
  });
  return {
    rows,
    indexRows,
    onMs: samples.on,
    offMs: samples.off,
    addedPct: round((median(samples.on) / median(samples.off) - 1) * 100, 1),
  };
}

/**
 * A deployment's customers received leads: `rows` of them in `delivered_lead` (one account, the first people by
 * id), then `people` others deleted as the cycle deletes them, timed, all rolled back. Each deleted person's
 * deliveries go by the foreign key's cascade.
 */
async function deliveryCascade(
  sql: Sql,
  account: Principal,
  rows: number,
  people: number,
  cycleDeletions: number,
): Promise<PrivacyResult['deliveries']> {
  const rollback = new Error('rollback');
  let ms = 0;
  await sql
    .begin(async (tx) => {
      await tx`insert into delivered_lead (account_id, person_id)
        select ${account.accountId}, id from person order by id limit ${rows} on conflict do nothing`;
      const t0 = performance.now();
      await tx`delete from person where id in (
        select id from person order by id offset ${Math.floor(rows / 2)} limit ${people})`;
      ms = performance.now() - t0;
      throw rollback;
    })
    .catch((err: unknown) => {
      if (err !== rollback) throw err;
    });
  const msPerPerson = ms / people;
  return {
    rows,
    people,
    ms: round(ms, 0),
    msPerPerson: round(msPerPerson, 2),
    cycleMinutes: round((msPerPerson * cycleDeletions) / 60_000, 1),
  };
}

async function sizes(sql: Sql): Promise<Record<string, number>> {
  const rows = await sql<{ t: string; mb: number }[]>`
    select t, round(pg_total_relation_size(t::regclass) / 1048576.0, 1)::float8 as mb
    from unnest(array['identifier_hash', 'suppression', 'drop_work_item']) t`;
  return Object.fromEntries(rows.map((r) => [r.t, r.mb]));
}

// ---------------------------------------------------------------------------------------------

export async function benchPrivacy(options: PrivacyOptions = {}): Promise<PrivacyResult> {
  const quick = options.quick ?? false;
  const scale: Scale = options.scale ?? (quick ? 'medium' : 'large');
  const items = options.items ?? (quick ? 50_000 : DEFAULT_PLAN.items);
  const iterations = options.iterations ?? (quick ? 10 : 100);
  const warmups = options.warmups ?? (quick ? 2 : 5);
  const triggerRows = options.triggerRows ?? (quick ? 10_000 : 100_000);
  const triggerRounds = options.triggerRounds ?? (quick ? 1 : 2);
  const deliveryRows = quick ? 50_000 : 500_000;
  const deliveryPeople = quick ? 50 : 200;
  const log = options.log ?? progress;
  const loadBefore = os.loadavg().map((x) => round(x, 2));
  const seeded: SeededCatalog = await seededCatalog({ ...options, scale }, log);
  const scratch = options.reuse ? await scratchCopy(seeded.url) : undefined;
  const url = scratch?.url ?? seeded.url;
  const folder = await mkdtemp(path.join(os.tmpdir(), 'leadgate-privacy-'));
  let core: Core | undefined;
  try {
    const config = loopbackConfig(url, 0, { dailyDatabaseRecords: 2_000_000_000, authCacheSecs: 3600 });
    core = await createCore(config, url, createLogger('silent'));
    const sql = core.sql;
    const catalog = await peopleAndCompanies(sql);
    const { version, settings } = await serverSettings(sql, [
      'shared_buffers',
      'work_mem',
      'max_wal_size',
      'synchronous_commit',
      'jit',
    ]);

    log('building the identifier index as migration 0035 does…');
    const index = await buildIndex(sql);
    log(`  ${n(index.rows)} rows in ${index.seconds} s`);

    log(`building a DROP archive of ${n(items)} work items…`);
    const shared = Math.min(DEFAULT_PLAN.shared, Math.floor(items / 1000));
    const archive = await buildDropArchive(sql, folder, { ...DEFAULT_PLAN, items, shared });

    log('the bare match (COPY + one join)…');
    const baseline = await bareMatch(sql, () => archive.items());
    const matched = await checkBareMatch(sql, archive.expected);

    log(`the DROP cycle (${archive.name})…`);
    const cycle = await benchCycle(core, archive, folder, log);
    log(`  ${cycle.seconds} s; the bare match again…`);
    const after = await bareMatch(sql, () => archive.items());
    await sql`drop table if exists drop_bench_item, drop_bench_match`;
    await sql`vacuum (analyze) suppression, identifier_hash, person`;

    log('suppression on the lead searches…');
    const repeat = await growthPrincipal(core, 'bench privacy repeat');
    const accountEntries = await accountList(core, repeat, 1000);
    await sql`vacuum (analyze) suppression`;
    const [{ n: hashEntries = 0 } = {}] = await sql<
      { n: number }[]
    >`select count(*)::int as n from suppression where account_id is null and kind = 'hash'`;
    await sql`select count(*) from person`;
    await sql`select count(*) from company`;
    const searches: SuppressedSearchFigures[] = [];
    for (const c of await searchCases(sql)) {
      log(`  (${c.key}) ${c.label}…`);
      searches.push(await benchSuppressedSearch(core, repeat, c, { iterations, warmups, maxShare: GOALS.checkShare }));
    }

    log(`the index's insert trigger on an import of ${n(triggerRows)} people…`);
    const triggers = await triggerCost(sql, triggerRows, triggerRounds);
    log(`${n(deliveryPeople)} people deleted with ${n(deliveryRows)} delivered leads in place…`);
    const deliveries = await deliveryCascade(sql, repeat, deliveryRows, deliveryPeople, cycle.deleted);

    return {
      date: new Date().toISOString(),
      database: seeded.kind,
      postgres: version,
      settings,
      node: process.version,
      cpus: os.cpus().length,
      loadAverage: { before: loadBefore, after: os.loadavg().map((x) => round(x, 2)) },
      scale,
      people: catalog.people,
      companies: catalog.companies,
      seedSeconds: seeded.seedSeconds,
      scratchCopy: scratch !== undefined,
      options: { items, iterations, warmups, triggerRows, triggerRounds },
      goals: GOALS,
      index,
      archive: {
        name: archive.name,
        lists: archive.lists,
        expected: archive.expected,
        bytes: archive.bytes,
        pickSeconds: round(archive.pickSeconds, 1),
        writeSeconds: round(archive.writeSeconds, 1),
      },
      baseline: { ...baseline, matched },
      baselineAfter: { seconds: after.seconds, rowsPerSec: after.rowsPerSec },
      cycle,
      ratio: round(cycle.seconds / baseline.seconds, 1),
      matchingRatio: round(cycle.matching.seconds / baseline.seconds, 1),
      suppression: { hashEntries, accountEntries, searches },
      triggers,
      deliveries,
      sizes: await sizes(sql),
      met: {
        cycle: cycle.seconds <= GOALS.cycleMinutes * 60,
        cycleWithDeliveries: cycle.seconds / 60 + deliveries.cycleMinutes <= GOALS.cycleMinutes,
        search: searches.every((s) => s.met),
      },
    };
  } finally {
    await core?.close().catch(() => {});
    await scratch?.drop().catch((err: unknown) => log(`dropping the scratch copy: ${String(err)}`));
    await seeded.close().catch(() => {});
    await rm(folder, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// The table

const ms = (value: number) => value.toFixed(1);
const pct = (share: number) => `${(share * 100).toFixed(1)} %`;

function formatPrivacy(r: PrivacyResult): string {
  const c = r.cycle;
  const g = r.goals;
  const lines = [
    `18. Privacy at ${r.scale}: ${n(r.people)} people (${catalogHeading(r)}${r.scratchCopy ? ', a scratch copy' : ''})`,
    `   ${Object.entries(r.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}; load ${r.loadAverage.before.join(' ')} → ${r.loadAverage.after.join(' ')}`,
    '',
    `   identifier index built as migration 0035 builds it: ${n(r.index.rows)} rows in ${r.index.seconds} s (${r.index.bySource
      .map((s) => `${s.source} ${n(s.rows)} in ${s.seconds} s`)
      .join(', ')})`,
    `   archive ${r.archive.name}: ${r.archive.lists
      .map(
        (l) =>
          `${l.listType} ${n(l.items)} (${n(l.deleted)} deleted, ${n(l.optedOut)} opted out, ${n(l.notFound)} not found)`,
      )
      .join(
        '; ',
      )}; ${(r.archive.bytes / 2 ** 20).toFixed(1)} MB, picked in ${r.archive.pickSeconds} s, written in ${r.archive.writeSeconds} s`,
    '',
  ];
  const w = [34, 10, 12];
  lines.push(pad([`DROP cycle of ${n(c.workItems)} work items`, 'seconds', 'rows/s'], w));
  lines.push(pad(['  staging (read, stored)', c.staging.seconds, n(c.staging.rowsPerSec)], w));
  lines.push(pad(['  matching and acting', c.matching.seconds, n(c.matching.rowsPerSec)], w));
  lines.push(pad(['  answering (response files)', c.answering.seconds, n(c.answering.rowsPerSec)], w));
  lines.push(pad(['  the whole cycle', c.seconds, n(c.rowsPerSec)], w));
  lines.push(pad(['bare match (COPY + one join)', r.baseline.seconds, n(r.baseline.rowsPerSec)], w));
  lines.push(
    `   cycle ÷ bare match ${r.ratio}× (matching phase ${r.matchingRatio}×); bare match: COPY ${r.baseline.copySeconds} s + join ${r.baseline.joinSeconds} s, again after the cycle ${r.baselineAfter.seconds} s`,
    `   matching rows/s, first tenth of the chunks ${n(c.matchingFirstTenth)}, last tenth ${n(c.matchingLastTenth)}`,
    `   answers: ${n(c.deleted)} deleted (${n(c.recordsDeleted)} records; people ${n(c.peopleBefore)} → ${n(c.peopleAfter)}), ${n(c.optedOut)} opted out, ${n(c.notFound)} not found; ${n(c.answersChecked)} response rows each as its ID names; ${n(c.suppressionsAdded)} hash suppressions added`,
    `   bench process RSS ${c.rssBeforeMB} MB before, peak ${c.peakRssMB} MB (${c.peakProbe}); CPU: bench ${c.benchCpuSeconds} s, Postgres ${c.postgresCpuSeconds ?? 'n/a'} s`,
    `   goal: the cycle ≤ ${g.cycleMinutes} min: ${(c.seconds / 60).toFixed(1)} min, ${verdict(r.met.cycle)}`,
    '',
    `   suppression on the lead search: ${n(r.suppression.hashEntries)} hash entries on the deployment's list, ${n(r.suppression.accountEntries)} on the account's;`,
    `   ${r.options.iterations} calls a variant after ${r.options.warmups} warm-ups, alternated; ms, p50 / p95; "without" = searchLeads with the check's call taken out;`,
    `   check = suppressionCheck alone on the page (js: its JavaScript part); goal: check p95 ≤ ${pct(g.checkShare)} of the search's p95`,
  );
  const sw = [30, 5, 4, 13, 13, 13, 13, 13, 6, 8, 9, 11];
  lines.push(
    pad(
      [
        'search',
        'rows',
        'supp',
        'with',
        'without',
        'new: with',
        'new: without',
        'check',
        'js',
        'share',
        'added p50',
        'goal',
      ],
      sw,
    ),
  );
  for (const s of r.suppression.searches) {
    lines.push(
      pad(
        [
          `(${s.key}) ${s.label}`.slice(0, 30),
          s.pageRows,
          s.suppressed,
          `${ms(s.with.p50)} / ${ms(s.with.p95)}`,
          `${ms(s.without.p50)} / ${ms(s.without.p95)}`,
          `${ms(s.withNew.p50)} / ${ms(s.withNew.p95)}`,
          `${ms(s.withoutNew.p50)} / ${ms(s.withoutNew.p95)}`,
          `${ms(s.check.p50)} / ${ms(s.check.p95)}`,
          s.checkJsMs.toFixed(1),
          pct(s.checkShareP95),
          pct(s.addedP50),
          verdict(s.met),
        ],
        sw,
      ),
    );
  }
  lines.push(
    `   (with − without) ÷ with at p95: ${r.suppression.searches.map((s) => `(${s.key}) ${pct(s.addedP95)} / new ${pct(s.addedNewP95)}`).join(', ')}`,
    `   values looked up a page: ${r.suppression.searches.map((s) => `(${s.key}) ${s.lookedUp}`).join(', ')}`,
    '',
    `   index insert trigger on an import of ${n(r.triggers.rows)} people (${n(r.triggers.indexRows)} index rows): on ${r.triggers.onMs.join(', ')} ms, off ${r.triggers.offMs.join(', ')} ms: +${r.triggers.addedPct} %`,
    `   ${n(r.deliveries.people)} people deleted with ${n(r.deliveries.rows)} delivered leads in place: ${n(r.deliveries.ms)} ms, ${r.deliveries.msPerPerson} ms a person; the cycle's ${n(c.deleted)} deletions at that cost: +${r.deliveries.cycleMinutes} min`,
    `   goal: the cycle with those deliveries in place ≤ ${g.cycleMinutes} min: ${(c.seconds / 60 + r.deliveries.cycleMinutes).toFixed(1)} min, ${verdict(r.met.cycleWithDeliveries)}`,
    `   on disk: ${Object.entries(r.sizes)
      .map(([t, mb]) => `${t} ${mb} MB`)
      .join(', ')}`,
  );
  return lines.join('\n');
}

export const privacy: Suite<PrivacyResult> = {
  name: 'privacy',
  key: 'privacy',
  quick: true,
  flags: ['drop-items'],
  run: (context) => benchPrivacy({ quick: context.quick, items: context.count('drop-items') }),
  format: formatPrivacy,
  goals: (r) => ({ ...r.goals, met: r.met }),
};
