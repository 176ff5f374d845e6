import type { RunSnapshot } from '../src/runs/view.ts';
import { getRun } from '../src/runs/read.ts';
import type { StartedRun } from '../src/runs/start.ts';
import { getTool } from '../src/tools/index.ts';
import { nextSteps, type StepLink } from '../src/tools/steps.ts';
import { runNextSteps, startNextStep } from '../src/workflows/pipeline-run.ts';
import { findPipeline, getPipeline, isPipelineEnded, type PipelineView } from '../src/workflows/pipelines.ts';
import { builder } from './builder.ts';
import { ToolInfoRef } from './console.ts';
import type { GraphQLContext } from './context.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { PipelineRef } from './pipelines.ts';
import { RunRef, ToolEnum, toolValue } from './run.ts';

/** A pipeline followed as a subscription, and the next steps of a finished run (src/tools/steps.ts). */

/** The pipeline now, then after each change of it or of one of its steps' runs, until it ends. */
async function* followPipeline(
  core: GraphQLContext['core'],
  accountId: string,
  id: string,
): AsyncGenerator<PipelineView> {
  // Following first: a change made while the pipeline is read is heard, not missed.
  const [own, runs] = await Promise.all([
    core.events.subscribe('pipelineEvents', accountId),
    core.events.subscribe('runEvents', accountId),
  ]);
  const changes = mergeChanges(own, runs, id);
  try {
    let view = await getPipeline(core.db, accountId, id);
    yield view;
    while (!isPipelineEnded(view.status)) {
      if ((await changes.next()).done) return;
      view = await getPipeline(core.db, accountId, id);
      yield view;
    }
  } finally {
    await Promise.all([own.return(), runs.return()]);
  }
}

/** One signal for each event about pipeline `id`: its own, or one of its steps' runs'. */
function mergeChanges(
  own: AsyncIterable<{ pipelineId: string }>,
  runs: AsyncIterable<{ run: RunSnapshot }>,
  id: string,
): AsyncIterator<void> {
  let wake: (() => void) | undefined;
  let pending = 0;
  let ended = false;
  const signal = () => {
    pending++;
    wake?.();
  };
  void (async () => {
    for await (const e of own) if (e.pipelineId === id) signal();
    ended = true;
    wake?.();
  })();
  void (async () => {
    for await (const e of runs) if (e.run.pipelineId === id) signal();
  })();
  return {
    async next() {
      while (pending === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
      if (pending === 0) return { done: true, value: undefined };
      // Changes that came together are read as one: the pipeline is read again once for them.
      pending = 0;
      return { done: false, value: undefined };
    },
  };
}

builder.subscriptionField('pipeline', (t) =>
  t.field({
    type: PipelineRef,
    description:
      'A pipeline now, then after every change of it or of its steps’ runs (rows, counts, status), from any worker ' +
      'process; completes once it has ended. PIPELINE_NOT_FOUND for another account’s id.',
    args: { id: t.arg.id({ required: true, description: 'Its id (plp_…).' }) },
    subscribe: async (_, args, ctx) => {
      await findPipeline(ctx.core.db, ctx.principal.accountId, String(args.id));
      return followPipeline(ctx.core, ctx.principal.accountId, String(args.id));
    },
    resolve: (view) => view,
  }),
);

interface NextStep {
  link: StepLink;
  values: number;
}

const NextStepRef = builder.objectRef<NextStep>('NextStep').implement({
  description: 'A tool a run’s rows can feed (a step link), with how many values they give it.',
  fields: (t) => ({
    tool: t.field({ type: ToolEnum, description: 'The tool fed.', resolve: (n) => n.link.to }),
    title: t.string({ description: 'The tool fed, in words.', resolve: (n) => getTool(n.link.to).title }),
    column: t.string({ description: 'The column of the run’s rows read.', resolve: (n) => n.link.column }),
    field: t.string({ description: 'The input field the values fill.', resolve: (n) => n.link.field }),
    description: t.string({ description: 'The link in words.', resolve: (n) => n.link.description }),
    values: t.exposeInt('values', { description: 'Distinct values the run’s rows give it (0 until the run ends).' }),
  }),
});

builder.objectField(RunRef, 'nextSteps', (t) =>
  t.field({
    type: [NextStepRef],
    description: 'The tools this run’s rows can feed, as a next step (`startNextStep`) or a pipeline’s next step.',
    resolve: async (run, _, ctx) =>
      runNextSteps(ctx.core.db, await getRun(ctx.core.db, ctx.principal.accountId, run.id)),
  }),
);

builder.objectField(RunRef, 'pipeline', (t) =>
  t.field({
    type: PipelineRef,
    nullable: true,
    description: 'The pipeline the run is a step of, if any.',
    resolve: (run, _, ctx) =>
      run.pipelineId ? getPipeline(ctx.core.db, ctx.principal.accountId, run.pipelineId).catch(() => null) : null,
  }),
);

type NextStepPayload = { started?: StartedRun; userErrors: UserError[] };
builder.mutationField('startNextStep', (t) =>
  t.field({
    type: builder.objectRef<NextStepPayload>('StartNextStepPayload').implement({
      description: 'What `startNextStep` answers.',
      fields: (f) => ({
        run: f.field({
          type: RunRef,
          nullable: true,
          description: 'The run started.',
          resolve: (p) => p.started?.run ?? null,
        }),
        userErrors: f.field({
          type: [UserErrorRef],
          description: USER_ERRORS_DESCRIPTION,
          resolve: (p) => p.userErrors,
        }),
      }),
    }),
    description:
      'Starts a tool fed by the rows of a finished run (one of its `nextSteps`): an ordinary run whose parent is the ' +
      'run. User errors VALIDATION_FAILED at `tool` (no link leads there) or `runId` (not ended, or nothing to feed).',
    args: {
      runId: t.arg.id({ required: true, description: 'The finished run.' }),
      tool: t.arg({ type: ToolEnum, required: true, description: 'The tool to feed.' }),
      column: t.arg.string({ description: 'The column to read, when several feed the tool.' }),
      input: t.arg({ type: 'JSON', description: 'The tool’s other fields (e.g. jobTitle), as REST takes them.' }),
    },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => ({
        started: await startNextStep(ctx.core, ctx.principal, String(args.runId), {
          tool: args.tool,
          column: args.column ?? undefined,
          input: (args.input as Record<string, unknown> | null) ?? undefined,
        }),
      })),
  }),
);

const ToolFeedRef = builder.objectRef<StepLink>('ToolFeed').implement({
  description: 'A step link out of a tool: a column of its rows feeding a field of another tool’s input.',
  fields: (t) => ({
    tool: t.string({ description: 'The tool fed, by name (as `ToolInfo.name`).', resolve: (l) => toolValue(l.to) }),
    title: t.string({ description: 'The tool fed, in words.', resolve: (l) => getTool(l.to).title }),
    column: t.string({ description: 'The column of this tool’s rows read.', resolve: (l) => l.column }),
    field: t.string({ description: 'The fed tool’s input field the values fill.', resolve: (l) => l.field }),
    description: t.string({ description: 'The link in words.', resolve: (l) => l.description }),
  }),
});

builder.objectField(ToolInfoRef, 'feeds', (t) =>
  t.field({
    type: [ToolFeedRef],
    description:
      'The tools this tool’s rows can feed, as a pipeline’s next step or a finished run’s (the step links of ' +
      'docs/tools.md).',
    resolve: (tool) => nextSteps(tool.name),
  }),
);
