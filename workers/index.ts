import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, run, type Runner, type WorkerEvents } from 'graphile-worker';
import type { Core } from '../src/core.ts';
import { startLiveness } from '../src/runs/liveness.ts';
import { createTaskList, CRONTAB } from './tasks.ts';

export interface WorkerOptions {
  concurrency?: number;
  /** Fallback poll interval; new jobs are normally picked up at once through LISTEN. */
  pollInterval?: number;
}

export interface WorkerHandle {
  runner: Runner;
  /** Hands running runs back (their jobs are queued again for the next worker), then stops. */
  stop(): Promise<void>;
}

/** Starts a graphile-worker runner executing this service's tasks, with liveness heartbeats. */
export async function startWorker(core: Core, options: WorkerOptions = {}): Promise<WorkerHandle> {
  const log = core.logger.child({ component: 'worker' });
  const logger = new WorkerLogger((scope) => (level, message, meta) => {
    const target = level === 'error' ? log.error.bind(log) : level === 'warning' ? log.warn.bind(log) : log.debug.bind(log);
    target({ ...scope, ...meta }, message);
  });
  const liveness = startLiveness(core.sql, log, core.config.workerLivenessSecs);
  const events: WorkerEvents = new EventEmitter();
  events.on('worker:create', ({ worker }) => liveness.add(worker.workerId));
  const shutdown = new AbortController();
  const runner = await run({
    connectionString: core.databaseUrl,
    concurrency: options.concurrency ?? core.config.workerConcurrency,
    pollInterval: options.pollInterval ?? 2000,
    noHandleSignals: true,
    taskList: createTaskList(core, shutdown.signal),
    crontab: CRONTAB,
    logger,
    events,
  });
  log.info({ concurrency: options.concurrency ?? core.config.workerConcurrency }, 'worker started');
  return {
    runner,
    async stop() {
      // Logged as the stop reaches the runs in hand (the abort below is synchronous): each stores its batch in hand, then is handed back.
      log.info('worker stopping: handing back runs in flight');
      shutdown.abort();
      await runner.stop();
      await liveness.stop();
    },
  };
}
