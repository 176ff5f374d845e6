import { z } from 'zod';
import { RUN_STATUSES, RUN_STOP_REASONS } from '../../db/tables/runs.ts';
import { peopleSearchTranslation } from '../endpoints/schemas.ts';
import { COST_TEXTS } from '../runs/quote.ts';

/**
 * The bodies of the REST routes of runs (the declared endpoints keep theirs in src/endpoints/schemas.ts):
 * response shapes, checked against live responses by test/faces/rest/openapi.test.ts, and the error body.
 */

const timestamp = z.iso.datetime({ offset: true });

/** Every 4xx/5xx answer. */
export const errorBody = z
  .object({
    error: z
      .object({
        code: z
          .string()
          .describe('Stable machine-readable code, e.g. validation_failed, unauthenticated, insufficient_funds.'),
        message: z.string().describe('What went wrong and what to do about it.'),
        details: z
          .array(
            z
              .object({
                path: z.string().describe('The field, dotted (contacts.0.email); "" for the request as a whole.'),
                message: z.string(),
              })
              .strict(),
          )
          .optional()
          .describe(
            'One {path, message} per problem: each bad or unknown field of validation_failed, ' +
              'each link parameter of no_usable_filters, each filter of filters_not_applied_yet.',
          ),
      })
      .strict(),
    filters_not_applied_yet: z
      .array(z.string())
      .optional()
      .describe('The lead database filters that cannot be applied yet (409 filters_not_applied_yet).'),
    search_translation: peopleSearchTranslation.optional().describe('How the url was read (400 no_usable_filters).'),
    payment: z
      .object({
        payment_intent: z.string().nullable().describe('The Stripe PaymentIntent (`pi_…`).'),
        status: z.string().optional().describe('Its status at Stripe.'),
        client_secret: z
          .string()
          .nullable()
          .optional()
          .describe('402 payment_requires_action: for Stripe.js `confirmCardPayment` in the customer’s browser.'),
        next_action: z
          .record(z.string(), z.unknown())
          .nullable()
          .optional()
          .describe('402 payment_requires_action: Stripe’s `next_action`, when it gave one.'),
        decline_code: z
          .string()
          .nullable()
          .optional()
          .describe('402 payment_failed: why the bank declined (`insufficient_funds`, …).'),
        code: z
          .string()
          .nullable()
          .optional()
          .describe('402 payment_failed: Stripe’s error code (`card_declined`, …).'),
      })
      .strict()
      .optional()
      .describe('The card payment a 402 payment_failed or payment_requires_action is about (docs/payments.md).'),
  })
  .strict()
  .meta({
    examples: [
      {
        error: {
          code: 'validation_failed',
          message: 'count: must be at least 500',
          details: [{ path: 'count', message: 'must be at least 500' }],
        },
      },
    ],
  });

export const runStatus = z
  .enum(RUN_STATUSES)
  .describe(
    'READY (waiting behind the concurrency limit), RUNNING, SUCCEEDED, ' +
      'FAILED, ABORTING, ABORTED or TIMED-OUT; the last four end a run.',
  );

export const runStopReason = z
  .enum(RUN_STOP_REASONS)
  .describe(
    'budget_exhausted: the USD held for the run (estimatedCost) was used up, so it stopped early with status ' +
      'SUCCEEDED, keeping and billing the rows it has; buy credits and start another run for more. cancelled: ' +
      'the run was cancelled (status ABORTED). time_limit: it reached its longest run time (status TIMED-OUT). ' +
      'upstream_failed: the external source it ran on failed, was aborted on its side or could not be reached ' +
      '(status FAILED, or ABORTED). Rows stored before the stop are kept and billed in every case.',
  );

/** The spec's Run object (status and cancel routes, MCP check_run_status and cancel_run). */
export const runView = z
  .object({
    runId: z.string(),
    status: runStatus,
    statusMessage: z.string().describe('Human-readable progress text.'),
    complete: z
      .boolean()
      .nullable()
      .describe(
        'Whether the run did all it was asked: true when it ended SUCCEEDED with no stoppedReason, false for ' +
          'any other end (a SUCCEEDED run whose hold was used up included); null while the run is going.',
      ),
    stoppedReason: runStopReason
      .nullable()
      .describe(
        'Why the run ended before it was done; null while it is going, when it ran to completion, and when it ' +
          'FAILED on an error of its own (statusMessage says which).',
      ),
    handled: z.int().describe('Items processed so far.'),
    requested: z.int().describe('Items requested.'),
    runTimeSecs: z.number().nullable().describe('Null while the run is going.'),
    outputUrl: z.string().nullable().describe('The download route of the results; null while the run is going.'),
    expiresAt: timestamp
      .nullable()
      .describe('When the results stop being downloadable (48 hours after the end); null while the run is going.'),
    suppressed: z
      .int()
      .optional()
      .describe('Rows about people on a suppression list (opted out, erased), dropped: not returned, not billed.'),
    cost: z
      .number()
      .optional()
      .describe(
        'USD charged, once the run has ended (its hold is released at the same time): ' +
          'billed_units × price_rule.unit_price.',
      ),
    billed_units: z
      .int()
      .optional()
      .describe(
        'Units of the price rule charged, once the run has ended (rows where something was found, ' +
          'for rules that bill only those; 1 for a flat price).',
      ),
    price_rule: z
      .object({
        text: z.string().describe('The price as the tool states it, e.g. "0.0039 USD per lead".'),
        unit: z.string().describe('What one billed unit is, e.g. "lead".'),
        unit_price: z.number().describe('USD per unit.'),
      })
      .strict()
      .optional()
      .describe('The price rule the run was billed by, once it has ended.'),
  })
  .strict();

/** Answer of every tool start route; tools add fields of their own (see each route). */
export const runStart = z
  .looseObject({
    runId: z.string(),
    status: z
      .enum(['READY', 'RUNNING'])
      .describe('RUNNING, or READY when the account already has its maximum of runs going.'),
    message: z.string(),
    estimatedCost: z.number().describe(COST_TEXTS.estimatedCost),
    uncappedCost: z.number().optional().describe(COST_TEXTS.uncappedCost),
    webhookSecret: z
      .string()
      .optional()
      .describe("Signing secret of the run's webhook, present when webhookUrl was sent; shown once."),
    search_translation: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('What a link sent as input was read as (map-search and people-search URLs).'),
  })
  .describe(
    'The run started. Further fields depend on the tool (e.g. ' +
      'emailCount, totalLeads, nextOffset, the id of a linked run).',
  );

export const overviewRunStart = z.object({ runId: z.string(), status: z.enum(['READY', 'RUNNING']) }).strict();
export const overviewRun = z.object({ status: runStatus, handled: z.int() }).strict();

/** A result row of a run: the tool's columns (see docs/tools.md). */
export const resultRow = z.record(z.string(), z.unknown());
export const resultRows = z.array(resultRow);
