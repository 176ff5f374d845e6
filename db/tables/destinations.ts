import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { accountTable } from './accounts.ts';

/** The providers an account can connect (src/destinations/providers). */
export const PROVIDERS = ['hubspot', 'salesforce', 'google', 'slack'] as const;
export type Provider = (typeof PROVIDERS)[number];

/**
 * An account's connection to a provider (src/destinations/connections.ts): made through the provider's
 * OAuth authorization-code flow, or with a token the provider issues (a HubSpot private-app token, a
 * Slack bot token, a Google service-account key). Tokens are sealed (src/destinations/secrets.ts),
 * bound to the connection's id and the field. A connection whose grant was revoked or expired is
 * `broken`, with the reason.
 */
export const connectionTable = pgTable(
  'provider_connection',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    provider: text('provider', { enum: PROVIDERS }).notNull(),
    method: text('method', { enum: ['oauth', 'token'] }).notNull(),
    name: text('name').notNull(),
    /** Who it is at the provider: the HubSpot portal, the Salesforce org, the Slack workspace, the Google account. */
    externalId: text('external_id'),
    externalName: text('external_name'),
    scopes: text('scopes'),
    /** Salesforce: the org's instance URL, which its API answers at. */
    instanceUrl: text('instance_url'),
    accessToken: text('access_token').notNull(),
    refreshToken: text('refresh_token'),
    accessExpiresAt: timestamp('access_expires_at', { withTimezone: true }),
    status: text('status', { enum: ['active', 'broken'] })
      .notNull()
      .default('active'),
    brokenReason: text('broken_reason'),
    createdBy: text('created_by'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    refreshedAt: timestamp('refreshed_at', { withTimezone: true }),
  },
  (t) => [index('provider_connection_account_idx').on(t.accountId, t.createdAt)],
);
export type Connection = typeof connectionTable.$inferSelect;

/**
 * An OAuth authorization-code flow under way: the `state` sent to the provider (its hash kept), the
 * PKCE verifier where the provider takes one (sealed), and who started it. Used once, within 10 minutes.
 */
export const connectAttemptTable = pgTable('connect_attempt', {
  stateHash: text('state_hash').primaryKey(),
  accountId: text('account_id')
    .notNull()
    .references(() => accountTable.id, { onDelete: 'cascade' }),
  provider: text('provider', { enum: PROVIDERS }).notNull(),
  name: text('name').notNull(),
  userId: text('user_id'),
  codeVerifier: text('code_verifier'),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});

export const DESTINATION_KINDS = [
  'hubspot_contacts',
  'hubspot_companies',
  'salesforce_leads',
  'salesforce_contacts',
  'google_sheet',
  'slack_summary',
] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/**
 * A destination (src/destinations/destinations.ts): a connection and what to do with rows (upsert
 * HubSpot contacts, append to a sheet…), with its settings and its field mapping per tool.
 */
export const destinationTable = pgTable(
  'destination',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    kind: text('kind', { enum: DESTINATION_KINDS }).notNull(),
    connectionId: text('connection_id')
      .notNull()
      .references(() => connectionTable.id, { onDelete: 'cascade' }),
    settings: jsonb('settings').notNull().default(sql`'{}'::jsonb`),
    /** Per tool: the provider field each column goes to (`{"maps": {"website": "website"}}`); defaults fill the rest. */
    mapping: jsonb('mapping').notNull().default(sql`'{}'::jsonb`),
    pausedAt: timestamp('paused_at', { withTimezone: true }),
    pausedReason: text('paused_reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('destination_account_idx').on(t.accountId, t.createdAt)],
);
export type Destination = typeof destinationTable.$inferSelect;

/** `waiting`: the provider's allowance for the day is spent; the delivery goes on at `resumeAt`. */
export const ROW_DELIVERY_STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'paused'] as const;
export type RowDeliveryStatus = (typeof ROW_DELIVERY_STATUSES)[number];

/**
 * One delivery of a run's (or a pipeline's) rows to a destination (src/destinations/deliveries.ts): a
 * worker job sends them in batches; `nextOffset` is the first row not yet acknowledged by the provider,
 * where a job resumes after a crash.
 */
export const deliveryTable = pgTable(
  'delivery',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    destinationId: text('destination_id')
      .notNull()
      .references(() => destinationTable.id, { onDelete: 'cascade' }),
    runId: text('run_id'),
    pipelineId: text('pipeline_id'),
    status: text('status', { enum: ROW_DELIVERY_STATUSES }).notNull().default('queued'),
    message: text('message').notNull().default(''),
    total: integer('total').notNull().default(0),
    nextOffset: integer('next_offset').notNull().default(0),
    sent: integer('sent').notNull().default(0),
    created: integer('created').notNull().default(0),
    updated: integer('updated').notNull().default(0),
    skipped: integer('skipped').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    /** What the provider's driver keeps between batches (a sheet's last acknowledged row), for a resume. */
    cursor: jsonb('cursor').notNull().default(sql`'{}'::jsonb`),
    resumeAt: timestamp('resume_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [index('delivery_account_idx').on(t.accountId, t.createdAt), index('delivery_run_idx').on(t.runId)],
);
export type Delivery = typeof deliveryTable.$inferSelect;

/** A row the provider refused (or the gateway skipped), with the reason: the delivery's log. */
export const deliveryProblemTable = pgTable(
  'delivery_problem',
  {
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => deliveryTable.id, { onDelete: 'cascade' }),
    row: integer('row').notNull(),
    outcome: text('outcome', { enum: ['skipped', 'failed'] }).notNull(),
    reason: text('reason').notNull(),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.row] })],
);
