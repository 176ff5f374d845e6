import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { assertDownloadable, readRunRows } from '../runs/exports.ts';
import { runStatus } from '../runs/follow.ts';
import { cancelRun } from '../runs/engine/index.ts';
import { getRun } from '../runs/read.ts';
import { dryRunStart, startRun } from '../runs/start.ts';
import { signedDownloadPath } from '../runs/download-links.ts';
import { snapshotOf, type RunSnapshot } from '../runs/view.ts';
import { respondOf } from '../endpoints/define.ts';
import { callEndpoint } from '../http/pipeline.ts';
import { restRunView, restStartView } from '../http/views.ts';
import { usdToMicros } from '../billing/money.ts';
import type { McpBackend } from './backend.ts';

/** The services themselves, for the caller's account (the remote MCP server in the gateway). */
export function inProcessBackend(core: Core, principal: Principal): McpBackend {
  const publicUrl = core.config.publicUrl;
  // The run view both backends answer, with what MCP shows besides: the tool and the rows stored.
  const view = (run: RunSnapshot) => ({ ...restRunView(publicUrl, run), tool: run.tool, itemCount: run.itemCount });
  return {
    async startRun(tool, args, { idempotencyKey, maxCostUsd }) {
      const maxCostMicros = maxCostUsd === undefined ? undefined : usdToMicros(maxCostUsd);
      return restStartView(await startRun(core, principal, tool.name, args, { idempotencyKey, maxCostMicros }));
    },
    async quote(tool, args) {
      const { start } = await dryRunStart(core, principal, tool.name, args);
      const { estimatedCost, uncappedCost } = start.extra as { estimatedCost: number; uncappedCost?: number };
      const covers = uncappedCost === undefined;
      return {
        estimatedCost,
        ...(covers ? {} : { uncappedCost }),
        walletCovers: covers,
        message: covers
          ? `A start would hold ${estimatedCost} USD, the most it can cost; the wallet covers it.`
          : `Everything asked would cost ${uncappedCost} USD; the wallet covers ${estimatedCost} USD, ` +
            'so the run would stop once that is spent (budget_exhausted). Top up in the console (Billing) first.',
      };
    },
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
      const path = await signedDownloadPath(core, principal.accountId, snapshotOf(run), format);
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
