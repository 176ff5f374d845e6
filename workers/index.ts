import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, run, type Runner, type WorkerEvents } from 'graphile-worker';
import type { Core } from '../src/core.ts';
import { createJobRouter, type JobRouter } from '../src/workers/routing.ts';
import { startLiveness, type Liveness } from '../src/workers/liveness.ts';
import { observeJobs } from '../src/shared/metrics.ts';
import { createTaskList, CRONTAB, DROP_CRONTAB } from './tasks.ts';
import { AttemptFailedError, isDatabaseUnavailable } from '../src/shared/errors.ts';

export interface WorkerOptions {
  concurrency?: number;
  /**
   * How often the pool looks for jobs nobody announced (due retries), ms; new jobs are picked up at
   * once through LISTEN (src/workers/routing.ts).
   */
  pollInterval?: number;
}

export interface WorkerHandle {
  runner: Runner;
  /** Which worker process looks for each new job (src/workers/routing.ts). */
  router: JobRouter;
  /** This process's heartbeats (readiness reads when the last one reached the database). */
  liveness: Liveness;
  /** Hands running runs back (their jobs are queued again for the next worker), then stops. */
  stop(): Promise<void>;
}

declare global {
  namespace GraphileConfig {
    interface WorkerOptions {
      /** How many of a pool's workers a `jobs:insert` notification wakes (patches/graphile-worker+0.18.0.patch). */
      nudgesForNewJobs?: (payload: unknown, pool: { id: string }) => number;
      /**
       * Brings the pool its `jobs:insert` and `worker:migrate` notifications from the host's listening
       * session, instead of a session of its own (patches/graphile-worker+0.18.0.patch); returns what
       * stops them.
       */
      subscribeToChanges?: (onChange: (message: { channel: string; payload: string }) => void) => () => void;
    }
  }
}

/** The channels graphile-worker listens on: new jobs, and migrations of its schema. */
const GRAPHILE_CHANNELS = ['jobs:insert', 'worker:migrate'];

let guarded = false;

/**
 * graphile-worker completes and fails jobs without awaiting the promise, and retries only some
 * connection errors: a database lost at that moment would end the process through an unhandled
 * rejection. Such a rejection (a lost database, nothing else) is logged instead; the job keeps its lock
 * until graphile-worker's stale-lock reset hands it out again, and a finished run is left alone then.
 * Every other unhandled rejection still ends the process, as Node's default does.
 */
function survivePoolRejections(log: Core['logger']) {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (reason) => {
    if (!isDatabaseUnavailable(reason)) throw reason;
    log.warn(
      { err: { message: (reason as Error).message, code: (reason as { code?: unknown }).code } },
      'database unavailable: a job could not be marked done or failed; it is handed out again when its lock times out',
    );
  });
}

/** Starts a graphile-worker runner executing this service's tasks, with liveness heartbeats. */
export async function startWorker(core: Core, options: WorkerOptions = {}): Promise<WorkerHandle> {
  const log = core.logger.child({ component: 'worker' });
  const logger = new WorkerLogger((scope) => (level, message, meta) => {
    // A lost database is an outage to wait out, not an error of the worker: a warning, without the
    // connection object graphile-worker attaches to it.
    const lost = isDatabaseUnavailable(meta?.error);
    // An attempt that failed outside the service was logged by its job as one warning line; graphile-
    // worker's own report of it (error level, with the stack) is kept for debugging only, in one line.
    const attempt = meta?.error instanceof AttemptFailedError;
    const target =
      level === 'error' && !lost && !attempt
        ? log.error.bind(log)
        : (level === 'warning' || lost) && !attempt
          ? log.warn.bind(log)
          : log.debug.bind(log);
    const error = meta?.error as { message?: unknown; code?: unknown } | undefined;
    const brief = lost || attempt ? { error: { message: error?.message, code: error?.code } } : {};
    target({ ...scope, ...meta, ...brief }, attempt ? (message.split('\n')[0] ?? message) : message);
  });
  survivePoolRejections(log);
  const events: WorkerEvents = new EventEmitter();
  const concurrency = options.concurrency ?? core.config.workerConcurrency;
  const pollMs = options.pollInterval ?? 2000;
  const router = createJobRouter(core.sql, log, events, pollMs);
  const liveness = startLiveness(core.sql, log, core.config.workerLivenessSecs, (ids) => router.setPeers(ids));
  // Jobs are locked by the pool's id (graphile-worker 0.18), not by its workers' ids: the pool is what
  // beats, or the sweep would take every running job for one of a dead worker. Once its first beat is
  // stored, the other worker processes are told that this pool takes new jobs.
  events.on('pool:create', ({ workerPool }) => {
    void liveness
      .add(workerPool.id)
      .then(() =>
        router
          .announce('join')
          .catch((err: unknown) => log.warn({ err }, 'could not announce this worker to the others')),
      );
  });
  observeJobs(events);
  const shutdown = new AbortController();
  // graphile-worker's notifications come through the event bus's listening session: one session a
  // process, not two, for Postgres wakes every listening session for every notification
  // (docs/architecture.md, Events). Listened on before the pool starts: its workers' first fetches find
  // the jobs added before, and the session hears those added after.
  // One pool a call, so one handler to hand them to.
  let toPool: ((message: { channel: string; payload: string }) => void) | undefined;
  const subscribeToChanges = (onChange: (message: { channel: string; payload: string }) => void) => {
    toPool = onChange;
    return () => {
      toPool = undefined;
    };
  };
  let stopHearing: (() => void) | undefined;
  let runner: Runner;
  try {
    stopHearing = await core.events.hear(GRAPHILE_CHANNELS, (channel, payload) => toPool?.({ channel, payload }));
    runner = await run({
      connectionString: core.databaseUrl,
      concurrency,
      // Each worker's own poll is a backstop; the router wakes one idle worker every pollMs.
      pollInterval: pollMs * concurrency,
      noHandleSignals: true,
      taskList: createTaskList(core, shutdown.signal),
      crontab: core.config.drop.apiKey ? CRONTAB + DROP_CRONTAB : CRONTAB,
      logger,
      events,
      // One worker process looks for each new job, not all (src/workers/routing.ts).
      preset: { worker: { nudgesForNewJobs: router.nudgesForNewJobs, subscribeToChanges } },
    });
  } catch (err) {
    stopHearing?.();
    router.stop();
    await liveness.stop();
    throw err;
  }
  log.info({ concurrency }, 'worker started');
  return {
    runner,
    router,
    liveness,
    async stop() {
      // Logged as the stop reaches the runs in hand (the abort below is
      // synchronous): each stores its batch in hand, then is handed back.
      log.info('worker stopping: handing back runs in flight');
      shutdown.abort();
      router.stop();
      await router.announce('leave').catch(() => {});
      await runner.stop();
      stopHearing?.();
      await liveness.stop();
    },
  };
}
