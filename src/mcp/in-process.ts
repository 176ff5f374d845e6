import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { assertDownloadable, readRunRows } from '../runs/exports.ts';
import { runStatus } from '../runs/follow.ts';
import { cancelRun } from '../runs/engine/index.ts';
import { getRun } from '../runs/read.ts';
import { startRun } from '../runs/start.ts';
import { respondOf } from '../endpoints/define.ts';
import { callEndpoint } from '../http/pipeline.ts';
import { restRunView, restStartView } from '../http/views.ts';
import type { McpBackend } from './tools.ts';

/** The services themselves, for the caller's account (the remote MCP server in the gateway). */
export function inProcessBackend(core: Core, principal: Principal): McpBackend {
  const publicUrl = core.config.publicUrl;
  return {
    async startRun(tool, args) {
      return restStartView(await startRun(core, principal, tool.name, args));
    },
    async runStatus(runId, waitSecs, signal) {
      return restRunView(publicUrl, await runStatus(core, principal, runId, waitSecs, signal));
    },
    async runRows(runId, offset, limit) {
      const run = await getRun(core.db, principal.accountId, runId);
      assertDownloadable(run, core.clock());
      return readRunRows(core, run, { offset, limit });
    },
    cancelRun: async (runId) => restRunView(publicUrl, await cancelRun(core, principal, runId)),
    async call(endpoint, args) {
      const { body } = await callEndpoint(core, principal, endpoint, args, {
        shape: (result) => respondOf(endpoint, result),
      });
      return { ...(body as Record<string, unknown>) };
    },
  };
}
