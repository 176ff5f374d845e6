/**
 * What suppression costs a lead search (the `privacy` suite's second part). Nothing a deployment can set
 * turns the check off, so the search without it is built here: `searchLeadsUnchecked` is `searchLeads`
 * (src/endpoints/lead-search.ts through `databaseSearch`, src/endpoints/search.ts) with the one call of
 * `suppressionCheck` taken out — the same catalog statements in the same transaction settings, the same
 * deliveries and allowance. Its answers are checked against `searchLeads`' before anything is timed.
 *
 * For each of the `database` suite's searches, alternated: searchLeads and the unchecked search, with an
 * account that holds a do-not-contact list and received the page before (repeat) and with a new account
 * each call; and the check alone (`suppressionCheck(core.db, account)` on the same page's rows, what
 * `deliverPage` awaits before delivering), with its JavaScript part (identifiers found, phones parsed,
 * DROP hashes) timed apart.
 */
import type { Sql } from '../../db/client.ts';
import type { Core } from '../../src/core.ts';
import { createAccount, type Principal } from '../../src/accounts/accounts.ts';
import { takeAllowance } from '../../src/billing/allowances.ts';
import { COMPANY_FILTERS, isSet } from '../../src/catalog/leads/filters.ts';
import { companiesReady, companyIdsOf, loadCompanies } from '../../src/catalog/leads/companies.ts';
import { deliveredAmong, recordDelivered } from '../../src/catalog/leads/delivered.ts';
import { filtersOf, parseLeadSearch } from '../../src/catalog/leads/params.ts';
import type { LeadRow } from '../../src/catalog/leads/query.ts';
import type { Row } from '../../src/tools/types.ts';
import { findLeads } from '../../src/catalog/leads/search.ts';
import { searchLeads } from '../../src/endpoints/lead-search.ts';
import { pageRequest } from '../../src/endpoints/search.ts';
import { dropHashesOf, identifiersOf, suppressionCheck } from '../../src/privacy/suppression.ts';
import type { SearchCase } from './database.ts';
import { round, timeAlternately, timing, type Timing } from './harness.ts';

/** searchLeads without its suppression check (no `url` parameter: the bench's searches send none). */
export async function searchLeadsUnchecked(core: Core, principal: Principal, raw: unknown) {
  const params = parseLeadSearch(raw);
  const request = pageRequest(params);
  const filters = filtersOf(params);
  if (COMPANY_FILTERS.some((k) => isSet(filters[k])) && !(await companiesReady(core.sql)))
    throw new Error('company data is being prepared');
  const window = { ...request, exactTotalLimit: core.config.searchExactTotalLimit };
  return core.sql.begin(async (tx) => {
    const sql = tx as unknown as Sql;
    const timeout = sql`select set_config('statement_timeout', ${String(core.config.leadQueryTimeoutMs)}, true),
        set_config('jit', 'off', true), set_config('work_mem', '32MB', true)`.execute();
    const [, found] = await Promise.all([
      timeout,
      findLeads(sql, filters, window, { accountId: principal.accountId, excludeDelivered: params.excludeDelivered }),
    ]);
    const candidates = found.rows.slice(0, request.limit);
    const ids = candidates.map((r) => r.id);
    const [known, companies] = await Promise.all([
      deliveredAmong(sql, principal.accountId, ids),
      loadCompanies(sql, companyIdsOf(candidates)),
    ]);
    const fresh = ids.filter((id) => !known.has(id));
    const allowance = await takeAllowance(
      sql,
      principal.accountId,
      'database',
      fresh.length,
      core.config.dailyDatabaseRecords,
      core.clock(),
    );
    const granted = fresh.slice(0, allowance.granted);
    const keep = new Set([...known, ...granted]);
    await recordDelivered(sql, principal.accountId, granted);
    const rows = candidates.filter((r) => keep.has(r.id));
    const more = found.rows.length > request.limit || rows.length < candidates.length;
    const last = rows.at(-1);
    return {
      rows,
      total: found.total,
      nextAfter: more && last ? String(last.id) : null,
      allowanceRemaining: allowance.remaining,
      companies,
    };
  });
}

export interface SuppressedSearchFigures {
  key: string;
  label: string;
  params: Record<string, unknown>;
  total: number;
  /** Rows of the page, and how many of them the repeat account's check suppressed. */
  pageRows: number;
  suppressed: number;
  /** Values the check looks up for the page (e-mails, domains, phones, profiles, hashes). */
  lookedUp: number;
  /** searchLeads and the unchecked search, repeat account. */
  with: Timing;
  without: Timing;
  /** The same, a new account each call. */
  withNew: Timing;
  withoutNew: Timing;
  /** suppressionCheck alone on the page's rows (repeat account), and its JavaScript part (mean of 20 calls). */
  check: Timing;
  checkJsMs: number;
  /** check p95 ÷ searchLeads p95 (repeat account): the goal's figure. */
  checkShareP95: number;
  /** (with − without) ÷ with, at p50 and p95, both accounts. */
  addedP50: number;
  addedP95: number;
  addedNewP50: number;
  addedNewP95: number;
  met: boolean;
}

const ids = (rows: readonly { id: string }[]) => rows.map((r) => r.id).join();

/** A growth account's principal, as the database suite makes them. */
export async function growthPrincipal(core: Core, name: string): Promise<Principal> {
  const { apiKey } = await createAccount(core.db, { name, plan: 'growth' });
  return core.auth.authenticate(`Bearer ${apiKey}`);
}

/** One search's figures (see the file's head); `repeat` holds the do-not-contact list. */
export async function benchSuppressedSearch(
  core: Core,
  repeat: Principal,
  c: SearchCase,
  options: { iterations: number; warmups: number; maxShare: number },
): Promise<SuppressedSearchFigures> {
  const params = parseLeadSearch(c.params);
  const request = pageRequest(params);
  const found = await findLeads(
    core.sql,
    filtersOf(params),
    { ...request, exactTotalLimit: core.config.searchExactTotalLimit },
    { accountId: repeat.accountId },
  );
  const page: LeadRow[] = found.rows.slice(0, request.limit);
  // What deliverPage hands the check: the page's rows as the catalog returned them.
  const rows = page as unknown as Row[];
  const check = suppressionCheck(core.db, repeat.accountId);
  const flags = await check(rows);
  const kept = page.filter((_, i) => !flags[i]);
  // Both searches deliver the page once (untimed), then agree: the unchecked one keeps what the check drops.
  const checked = await searchLeads(core, repeat, c.params);
  const unchecked = await searchLeadsUnchecked(core, repeat, c.params);
  if (ids(checked.rows) !== ids(kept) || ids(unchecked.rows) !== ids(page) || checked.total !== unchecked.total)
    throw new Error(`(${c.key}) searchLeads and the search without its check disagree beyond the suppressed rows`);
  const identifiers = rows.map(identifiersOf);
  const lookedUp = identifiers.reduce(
    (a, id) => a + id.email.size + id.domain.size + id.phone.size + id.profile.size + dropHashesOf(id).length,
    0,
  );

  let newcomer: Principal | undefined;
  let count = 0;
  const fresh = async () => {
    newcomer = await growthPrincipal(core, `bench privacy ${c.key} ${++count}`);
  };
  const samples = await timeAlternately(
    {
      with: { run: () => searchLeads(core, repeat, c.params) },
      without: { run: () => searchLeadsUnchecked(core, repeat, c.params) },
      withNew: { prepare: fresh, run: () => searchLeads(core, newcomer as Principal, c.params) },
      withoutNew: { prepare: fresh, run: () => searchLeadsUnchecked(core, newcomer as Principal, c.params) },
      check: { run: () => check(rows) },
    },
    options.iterations,
    options.warmups,
  );
  const jsStart = performance.now();
  for (let i = 0; i < 20; i++) for (const id of rows.map(identifiersOf)) dropHashesOf(id);
  const checkJsMs = round((performance.now() - jsStart) / 20, 2);

  const t = {
    with: timing(samples.with),
    without: timing(samples.without),
    withNew: timing(samples.withNew),
    withoutNew: timing(samples.withoutNew),
    check: timing(samples.check),
  };
  const added = (a: number, b: number) => round((a - b) / a, 3);
  const checkShareP95 = round(t.check.p95 / t.with.p95, 3);
  return {
    key: c.key,
    label: c.label,
    params: c.params,
    total: checked.total,
    pageRows: page.length,
    suppressed: page.length - kept.length,
    lookedUp,
    ...t,
    checkJsMs,
    checkShareP95,
    addedP50: added(t.with.p50, t.without.p50),
    addedP95: added(t.with.p95, t.without.p95),
    addedNewP50: added(t.withNew.p50, t.withoutNew.p50),
    addedNewP95: added(t.withNew.p95, t.withoutNew.p95),
    met: checkShareP95 <= options.maxShare,
  };
}
