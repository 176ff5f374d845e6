import type { TaskList } from 'graphile-worker';
import type { Core } from '../src/core.ts';
import { executeRun } from '../src/services/run-engine.ts';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      run_tool: { runId: string };
    }
  }
}

function assertRunToolPayload(payload: unknown): asserts payload is GraphileWorker.Tasks['run_tool'] {
  if (typeof payload !== 'object' || payload === null || typeof (payload as { runId?: unknown }).runId !== 'string') {
    throw new Error('run_tool payload must be {"runId": string}');
  }
}

/** Tasks stay thin: check the payload, call a service. */
export function createTaskList(core: Core): TaskList {
  return {
    run_tool: async (payload, helpers) => {
      assertRunToolPayload(payload);
      await executeRun(core, payload.runId, helpers.abortSignal);
    },
  };
}
