/**
 * Pipelines: ordered steps, each a run of a tool whose input comes from the rows of the step before
 * through a declared link (src/tools/steps.ts). Before the first step starts, the whole pipeline is
 * quoted, step by step, as an upper bound (the most rows each step can give the next) and held as one
 * amount; each step's run takes its own hold out of what is left, is billed as itself, and can be seen
 * and cancelled like any run. When a step's run ends, a job moves the pipeline on: the next step starts
 * with the values of the rows it delivered, or the pipeline ends and the rest of its hold is released.
 * Cancelling the pipeline cancels the running step. Its output is one table (pipeline-output.ts).
 */
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Transaction } from '../../db/client.ts';
import { type Pipeline, pipelineTable } from '../../db/tables/workflows.ts';
import type { Principal } from '../accounts/principal.ts';
import { idempotentWrite } from '../accounts/idempotency.ts';
import { holdForPipeline, passPipelineHold } from '../billing/hold.ts';
import { formatDollars, microsToNumber, usdToMicros } from '../billing/money.ts';
import { getBalances } from '../billing/wallet.ts';
import type { Core } from '../core.ts';
import { datasetName, onlyNew } from '../datasets/index.ts';
import { assertDestinations, destinationIds } from '../destinations/destinations.ts';
import { maxCostUsdSchema } from '../runs/quote.ts';
import { planToolRun, prepareStart, type StartDeps } from '../runs/start.ts';
import { AppError, type ErrorDetail, fromZodError, ValidationError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { assertStorable } from '../shared/params.ts';
import { getTool } from '../tools/index.ts';
import { findLink, nextSteps, rowsPerItem } from '../tools/steps.ts';

import { type PipelineStep, type PipelineView, pipelineView, STEP_TOOLS, stepRuns } from './pipeline-views.ts';

export const newPipelineId = () => `plp_${randomBase62(16)}`;

/** Steps a pipeline has at most. */
export const MAX_STEPS = 5;

export const pipelineStepInput = z
  .object({
    tool: z
      .enum(STEP_TOOLS, { message: `must be one of ${STEP_TOOLS.join(', ')}` })
      .describe('The tool the step runs, by name (maps, website-finder, email-validator, …).'),
    input: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'The first step: the tool’s whole input. A later step: its other fields (e.g. jobTitle); the field the ' +
          'step before fills is left out.',
      ),
    column: z
      .string()
      .optional()
      .describe('The column of the step before that feeds this step, when more than one can (nextSteps lists them).'),
  })
  .strict();

export const pipelineInput = z
  .object({
    steps: z
      .array(pipelineStepInput)
      .min(2, 'a pipeline has at least two steps')
      .max(MAX_STEPS, `a pipeline has at most ${MAX_STEPS} steps`)
      .describe('The steps in order; each after the first is fed by the rows of the one before.'),
    datasetName: datasetName.optional().describe('The dataset the first step adds its rows to.'),
    onlyNew: onlyNew
      .optional()
      .describe('Only rows new to the dataset are delivered by the first step; later steps run only for them.'),
    maxCostUsd: maxCostUsdSchema.optional().describe('Refuses the start when the pipeline is quoted over this.'),
    destinations: destinationIds
      .optional()
      .describe('Destinations (dest_…) its joined table is delivered to when it ends.'),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.steps[0] && value.steps[0].input === undefined)
      ctx.addIssue({ code: 'custom', path: ['steps', 0, 'input'], message: 'the first step needs its input' });
    if (value.onlyNew && !value.datasetName)
      ctx.addIssue({
        code: 'custom',
        path: ['onlyNew'],
        message: 'needs datasetName: the dataset whose rows are not new',
      });
  });
export type PipelineInput = z.output<typeof pipelineInput>;

interface PlannedStep extends PipelineStep {
  /** Upper bound of the step's cost, micro-USD. */
  quoted: bigint;
  /** The most items the step can be given (the first: what it asks for). */
  mostItems: number;
}

/** A step's refusal with its fields under `steps.N.input`. */
function underStep(err: unknown, index: number): never {
  if (err instanceof ValidationError) {
    const details = ((err.details ?? []) as ErrorDetail[]).map((d) => ({
      path: `steps.${index}.input${d.path ? `.${d.path}` : ''}`,
      message: d.message,
    }));
    throw new ValidationError(details, `Step ${index + 1}: ${err.message}`);
  }
  throw err;
}

/**
 * Checks and quotes every step, with no database: each step's input as its tool's start checks it,
 * each link between steps, and each step's cost as an upper bound: the first step's estimate, then each
 * later step's for the most values the rows before can give it (a step that could be given more than
 * its tool takes in a run is refused, naming the first step's size to lower).
 */
export function planPipeline(config: StartDeps['config'], principal: Principal, input: PipelineInput): PlannedStep[] {
  const planned: PlannedStep[] = [];
  let mostRows = 0;
  for (const [index, step] of input.steps.entries()) {
    const tool = getTool(step.tool);
    if (index === 0) {
      let plan: ReturnType<typeof planToolRun>;
      try {
        plan = planToolRun(config, principal, tool.name, step.input ?? {});
      } catch (err) {
        underStep(err, index);
      }
      planned.push({
        tool: tool.name,
        input: step.input ?? {},
        link: null,
        quoted: plan.estimated,
        mostItems: plan.requested,
      });
      mostRows = plan.requested * rowsPerItem(tool.name);
      continue;
    }
    const before = getTool(input.steps[index - 1]?.tool ?? '');
    const link = findLink(before.name, tool.name, step.column);
    if (!link) {
      const offered = nextSteps(before.name).map((l) => `${getTool(l.to).title} (from ${l.column})`);
      throw new ValidationError([
        {
          path: `steps.${index}.${step.column ? 'column' : 'tool'}`,
          message:
            `${before.title} rows cannot feed ${tool.title}${step.column ? ` from ${step.column}` : ''}; ` +
            (offered.length > 0
              ? `after ${before.title} can come: ${offered.join(', ')}`
              : `nothing can follow ${before.title}`),
        },
      ]);
    }
    const fixed = step.input ?? {};
    if (link.field in fixed)
      throw new ValidationError([
        {
          path: `steps.${index}.input.${link.field}`,
          message: `comes from the ${link.column} of step ${index}'s rows: leave it out`,
        },
      ]);
    const mostItems = mostRows * link.perRow;
    if (mostItems > link.max)
      throw new ValidationError([
        {
          path: `steps.${index}`,
          message:
            `could be given up to ${mostItems.toLocaleString('en-US')} ${link.what} by step ${index}, and ` +
            `${tool.title} takes at most ${link.max.toLocaleString('en-US')} a run: ask step 1 for fewer results`,
        },
      ]);
    let sample: ReturnType<typeof planToolRun>;
    try {
      sample = planToolRun(config, principal, tool.name, { ...fixed, [link.field]: [link.sample] });
    } catch (err) {
      underStep(err, index);
    }
    planned.push({
      tool: tool.name,
      input: fixed,
      link: { column: link.column, field: link.field },
      quoted: tool.price.estimate(sample.input, mostItems),
      mostItems,
    });
    mostRows = mostItems * rowsPerItem(tool.name);
  }
  return planned;
}

export function parsePipeline(raw: unknown): PipelineInput {
  assertStorable(raw);
  const parsed = pipelineInput.safeParse(raw ?? {});
  if (!parsed.success) throw fromZodError(parsed.error);
  return parsed.data;
}

const sum = (values: readonly bigint[]) => values.reduce((a, b) => a + b, 0n);

function assertWithinCost(input: PipelineInput, quoted: bigint) {
  if (input.maxCostUsd === undefined) return;
  const limit = usdToMicros(input.maxCostUsd);
  if (quoted <= limit) return;
  throw new AppError(
    400,
    'cost_limit_exceeded',
    `This pipeline is quoted at ${formatDollars(quoted)} USD, over the limit of ${formatDollars(limit)} USD it ` +
      'was given: nothing was started or held. Ask the first step for fewer results, or raise the limit.',
    [{ path: 'maxCostUsd', message: `the quote is ${formatDollars(quoted)} USD` }],
  );
}

/** A pipeline's quote as every face answers it: each step's upper bound, and what a start would hold. */
export interface PipelineQuote {
  steps: { tool: string; mostItems: number; quotedCost: number }[];
  estimatedCost: number;
  uncappedCost?: number;
  walletCovers: boolean;
  message: string;
}

/**
 * Quotes a pipeline: every check its start makes, and what it would hold (at most the wallet, as a
 * run's hold); nothing is started or held.
 */
export async function quotePipeline(core: StartDeps, principal: Principal, raw: unknown): Promise<PipelineQuote> {
  const input = parsePipeline(raw);
  const planned = planPipeline(core.config, principal, input);
  const quoted = sum(planned.map((s) => s.quoted));
  assertWithinCost(input, quoted);
  const wallet = await getBalances(core.db, principal.accountId);
  const balance = wallet.planMicros + wallet.purchasedMicros;
  const covers = !core.config.enforceLimits || balance >= quoted;
  const held = covers ? quoted : balance > 0n ? balance : 0n;
  const steps = planned.map((s) => ({ tool: s.tool, mostItems: s.mostItems, quotedCost: microsToNumber(s.quoted) }));
  return {
    steps,
    estimatedCost: microsToNumber(held),
    ...(covers ? {} : { uncappedCost: microsToNumber(quoted) }),
    walletCovers: covers,
    message: covers
      ? `A start would hold ${formatDollars(quoted)} USD for all ${planned.length} steps, the most they can cost; ` +
        'the wallet covers it.'
      : `All ${planned.length} steps could cost ${formatDollars(quoted)} USD; the wallet covers ` +
        `${formatDollars(held)} USD, so the pipeline would stop once that is spent. ` +
        'Top up in the console (Billing) first.',
  };
}

/** Where a pipeline came from besides a caller's start. */
export interface PipelineOrigin {
  taskId?: string;
  scheduleId?: string;
}

/**
 * Checks and quotes a pipeline's start with no database (400, 403; `cost_limit_exceeded` over its
 * `maxCostUsd`) and returns its write: in one transaction it creates the pipeline, holds its quote (at
 * most what the wallet holds; 402 when it cannot pay for one unit of the first step) and starts its
 * first step, whose run takes its hold out of the pipeline's.
 */
export function preparePipeline(
  core: StartDeps,
  principal: Principal,
  raw: unknown,
  origin: PipelineOrigin = {},
): (tx: Transaction) => Promise<PipelineView> {
  const input = parsePipeline(raw);
  const planned = planPipeline(core.config, principal, input);
  assertWithinCost(input, sum(planned.map((s) => s.quoted)));
  return async (tx) => {
    const pipeline = await createPipeline(core, tx, principal, input, planned, origin);
    return pipelineView(pipeline, await stepRuns(tx, pipeline.id));
  };
}

/**
 * Starts a pipeline (`preparePipeline`) as one of the account's writes. With an idempotency key, a
 * retry within 24 hours answers the first start (the key is shared with REST's route).
 */
export async function startPipeline(
  core: StartDeps,
  principal: Principal,
  raw: unknown,
  options: { idempotencyKey?: string; origin?: PipelineOrigin } = {},
): Promise<PipelineView> {
  const { body } = await idempotentWrite(
    core,
    { principal, key: options.idempotencyKey, scope: `POST ${PIPELINES_PATH}`, request: raw ?? null },
    () => preparePipeline(core, principal, raw, options.origin),
  );
  return body;
}

/** REST's route of pipeline starts, whose idempotency keys every face shares. */
export const PIPELINES_PATH = '/api/v1/pipelines';

async function createPipeline(
  core: StartDeps,
  tx: Transaction,
  principal: Principal,
  input: PipelineInput,
  planned: PlannedStep[],
  origin: PipelineOrigin,
): Promise<Pipeline> {
  const id = newPipelineId();
  const steps: PipelineStep[] = planned.map(({ tool, input: stepInput, link }) => ({ tool, input: stepInput, link }));
  const quoted = sum(planned.map((s) => s.quoted));
  const destinations = [...new Set(input.destinations ?? [])];
  await assertDestinations(tx, principal.accountId, destinations);
  const [created] = await tx
    .insert(pipelineTable)
    .values({
      id,
      accountId: principal.accountId,
      status: 'RUNNING',
      statusMessage: stepMessage(steps, 0),
      steps,
      quotedMicros: planned.map((s) => s.quoted.toString()),
      datasetName: input.datasetName ?? null,
      onlyNew: input.onlyNew ?? false,
      taskId: origin.taskId ?? null,
      scheduleId: origin.scheduleId ?? null,
      destinationIds: destinations.length > 0 ? destinations : null,
    })
    .returning();
  if (!created) throw new Error('the pipeline was not created');
  let pipeline = created;
  if (core.config.enforceLimits) {
    const held = await holdForPipeline(tx, principal.accountId, id, quoted);
    const [updated] = await tx
      .update(pipelineTable)
      .set({
        heldMicros: held.planMicros + held.purchasedMicros,
        holdPlanMicros: held.planMicros,
        holdPurchasedMicros: held.purchasedMicros,
      })
      .where(eq(pipelineTable.id, id))
      .returning();
    if (updated) pipeline = updated;
  }
  const first = steps[0] as PipelineStep;
  const body = {
    ...first.input,
    ...(pipeline.datasetName ? { datasetName: pipeline.datasetName, onlyNew: pipeline.onlyNew } : {}),
  };
  pipeline = await startStep(core, tx, principal, pipeline, 0, body);
  await announce(core, tx, pipeline);
  return pipeline;
}

const stepMessage = (steps: readonly PipelineStep[], index: number) =>
  `Step ${index + 1} of ${steps.length}: ${getTool(steps[index]?.tool ?? '').title}`;

/**
 * Starts step `index` with its start body, in the caller's transaction: passes the step's share of the
 * pipeline's hold (its estimate, at most what is left) to its run, which holds exactly that.
 */
export async function startStep(
  core: StartDeps,
  tx: Transaction,
  principal: Principal,
  pipeline: Pipeline,
  index: number,
  body: Record<string, unknown>,
): Promise<Pipeline> {
  const step = (pipeline.steps as PipelineStep[])[index] as PipelineStep;
  let hold = { planMicros: pipeline.holdPlanMicros, purchasedMicros: pipeline.holdPurchasedMicros };
  let holdAtMost: bigint | undefined;
  if (core.config.enforceLimits) {
    const { estimated } = planToolRun(core.config, principal, step.tool, body);
    const left = hold.planMicros + hold.purchasedMicros;
    // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
    holdAtMost = estimated < left ? estimated : left;
    hold = await passPipelineHold(tx, pipeline.accountId, pipeline.id, hold, holdAtMost, `passed to step ${index + 1}`);
  }
  const write = prepareStart(
    core,
    principal,
    step.tool,
    body,
    { holdAtMostMicros: holdAtMost },
    {
      taskId: pipeline.taskId ?? undefined,
      scheduleId: pipeline.scheduleId ?? undefined,
      pipeline: { id: pipeline.id, step: index },
    },
  );
  await write(tx);
  const [updated] = await tx
    .update(pipelineTable)
    .set({
      step: index,
      statusMessage: stepMessage(pipeline.steps as PipelineStep[], index),
      holdPlanMicros: hold.planMicros,
      holdPurchasedMicros: hold.purchasedMicros,
    })
    .where(eq(pipelineTable.id, pipeline.id))
    .returning();
  return updated ?? pipeline;
}

/** The pipeline's change to its account's subscribers, once `tx` commits. */
export async function announce(core: Pick<Core, 'events'>, tx: Transaction, pipeline: Pipeline) {
  await core.events.publishPipeline(tx, pipeline.accountId, {
    pipelineId: pipeline.id,
    status: pipeline.status,
    step: pipeline.step,
    at: new Date().toISOString(),
  });
}

export {
  findPipeline,
  getPipeline,
  isPipelineEnded,
  linkOf,
  listPipelines,
  type PipelineStep,
  type PipelineView,
  pipelineNotFound,
  pipelineView,
  STEP_TOOLS,
  stepRuns,
} from './pipeline-views.ts';
