import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  index,
  integer,
  json,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { accountTable } from './accounts.ts';

export const RUN_STATUSES = ['READY', 'RUNNING', 'SUCCEEDED', 'FAILED', 'ABORTING', 'ABORTED', 'TIMED-OUT'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_STATUSES: readonly RunStatus[] = ['SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED-OUT'];

export const runStatusEnum = pgEnum('run_status', RUN_STATUSES);

/**
 * Why an ended run stopped before it ran to completion (docs/api.md#how-a-run-ends): its hold was used up,
 * it was cancelled, it reached its time limit, or its upstream source failed. Null while it runs, when it
 * ran to completion, and when it failed for another reason.
 */
export const RUN_STOP_REASONS = ['budget_exhausted', 'cancelled', 'time_limit', 'upstream_failed'] as const;
export type RunStopReason = (typeof RUN_STOP_REASONS)[number];

export const runTable = pgTable(
  'run',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    tool: text('tool').notNull(),
    status: runStatusEnum('status').notNull(),
    statusMessage: text('status_message').notNull().default(''),
    /** Why the run stopped short (RUN_STOP_REASONS), set with its end; null when it ran to completion. */
    stopReason: text('stop_reason', { enum: RUN_STOP_REASONS }),
    input: jsonb('input').notNull(),
    /** Items processed so far (spec: handled). */
    handled: integer('handled').notNull().default(0),
    /** Items requested (spec: requested). */
    requested: integer('requested').notNull().default(0),
    /** Result rows stored so far. */
    itemCount: integer('item_count').notNull().default(0),
    fileName: text('file_name'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    /** Internal failure detail for operators; never sent to clients. */
    errorDetail: text('error_detail'),
    /** Estimated cost at start, micro-dollars. */
    estimatedMicros: bigint('estimated_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    /** Money reserved at start, by bucket (purchased credits are taken first). */
    holdPurchasedMicros: bigint('hold_purchased_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    holdPlanMicros: bigint('hold_plan_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    /** Cost of the results delivered so far; final once `settledAt` is set. */
    chargedMicros: bigint('charged_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    billedUnits: integer('billed_units').notNull().default(0),
    settledAt: timestamp('settled_at', { withTimezone: true }),
    /** When the result rows were deleted after `expiresAt`. */
    purgedAt: timestamp('purged_at', { withTimezone: true }),
    /** The run's own webhook (`webhookUrl` at start) and the secret its deliveries are signed with. */
    webhookUrl: text('webhook_url'),
    webhookSecret: text('webhook_secret'),
    /** The run this one was started with (property lookup's owner-contact run). */
    parentRunId: text('parent_run_id').references((): AnyPgColumn => runTable.id, { onDelete: 'cascade' }),
    /** The upstream engine's run behind this one (TOOL_SOURCES): its id, the actor and dataset it reads. */
    upstreamRunId: text('upstream_run_id'),
    upstreamActorId: text('upstream_actor_id'),
    upstreamDatasetId: text('upstream_dataset_id'),
    /** Upstream dataset items read and stored (mapped or skipped): where a resumed worker reads on. */
    upstreamOffset: integer('upstream_offset').notNull().default(0),
    /**
     * What the upstream run cost the operator (the engine's usageTotalUsd once settled), micro-dollars;
     * 0 until then (a job settles a cost the platform had not counted when the run ended).
     */
    upstreamCostMicros: bigint('upstream_cost_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    /** The account's named dataset the run adds its rows to (`datasetName`), and whether it delivers only new rows. */
    datasetName: text('dataset_name'),
    onlyNew: boolean('only_new').notNull().default(false),
    /** Rows the runner produced that the dataset had delivered before: neither stored nor billed. */
    skippedDelivered: integer('skipped_delivered').notNull().default(0),
    /** Rows the runner produced about suppressed people (src/privacy): neither stored nor billed. */
    suppressedCount: integer('suppressed_count').notNull().default(0),
    /** The saved task the run was started from, and the schedule that fired it (src/workflows). */
    taskId: text('task_id'),
    scheduleId: text('schedule_id'),
    /** The pipeline the run is a step of (src/workflows/pipelines.ts), and which step, from 0. */
    pipelineId: text('pipeline_id'),
    pipelineStep: integer('pipeline_step'),
    /** Destinations its rows are delivered to when it ends (src/destinations). */
    destinationIds: text('destination_ids').array(),
  },
  (t) => [
    index('run_account_created_idx').on(t.accountId, t.createdAt.desc(), t.id.desc()),
    index('run_account_status_idx').on(t.accountId, t.status, t.createdAt),
    index('run_expires_idx').on(t.expiresAt).where(sql`${t.purgedAt} is null`),
    index('run_parent_idx').on(t.parentRunId).where(sql`${t.parentRunId} is not null`),
    index('run_pipeline_idx').on(t.pipelineId, t.pipelineStep).where(sql`${t.pipelineId} is not null`),
    check(
      'run_stop_reason_known',
      sql`${t.stopReason} in (${sql.raw(RUN_STOP_REASONS.map((r) => `'${r}'`).join(', '))})`,
    ),
  ],
);
export type Run = typeof runTable.$inferSelect;
export type NewRun = typeof runTable.$inferInsert;

/** Result rows of a run, numbered from 0; the (run, seq) key makes appends idempotent. */
export const runItemTable = pgTable(
  'run_item',
  {
    runId: text('run_id')
      .notNull()
      .references(() => runTable.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    /** json, not jsonb: rows keep their column order and are never queried inside. */
    data: json('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.seq] })],
);
export type RunItem = typeof runItemTable.$inferSelect;

/**
 * An account's named datasets (`datasetName` on a run's start, src/datasets): one tool's rows kept one
 * an identity across the runs that share the name. Created by the first run that names it.
 */
export const accountDatasetTable = pgTable(
  'account_dataset',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** The tool whose rows it holds. */
    tool: text('tool').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('account_dataset_name_idx').on(t.accountId, t.name)],
);
export type AccountDataset = typeof accountDatasetTable.$inferSelect;

/**
 * The identities an account's named dataset has delivered, each with the run row that delivered it
 * last (`run_id`, `seq`; the row itself is the run's, kept as long as the run's rows are). A run asking
 * for only new rows claims an identity before it delivers the row (`seq` null until it is stored), so
 * later runs sharing the name skip it; a claim whose row was never stored is released at the run's end.
 * Identities outlive the rows: they are kept until the dataset is cleared or deleted.
 */
export const datasetItemTable = pgTable(
  'dataset_item',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    dataset: text('dataset').notNull(),
    key: text('key').notNull(),
    runId: text('run_id').notNull(),
    seq: integer('seq'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.dataset, t.key] }),
    index('dataset_item_rows_idx').on(t.accountId, t.dataset, t.deliveredAt, t.runId, t.seq),
    index('dataset_item_run_idx').on(t.runId),
  ],
);

/** Results shared by every account until the data they come from is refreshed (tech stack lookups). */
export const toolCacheTable = pgTable(
  'tool_cache',
  {
    tool: text('tool').notNull(),
    key: text('key').notNull(),
    /** The data period the value belongs to, e.g. "2026-11" (monthly) or "2026-W47" (weekly). */
    period: text('period').notNull(),
    value: jsonb('value').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tool, t.key, t.period] })],
);

/**
 * Worker liveness: each graphile-worker of every process beats here; jobs locked by a worker that
 * has stopped beating (its process died) are unlocked so another worker resumes them.
 */
export const workerHeartbeatTable = pgTable('worker_heartbeat', {
  workerId: text('worker_id').primaryKey(),
  heartbeatAt: timestamp('heartbeat_at', { withTimezone: true }).notNull().defaultNow(),
});
