import { sql } from 'drizzle-orm';
import { bigint, boolean, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Readiness of each catalog dataset. While a dataset is being (re)built `ready` is false; the lead
 * database answers 409 `filters_not_applied_yet` for company filters while `companies` is not ready.
 */
export const datasetStateTable = pgTable('dataset_state', {
  dataset: text('dataset').primaryKey(),
  ready: boolean('ready').notNull().default(true),
  rowCount: bigint('row_count', { mode: 'number' }).notNull().default(sql`0`),
  refreshedAt: timestamp('refreshed_at', { withTimezone: true }).notNull().defaultNow(),
});
export type DatasetState = typeof datasetStateTable.$inferSelect;
