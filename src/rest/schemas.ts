import { z } from 'zod';
import { RUN_STATUSES } from '../../db/schema/runs.ts';

/**
 * The bodies of the REST routes of runs (the declared endpoints keep theirs in src/endpoints/schemas.ts):
 * response shapes, checked against live responses by test/openapi.test.ts, and the error body.
 */

const timestamp = z.iso.datetime({ offset: true });

/** Every 4xx/5xx answer. */
export const errorBody = z
  .object({
    error: z
      .object({
        code: z.string().describe('Stable machine-readable code, e.g. validation_failed, unauthenticated, insufficient_funds.'),
        message: z.string().describe('What went wrong and what to do about it.'),
        details: z.unknown().optional().describe('For validation_failed: one {path, message} per bad field. Other codes may carry data of their own.'),
      })
      .strict(),
    filters_not_applied_yet: z.array(z.string()).optional().describe('The lead database filters that cannot be applied yet (409 filters_not_applied_yet).'),
  })
  .strict()
  .meta({ examples: [{ error: { code: 'validation_failed', message: 'count: must be at least 500', details: [{ path: 'count', message: 'must be at least 500' }] } }] });

export const runStatus = z.enum(RUN_STATUSES).describe('READY (waiting behind the concurrency limit), RUNNING, SUCCEEDED, FAILED, ABORTING, ABORTED or TIMED-OUT; the last four end a run.');

/** The spec's Run object (status and cancel routes, MCP check_run_status and cancel_run). */
export const runView = z
  .object({
    runId: z.string(),
    status: runStatus,
    statusMessage: z.string().describe('Human-readable progress text.'),
    handled: z.int().describe('Items processed so far.'),
    requested: z.int().describe('Items requested.'),
    runTimeSecs: z.number().nullable().describe('Null while the run is going.'),
    outputUrl: z.string().nullable().describe('The download route of the results; null while the run is going.'),
    expiresAt: timestamp.nullable().describe('When the results stop being downloadable (48 hours after the end); null while the run is going.'),
  })
  .strict();

/** Answer of every tool start route; tools add fields of their own (see each route). */
export const runStart = z
  .looseObject({
    runId: z.string(),
    status: z.enum(['READY', 'RUNNING']).describe('RUNNING, or READY when the account already has its maximum of runs going.'),
    message: z.string(),
    estimatedCost: z.number().describe('USD held from the wallet at start; the run is billed on actual results and the rest is released.'),
    webhookSecret: z.string().optional().describe('Signing secret of the run\'s webhook, present when webhookUrl was sent; shown once.'),
    search_translation: z.record(z.string(), z.unknown()).optional().describe('What a link sent as input was read as (map-search and people-search URLs).'),
  })
  .describe('The run started. Further fields depend on the tool (e.g. emailCount, totalLeads, nextOffset, the id of a linked run).');

export const overviewRunStart = z.object({ runId: z.string(), status: z.enum(['READY', 'RUNNING']) }).strict();
export const overviewRun = z.object({ status: runStatus, handled: z.int() }).strict();

/** A result row of a run: the tool's columns (see docs/tools.md). */
export const resultRow = z.record(z.string(), z.unknown());
export const resultRows = z.array(resultRow);

