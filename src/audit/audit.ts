/**
 * Recording the audit log (docs/audit.md). Glossary: an *event* is one row of `audit_event`; its
 * *actor* who acted (a console user, an API key, a connected app, the operator, the gateway itself,
 * or an unnamed signed link), kept with a label as it read then; its *target* what it acted on.
 *
 * Every event is written by the domain function that does the action, in the same transaction, so an
 * action that rolls back leaves no event and one that commits always leaves its event. The database
 * keeps the log append-only (the trigger of migration 0036).
 */
import { createHmac } from 'node:crypto';
import { lt, type SQL, sql } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import {
  AUDIT_RETENTION_DAYS,
  type AuditAction,
  type AuditActorType,
  auditEventTable,
  type AuditTargetType,
} from '../../db/tables/audit.ts';
import type { Principal } from '../accounts/principal.ts';
import type { AuditDetails } from './actions.ts';

export interface AuditActor {
  type: AuditActorType;
  /** The user (`usr_…`), key (`key_…`) or grant (`oag_…`); null for the operator, the system, a link. */
  id: string | null;
  /** How the log shows it; by default read at write time from the user, key or grant (email, name and prefix). */
  label?: string;
}

export interface AuditTarget {
  type: AuditTargetType;
  id: string;
  /** How the log shows it (a key's name, a member's email); an SQL expression is evaluated in the insert. */
  label?: string | SQL | null;
}

/** Where a request came from, as the faces read it. */
export interface AuditClient {
  ip?: string | null;
  userAgent?: string | null;
}

export interface AuditEvent<A extends AuditAction = AuditAction> {
  /** The account the event belongs to; null for the operator's own log. */
  accountId: string | null;
  actor: AuditActor;
  action: A;
  target?: AuditTarget | null;
  details: AuditDetails[A];
  client?: AuditClient | null;
  /** When; default the transaction's time. */
  at?: Date;
}

export const OPERATOR: AuditActor = { type: 'operator', id: null, label: 'Operator' };
export const SYSTEM: AuditActor = { type: 'system', id: null, label: 'leadgate' };

/** The actor of an authenticated caller: the console user, the connected app or the API key. */
export function actorOf(principal: Principal): AuditActor {
  if (principal.sessionId && principal.userId) return { type: 'user', id: principal.userId };
  if (principal.oauth) return { type: 'app', id: principal.oauth.grantId };
  return { type: 'api_key', id: principal.keyId };
}

/** The actor a signed link names by id (`by`); a link that names no one (a Slack summary's) is its own actor. */
export function actorOfId(id: string | undefined | null): AuditActor {
  if (!id) return { type: 'link', id: null, label: 'Signed link' };
  if (id.startsWith('usr_')) return { type: 'user', id };
  if (id.startsWith('oag_')) return { type: 'app', id };
  return { type: 'api_key', id };
}

/** The account, actor and client of an event a caller's request makes. */
export const byCaller = (principal: Principal) => ({
  accountId: principal.accountId,
  actor: actorOf(principal),
  client: principal.client ?? null,
});

/** A user's email, read in the insert (a target's label). */
export const userEmail = (userId: string) => sql`(select email from app_user where id = ${userId})`;

/** The label of an actor, read in the insert from what it names; its id when that is gone. */
function actorLabel(actor: AuditActor): SQL | string {
  if (actor.label !== undefined) return actor.label;
  const id = actor.id ?? '';
  if (actor.type === 'user') return sql`coalesce(${userEmail(id)}, ${id})`;
  if (actor.type === 'api_key')
    return sql`coalesce((select name || ' (' || prefix || '…)' from api_key where id = ${id}), ${id})`;
  if (actor.type === 'app')
    return sql`coalesce((select g.client_name || ' for ' || u.email from oauth_grant g
      join app_user u on u.id = g.user_id where g.id = ${id}), ${id})`;
  return actor.type;
}

const clip = (value: string | null | undefined, length: number) => (value ? value.slice(0, length) : null);

/**
 * Records one event, in `tx`: the transaction of the action it records (or, for an action that is
 * no write, such as a download, the pool). Answers the event's id.
 */
export async function recordAudit<A extends AuditAction>(tx: Executor, event: AuditEvent<A>): Promise<bigint> {
  const rows = await tx
    .insert(auditEventTable)
    .values({
      accountId: event.accountId,
      actorType: event.actor.type,
      actorId: event.actor.id,
      actorLabel: actorLabel(event.actor),
      action: event.action,
      targetType: event.target?.type ?? null,
      targetId: event.target?.id ?? null,
      targetLabel: event.target?.label ?? null,
      details: event.details,
      ip: clip(event.client?.ip, 100),
      userAgent: clip(event.client?.userAgent, 512),
      ...(event.at ? { createdAt: event.at } : {}),
    })
    .returning({ id: auditEventTable.id });
  return oneRow(rows, 'insert into audit_event').id;
}

/**
 * The keyed hash of a person's identifier for the privacy actions' details: HMAC-SHA256 under the
 * installation's secret (`getInstallationSecret`), of the kind and the normalised value. The same
 * person gives the same hash, so the log can answer "was this address erased?" when asked with the
 * address, but a copy of the log alone names no one (a plain SHA-256 of an email is found by guessing).
 */
export function personHash(secret: Buffer, kind: string, normalValue: string): string {
  return createHmac('sha256', secret).update(`audit-person\n${kind}\n${normalValue}`).digest('base64url');
}

/**
 * Deletes the events past the retention period, the only deletion the trigger lets through; how many.
 * Aged by the database's clock, as the trigger ages them, so no row the trigger would refuse is asked for.
 */
export async function purgeExpiredAuditEvents(db: Database): Promise<number> {
  const deleted = await db
    .delete(auditEventTable)
    .where(lt(auditEventTable.createdAt, sql`now() - ${`${AUDIT_RETENTION_DAYS} days`}::interval`))
    .returning({ id: auditEventTable.id });
  return deleted.length;
}
