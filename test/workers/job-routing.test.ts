import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeNewJob } from '../../src/workers/routing.ts';
import { LISTENER_NAME } from '../../src/events/listen.ts';
import { JOBS } from '../../src/workers/jobs.ts';
import { startRun } from '../../src/runs/start.ts';
import type { Principal } from '../../src/accounts/principal.ts';
import { startWorker, type WorkerHandle } from '../../workers/index.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { gatedSources } from '../helpers/sources.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * A new job is looked for by one worker process, not by all (src/workers/routing.ts): every process
 * hears graphile-worker's announcement, and the one the announcement's random number ranks first
 * wakes a worker; a process with none idle passes the job on.
 */

const POOLS = ['pool-a', 'pool-b', 'pool-c', 'pool-d'];
const woken = (note: unknown, views: Record<string, Set<string>>, idle: (pool: string) => number = () => 1) =>
  Object.entries(views)
    .filter(([self, peers]) => routeNewJob(note, self, peers, idle(self)).nudge > 0)
    .map(([self]) => self);
const sameView = (pools: string[]) => Object.fromEntries(pools.map((p) => [p, new Set(pools)]));

describe('routing a new job', () => {
  it('wakes workers in exactly one pool, the same in every process, each pool as often as the others', () => {
    const taken = new Map<string, number>();
    for (let i = 0; i < 1000; i++) {
      const pools = woken({ r: i / 1000, count: 1 }, sameView(POOLS));
      expect(pools).toHaveLength(1);
      taken.set(pools[0]!, (taken.get(pools[0]!) ?? 0) + 1);
    }
    expect([...taken.values()]).toEqual([250, 250, 250, 250]);
  });

  it('leaves to every pool what it cannot rank: a batch, an announcement without r, a membership not yet known', () => {
    expect(woken({ r: 0.3, count: 3 }, sameView(POOLS))).toEqual(POOLS);
    expect(routeNewJob({ r: 0.3, count: 3 }, 'pool-a', new Set(POOLS), 1).nudge).toBe(3);
    expect(woken({ count: 1 }, sameView(POOLS))).toEqual(POOLS);
    expect(woken('', sameView(POOLS))).toEqual(POOLS);
    expect(woken({ r: 1.5, count: 1 }, sameView(POOLS))).toEqual(POOLS);
    expect(routeNewJob({ r: 0.3, count: 1 }, 'pool-a', undefined, 1).nudge).toBe(1);
  });

  it('wakes nobody for a note that announces no new job', () => {
    for (const note of [
      { count: 0, join: 'pool-e' },
      { count: 0, leave: 'pool-a' },
      { r: 0.2, count: -1 },
    ])
      expect(woken(note, sameView(POOLS))).toEqual([]);
  });

  it('has a pool with no idle worker pass the job on, and then ranks it among the pools not skipped', () => {
    const first = routeNewJob({ r: 0.1, count: 1 }, 'pool-a', new Set(POOLS), 0);
    // It still wakes a worker of its own: one in the middle of a fetch looks again if its fetch comes back empty.
    expect(first).toEqual({ nudge: 1, passSkipping: ['pool-a'] });
    for (let i = 0; i < 100; i++) {
      const pass = { r: i / 100, count: 1, skip: ['pool-a'] };
      expect(woken(pass, sameView(POOLS))).toHaveLength(1);
      expect(woken(pass, sameView(POOLS))).not.toContain('pool-a');
    }
    expect(woken({ r: 0.5, count: 1, skip: POOLS }, sameView(POOLS))).toEqual([]);
    // A pool alone has nobody to pass to.
    expect(routeNewJob({ r: 0.5, count: 1 }, 'pool-a', new Set(['pool-a']), 0)).toEqual({ nudge: 1 });
  });

  it('never leaves a job to nobody while one pool knows of a pool the others do not yet know', () => {
    const old = ['pool-a', 'pool-b', 'pool-d'];
    const views = { ...sameView(old), 'pool-c': new Set(POOLS) };
    for (let i = 0; i < 1000; i++) expect(woken({ r: i / 1000, count: 1 }, views).length).toBeGreaterThanOrEqual(1);
    // A pool that has not read the membership yet counts itself in.
    expect(woken({ r: 0.99, count: 1 }, { 'pool-e': new Set(old), ...sameView(old) })).toContain('pool-e');
  });
});

/** Two worker pools in this process on one Postgres; nothing polls, so only the routed wake-up starts a job. */
describe('worker pools on one Postgres', () => {
  let t: TestApp;
  let principal: Principal;
  let apiKey: string;
  const NO_POLL = 600_000;

  beforeAll(async () => {
    t = await startTestApp({ worker: false });
    ({ apiKey } = await t.account());
    principal = await t.app.core.auth.authenticate(`Bearer ${apiKey}`);
  });
  afterAll(() => t?.stop());

  const input = { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 3 };
  const start = async () => (await startRun(t.app.core, principal, 'maps', input)).run.id;
  /** Fetches that came back empty and runs started, by pool, from now on. */
  const count = (w: WorkerHandle) => {
    const c = { empty: 0, started: 0 };
    w.runner.events.on('worker:getJob:empty', () => c.empty++);
    w.runner.events.on('job:start', ({ job }) => job.task_identifier === JOBS.runTool && c.started++);
    return c;
  };
  const knowEachOther = (...workers: WorkerHandle[]) =>
    waitFor(
      () => workers.map((w) => w.router.peers().length),
      (sizes) => sizes.every((n) => n === workers.length),
      { what: 'each pool to know the others' },
    );
  /** Passes announced on graphile-worker's channel while `during` runs. */
  const passesDuring = async (during: () => Promise<void>) => {
    const passes: unknown[] = [];
    const listener = await t.app.core.sql.listen('jobs:insert', (payload) => {
      const note = JSON.parse(payload) as { skip?: unknown };
      if (note.skip) passes.push(note);
    });
    try {
      await during();
    } finally {
      await listener.unlisten();
    }
    return passes;
  };

  /** The sessions of this database listening for notifications (their last statement a LISTEN or UNLISTEN), with what each last sent. */
  const listeningSessions = () =>
    t.app.core.sql<
      { pid: number; query: string }[]
    >`select pid, query from pg_stat_activity where datname = current_database() and query ~* '^\\s*(un)?listen' order by pid`;
  /** The event bus's session. */
  const busSessions = () =>
    t.app.core.sql<
      { pid: number }[]
    >`select pid from pg_stat_activity where datname = current_database() and application_name = ${LISTENER_NAME}`;

  it("hears new jobs on the event bus's listening session: a pool opens no session of its own to listen", async () => {
    // A gateway that follows nothing listens on nothing: Postgres has no session to wake.
    expect(await listeningSessions()).toEqual([]);
    const bus = await busSessions();
    expect(bus).toHaveLength(1);
    const w = await startWorker(t.app.core, { concurrency: 1, pollInterval: NO_POLL });
    try {
      const during = await listeningSessions();
      expect(during.map((s) => s.pid)).toEqual(bus.map((s) => s.pid));
      expect(during[0]!.query).toMatch(/listen "jobs:insert"/i);
      // Nothing polls: only the announcement heard on that session starts the run.
      expect((await t.waitForRun(apiKey, await start())).status).toBe('SUCCEEDED');
    } finally {
      await w.stop();
    }
    // A stopped pool no longer hears them: the channels are dropped a little later.
    await waitFor(
      listeningSessions,
      (sessions) => sessions.length === 1 && /^\s*unlisten .*"jobs:insert"/i.test(sessions[0]!.query),
      { what: "the UNLISTEN of the stopped pool's channels" },
    );
  });

  it('hears new jobs again once the listening session, lost, is restored', { timeout: 60_000 }, async () => {
    const w = await startWorker(t.app.core, { concurrency: 1, pollInterval: NO_POLL });
    try {
      const [lost] = await listeningSessions();
      await t.app.core.sql`select pg_terminate_backend(${lost!.pid})`;
      await waitFor(
        listeningSessions,
        (sessions) =>
          sessions.length === 1 && sessions[0]!.pid !== lost!.pid && /listen "jobs:insert"/i.test(sessions[0]!.query),
        { what: 'the bus to listen again' },
      );
      expect((await t.waitForRun(apiKey, await start())).status).toBe('SUCCEEDED');
    } finally {
      await w.stop();
    }
  });

  it('has one pool look for each new job, both pools taking jobs, and a pool that leaves gets none after it says so', {
    timeout: 120_000,
  }, async () => {
    const a = await startWorker(t.app.core, { concurrency: 2, pollInterval: NO_POLL });
    const b = await startWorker(t.app.core, { concurrency: 2, pollInterval: NO_POLL });
    let aStopped = false;
    try {
      await knowEachOther(a, b);
      const [ca, cb] = [count(a), count(b)];
      const RUNS = 16;
      for (let i = 0; i < RUNS; i++) expect((await t.waitForRun(apiKey, await start())).status).toBe('SUCCEEDED');
      // Each job is fetched once, and its worker fetches once more when done and finds nothing. Were
      // every pool woken, the other pool's empty fetch would double that. (A start that arrives while a
      // worker is in that last fetch may cost one more: graphile-worker has it look again. On a slow
      // machine that happened for a quarter of the starts: 20 empty fetches. Every pool woken: 32.)
      await waitFor(
        () => ca.empty + cb.empty,
        (n) => n >= RUNS,
        { what: 'the fetch after each job' },
      );
      expect(ca.started + cb.started).toBe(RUNS);
      expect(ca.empty + cb.empty).toBeLessThan(RUNS * 1.6);
      expect(ca.started).toBeGreaterThan(0);
      expect(cb.started).toBeGreaterThan(0);

      aStopped = true;
      await a.stop();
      await waitFor(
        () => b.router.peers(),
        (peers) => peers.length === 1,
        { what: 'pool b to hear that pool a left' },
      );
      for (let i = 0; i < 8; i++) expect((await t.waitForRun(apiKey, await start())).status).toBe('SUCCEEDED');
      expect(cb.started).toBe(RUNS - ca.started + 8);
    } finally {
      await Promise.all([aStopped ? undefined : a.stop(), b.stop()]);
    }
  });

  it('has one idle worker of a pool look for due jobs every poll interval, not each of its workers', {
    timeout: 60_000,
  }, async () => {
    // 50 workers: each one's own timer (a backstop) runs every 50 × 200 ms = 10 s.
    const w = await startWorker(t.app.core, { concurrency: 50, pollInterval: 200 });
    try {
      await knowEachOther(w);
      const c = count(w);
      // The job added below, by its id: the hourly housekeeping (CRONTAB) may come due during the test too.
      let dueJobId: string | undefined;
      let housekeeping = 0;
      w.runner.events.on('job:start', ({ job }) => String(job.id) === dueJobId && housekeeping++);
      // Each worker's first fetch, at its start, is behind us once the idle count stops growing.
      await waitFor(
        async () => {
          const from = c.empty;
          await new Promise((r) => setTimeout(r, 500));
          return c.empty - from;
        },
        (n) => n <= 5,
        { what: 'the workers to have made their first fetch' },
      );
      const before = c.empty;
      await new Promise((r) => setTimeout(r, 2_000));
      // Were each worker polling every 200 ms, 2 s would bring 500 empty fetches: about 10 + 10 here.
      expect(c.empty - before).toBeLessThan(60);
      // A job that comes due later is announced when added, too early: only a poll finds it, well
      // before any worker's own timer would.
      const [due] = await t.app.core
        .sql`select (graphile_worker.add_job(${JOBS.housekeeping}, '{}'::json, run_at => now() + interval '500 milliseconds')).id::text as id`;
      dueJobId = due!.id as string;
      await waitFor(
        () => housekeeping,
        (n) => n === 1,
        { timeoutMs: 5_000, what: 'the due job to be found by the pool poll' },
      );
    } finally {
      await w.stop();
    }
  });

  it('has a pool whose only worker is busy pass each job ranked to it on to the pool that is idle', {
    timeout: 120_000,
  }, async () => {
    const gate = gatedSources(t.app.core.sources);
    const busy = await startWorker({ ...t.app.core, sources: gate.sources }, { concurrency: 1, pollInterval: NO_POLL });
    let idle: WorkerHandle | undefined;
    try {
      const held = await start();
      await gate.reachedPage(0);
      idle = await startWorker(t.app.core, { concurrency: 1, pollInterval: NO_POLL });
      await knowEachOther(busy, idle);
      const c = count(idle);
      const RUNS = 12;
      const passes = await passesDuring(async () => {
        for (let i = 0; i < RUNS; i++) expect((await t.waitForRun(apiKey, await start())).status).toBe('SUCCEEDED');
      });
      expect(c.started).toBe(RUNS);
      // The chance that none of 12 jobs was ranked to the busy pool is 1 in 4,096.
      expect(passes.length).toBeGreaterThan(0);
      expect(passes).toEqual(
        passes.map(() => expect.objectContaining({ count: 1, skip: [expect.stringMatching(/^pool-/)] })),
      );
      gate.releaseAll();
      expect((await t.waitForRun(apiKey, held)).status).toBe('SUCCEEDED');
    } finally {
      gate.releaseAll();
      await Promise.all([busy.stop(), idle?.stop()]);
    }
  });
});
