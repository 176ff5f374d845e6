import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Sql } from '../../db/client.ts';
import { seedCatalog } from '../../db/seed/index.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import type { Cluster } from '../helpers/postgres-cluster.ts';
import { startReplicatedApp, type LogLine, type ReplicatedApp } from '../helpers/replicated-app.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * DATABASE_READ_URL over a real primary and a real streaming replica (a cluster of this file's own and
 * its hot standby, docs/operations.md#read-replicas). Where a search ran is read from each server's own
 * scan counters of the `person` table: only catalog reads scan it, and a standby counts the scans of the
 * queries it runs; a tool run's worker is in the gateway's process. A lagging replica (replay paused) and a stopped one leave the searches to the primary,
 * each with one warn line, and answers stay 200.
 */

const MAX_LAG_MS = 300;

let r: ReplicatedApp;
let replica: Cluster;
let sql: Sql;
let onReplica: Sql;
let url: string;
let key: string;
let lines: LogLine[];

beforeAll(async () => {
  r = await startReplicatedApp({
    maxLagMs: MAX_LAG_MS,
    worker: true,
    async prepare(primaryUrl) {
      const seeding = connect(primaryUrl, { max: 4 });
      try {
        // What the suite reads: local businesses (searches, a maps run) and people (lead searches, enrichment).
        await seedCatalog(seeding.sql, { scale: 'small', tables: ['local_business', 'person'] });
        ({ apiKey: key } = await createAccount(seeding.db, {
          name: 'replica',
          plan: 'scale',
          subscriptionStatus: 'ACTIVE',
          creditsMicros: 10_000_000n,
        }));
      } finally {
        // Sessions flush their statistics when they end, or in time when idle: the seed's scans of `person`
        // are all counted before any test compares the counters.
        await seeding.sql.end();
      }
      const { sql: counting } = connect(primaryUrl, { max: 1 });
      try {
        let seen = -1;
        const steady = async () => {
          const before = seen;
          seen = await scans(counting, 'local_business');
          return before === seen;
        };
        await waitFor(steady, Boolean, {
          intervalMs: 1_100,
          timeoutMs: 15_000,
        });
      } finally {
        await counting.end();
      }
    },
  });
  ({ replica, sql, onReplica, url, lines } = r);
}, 120_000);

afterAll(() => r?.stop());

const get = async <B>(path: string) => {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as B };
};
const search = () =>
  get<{ businesses: unknown[]; daily_allowance: { remaining: number } }>(
    '/api/v1/database/local-businesses?category=dentist&limit=5',
  );

/** Index and sequential scans of `table` counted by one server (statistics are flushed within a second). */
const scans = async (on: Sql, table: string) => {
  const [row] = await on<
    [{ scans: string }]
  >`select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as scans from pg_stat_user_tables where relname = ${table}`;
  return Number(row.scans);
};

/**
 * Waits until the searches of `act` show in the scans of `local_business` by `reader`, and checks
 * `other` counted none: only the search reads that table (the allowance, on the primary, writes another).
 */
async function readsGoTo(reader: Sql, other: Sql, act: () => Promise<void>) {
  const [before, otherBefore] = [await scans(reader, 'local_business'), await scans(other, 'local_business')];
  await act();
  await waitFor(async () => (await scans(reader, 'local_business')) > before, Boolean, { timeoutMs: 5_000 });
  expect(await scans(other, 'local_business')).toBe(otherBefore);
}

const transitions = (msg: string) => lines.filter((l) => l.msg === msg);
const fallBack = 'catalog reads fall back to the primary';
const toReplica = 'catalog reads go to the read replica';

describe('DATABASE_READ_URL', () => {
  it('runs database searches and enrichment lookups on the replica, and takes the allowance on the primary', async () => {
    await waitFor(() => transitions(toReplica).length === 1, Boolean, { timeoutMs: 10_000 });
    expect((await onReplica<[{ standby: boolean }]>`select pg_is_in_recovery() as standby`)[0].standby).toBe(true);
    // A lead search and a lead enrichment read `person` on the replica (the primary may read it too:
    // the delivered leads it records point at their people).
    const [people] = await sql<[{ email: string }]>`select email from person where email is not null limit 1`;
    const personBefore = await scans(onReplica, 'person');
    expect((await get('/api/v1/database/leads?country=US&limit=5')).status).toBe(200);
    await waitFor(async () => (await scans(onReplica, 'person')) > personBefore, Boolean, { timeoutMs: 5_000 });
    const enrichBefore = await scans(onReplica, 'person');
    const enriched = await fetch(`${url}/api/v1/enrich`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rows: [{ email: people.email }] }),
    });
    expect(enriched.status).toBe(200);
    await waitFor(async () => (await scans(onReplica, 'person')) > enrichBefore, Boolean, { timeoutMs: 5_000 });

    let remaining = 0;
    await readsGoTo(onReplica, sql, async () => {
      const res = await search();
      expect(res.status).toBe(200);
      expect(res.body.businesses).toHaveLength(5);
      remaining = res.body.daily_allowance.remaining;
    });
    expect(remaining).toBe(100_000 - 10);
    expect(transitions(fallBack)).toHaveLength(0);
  });

  it('reads the catalog of a tool run on the replica, and stores its rows on the primary', async () => {
    await readsGoTo(onReplica, sql, async () => {
      const res = await fetch(`${url}/api/v1/scrape/maps`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 5 }),
      });
      expect(res.status).toBe(200);
      const { runId } = (await res.json()) as { runId: string };
      const run = await waitFor(
        async () =>
          (
            await sql<[{ status: string; item_count: number }]>`select status, item_count from run where id = ${runId}`
          )[0],
        (r) => r.status === 'SUCCEEDED',
        { timeoutMs: 15_000, what: 'the run to succeed' },
      );
      expect(run.item_count).toBe(5);
    });
  });

  it('leaves a replica whose replay lags past the bound for the primary, with one warn line, and returns to it once it catches up', async () => {
    await onReplica`select pg_wal_replay_pause()`;
    // WAL the paused replica does not replay.
    await sql`create table replica_probe (n int)`;
    await sql`insert into replica_probe values (1)`;
    await waitFor(() => transitions(fallBack).length === 1, Boolean, { timeoutMs: 5_000 });
    const warned = transitions(fallBack)[0]!;
    expect(warned.level).toBe(40);
    expect(warned.reason).toMatch(/behind the primary/);
    await readsGoTo(sql, onReplica, async () => {
      const res = await search();
      expect(res.status).toBe(200);
      expect(res.body.businesses).toHaveLength(5);
    });
    expect(transitions(fallBack)).toHaveLength(1);

    await onReplica`select pg_wal_replay_resume()`;
    await waitFor(() => transitions(toReplica).length === 2, Boolean, { timeoutMs: 5_000 });
    await readsGoTo(onReplica, sql, async () => {
      expect((await search()).status).toBe(200);
    });
  });

  it('answers from the primary while the replica is stopped, with one warn line', async () => {
    await onReplica.end({ timeout: 1 });
    await replica.stop();
    const before = await scans(sql, 'local_business');
    // At once, before a check has seen it gone: the search finds the connection refused and runs on the primary.
    const res = await search();
    expect(res.status).toBe(200);
    expect(res.body.businesses).toHaveLength(5);
    await waitFor(async () => (await scans(sql, 'local_business')) > before, Boolean, { timeoutMs: 5_000 });
    await waitFor(() => transitions(fallBack).length === 2, Boolean, { timeoutMs: 5_000 });
    expect(transitions(fallBack)[1]!.reason).toMatch(/unreachable/);
    for (let i = 0; i < 3; i++) expect((await search()).status).toBe(200);
    expect(transitions(fallBack)).toHaveLength(2);
  });
});
