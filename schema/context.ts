import DataLoader from 'dataloader';
import type { Core } from '../src/core.ts';
import type { Principal } from '../src/accounts/accounts.ts';
import type { LiveAccess } from '../src/http/access.ts';
import type { Credential } from '../src/http/pipeline.ts';
import type { LedgerEntry } from '../db/tables/accounts.ts';
import type { RunSnapshot } from '../src/runs/view.ts';
import { getRun, listItemsOfRuns, loadRunInputs, loadRuns, type ItemsRequest } from '../src/runs/read.ts';
import { snapshotOf } from '../src/runs/view.ts';
import { AppError } from '../src/shared/errors.ts';
import { loadWebhooks, type WebhookView } from '../src/webhooks/subscriptions.ts';
import {
  countDeliveries,
  listDeliveriesOfWebhooks,
  loadDeliveries,
  type DeliveryPage,
  type DeliveryView,
} from '../src/webhooks/deliveries.ts';
import { loadLedgerEntries } from '../src/billing/wallet.ts';
import { loadCompanies, type CompanyRecord } from '../src/endpoints/lead-search.ts';
import { companiesOfDeliveredLeads, loadDeliveredLeads } from '../src/catalog/leads/delivered.ts';
import type { LeadRow } from '../src/catalog/leads/query.ts';

/** Per-request context: the caller and loaders that batch lookups within one operation. */
export interface GraphQLContext {
  core: Core;
  principal: Principal;
  loaders: ReturnType<typeof createLoaders>;
  /**
   * A subscription's lasting access (schema/subscription-access.ts): a graphql-ws socket's, or one made
   * from `credential` for a subscription over HTTP. Absent from a shared execution, whose members are
   * each checked by their socket.
   */
  access?: LiveAccess;
  /** What an HTTP request presented (its key, or its session cookie and CSRF token). */
  credential?: Credential;
}

const byKey = { cacheKeyFn: (key: object) => JSON.stringify(key) };

/**
 * One DataLoader per lookup, batching what a list asks for field by field (a page of runs with their
 * rows, webhooks with their deliveries) into one statement each. Every lookup is the caller's own:
 * another account's id loads as null.
 */
export function createLoaders(core: Core, principal: Principal): Loaders {
  return new LazyLoaders(core, principal) as unknown as Loaders;
}

/** A run of the account, or null when there is none (another account's included). */
async function loadRun(core: Core, accountId: string, id: string): Promise<RunSnapshot | null> {
  try {
    return snapshotOf(await getRun(core.db, accountId, id));
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') return null;
    throw err;
  }
}

const LOADERS = {
  // One run alone (`run(id)`, the status poll) through the statement REST's status prepares once.
  run: (core: Core, { accountId }: Principal) =>
    new DataLoader<string, RunSnapshot | null>((ids) => {
      const [only, ...others] = ids;
      return only !== undefined && others.length === 0
        ? loadRun(core, accountId, only).then((run) => [run])
        : loadRuns(core.db, accountId, ids);
    }),
  runInput: (core: Core, { accountId }: Principal) =>
    new DataLoader<string, unknown>((ids) => loadRunInputs(core.db, accountId, ids)),
  /**
   * A run's rows, from an offset; the loader keys carry the run's id after its ownership
   * was checked (an ended run's on the read replica when it has them).
   */
  runItems: (core: Core) =>
    new DataLoader<ItemsRequest, Record<string, unknown>[], string>(
      (requests) => listItemsOfRuns(core, requests),
      byKey,
    ),
  ledgerEntry: (core: Core, { accountId }: Principal) =>
    new DataLoader<bigint, LedgerEntry | null>((ids) => loadLedgerEntries(core.db, accountId, ids)),
  webhook: (core: Core, principal: Principal) =>
    new DataLoader<string, WebhookView | null>((ids) => loadWebhooks(core.db, principal, ids)),
  delivery: (core: Core, principal: Principal) =>
    new DataLoader<string, DeliveryView | null>((ids) => loadDeliveries(core.db, principal, ids)),
  deliveryPage: (core: Core, principal: Principal) =>
    new DataLoader<{ webhookId: string; limit: number; after?: string | null }, DeliveryPage, string>(
      (requests) => listDeliveriesOfWebhooks(core.db, principal, requests),
      byKey,
    ),
  deliveryCount: (core: Core, principal: Principal) =>
    new DataLoader<string, number>((ids) => countDeliveries(core.db, principal, ids)),
  /** Leads the account has received (refetching by id). */
  deliveredLead: (core: Core, { accountId }: Principal) =>
    new DataLoader<string, LeadRow | null>((ids) => loadDeliveredLeads(core.sql, accountId, ids)),
  /** Companies of leads the account has received (refetching by id). */
  deliveredCompany: (core: Core, { accountId }: Principal) =>
    new DataLoader<number, boolean>(async (ids) => {
      const found = await companiesOfDeliveredLeads(core.sql, accountId, ids);
      return ids.map((id) => found.has(id));
    }),
  company: (core: Core) =>
    new DataLoader<number, CompanyRecord | null>(async (ids) => {
      const found = await loadCompanies(core.sql, ids);
      return ids.map((id) => found.get(id) ?? null);
    }),
};

type Loaders = { readonly [K in keyof typeof LOADERS]: ReturnType<(typeof LOADERS)[K]> };

/**
 * The loaders, each built on first use: a graphql-ws subscription keeps its context for its whole
 * life, and most operations use one or two loaders, so idle ones cost no memory. The getters live on
 * the prototype: a context costs one small object, not a closure per loader.
 */
class LazyLoaders {
  constructor(
    readonly core: Core,
    readonly principal: Principal,
  ) {}
}
for (const name of Object.keys(LOADERS) as (keyof typeof LOADERS)[]) {
  const slot = Symbol(name);
  Object.defineProperty(LazyLoaders.prototype, name, {
    enumerable: true,
    get(this: LazyLoaders & Record<symbol, unknown>) {
      this[slot] ??= LOADERS[name](this.core, this.principal);
      return this[slot];
    },
  });
}
