import { z } from 'zod';
import { examplesOverride } from '../shared/field-meta.ts';
import { RUN_STATUSES } from '../../db/tables/runs.ts';
import { fromZodError } from '../shared/errors.ts';
import { assertKnownFields } from '../shared/fields.ts';
import { MAX_WAIT_SECS } from './limits.ts';
import { COST_TEXTS, startQuote } from '../runs/quote.ts';

/**
 * JSON Schemas of the MCP tools (2020-12, the dialect the specification assumes without `$schema`),
 * derived from zod, and the shapes of the answers the MCP face builds itself.
 */

export type JsonSchema = {
  type: 'object';
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
  [key: string]: unknown;
};

/** Keywords the client checks strictly that data gathered from the web may not meet (an odd email, a date). */
const LOOSE_ON_OUTPUT = new Set(['format', 'pattern']);

function withoutKeywords(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutKeywords);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, v]) => !(LOOSE_ON_OUTPUT.has(key) && typeof v === 'string'))
      .map(([key, v]) => [key, withoutKeywords(v)]),
  );
}

/** The JSON Schema of a tool's arguments (`io: 'input'`) or of its answer (`io: 'output'`, formats left out). */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, {
    io,
    target: 'draft-2020-12',
    unrepresentable: 'any',
    override: examplesOverride,
  }) as JsonSchema;
  return io === 'output' ? (withoutKeywords(json) as JsonSchema) : json;
}

/** Arguments checked like any face's: `validation_failed` naming each bad or unknown field. */
export function parseArgs<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  assertKnownFields(schema, args);
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw fromZodError(parsed.error);
  return parsed.data;
}

/** Seconds a call waits for a run to end (check_run_status, a start), at most MAX_WAIT_SECS; 0 answers at once. */
export const waitSecsArg = (description: string) =>
  z
    .number()
    .int('must be a whole number')
    .min(0, 'must be at least 0')
    .max(MAX_WAIT_SECS, `must be at most ${MAX_WAIT_SECS}`)
    .default(0)
    .describe(description);

export const STOP_REASONS = ['budget_exhausted', 'cancelled', 'time_limit', 'upstream_failed'] as const;

/** A run as the MCP tools answer it (check_run_status, cancel_run, a start that waited). */
export const mcpRun = z
  .object({
    runId: z.string(),
    status: z
      .enum(RUN_STATUSES)
      .describe('READY (waiting for a free slot), RUNNING, ABORTING; ended: SUCCEEDED, FAILED, ABORTED, TIMED-OUT.'),
    statusMessage: z.string().describe('What the run is doing, or how it ended, in words.'),
    handled: z.int().describe('Items processed so far.'),
    requested: z.int().describe('Items asked for.'),
    rows: z.int().optional().describe('Result rows stored so far.'),
    runTimeSecs: z.number().nullable().describe('How long it ran; null while it runs.'),
    expiresAt: z.string().nullable().describe('When its rows are deleted (48 hours after the end); null until then.'),
    complete: z
      .boolean()
      .optional()
      .describe('Once ended: true when the run did everything asked, false when it stopped early (stoppedReason).'),
    stoppedReason: z
      .enum(STOP_REASONS)
      .nullable()
      .optional()
      .describe(
        'Why an ended run stopped early: budget_exhausted (the amount held for it was spent: top up the wallet), ' +
          'cancelled, time_limit or upstream_failed (the data source failed); null when it completed.',
      ),
    cost: z.number().optional().describe('USD charged, once it ended: billedUnits × priceRule.unitPrice.'),
    billedUnits: z.int().optional().describe('Units charged, once it ended.'),
    datasetName: z.string().optional().describe('Its dataset.'),
    skippedDelivered: z.int().optional().describe('Rows skipped as not new to it, unbilled.'),
    suppressed: z.int().optional().describe('Rows about people who opted out, dropped and unbilled.'),
    priceRule: z
      .object({ text: z.string(), unit: z.string(), unitPrice: z.number().describe('USD per unit.') })
      .optional()
      .describe('The price the run was billed by, once it ended.'),
    nextStep: z.string().describe('What to call next.'),
  })
  .strict();
export type McpRun = z.output<typeof mcpRun>;

/** A page of a finished run's rows (download_results, and a start that waited for its run). */
export const rowsPage = z
  .object({
    runId: z.string(),
    offset: z.int().describe('Index of the first row of `rows`.'),
    count: z.int().describe('Rows in this answer.'),
    total: z.int().describe('Rows the run holds in all.'),
    rows: z.array(z.record(z.string(), z.unknown())).describe('The rows, with the columns asked for.'),
    nextOffset: z.int().nullable().describe('The offset of the next page; null after the last row.'),
    note: z.string().optional(),
  })
  .strict();

const money = {
  estimatedCost: z.number().describe(COST_TEXTS.estimatedCost),
  uncappedCost: z.number().optional().describe(COST_TEXTS.uncappedCost),
};

/**
 * What a start answers: the run, and when it ended within waitSecs, its state and first rows (as
 * check_run_status and download_results answer them; loosely typed here, to keep the tool list short).
 */
export const startAnswer = z
  .looseObject({
    runId: z.string(),
    status: z.enum(RUN_STATUSES),
    message: z.string(),
    ...money,
    run: z.looseObject({}).optional().describe('When it ended within waitSecs: as check_run_status answers.'),
    results: z.looseObject({}).optional().describe('Then its first rows, as download_results answers.'),
    nextStep: z.string(),
  })
  .describe('Tools add fields of their own.');

/** What the quote tool answers: a start's estimate, nothing started. */
export const quoteAnswer = z
  .looseObject({ tool: z.string().describe('The tool quoted.'), ...startQuote.shape })
  .describe(startQuote.description ?? '');
