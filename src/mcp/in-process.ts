import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { assertDownloadable, readRunRows } from '../runs/exports.ts';
import { runStatus } from '../runs/follow.ts';
import { cancelRun } from '../runs/engine/index.ts';
import { getRun } from '../runs/read.ts';
import { startAnswerOf, startRun } from '../runs/start.ts';
import { costLimit, quoteStart } from '../runs/quote.ts';
import { signedDownloadPath } from '../runs/download-links.ts';
import { snapshotOf, type RunSnapshot } from '../runs/view.ts';
import { respondOf } from '../endpoints/define.ts';
import { callEndpoint } from '../http/pipeline.ts';
import { restRunView } from '../http/views.ts';
import type { McpBackend } from './backend.ts';

/** The services themselves, for the caller's account (the remote MCP server in the gateway). */
export function inProcessBackend(core: Core, principal: Principal): McpBackend {
  const publicUrl = core.config.publicUrl;
  // The run view both backends answer, with what MCP shows besides: the tool and the rows stored.
  const view = (run: RunSnapshot) => ({ ...restRunView(publicUrl, run), tool: run.tool, itemCount: run.itemCount });
  return {
    async startRun(tool, args, { idempotencyKey, maxCostUsd }) {
      return startAnswerOf(
        await startRun(core, principal, tool.name, args, { idempotencyKey, ...costLimit(maxCostUsd) }),
      );
    },
    quote: (tool, args) => quoteStart(core, principal, tool.name, args),
    async runStatus(runId, waitSecs, signal, onProgress) {
      return view(
        await runStatus(core, principal, runId, waitSecs, signal, onProgress && ((r) => onProgress(view(r)))),
      );
    },
    async runRows(runId, offset, limit) {
      const run = await getRun(core.db, principal.accountId, runId);
      assertDownloadable(run, core.clock());
      return readRunRows(core, run, { offset, limit });
    },
    async downloadLink(runId, format) {
      const run = await getRun(core.db, principal.accountId, runId);
      const path = await signedDownloadPath(core, principal, snapshotOf(run), format);
      return path && `${publicUrl}${path}`;
    },
    cancelRun: async (runId) => view(await cancelRun(core, principal, runId)),
    async call(endpoint, args) {
      const { body } = await callEndpoint(core, principal, endpoint, args, {
        shape: (result) => respondOf(endpoint, result),
      });
      return { ...(body as Record<string, unknown>) };
    },
  };
}
