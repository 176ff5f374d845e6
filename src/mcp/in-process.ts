import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { assertDownloadable } from '../runs/exports.ts';
import { enrichLeads } from '../endpoints/enrich-leads.ts';
import { leadSearchBody, searchLeads } from '../endpoints/lead-search.ts';
import { enrichLocalBusinesses } from '../endpoints/enrich-local-businesses.ts';
import { cancelRun, runStatus } from '../runs/control.ts';
import { restRunView } from '../runs/view.ts';
import { getRun, listRunItems, startResponse, startRun } from '../runs/runs.ts';
import { getBalances, walletView } from '../billing/wallet.ts';
import type { McpBackend } from './tools.ts';

/** The services themselves, for the caller's account (the remote MCP server in the gateway). */
export function inProcessBackend(core: Core, principal: Principal): McpBackend {
  const publicUrl = core.config.publicUrl;
  return {
    async startRun(tool, args) {
      return startResponse(await startRun(core, principal, tool.name, args));
    },
    async runStatus(runId, waitSecs, signal) {
      return restRunView(publicUrl, await runStatus(core, principal, runId, waitSecs, signal));
    },
    async runRows(runId, offset, limit) {
      const run = await getRun(core.db, principal.accountId, runId);
      assertDownloadable(run, core.clock());
      return listRunItems(core.db, run.id, { offset, limit });
    },
    cancelRun: async (runId) => restRunView(publicUrl, await cancelRun(core, principal, runId)),
    async queryLeads(params) {
      return leadSearchBody(await searchLeads(core, principal, params));
    },
    wallet: async () => ({ wallet: walletView(await getBalances(core.db, principal.accountId)) }),
    enrichLeads: async (body) => ({ ...(await enrichLeads(core, principal, body)) }),
    enrichLocalBusinesses: async (body) => ({ ...(await enrichLocalBusinesses(core, principal, body)) }),
  };
}
