import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { accountTable, appUserTable } from './accounts.ts';

/**
 * Saved tasks (src/workflows/tasks.ts): a tool with a saved input and a name, as Apify's actor tasks;
 * started by hand with overrides, or by a schedule.
 */
export const savedTaskTable = pgTable(
  'saved_task',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    tool: text('tool').notNull(),
    input: jsonb('input').notNull(),
    /** The dataset its runs add their rows to, and whether they deliver only new rows. */
    datasetName: text('dataset_name'),
    onlyNew: boolean('only_new').notNull().default(false),
    /**
     * The steps after the tool's, when the task is a saved pipeline (src/workflows/pipelines.ts): each
     * a tool fed by the rows of the step before; null for a task of one tool.
     */
    steps: jsonb('steps'),
    /** Destinations each start's rows (a saved pipeline's table) are delivered to. */
    destinationIds: text('destination_ids').array(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('saved_task_name_idx').on(t.accountId, t.name)],
);
export type SavedTask = typeof savedTaskTable.$inferSelect;

/**
 * Schedules (src/workflows/schedules.ts): a saved task fired on a cron expression in a time zone.
 * `next_fire_at` is the next tick; a paused schedule has `paused_at` and says why.
 */
export const scheduleTable = pgTable(
  'schedule',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    taskId: text('task_id')
      .notNull()
      .references(() => savedTaskTable.id, { onDelete: 'cascade' }),
    cron: text('cron').notNull(),
    timezone: text('timezone').notNull(),
    /** A tick is skipped while the run of the one before is still going. */
    exclusive: boolean('exclusive').notNull().default(true),
    nextFireAt: timestamp('next_fire_at', { withTimezone: true }),
    lastFiredAt: timestamp('last_fired_at', { withTimezone: true }),
    lastRunId: text('last_run_id'),
    pausedAt: timestamp('paused_at', { withTimezone: true }),
    pausedReason: text('paused_reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('schedule_due_idx').on(t.nextFireAt)],
);
export type Schedule = typeof scheduleTable.$inferSelect;

export const FIRE_OUTCOMES = ['started', 'skipped', 'paused'] as const;
export type FireOutcome = (typeof FIRE_OUTCOMES)[number];

/** One row a tick of a schedule: the key that makes a tick fire once however many workers look. */
export const scheduleFireTable = pgTable(
  'schedule_fire',
  {
    scheduleId: text('schedule_id')
      .notNull()
      .references(() => scheduleTable.id, { onDelete: 'cascade' }),
    tick: timestamp('tick', { withTimezone: true }).notNull(),
    outcome: text('outcome', { enum: FIRE_OUTCOMES }),
    reason: text('reason'),
    runId: text('run_id'),
    firedAt: timestamp('fired_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.scheduleId, t.tick] })],
);
export type ScheduleFire = typeof scheduleFireTable.$inferSelect;

export const PIPELINE_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'ABORTING', 'ABORTED'] as const;
export type PipelineStatus = (typeof PIPELINE_STATUSES)[number];

/**
 * Pipelines (src/workflows/pipelines.ts): ordered steps, each a run of a tool whose input comes from
 * the rows of the step before, quoted and held as one amount before the first step starts. The hold
 * columns are what is left of that amount: each step's run takes its own hold out of it.
 */
export const pipelineTable = pgTable(
  'pipeline',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    status: text('status', { enum: PIPELINE_STATUSES }).notNull(),
    statusMessage: text('status_message').notNull().default(''),
    /** `budget_exhausted` when its hold ran out before its last step; null otherwise. */
    stoppedReason: text('stopped_reason'),
    /** The steps as checked at the start: each `{ tool, input, link }` (src/workflows/pipelines.ts). */
    steps: jsonb('steps').notNull(),
    /** The step running now (or the last one that ran), from 0. */
    step: integer('step').notNull().default(0),
    /** What each step was quoted at the start, micro-USD: the upper bound of its cost. */
    quotedMicros: jsonb('quoted_micros').notNull(),
    /** What the start held, all steps together (at most the quote: less when the wallet held less). */
    heldMicros: bigint('held_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    holdPlanMicros: bigint('hold_plan_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    holdPurchasedMicros: bigint('hold_purchased_micros', { mode: 'bigint' }).notNull().default(sql`0`),
    datasetName: text('dataset_name'),
    onlyNew: boolean('only_new').notNull().default(false),
    taskId: text('task_id'),
    scheduleId: text('schedule_id'),
    webhookUrl: text('webhook_url'),
    webhookSecret: text('webhook_secret'),
    /** Destinations its joined table is delivered to when it ends (src/destinations). */
    destinationIds: text('destination_ids').array(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
  },
  (t) => [index('pipeline_account_created_idx').on(t.accountId, t.createdAt.desc(), t.id.desc())],
);
export type Pipeline = typeof pipelineTable.$inferSelect;

/**
 * Saved lead searches (src/workflows/saved-searches.ts): a name and a lead database filter, kept for the
 * whole account; `created_by` is the console user who saved it (null when saved with an API key, or once
 * that user is deleted).
 */
export const savedSearchTable = pgTable(
  'saved_search',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accountTable.id, { onDelete: 'cascade' }),
    createdBy: text('created_by').references(() => appUserTable.id, { onDelete: 'set null' }),
    name: text('name').notNull(),
    /** The lead database's parameters (the LeadFilter), as its zod schema reads them. */
    filter: jsonb('filter').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('saved_search_name_idx').on(t.accountId, t.name)],
);
export type SavedSearch = typeof savedSearchTable.$inferSelect;
