import { Logger as WorkerLogger, run, type Runner } from 'graphile-worker';
import type { Core } from '../src/core.ts';
import { createTaskList, CRONTAB } from './tasks.ts';

export interface WorkerOptions {
  concurrency?: number;
  /** Fallback poll interval; new jobs are normally picked up at once through LISTEN. */
  pollInterval?: number;
}

/** Starts a graphile-worker runner executing this service's tasks. */
export async function startWorker(core: Core, options: WorkerOptions = {}): Promise<Runner> {
  const log = core.logger.child({ component: 'worker' });
  const logger = new WorkerLogger((scope) => (level, message, meta) => {
    const target = level === 'error' ? log.error.bind(log) : level === 'warning' ? log.warn.bind(log) : log.debug.bind(log);
    target({ ...scope, ...meta }, message);
  });
  return run({
    connectionString: core.databaseUrl,
    concurrency: options.concurrency ?? core.config.workerConcurrency,
    pollInterval: options.pollInterval ?? 2000,
    noHandleSignals: true,
    taskList: createTaskList(core),
    crontab: CRONTAB,
    logger,
  });
}
