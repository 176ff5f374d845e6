/**
 * Reading the audit log: an account's events for its owners and admins (the `audit` permission,
 * src/accounts/roles.ts), newest first, filtered by action, actor and time; the operator's own log
 * (events of no account) for the command line. The same filter serves lists, counts and exports.
 */
import { and, count, desc, eq, gte, inArray, isNull, lt, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import { AUDIT_ACTIONS, type AuditAction, auditEventTable, type AuditEventRow } from '../../db/tables/audit.ts';
import type { Principal } from '../accounts/principal.ts';
import { may, requireRole } from '../accounts/roles.ts';
import { ValidationError } from '../shared/errors.ts';
import { isBigintText, param, unstorable } from '../shared/params.ts';
import { ACTION_TEXT, type AuditFilterDetails } from './actions.ts';

export interface AuditFilter {
  action?: AuditAction;
  /** A user, key or app id (`usr_…`, `key_…`, `oag_…`). */
  actorId?: string;
  /** From this time on (included). */
  since?: Date;
  /** Before this time (excluded). */
  until?: Date;
  /** Only events before this one (an export's own event). */
  beforeId?: bigint;
}

/** Whose log: an account's, or the operator's (`null`). */
export type AuditScope = { accountId: string | null };

/** At most this many events a page. */
export const MAX_AUDIT_PAGE = 100;

// Times a filter may name: wider than any event, narrower than what Postgres and JavaScript disagree on.
const EARLIEST = Date.UTC(2000, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);

/**
 * The filter's values checked where they stand (`filter.since`, `since`): a time within 2000–9999, not an
 * `until` before its `since`. Answers the filter as read.
 */
export function checkFilter(filter: AuditFilter, path: (field: string) => string = (f) => f): AuditFilter {
  const issues: { path: string; message: string }[] = [];
  for (const field of ['since', 'until'] as const) {
    const at = filter[field];
    if (at && !(at.getTime() >= EARLIEST && at.getTime() <= LATEST))
      issues.push({ path: path(field), message: 'must be a time between the years 2000 and 9999' });
  }
  if (filter.since && filter.until && filter.until <= filter.since)
    issues.push({ path: path('until'), message: 'must be after since' });
  if (filter.actorId !== undefined && (filter.actorId.length > 64 || unstorable(filter.actorId)))
    issues.push({ path: path('actorId'), message: 'must be a user, key or app id' });
  if (issues.length > 0) throw new ValidationError(issues);
  return filter;
}

function conditions(scope: AuditScope, filter: AuditFilter): SQL | undefined {
  const t = auditEventTable;
  return and(
    scope.accountId === null ? isNull(t.accountId) : eq(t.accountId, scope.accountId),
    filter.action ? eq(t.action, filter.action) : undefined,
    filter.actorId ? eq(t.actorId, filter.actorId) : undefined,
    filter.since ? gte(t.createdAt, filter.since) : undefined,
    filter.until ? lt(t.createdAt, filter.until) : undefined,
    filter.beforeId !== undefined ? lt(t.id, filter.beforeId) : undefined,
  );
}

/** A page of a log, newest first: `first` events after the event `after` (its id). */
export async function selectAuditEvents(
  db: Executor,
  scope: AuditScope,
  filter: AuditFilter,
  page: { first: number; after?: bigint },
): Promise<{ events: AuditEventRow[]; hasNextPage: boolean }> {
  const rows = await db
    .select()
    .from(auditEventTable)
    .where(and(conditions(scope, filter), page.after === undefined ? undefined : lt(auditEventTable.id, page.after)))
    .orderBy(desc(auditEventTable.id))
    .limit(page.first + 1);
  return { events: rows.slice(0, page.first), hasNextPage: rows.length > page.first };
}

/** The caller's account's events (owners and admins, and the keys they made: 403 `role_required` otherwise). */
export async function listAuditEvents(
  db: Executor,
  principal: Principal,
  filter: AuditFilter,
  page: { first: number; after?: bigint },
) {
  requireRole(principal, 'audit');
  return selectAuditEvents(db, { accountId: principal.accountId }, checkFilter(filter), page);
}

/** How many events of a log match the filter (a connection's `totalCount`). */
export async function countAuditEvents(db: Executor, scope: AuditScope, filter: AuditFilter): Promise<number> {
  const rows = await db.select({ n: count() }).from(auditEventTable).where(conditions(scope, filter));
  return oneRow(rows, 'count of audit events').n;
}

/**
 * The caller's account's events by id, in order; null for another account's, none, or a caller who may
 * not read them.
 */
export async function loadAuditEvents(
  db: Executor,
  principal: Principal,
  ids: readonly bigint[],
): Promise<(AuditEventRow | null)[]> {
  if (ids.length === 0 || !may(principal, 'audit')) return ids.map(() => null);
  const rows = await db
    .select()
    .from(auditEventTable)
    .where(and(eq(auditEventTable.accountId, principal.accountId), inArray(auditEventTable.id, [...ids])));
  const byId = new Map(rows.map((e) => [e.id, e]));
  return ids.map((id) => byId.get(id) ?? null);
}

const iso = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/, {
    message: 'must be an ISO 8601 time such as 2026-12-01T00:00:00Z, or a date',
    abort: true,
  })
  .transform((s) => new Date(s))
  .optional();

/** The filter as REST's query takes it (the audit routes' and the signed export link's). */
export const auditFilterParams = z.object({
  action: z
    .enum(AUDIT_ACTIONS, { message: `must be one of ${AUDIT_ACTIONS.join(', ')}` })
    .optional()
    .describe('Only this action, e.g. api_key.created.'),
  actor: param.text.describe('Only what this user, key or app did (its id: usr_…, key_…, oag_…).'),
  since: iso.describe('From this time on (ISO 8601, included).'),
  until: iso.describe('Before this time (ISO 8601, excluded).'),
});

/** REST's list query: the filter, and a page. */
export const auditListParams = auditFilterParams
  .extend({
    limit: param.num(1, MAX_AUDIT_PAGE).describe(`Events per page, at most ${MAX_AUDIT_PAGE}; default 50.`),
    after: z
      .string()
      .regex(/^\d{1,19}$/, { message: 'must be a next_after value', abort: true })
      .refine(isBigintText, 'must be a next_after value')
      .optional()
      .describe('The next_after of the previous page.'),
  })
  .strict();

/** The filter of REST's parameters, checked. */
export const filterOfParams = (p: z.output<typeof auditFilterParams>): AuditFilter =>
  checkFilter({ action: p.action, actorId: p.actor, since: p.since, until: p.until }, (field) =>
    field === 'actorId' ? 'actor' : field,
  );

/** A filter as an event's details keep it. */
export const filterDetails = (f: AuditFilter): AuditFilterDetails => ({
  ...(f.action ? { action: f.action } : {}),
  ...(f.actorId ? { actorId: f.actorId } : {}),
  ...(f.since ? { since: f.since.toISOString() } : {}),
  ...(f.until ? { until: f.until.toISOString() } : {}),
});

/** An event as REST and the JSON exports answer it. */
export const auditEventView = (e: AuditEventRow) => ({
  id: String(e.id),
  createdAt: e.createdAt.toISOString(),
  action: e.action,
  actionText: ACTION_TEXT[e.action],
  actor: { type: e.actorType, id: e.actorId, label: e.actorLabel },
  target: e.targetType && e.targetId ? { type: e.targetType, id: e.targetId, label: e.targetLabel } : null,
  details: e.details as Record<string, unknown>,
  ip: e.ip,
  userAgent: e.userAgent,
});
export type AuditEventView = ReturnType<typeof auditEventView>;
