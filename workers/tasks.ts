import type { TaskList } from 'graphile-worker';
import type { Core } from '../src/core.ts';
import { executeRun } from '../src/services/run-engine.ts';
import { housekeeping } from '../src/services/retention.ts';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      run_tool: { runId: string };
      housekeeping: Record<string, never>;
    }
  }
}

function assertRunToolPayload(payload: unknown): asserts payload is GraphileWorker.Tasks['run_tool'] {
  if (typeof payload !== 'object' || payload === null || typeof (payload as { runId?: unknown }).runId !== 'string') {
    throw new Error('run_tool payload must be {"runId": string}');
  }
}

/** Tasks stay thin: check the payload, call a service. `shutdown` aborts when this process stops. */
export function createTaskList(core: Core, shutdown: AbortSignal): TaskList {
  return {
    run_tool: async (payload, helpers) => {
      assertRunToolPayload(payload);
      const signal = helpers.abortSignal ? AbortSignal.any([shutdown, helpers.abortSignal]) : shutdown;
      await executeRun(core, payload.runId, signal);
    },
    housekeeping: async (_payload, helpers) => {
      const done = await housekeeping(core.db, core.clock());
      if (done.runs > 0 || done.idempotencyKeys > 0) helpers.logger.info(`housekeeping: purged ${done.rows} rows of ${done.runs} expired runs, ${done.idempotencyKeys} idempotency keys`);
    },
  };
}

/** Cron schedule (graphile-worker crontab): housekeeping every hour, at minute 7. */
export const CRONTAB = '7 * * * * housekeeping\n';
