import type { TaskList } from 'graphile-worker';
import type { Core } from '../src/core.ts';
import { executeRun } from '../src/runs/engine.ts';
import { housekeeping } from '../src/runs/retention.ts';
import { deliverWebhook } from '../src/runs/webhooks.ts';
import { JOBS, type JobPayloads } from '../src/runs/jobs.ts';

declare global {
  namespace GraphileWorker {
    /** The typed task list: the job names and payloads the domains add (src/runs/jobs.ts). */
    interface Tasks extends JobPayloads {}
  }
}

function assertPayload<K extends 'runId' | 'deliveryId'>(payload: unknown, field: K): asserts payload is Record<K, string> {
  if (typeof payload !== 'object' || payload === null || typeof (payload as Record<string, unknown>)[field] !== 'string') {
    throw new Error(`payload must be {"${field}": string}`);
  }
}

/** Tasks stay thin: check the payload, call a service. `shutdown` aborts when this process stops. */
export function createTaskList(core: Core, shutdown: AbortSignal): TaskList {
  return {
    [JOBS.runTool]: async (payload, helpers) => {
      assertPayload(payload, 'runId');
      const signal = helpers.abortSignal ? AbortSignal.any([shutdown, helpers.abortSignal]) : shutdown;
      await executeRun(core, payload.runId, signal);
    },
    [JOBS.deliverWebhook]: async (payload, helpers) => {
      assertPayload(payload, 'deliveryId');
      await deliverWebhook({ ...core, post: core.network.post }, payload.deliveryId, helpers.job.attempts, helpers.job.max_attempts, helpers.abortSignal);
    },
    [JOBS.housekeeping]: async (_payload, helpers) => {
      const done = await housekeeping(core.db, core.clock());
      if (done.runs > 0 || done.idempotencyKeys > 0) helpers.logger.info(`housekeeping: purged ${done.rows} rows of ${done.runs} expired runs, ${done.idempotencyKeys} idempotency keys`);
    },
  };
}

/** Cron schedule (graphile-worker crontab): housekeeping every hour, at minute 7. */
export const CRONTAB = `7 * * * * ${JOBS.housekeeping}\n`;
