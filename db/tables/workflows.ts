import { boolean, index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { accountTable } from './accounts.ts';

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
