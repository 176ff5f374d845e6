import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The audit log (docs/audit.md): who did what to an account, and what the operator did about the
 * people in the data. Append-only in the database: a trigger (migration 0036) refuses every UPDATE,
 * every TRUNCATE and every DELETE of a row younger than AUDIT_RETENTION_DAYS.
 */

/** Every action the log records; src/audit/actions.ts says each in words and types its details. */
export const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.revoked',
  'member.invited',
  'invitation.revoked',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'session.signed_in',
  'session.signed_out',
  'session.revoked',
  'session.revoked_all',
  'connection.created',
  'connection.removed',
  'connection.broken',
  'app.authorized',
  'app.revoked',
  'webhook.created',
  'webhook.deleted',
  'run.downloaded',
  'pipeline.downloaded',
  'dataset.exported',
  'schedule.created',
  'schedule.paused',
  'schedule.resumed',
  'schedule.deleted',
  'audit_log.exported',
  'account.permissible_use_acknowledged',
  'privacy.opt_out',
  'privacy.erasure',
  'privacy.access_request',
  'privacy.drop_cycle',
  'privacy.suppression_removed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Who acted: a console user, an API key, a connected app (an OAuth grant), the operator (CLI), the
 * gateway itself (a worker's job), or whoever held a signed link that names no one (a Slack summary's).
 */
export const AUDIT_ACTOR_TYPES = ['user', 'api_key', 'app', 'operator', 'system', 'link'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

/** What an event is about. */
export const AUDIT_TARGET_TYPES = [
  'api_key',
  'invitation',
  'membership',
  'session',
  'connection',
  'app',
  'webhook',
  'run',
  'pipeline',
  'dataset',
  'schedule',
  'audit_log',
  'privacy_request',
  'drop_cycle',
  'suppression',
] as const;
export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];

/**
 * How long an event is kept: 24 months, what California's rules ask of the records of consumer
 * requests (CCPA regulations § 7101), for every event alike. The trigger of migration 0036 states the
 * same interval; test/audit/append-only.test.ts checks they agree.
 */
export const AUDIT_RETENTION_DAYS = 730;

export const auditEventTable = pgTable(
  'audit_event',
  {
    id: bigint('id', { mode: 'bigint' }).primaryKey().generatedAlwaysAsIdentity(),
    /**
     * The account the event belongs to; null for the operator's own log. No foreign key: an account's
     * events outlive it for the retention period.
     */
    accountId: text('account_id'),
    actorType: text('actor_type', { enum: AUDIT_ACTOR_TYPES }).notNull(),
    /** The user, key or grant id; null for the operator, the system and an unnamed link. */
    actorId: text('actor_id'),
    /** Who it was as shown then (an email, a key's name and prefix), kept as written. */
    actorLabel: text('actor_label').notNull(),
    action: text('action', { enum: AUDIT_ACTIONS }).notNull(),
    targetType: text('target_type', { enum: AUDIT_TARGET_TYPES }),
    targetId: text('target_id'),
    targetLabel: text('target_label'),
    /**
     * What else the action says (src/audit/actions.ts): never a secret, never a raw identifier of a
     * person in the data.
     */
    details: jsonb('details').notNull().default(sql`'{}'::jsonb`),
    /** The client's address (as failed authentications count it) and User-Agent, when a request made it. */
    ip: text('ip'),
    userAgent: text('user_agent'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('audit_event_account_idx').on(t.accountId, t.id),
    index('audit_event_account_action_idx').on(t.accountId, t.action, t.id),
    index('audit_event_account_actor_idx').on(t.accountId, t.actorId, t.id),
    index('audit_event_created_idx').on(t.createdAt),
  ],
);
export type AuditEventRow = typeof auditEventTable.$inferSelect;
