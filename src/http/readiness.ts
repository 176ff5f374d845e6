import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../db/client.ts';
import { withDeadline } from './deadline.ts';

/**
 * `GET /ready`: whether this process should be sent traffic, apart from `GET /health` (the process is
 * alive). Three checks, answered 200 when all pass and 503 naming the failing ones otherwise:
 * - database: a query answers within 2 s;
 * - migrations: every migration this code ships is applied (drizzle's journal against its table) and
 *   graphile-worker's schema is there;
 * - worker (only in a process that runs a worker: the gateway's inline worker, a standalone worker):
 *   its runner is running and its last heartbeat reached the database within WORKER_LIVENESS_SECS.
 * A gateway without an inline worker does not check the fleet's workers: a gateway taken out of a
 * load balancer because no worker runs would help nobody, and runs simply wait for one.
 */

/** What readiness knows of this process's worker (a `WorkerHandle` of workers/index.ts). */
export interface WorkerState {
  /** graphile-worker's runner: its promise settles when it stops. */
  runner: { promise: Promise<unknown> };
  /** When its heartbeat last reached the database (ms since the epoch), if ever. */
  liveness: { lastBeatAt(): number | undefined };
}

/** Runners seen to stop. */
const stopped = new WeakSet<object>();
const watched = new WeakSet<object>();
function running(worker: WorkerState): boolean {
  if (!watched.has(worker.runner)) {
    watched.add(worker.runner);
    const mark = () => void stopped.add(worker.runner);
    worker.runner.promise.then(mark, mark);
  }
  return !stopped.has(worker.runner);
}

export interface ReadinessOptions {
  sql: Sql;
  /** Seconds a worker may go without a heartbeat. */
  livenessSecs: number;
  /** This process's worker, when it runs one. */
  worker: () => WorkerState | undefined;
}

const CHECK_TIMEOUT_MS = 2000;

let lastMigration: number | undefined;
/** The `when` of the newest migration this code ships (drizzle records it as the migration's `created_at`). */
function newestMigration(): number {
  if (lastMigration === undefined) {
    const journal = JSON.parse(
      readFileSync(new URL('../../db/migrations/meta/_journal.json', import.meta.url), 'utf8'),
    ) as { entries: { when: number }[] };
    lastMigration = Math.max(...journal.entries.map((e) => e.when));
  }
  return lastMigration;
}

export interface Readiness {
  ready: boolean;
  /** Each check: `ok`, or why it fails. */
  checks: Record<string, string>;
}

/** Runs the checks (one query, at most CHECK_TIMEOUT_MS). */
export async function checkReadiness(options: ReadinessOptions): Promise<Readiness> {
  const checks: Record<string, string> = {};
  const query = options.sql<{ migrated: string | null; worker_schema: boolean }[]>`
    select (select max(created_at) from drizzle.__drizzle_migrations)::text as migrated,
      to_regclass('graphile_worker.jobs') is not null as worker_schema`;
  try {
    const [row] = await withDeadline(query, CHECK_TIMEOUT_MS, 'no answer within 2 s');
    checks.database = 'ok';
    const newest = newestMigration();
    const applied = row?.migrated ? Number(row.migrated) : 0;
    checks.migrations =
      applied < newest
        ? 'migrations are pending: run `npx leadgate migrate`'
        : row?.worker_schema
          ? 'ok'
          : "graphile-worker's schema is missing: run `npx leadgate migrate`";
  } catch (err) {
    // The database answered, without drizzle's table: nothing was ever migrated.
    if ((err as { code?: string }).code === '42P01') {
      checks.database = 'ok';
      checks.migrations = 'the database was never migrated: run `npx leadgate migrate`';
    } else {
      checks.database = `unreachable: ${(err as { code?: string }).code ?? (err as Error).message}`;
      checks.migrations = 'unknown (the database is unreachable)';
    }
  }
  const worker = options.worker();
  if (worker) {
    const beat = worker.liveness.lastBeatAt();
    const ageSecs = beat === undefined ? undefined : (Date.now() - beat) / 1000;
    if (!running(worker)) checks.worker = 'the worker has stopped';
    else if (ageSecs === undefined) checks.worker = 'no heartbeat yet';
    else if (ageSecs > options.livenessSecs)
      checks.worker = `no heartbeat for ${Math.round(ageSecs)} s (WORKER_LIVENESS_SECS is ${options.livenessSecs})`;
    else checks.worker = 'ok';
  }
  return { ready: Object.values(checks).every((c) => c === 'ok'), checks };
}

/**
 * `GET /ready`: 200 `{status: "ready", checks}`, or 503 with the error body listing the failing checks, and `checks`.
 */
export function installReadiness(app: FastifyInstance, options: ReadinessOptions) {
  app.get('/ready', async (_request, reply) => {
    const { ready, checks } = await checkReadiness(options);
    reply.header('Cache-Control', 'no-store');
    if (ready) return { status: 'ready', checks };
    const failing = Object.entries(checks).filter(([, c]) => c !== 'ok');
    return reply
      .status(503)
      .header('Retry-After', '5')
      .send({
        error: {
          code: 'not_ready',
          message: `Not ready: ${failing.map(([name]) => name).join(', ')}`,
          details: failing.map(([path, message]) => ({ path, message })),
        },
        checks,
      });
  });
}
