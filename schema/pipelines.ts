import type { GraphQLSchema } from 'graphql';
import { PIPELINE_STATUSES } from '../db/tables/workflows.ts';
import {
  cancelAccountPipeline,
  getAccountPipeline,
  listAccountPipelines,
  quoteAccountPipeline,
  startAccountPipeline,
} from '../src/endpoints/api/pipelines.ts';
import { graphqlFieldOf } from '../src/endpoints/define.ts';
import { signedFilePath } from '../src/runs/download-links.ts';
import { assertNotExpired, type ExportFormat } from '../src/runs/exports.ts';
import { AppError, ValidationError } from '../src/shared/errors.ts';
import { cursorTime } from '../src/shared/params.ts';
import { STEP_LINKS, type StepLink } from '../src/tools/steps.ts';
import {
  findPipeline,
  getPipeline,
  isPipelineEnded,
  listPipelines,
  type PipelineQuote,
  type PipelineView,
  quotePipeline,
  startPipeline,
} from '../src/workflows/pipelines.ts';
import { cancelPipeline } from '../src/workflows/pipeline-run.ts';
import { builder } from './builder.ts';
import { DownloadFormatEnum } from './console.ts';
import { AFTER_DESCRIPTION, connectionOf, connectionType, FIRST_DESCRIPTION, pageSize } from './connection.ts';
import type { GraphQLContext } from './context.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { NodeRef, registerNode } from './node.ts';
import { RunRef, ToolEnum } from './run.ts';
import { decodeToolInput } from './tools.ts';

const MAX_PAGE = 50;

const PipelineStatusEnum = builder.enumType('PipelineStatus', {
  description: 'Where a pipeline is.',
  values: Object.fromEntries(
    PIPELINE_STATUSES.map((s) => [
      s,
      {
        value: s,
        description: {
          RUNNING: 'A step is running or waiting for a slot.',
          SUCCEEDED: 'Every step with rows to work on ran (its hold may have run out: `stoppedReason`).',
          FAILED: 'A step failed; the steps after it did not run.',
          ABORTING: 'Cancelled: its running step is stopping.',
          ABORTED: 'Cancelled; the rest of its hold was released.',
        }[s],
      },
    ]),
  ) as Record<string, { value: (typeof PIPELINE_STATUSES)[number]; description: string }>,
});

type Step = PipelineView['steps'][number];

const StepLinkRef = builder.objectRef<NonNullable<Step['from']>>('PipelineStepLink').implement({
  description: 'What feeds a step: a column of the rows of the step before, filling a field of its input.',
  fields: (t) => ({
    column: t.exposeString('column', { description: 'The column read from each row of the step before.' }),
    field: t.exposeString('field', { description: 'The input field the values fill.' }),
    description: t.exposeString('description', { description: 'The link in words.' }),
  }),
});

const PipelineStepRef = builder.objectRef<Step>('PipelineStep').implement({
  description: 'One step of a pipeline: a tool, and its run once it has started.',
  fields: (t) => ({
    index: t.exposeInt('index', { description: 'Its place, from 0.' }),
    tool: t.field({ type: ToolEnum, description: 'The tool it runs.', resolve: (s) => s.tool }),
    title: t.exposeString('title', { description: 'The tool’s name in words.' }),
    input: t.field({
      type: 'JSON',
      description: 'The first step’s whole input; a later step’s other fields (as REST and MCP take them).',
      resolve: (s) => s.input,
    }),
    from: t.field({
      type: StepLinkRef,
      nullable: true,
      description: 'What feeds it from the step before; null for the first.',
      resolve: (s) => s.from,
    }),
    quotedCost: t.field({
      type: 'Money',
      description: 'Its upper bound, quoted at the start.',
      resolve: (s) => s.quotedCost,
    }),
    run: t.field({
      type: RunRef,
      nullable: true,
      description: 'Its run, once started: follow it, cancel it, page its rows like any run.',
      resolve: (s) => s.run,
    }),
  }),
});

export const PipelineRef = builder.objectRef<PipelineView>('Pipeline');
PipelineRef.implement({
  description:
    'Ordered steps, each a tool fed by the rows of the step before (`nextSteps` of a run lists the links). Quoted ' +
    'before it starts and held as one amount; each step is an ordinary run taking its hold out of the pipeline’s. ' +
    'Its table joins each first-step row with what the later steps found for it (`downloadPath`).',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'plp_…: its global id.' }),
    status: t.field({ type: PipelineStatusEnum, description: 'Where it is.', resolve: (p) => p.status }),
    statusMessage: t.exposeString('statusMessage', { description: 'Where it is, in words.' }),
    budgetExhausted: t.boolean({
      description: 'Its hold ran out before its last step (the wallet held less than the quote).',
      resolve: (p) => p.stoppedReason === 'budget_exhausted',
    }),
    step: t.exposeInt('step', { description: 'The step running now (or the last that ran), from 0.' }),
    steps: t.field({ type: [PipelineStepRef], description: 'Its steps in order.', resolve: (p) => p.steps }),
    quotedCost: t.field({
      type: 'Money',
      description: 'Every step’s upper bound together.',
      resolve: (p) => p.quotedCost,
    }),
    heldCost: t.field({
      type: 'Money',
      description: 'What the start held (less than quotedCost when the wallet held less).',
      resolve: (p) => p.heldCost,
    }),
    cost: t.field({ type: 'Money', description: 'What its steps’ runs were charged so far.', resolve: (p) => p.cost }),
    itemCount: t.exposeInt('itemCount', { description: 'Rows its steps delivered so far, together.' }),
    datasetName: t.exposeString('datasetName', { nullable: true, description: 'The dataset its first step adds to.' }),
    onlyNew: t.exposeBoolean('onlyNew', { description: 'Whether its first step delivers only new rows.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When it started.', resolve: (p) => p.createdAt }),
    finishedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it ended.',
      resolve: (p) => p.finishedAt,
    }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When its table (its steps’ rows) is deleted.',
      resolve: (p) => p.expiresAt,
    }),
    downloadPath: t.string({
      nullable: true,
      description:
        'A signed link (5 minutes, no key needed) to its joined table in `format`, as a path on this server; null ' +
        'until it ends, error RESULTS_EXPIRED after its rows are deleted.',
      args: { format: t.arg({ type: DownloadFormatEnum, required: true, description: 'The file format.' }) },
      resolve: (p, { format }, ctx) => pipelinePath(ctx, p, format),
    }),
  }),
});

async function pipelinePath(ctx: GraphQLContext, p: PipelineView, format: ExportFormat) {
  if (!isPipelineEnded(p.status)) return null;
  assertNotExpired(await findPipeline(ctx.core.db, ctx.principal.accountId, p.id), ctx.core.clock());
  return signedFilePath(ctx.core, ctx.principal, p.id, format);
}

registerNode('plp', 'Pipeline', {
  keepsPrefix: true,
  localId: /^plp_[A-Za-z0-9]{1,64}$/,
  load: (ids, ctx) =>
    Promise.all(ids.map((id) => getPipeline(ctx.core.db, ctx.principal.accountId, id).catch(() => null))),
});

const PipelineConnectionRef = connectionType<PipelineView>('Pipeline', PipelineRef, {
  description: 'A page of the account’s pipelines, newest first.',
  totalCount: 'Pipelines on this page.',
});

const cursorOf = (p: PipelineView) => Buffer.from(`${p.createdAt}|${p.id}`).toString('base64url');
function afterCursor(after: string | null | undefined): { createdAt: Date; id: string } | undefined {
  if (!after) return undefined;
  const [at, id] = Buffer.from(after, 'base64url').toString().split('|');
  // Only a time this API writes: a date Postgres cannot hold is no cursor (cursorTime).
  const createdAt = cursorTime(at);
  if (!id || !createdAt)
    throw new AppError(400, 'validation_failed', 'after is not a cursor of this list', [
      { path: 'after', message: 'is not a cursor of this list' },
    ]);
  return { createdAt, id };
}

builder.queryField(graphqlFieldOf(listAccountPipelines), (t) =>
  t.field({
    type: PipelineConnectionRef,
    description: 'The account’s pipelines, newest first.',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_PAGE, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 20, MAX_PAGE) }),
    resolve: async (_, args, ctx) => {
      const limit = pageSize(args.first, { max: MAX_PAGE, byDefault: 20 });
      const page = await listPipelines(ctx.core.db, ctx.principal.accountId, {
        limit: limit + 1,
        before: afterCursor(args.after),
      });
      const items = page.slice(0, limit);
      return connectionOf(items, { cursorOf, hasNextPage: page.length > limit, totalCount: items.length });
    },
  }),
);

builder.queryField(graphqlFieldOf(getAccountPipeline), (t) =>
  t.field({
    type: PipelineRef,
    nullable: true,
    description: 'A pipeline by id (plp_…); null when the account has none.',
    args: { id: t.arg.id({ required: true, description: 'Its id.' }) },
    resolve: (_, args, ctx) => getPipeline(ctx.core.db, ctx.principal.accountId, String(args.id)).catch(() => null),
  }),
);

export const PipelineStepInputRef = builder.inputType('PipelineStepInput', {
  description: 'A step of a pipeline to start.',
  fields: (t) => ({
    tool: t.field({ type: ToolEnum, required: true, description: 'The tool it runs.' }),
    input: t.field({
      type: 'JSON',
      description:
        'The first step: the tool’s whole input, as its start mutation’s `input` takes it. A later step: its other ' +
        'fields (e.g. jobTitle); the field the step before fills is left out.',
    }),
    column: t.string({ description: 'The column of the step before that feeds it, when several can.' }),
  }),
});

const StartPipelineInputRef = builder.inputType('StartPipelineInput', {
  description: 'A pipeline to start or quote.',
  fields: (t) => ({
    steps: t.field({ type: [PipelineStepInputRef], required: true, description: 'Its steps, 2 to 5, in order.' }),
    datasetName: t.string({ description: 'The dataset its first step adds its rows to.' }),
    onlyNew: t.boolean({ description: 'Only rows new to the dataset go on; later steps run only for them.' }),
    maxCostUsd: t.field({
      type: 'Money',
      description: 'Refuses the start (COST_LIMIT_EXCEEDED) when quoted over this many US dollars.',
    }),
    destinations: t.idList({ description: 'Destinations (dest_…) its joined table is delivered to when it ends.' }),
  }),
});

type StepArg = { tool: string; input?: unknown; column?: string | null };
type PipelineArg = {
  steps: StepArg[];
  datasetName?: string | null;
  onlyNew?: boolean | null;
  maxCostUsd?: string | null;
  destinations?: (string | number)[] | null;
};

/**
 * The pipeline as REST takes it: each step's input decoded from its tool's GraphQL input (enum values
 * by name); a later step's partial input decoded with its fed field standing in, then left out.
 */
export function decodePipeline(schema: GraphQLSchema, arg: PipelineArg): Record<string, unknown> {
  const steps = arg.steps.map((step, index) => {
    const at = ['steps', String(index), 'input'];
    if (
      step.input !== undefined &&
      step.input !== null &&
      (typeof step.input !== 'object' || Array.isArray(step.input))
    )
      throw new ValidationError([{ path: at.join('.'), message: 'must be an object: the tool’s input' }]);
    const input = (step.input ?? {}) as Record<string, unknown>;
    let decoded: unknown = input;
    if (index === 0) decoded = step.input === undefined ? {} : decodeToolInput(schema, step.tool, input, at);
    else {
      const fed = FED_SAMPLES[step.tool];
      if (fed && !(fed.field in input)) {
        const full = decodeToolInput(schema, step.tool, { ...input, [fed.field]: [fed.sample] }, at) as Record<
          string,
          unknown
        >;
        delete full[fed.field];
        decoded = full;
      }
    }
    return { tool: step.tool, input: decoded, ...(step.column ? { column: step.column } : {}) };
  });
  const rest = Object.fromEntries(
    Object.entries({
      datasetName: arg.datasetName,
      onlyNew: arg.onlyNew,
      maxCostUsd: arg.maxCostUsd === null || arg.maxCostUsd === undefined ? undefined : Number(arg.maxCostUsd),
      destinations: arg.destinations?.map(String),
    }).filter(([, v]) => v !== null && v !== undefined),
  );
  return { steps, ...rest };
}

/** A value standing for the fed field of each tool a link feeds (their samples, src/tools/steps.ts). */
const FED_SAMPLES: Record<string, Pick<StepLink, 'field' | 'sample'>> = Object.fromEntries(
  STEP_LINKS.map((l) => [l.to, { field: l.field, sample: l.sample }]),
);

type PipelinePayload = { pipeline?: PipelineView; userErrors: UserError[] };
const pipelinePayload = (name: string, what: string) =>
  builder.objectRef<PipelinePayload>(name).implement({
    description: `What \`${what}\` answers.`,
    fields: (t) => ({
      pipeline: t.field({
        type: PipelineRef,
        nullable: true,
        description: 'The pipeline; null when refused.',
        resolve: (p) => p.pipeline ?? null,
      }),
      userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
    }),
  });

builder.mutationField(graphqlFieldOf(startAccountPipeline), (t) =>
  t.field({
    type: pipelinePayload('StartPipelinePayload', 'startPipeline'),
    description:
      'Starts a pipeline: every step checked and quoted first (user errors VALIDATION_FAILED at `steps.N…`, ' +
      'COST_LIMIT_EXCEEDED, INSUFFICIENT_FUNDS, PLAN_REQUIRED), its quote held as one amount, its first step started.',
    args: {
      input: t.arg({ type: StartPipelineInputRef, required: true, description: 'The pipeline.' }),
      idempotencyKey: t.arg.string({
        description: 'A retry with the same key within 24 hours answers the first start.',
      }),
    },
    resolve: (_, args, ctx, info) =>
      mutationPayload(
        async () => ({
          pipeline: await startPipeline(
            ctx.core,
            ctx.principal,
            decodePipeline(info.schema, args.input as PipelineArg),
            {
              idempotencyKey: args.idempotencyKey ?? undefined,
            },
          ),
        }),
        ['input'],
      ),
  }),
);

const PipelineQuoteRef = builder.objectRef<PipelineQuote>('PipelineQuote').implement({
  description: 'What a pipeline would hold; nothing was started or held.',
  fields: (t) => ({
    steps: t.field({
      type: [
        builder.objectRef<PipelineQuote['steps'][number]>('PipelineStepQuote').implement({
          description: 'One step’s upper bound.',
          fields: (s) => ({
            tool: s.field({ type: ToolEnum, description: 'Its tool.', resolve: (q) => q.tool }),
            mostItems: s.exposeInt('mostItems', { description: 'The most items the steps before can give it.' }),
            quotedCost: s.field({ type: 'Money', description: 'Its upper bound.', resolve: (q) => q.quotedCost }),
          }),
        }),
      ],
      description: 'Each step’s upper bound.',
      resolve: (q) => q.steps,
    }),
    estimatedCost: t.field({
      type: 'Money',
      description: 'What a start would hold now.',
      resolve: (q) => q.estimatedCost,
    }),
    uncappedCost: t.field({
      type: 'Money',
      nullable: true,
      description: 'Every step’s bound together, when the wallet holds less.',
      resolve: (q) => q.uncappedCost ?? null,
    }),
    walletCovers: t.exposeBoolean('walletCovers', { description: 'Whether the wallet holds the whole quote now.' }),
    message: t.exposeString('message', { description: 'The quote in words.' }),
  }),
});

builder.mutationField(graphqlFieldOf(quoteAccountPipeline), (t) =>
  t.field({
    type: builder.objectRef<{ quote?: PipelineQuote; userErrors: UserError[] }>('QuotePipelinePayload').implement({
      description: 'What `quotePipeline` answers.',
      fields: (f) => ({
        quote: f.field({
          type: PipelineQuoteRef,
          nullable: true,
          description: 'The quote.',
          resolve: (p) => p.quote ?? null,
        }),
        userErrors: f.field({
          type: [UserErrorRef],
          description: USER_ERRORS_DESCRIPTION,
          resolve: (p) => p.userErrors,
        }),
      }),
    }),
    description: 'Quotes a pipeline with every check its start makes; nothing starts or is held.',
    args: { input: t.arg({ type: StartPipelineInputRef, required: true, description: 'The pipeline.' }) },
    resolve: (_, args, ctx, info) =>
      mutationPayload(
        async () => ({
          quote: await quotePipeline(ctx.core, ctx.principal, decodePipeline(info.schema, args.input as PipelineArg)),
        }),
        ['input'],
      ),
  }),
);

builder.mutationField(graphqlFieldOf(cancelAccountPipeline), (t) =>
  t.field({
    type: pipelinePayload('CancelPipelinePayload', 'cancelPipeline'),
    description:
      'Cancels a pipeline: its running step is cancelled (rows so far kept and billed), no later step starts, and ' +
      'the rest of its hold is released once the step has stopped. User errors PIPELINE_FINISHED, PIPELINE_NOT_FOUND.',
    args: { id: t.arg.id({ required: true, description: 'Its id (plp_…).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(
        async () => ({ pipeline: await cancelPipeline(ctx.core, ctx.principal, String(args.id)) }),
        ['id'],
      ),
  }),
);
