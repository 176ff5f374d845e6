import DataLoader from 'dataloader';
import type { Core } from '../src/core.ts';
import type { Principal } from '../src/accounts/accounts.ts';
import type { LedgerEntry } from '../db/schema/accounts.ts';
import type { RunSnapshot } from '../src/runs/view.ts';
import { listItemsOfRuns, loadRunInputs, loadRuns, type ItemsRequest } from '../src/runs/runs.ts';
import { countDeliveries, listDeliveriesOfWebhooks, loadDeliveries, loadWebhooks, type DeliveryPage, type DeliveryView, type WebhookView } from '../src/runs/webhooks.ts';
import { loadLedgerEntries } from '../src/billing/wallet.ts';
import { loadCompanies, type CompanyRecord } from '../src/endpoints/lead-search.ts';
import { companiesOfDeliveredLeads, loadDeliveredLeads } from '../src/catalog/leads/delivered.ts';
import type { LeadRow } from '../src/catalog/leads/query.ts';

/** Per-request context: the caller and loaders that batch lookups within one operation. */
export interface GraphQLContext {
  core: Core;
  principal: Principal;
  loaders: ReturnType<typeof createLoaders>;
}

const byKey = { cacheKeyFn: (key: object) => JSON.stringify(key) };

/**
 * One DataLoader per lookup, batching what a list asks for field by field (a page of runs with their
 * rows, webhooks with their deliveries) into one statement each. Every lookup is the caller's own:
 * another account's id loads as null.
 */
export function createLoaders(core: Core, principal: Principal) {
  return lazily(loaderFactories(core, principal));
}

/**
 * The loaders built on first use: a graphql-ws subscription keeps its context for its whole life, and
 * most operations use one or two loaders, so idle ones cost no memory.
 */
function lazily<T extends Record<string, () => unknown>>(factories: T): { [K in keyof T]: ReturnType<T[K]> } {
  const built: Partial<Record<keyof T, unknown>> = {};
  const loaders = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const name of Object.keys(factories) as (keyof T)[]) {
    Object.defineProperty(loaders, name, { enumerable: true, get: () => (built[name] ??= factories[name]!()) });
  }
  return loaders;
}

function loaderFactories(core: Core, principal: Principal) {
  const { accountId } = principal;
  return {
    run: () => new DataLoader<string, RunSnapshot | null>((ids) => loadRuns(core.db, accountId, ids)),
    runInput: () => new DataLoader<string, unknown>((ids) => loadRunInputs(core.db, accountId, ids)),
    /** A run's rows, from an offset; the loader keys carry the run's id after its ownership was checked. */
    runItems: () => new DataLoader<ItemsRequest, Record<string, unknown>[], string>((requests) => listItemsOfRuns(core.sql, requests), byKey),
    ledgerEntry: () => new DataLoader<bigint, LedgerEntry | null>((ids) => loadLedgerEntries(core.db, accountId, ids)),
    webhook: () => new DataLoader<string, WebhookView | null>((ids) => loadWebhooks(core.db, principal, ids)),
    delivery: () => new DataLoader<string, DeliveryView | null>((ids) => loadDeliveries(core.db, principal, ids)),
    deliveryPage: () => new DataLoader<{ webhookId: string; limit: number; after?: string | null }, DeliveryPage, string>(
      (requests) => listDeliveriesOfWebhooks(core.db, principal, requests),
      byKey,
    ),
    deliveryCount: () => new DataLoader<string, number>((ids) => countDeliveries(core.db, principal, ids)),
    /** Leads the account has received (refetching by id). */
    deliveredLead: () => new DataLoader<string, LeadRow | null>((ids) => loadDeliveredLeads(core.sql, accountId, ids)),
    /** Companies of leads the account has received (refetching by id). */
    deliveredCompany: () => new DataLoader<number, boolean>(async (ids) => {
      const found = await companiesOfDeliveredLeads(core.sql, accountId, ids);
      return ids.map((id) => found.has(id));
    }),
    company: () => new DataLoader<number, CompanyRecord | null>(async (ids) => {
      const found = await loadCompanies(core.sql, ids);
      return ids.map((id) => found.get(id) ?? null);
    }),
  };
}
