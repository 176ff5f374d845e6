import { z } from 'zod';
import { PIPELINE_STATUSES } from '../../../db/tables/workflows.ts';
import { RUN_STOP_REASONS } from '../../../db/tables/runs.ts';
import { DOWNLOAD_LINK_SECS, signedFilePath } from '../../runs/download-links.ts';
import { assertNotExpired, datasetExportParams } from '../../runs/exports.ts';
import { AppError } from '../../shared/errors.ts';
import { parseParams } from '../../shared/params.ts';
import { cancelPipeline } from '../../workflows/pipeline-run.ts';
import {
  findPipeline,
  getPipeline,
  isPipelineEnded,
  listPipelines,
  PIPELINES_PATH,
  type PipelineView,
  pipelineInput,
  preparePipeline,
  quotePipeline,
  startPipeline,
} from '../../workflows/pipelines.ts';
import { defineEndpoint, type RestRequest } from '../define.ts';

const idOf = (request: RestRequest) => request.params.id ?? '';
const idIn = (input: string | Record<string, unknown>) =>
  typeof input === 'string' ? input : String(input.pipeline ?? '');

const stepRun = z
  .object({
    id: z.string(),
    tool: z.string(),
    status: z.string(),
    statusMessage: z.string(),
    stoppedReason: z.enum(RUN_STOP_REASONS).nullable(),
    handled: z.number(),
    requested: z.number(),
    itemCount: z.number(),
    estimatedCost: z.number(),
    cost: z.number(),
    skippedDelivered: z.number(),
  })
  .describe('The step’s run, as GET /api/v1/scrape/status/{runId} shows it in full.');

const pipelineView_ = z
  .object({
    id: z.string().describe('plp_…'),
    status: z.enum(PIPELINE_STATUSES),
    statusMessage: z.string(),
    stoppedReason: z
      .enum(['budget_exhausted'])
      .nullable()
      .describe('budget_exhausted: its hold ran out before its last step.'),
    step: z.number().describe('The step running now (or the last that ran), from 0.'),
    steps: z.array(
      z.object({
        index: z.number(),
        tool: z.string(),
        title: z.string(),
        input: z.record(z.string(), z.unknown()).describe('The first step’s whole input; a later step’s other fields.'),
        from: z
          .object({ column: z.string(), field: z.string(), description: z.string() })
          .nullable()
          .describe('What feeds it: the column of the step before, and the input field it fills.'),
        quotedCost: z.number().describe('Its upper bound, quoted at the start, USD.'),
        run: stepRun.nullable().describe('Its run, once it has started.'),
      }),
    ),
    quotedCost: z.number().describe('Every step’s upper bound together, USD.'),
    heldCost: z.number().describe('What the start held, USD (less than quotedCost when the wallet held less).'),
    cost: z.number().describe('What the steps’ runs have been charged so far, USD.'),
    itemCount: z.number().describe('Rows the steps delivered so far, together.'),
    datasetName: z.string().nullable(),
    onlyNew: z.boolean(),
    taskId: z.string().nullable(),
    scheduleId: z.string().nullable(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
    expiresAt: z.string().nullable().describe('When its table (its steps’ rows) is deleted.'),
  })
  .describe('A pipeline, with each step’s run.');

/** The REST and MCP answer of a pipeline: its view, step runs trimmed to what a poll needs. */
const respondPipeline = (p: PipelineView) => ({
  pipeline: {
    ...p,
    steps: p.steps.map((step) => ({
      ...step,
      run: step.run
        ? {
            id: step.run.id,
            tool: step.run.tool,
            status: step.run.status,
            statusMessage: step.run.statusMessage,
            stoppedReason: step.run.stoppedReason,
            handled: step.run.handled,
            requested: step.run.requested,
            itemCount: step.run.itemCount,
            estimatedCost: step.run.estimatedCost,
            cost: step.run.cost,
            skippedDelivered: step.run.skippedDelivered,
          }
        : null,
    })),
  },
});

const pipelineArg = z.object({ pipeline: z.string().min(1).describe('The pipeline’s id (plp_…).') }).strict();
const EXAMPLE = {
  steps: [
    {
      tool: 'maps',
      input: { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 20 },
    },
    { tool: 'website-finder', input: { jobTitle: 'Owner' } },
    { tool: 'email-validator' },
  ],
};
const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const startAccountPipeline = defineEndpoint({
  name: 'startPipeline',
  title: 'Start a pipeline',
  tag: 'Workflows',
  description:
    'Ordered steps, each a tool fed by the rows of the step before through a declared link (docs/tools.md, ' +
    'Step links). The whole pipeline is quoted before it starts, step by step as an upper bound, and held as one ' +
    'amount; each step is an ordinary run (visible, cancellable, billed as itself) taking its hold out of the ' +
    'pipeline’s, and what is left is released at the end. Its output is one table: each first-step row joined with ' +
    'what the later steps found for it (GET /api/v1/pipelines/{id}/download).',
  rest: {
    path: PIPELINES_PATH,
    methods: ['post'],
    status: 201,
    idempotent: true,
    input: (request) => request.body,
    example: EXAMPLE,
    ok: 'The pipeline, its first step started.',
  },
  graphql: { field: 'startPipeline' },
  mcp: {
    tool: 'start_pipeline',
    toolset: 'workflows',
    title: 'Start a pipeline',
    description: [
      'Chains tools: each step after the first is fed by the rows of the one before (maps → website-finder → ' +
        'email-validator). Quote it first with quote_pipeline; follow it with get_pipeline; its joined table is ' +
        'download_pipeline.',
    ],
    example: EXAMPLE,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  request: pipelineInput,
  response: z.object({ pipeline: pipelineView_ }).strict(),
  errors: {
    400: ['validation_failed', 'cost_limit_exceeded'],
    402: ['insufficient_funds'],
    403: ['plan_required'],
    422: ['idempotency_key_reused'],
  },
  handler: ({ core, principal, idempotencyKey }, body: unknown) =>
    startPipeline(core, principal, body, { idempotencyKey }),
  prepare: ({ core, principal }, body: unknown) => preparePipeline(core, principal, body),
  respond: respondPipeline,
});

export const quoteAccountPipeline = defineEndpoint({
  name: 'quotePipeline',
  title: 'Quote a pipeline',
  tag: 'Workflows',
  description:
    'Every check a start makes, and its quote: each step’s upper bound (the most items the steps before can give ' +
    'it) and what a start would hold now. Nothing is started or held.',
  rest: {
    path: `${PIPELINES_PATH}/quote`,
    methods: ['post'],
    input: (request) => request.body,
    example: EXAMPLE,
    ok: 'The quote.',
  },
  graphql: { field: 'quotePipeline' },
  mcp: {
    tool: 'quote_pipeline',
    toolset: 'workflows',
    title: 'Quote a pipeline',
    description: ['What a pipeline would hold, step by step, and whether the wallet covers it; nothing starts.'],
    example: EXAMPLE,
    annotations: READ,
  },
  request: pipelineInput,
  response: z
    .object({
      steps: z.array(z.object({ tool: z.string(), mostItems: z.number(), quotedCost: z.number() })),
      estimatedCost: z.number().describe('What a start would hold now, USD.'),
      uncappedCost: z.number().optional().describe('Every step’s upper bound together, when the wallet holds less.'),
      walletCovers: z.boolean(),
      message: z.string(),
    })
    .strict(),
  errors: { 400: ['validation_failed', 'cost_limit_exceeded'], 403: ['plan_required'] },
  handler: ({ core, principal }, body: unknown) => quotePipeline(core, principal, body),
});

export const listAccountPipelines = defineEndpoint({
  name: 'listPipelines',
  title: "The account's pipelines",
  tag: 'Workflows',
  rest: { path: PIPELINES_PATH, methods: ['get'], input: () => undefined, ok: 'The newest 50, newest first.' },
  graphql: { field: 'pipelines' },
  mcp: {
    tool: 'list_pipelines',
    toolset: 'workflows',
    title: 'List pipelines',
    description: ['The account’s newest pipelines with their steps’ runs.'],
    annotations: READ,
  },
  response: z.object({ pipelines: z.array(pipelineView_) }).strict(),
  errors: {},
  handler: ({ core, principal }) => listPipelines(core.db, principal.accountId, { limit: 50 }),
  respond: (pipelines) => ({ pipelines: pipelines.map((p) => respondPipeline(p).pipeline) }),
});

export const getAccountPipeline = defineEndpoint({
  name: 'getPipeline',
  title: 'A pipeline',
  tag: 'Workflows',
  rest: { path: `${PIPELINES_PATH}/:id`, methods: ['get'], input: idOf, ok: 'The pipeline with its steps’ runs.' },
  graphql: { field: 'pipeline' },
  mcp: {
    tool: 'get_pipeline',
    toolset: 'workflows',
    title: 'Pipeline status',
    description: ['A pipeline’s status, its current step and each step’s run.'],
    args: pipelineArg,
    example: { pipeline: 'plp_0000000000000000' },
    annotations: READ,
  },
  response: z.object({ pipeline: pipelineView_ }).strict(),
  errors: { 404: ['pipeline_not_found'] },
  handler: ({ core, principal }, input: string | Record<string, unknown>) =>
    getPipeline(core.db, principal.accountId, idIn(input)),
  respond: respondPipeline,
});

export const cancelAccountPipeline = defineEndpoint({
  name: 'cancelPipeline',
  title: 'Cancel a pipeline',
  tag: 'Workflows',
  description:
    'Cancels the running step (its rows so far are kept and billed) and no later step starts; the rest of the ' +
    'pipeline’s hold is released once the step has stopped (status ABORTING until then, then ABORTED).',
  rest: {
    path: `${PIPELINES_PATH}/:id/cancel`,
    methods: ['post'],
    input: idOf,
    ok: 'The pipeline, ABORTING or ABORTED.',
  },
  graphql: { field: 'cancelPipeline' },
  mcp: {
    tool: 'cancel_pipeline',
    toolset: 'workflows',
    title: 'Cancel a pipeline',
    description: ['Stops a pipeline: its running step is cancelled and the rest of its hold released.'],
    args: pipelineArg,
    example: { pipeline: 'plp_0000000000000000' },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  response: z.object({ pipeline: pipelineView_ }).strict(),
  errors: { 404: ['pipeline_not_found'], 409: ['pipeline_finished'] },
  handler: ({ core, principal }, input: string | Record<string, unknown>) =>
    cancelPipeline(core, principal, idIn(input)),
  respond: respondPipeline,
});

export const pipelineDownloadLink = defineEndpoint({
  name: 'pipelineDownloadLink',
  title: 'A link to a pipeline’s table',
  tag: 'Workflows',
  description:
    `A signed link to the pipeline’s joined table in \`format\`, working without a key for ` +
    `${DOWNLOAD_LINK_SECS / 60} ` +
    'minutes (for a browser or a program without the key); refused until the pipeline has ended.',
  rest: {
    path: `${PIPELINES_PATH}/:id/link`,
    methods: ['get'],
    input: (request) => ({ pipeline: idOf(request), ...(request.query as object) }),
    ok: 'The link.',
  },
  mcp: {
    tool: 'download_pipeline',
    toolset: 'workflows',
    title: 'Download a pipeline’s table',
    description: [
      'A link to the joined table of an ended pipeline: each first-step row with what the later steps found for it.',
    ],
    args: pipelineArg.extend(datasetExportParams.shape),
    example: { pipeline: 'plp_0000000000000000', format: 'csv' },
    annotations: READ,
  },
  request: datasetExportParams,
  response: z.object({ url: z.string(), expiresAt: z.string() }).strict(),
  errors: {
    400: ['validation_failed'],
    404: ['pipeline_not_found'],
    409: ['run_not_finished'],
    410: ['results_expired'],
  },
  handler: async ({ core, principal }, input: Record<string, unknown>) => {
    const { format } = parseParams(datasetExportParams, { format: input.format });
    const pipeline = await findPipeline(core.db, principal.accountId, String(input.pipeline ?? ''));
    if (!isPipelineEnded(pipeline.status))
      throw new AppError(409, 'run_not_finished', 'The pipeline has not ended yet: its table is ready once it has.');
    assertNotExpired(pipeline, core.clock());
    const path = await signedFilePath(core, principal, pipeline.id, format);
    return {
      url: `${core.config.publicUrl}${path}`,
      expiresAt: new Date(core.clock().getTime() + DOWNLOAD_LINK_SECS * 1000).toISOString(),
    };
  },
});
