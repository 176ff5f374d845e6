import DataLoader from 'dataloader';
import type { Core } from '../src/core.ts';
import type { Principal } from '../src/accounts/accounts.ts';
import type { RunSnapshot } from '../src/runs/view.ts';
import { loadRuns } from '../src/runs/runs.ts';
import { loadCompanies, type CompanyRecord } from '../src/endpoints/lead-search.ts';

/** Per-request context: the caller and loaders that batch lookups within one operation. */
export interface GraphQLContext {
  core: Core;
  principal: Principal;
  loaders: ReturnType<typeof createLoaders>;
}

export function createLoaders(core: Core, principal: Principal) {
  return {
    run: new DataLoader<string, RunSnapshot | null>((ids) => loadRuns(core.db, principal.accountId, ids)),
    company: new DataLoader<number, CompanyRecord | null>(async (ids) => {
      const found = await loadCompanies(core.sql, ids);
      return ids.map((id) => found.get(id) ?? null);
    }),
  };
}
