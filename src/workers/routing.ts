/**
 * Which worker process looks for a new job. graphile-worker announces every new job on its
 * `jobs:insert` channel, and each worker process that hears it would ask Postgres for the job: with
 * N processes, N queries of which N − 1 come back empty, a cost per run that grows with the number of
 * processes (docs/benchmarks-history.md, `processes`). Here exactly one process asks.
 *
 * The announcement carries a random number r (graphile-worker's `add_job` puts one in), and every
 * listener receives the same r. Each process knows the live worker pools (the heartbeat table, read
 * with each heartbeat and kept current by join and leave notes), ranks them alike, and only the pool
 * at rank ⌊r × N⌋ wakes one of its workers. When that pool has no idle worker, it passes the job on:
 * it announces it again, with a fresh r and itself in `skip`, so that one of the other pools looks
 * for it; with every pool skipped, nobody is woken, and the job is taken by the first worker that
 * finishes its own (each looks for the next job at once). Nothing is lost when views differ:
 * - A pool that joined is ranked by itself before the others know of it: the job may be looked for
 *   twice, never not at all.
 * - A pool that died without its leave note keeps its rank until its heartbeat is older than the
 *   liveness period; a job ranked to it waits for another pool's poll (below, every 2 s).
 * Announcements this router cannot read (a batch of several jobs, no r, membership not yet known)
 * wake workers in every pool, as graphile-worker does.
 *
 * Jobs nobody announces as they come due (a retry after its back-off, a job ranked to a pool that
 * died) are found by polling. graphile-worker has each idle worker of a pool poll on its own timer, so
 * a pool of 8 idle workers asked Postgres 4 times a second; here one idle worker of the pool is woken
 * every `pollMs`, and the workers' own timers run at `pollMs` × concurrency, a backstop: about two
 * polls per `pollMs` a pool, whatever its concurrency.
 */
import type { WorkerEvents, WorkerPool } from 'graphile-worker';
import type { Sql } from '../../db/client.ts';
import type { Logger } from '../logger.ts';

/** The `jobs:insert` channel of graphile-worker, on which new jobs, passes and membership notes go. */
const CHANNEL = 'jobs:insert';

/** A `jobs:insert` payload: graphile-worker's `{ r, count }`, a pass's `skip`, a membership note. */
interface Note {
  r?: unknown;
  count?: unknown;
  skip?: unknown;
  join?: unknown;
  leave?: unknown;
}

export interface RouteDecision {
  /** How many of this pool's workers to wake. */
  nudge: number;
  /** Announce the job again with these pools skipped (this pool ranked it to itself but is busy). */
  passSkipping?: string[];
}

/**
 * Decides for one announcement what this pool does: `peers` are the live pools, this one among them,
 * `idle` its workers waiting for a job. Pure: the same inputs in every process give one pool the job.
 */
export function routeNewJob(
  note: unknown,
  self: string,
  peers: ReadonlySet<string> | undefined,
  idle: number,
): RouteDecision {
  const n = note !== null && typeof note === 'object' ? (note as Note) : {};
  const count = typeof n.count === 'number' ? n.count : 1;
  if (count <= 0) return { nudge: 0 };
  if (count !== 1 || typeof n.r !== 'number' || !(n.r >= 0 && n.r < 1) || !peers) return { nudge: count };
  const skip = Array.isArray(n.skip) ? n.skip.filter((x): x is string => typeof x === 'string') : [];
  const candidates = [...new Set([...peers, self])].filter((id) => !skip.includes(id)).sort();
  const chosen = candidates[Math.floor(n.r * candidates.length)];
  if (chosen !== self) return { nudge: 0 };
  // A worker in the middle of a fetch is woken too (graphile-worker then fetches again if its fetch,
  // begun before this job was committed, comes back empty); a pool with none idle also passes it on.
  return idle > 0 || candidates.length === 1 ? { nudge: 1 } : { nudge: 1, passSkipping: [...skip, self] };
}

export interface JobRouter {
  /** graphile-worker's hook (patches/graphile-worker+0.18.0.patch): workers of this pool to wake. */
  nudgesForNewJobs(payload: unknown, pool: { id: string }): number;
  /** The live pools, as read with a heartbeat. */
  setPeers(ids: readonly string[]): void;
  /** The pools this one ranks new jobs among (itself included), once known. */
  peers(): string[];
  /** Tells the other processes that this pool takes jobs now, or no longer. */
  announce(change: 'join' | 'leave'): Promise<void>;
  /** Stops the pool's poll timer. */
  stop(): void;
}

/**
 * Routes the new-job announcements of one graphile-worker pool (one `run()`), whose events it reads,
 * and wakes one of its idle workers every `pollMs`.
 */
export function createJobRouter(sql: Sql, logger: Logger, events: WorkerEvents, pollMs: number): JobRouter {
  let self: string | undefined;
  let pool: WorkerPool | undefined;
  let stopping = false;
  let peers: Set<string> | undefined;
  // Pools that said they leave: a heartbeat read may still list them while they finish their runs.
  const left = new Set<string>();
  // Workers waiting for a job (their last fetch came back empty, or failed); a fetch makes one busy.
  const idle = new Set<string>();
  events.on('pool:create', ({ workerPool }) => {
    self = workerPool.id;
    pool = workerPool;
  });
  for (const ending of ['pool:gracefulShutdown', 'pool:forcefulShutdown', 'pool:release'] as const)
    events.on(ending, () => (stopping = true));
  events.on('worker:getJob:start', ({ worker }) => idle.delete(worker.workerId));
  events.on('worker:getJob:empty', ({ worker }) => idle.add(worker.workerId));
  events.on('worker:getJob:error', ({ worker }) => idle.add(worker.workerId));
  events.on('worker:release', ({ worker }) => idle.delete(worker.workerId));

  // A worker that is stopping must not be woken (graphile-worker asserts it), hence the checks.
  const poll = setInterval(() => {
    if (!stopping && idle.size > 0) pool?.nudge(1);
  }, pollMs);
  poll.unref();

  const send = (note: Note) => sql`select pg_notify(${CHANNEL}, ${JSON.stringify(note)})`.then(() => undefined);

  return {
    nudgesForNewJobs(payload, pool) {
      const note = payload !== null && typeof payload === 'object' ? (payload as Note) : {};
      if (typeof note.join === 'string' && note.join !== pool.id) peers?.add(note.join);
      if (typeof note.leave === 'string') {
        left.add(note.leave);
        peers?.delete(note.leave);
      }
      const decision = routeNewJob(payload, pool.id, peers, idle.size);
      if (decision.passSkipping) {
        send({ r: Math.random(), count: 1, skip: decision.passSkipping }).catch((err: unknown) =>
          logger.warn(
            { err },
            'could not pass a new job on to another worker process; it waits for the next free worker',
          ),
        );
      }
      return decision.nudge;
    },
    setPeers(ids) {
      for (const id of left) if (!ids.includes(id)) left.delete(id);
      peers = new Set(ids.filter((id) => !left.has(id)));
    },
    peers: () => [...new Set([...(peers ?? []), ...(self ? [self] : [])])].sort(),
    async announce(change) {
      if (!self) return;
      // count 0: graphile-worker wakes nobody for it (a pool of an older release ignores it).
      await send(change === 'join' ? { count: 0, join: self } : { count: 0, leave: self });
    },
    stop() {
      stopping = true;
      clearInterval(poll);
    },
  };
}
