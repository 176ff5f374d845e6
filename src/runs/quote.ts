/**
 * A start's quote: what it would hold and whether the wallet covers it, from a dry run of the start
 * (nothing is started or held), and the caller's cost limit that refuses a start quoted over it.
 */
import { z } from 'zod';
import { usdToMicros } from '../billing/money.ts';
import type { Principal } from '../accounts/accounts.ts';
import { dryRunStart, type StartDeps, type StartLimits } from './start.ts';

/** The most a caller may bound a start by, in USD (`maxCostUsd` on every face). */
export const MAX_COST_USD = { min: 0.01, max: 1_000_000 } as const;

export const MAX_COST_DESCRIPTION =
  'Refuses the start, with nothing started or held, when it is quoted over this many USD ' +
  `(${MAX_COST_USD.min} to ${MAX_COST_USD.max}).`;

/** A cost limit's value, as every face checks it. */
export const maxCostUsdSchema = z
  .number()
  .min(MAX_COST_USD.min, `must be at least ${MAX_COST_USD.min}`)
  .max(MAX_COST_USD.max, `must be at most ${MAX_COST_USD.max}`);

/** A cost limit in USD as the start's limits; no limit when absent. */
export const costLimit = (maxCostUsd: number | undefined): StartLimits =>
  maxCostUsd === undefined ? {} : { maxCostMicros: usdToMicros(maxCostUsd) };

/**
 * What a start's (or a quote's) two amounts mean, as every face describes them: REST's and MCP's
 * schemas, GraphQL's fields.
 */
export const COST_TEXTS = {
  estimatedCost:
    'USD held from the wallet at the start (for a quote, what a start would hold now): the most the run can ' +
    'be charged. It is billed on the rows delivered and the rest released.',
  uncappedCost:
    'USD everything asked would cost at the price, present only when the wallet (with the tool’s overdraft, ' +
    'where it has one) caps the hold below it: the run then stops once estimatedCost is spent ' +
    '(stoppedReason budget_exhausted).',
} as const;

/** The quote as every face answers it. */
export const startQuote = z
  .object({
    estimatedCost: z.number().describe(COST_TEXTS.estimatedCost),
    uncappedCost: z.number().optional().describe(COST_TEXTS.uncappedCost),
    walletCovers: z.boolean().describe('Whether the wallet can hold the whole estimate now.'),
    message: z.string().describe('The quote in words.'),
  })
  .describe('The quote of a start; nothing was started or held.');

export type StartQuote = z.infer<typeof startQuote>;

/**
 * Quotes a start of `toolName` with `raw` as its input: every check a start makes (input, plan,
 * cost limit, a wallet that can pay for one unit), rolled back.
 */
export async function quoteStart(
  core: StartDeps,
  principal: Principal,
  toolName: string,
  raw: unknown,
  limits: StartLimits = {},
): Promise<StartQuote> {
  const { start } = await dryRunStart(core, principal, toolName, raw, limits);
  const { estimatedCost, uncappedCost } = start.extra as { estimatedCost: number; uncappedCost?: number };
  const covers = uncappedCost === undefined;
  return {
    estimatedCost,
    ...(covers ? {} : { uncappedCost }),
    walletCovers: covers,
    message: covers
      ? `A start would hold ${estimatedCost} USD, the most it can cost; the wallet covers it.`
      : `Everything asked would cost ${uncappedCost} USD; the wallet covers ${estimatedCost} USD, ` +
        'so the run would stop once that is spent (budget_exhausted). Top up in the console (Billing) first.',
  };
}
