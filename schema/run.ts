import { z } from 'zod';
import { RUN_STATUSES, type RunStatus } from '../db/schema/runs.ts';
import { isTerminal, outputUrl, runTimeSecs, snapshotOf, type RunSnapshot } from '../src/runs/view.ts';
import { encodeRunCursor, getRun, listRuns, readRunItems } from '../src/runs/runs.ts';
import { cancelRun, followAccountRuns, followRunItems, type RunItemsBatch } from '../src/runs/control.ts';
import type { RunEvent } from '../src/runs/events.ts';
import { builder } from './builder.ts';
import type { GraphQLContext } from './context.ts';

export const RunStatusEnum = builder.enumType('RunStatus', {
  description: 'READY (queued) → RUNNING → SUCCEEDED | FAILED | ABORTED | TIMED-OUT; ABORTING while a cancel takes effect.',
  values: Object.fromEntries(RUN_STATUSES.map((s) => [s.replace('-', '_'), { value: s }])) as Record<string, { value: RunStatus }>,
});

export const RunRef = builder.objectRef<RunSnapshot>('Run');

RunRef.implement({
  description: 'One execution of a tool. Its id is the same runId the REST routes use.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The runId.' }),
    tool: t.exposeString('tool'),
    status: t.field({ type: RunStatusEnum, resolve: (run) => run.status }),
    statusMessage: t.exposeString('statusMessage'),
    handled: t.exposeInt('handled', { description: 'Items processed so far.' }),
    requested: t.exposeInt('requested', { description: 'Items requested.' }),
    itemCount: t.exposeInt('itemCount', { description: 'Result rows stored so far.' }),
    runTimeSecs: t.float({ nullable: true, resolve: (run) => runTimeSecs(run) }),
    estimatedCost: t.exposeFloat('estimatedCost', { description: 'USD estimated and held at start.' }),
    cost: t.exposeFloat('cost', { description: 'USD charged for the results so far; final once the run has ended.' }),
    outputUrl: t.string({ nullable: true, resolve: (run, _, ctx) => outputUrl(ctx.core.config.publicUrl, run) }),
    createdAt: t.field({ type: 'DateTime', resolve: (run) => run.createdAt }),
    startedAt: t.field({ type: 'DateTime', nullable: true, resolve: (run) => run.startedAt }),
    finishedAt: t.field({ type: 'DateTime', nullable: true, resolve: (run) => run.finishedAt }),
    expiresAt: t.field({ type: 'DateTime', nullable: true, resolve: (run) => run.expiresAt }),
    items: t.field({
      type: ['JSON'],
      description: 'Result rows in order, as JSON objects.',
      args: {
        offset: t.arg.int({ defaultValue: 0, validate: z.number().int().min(0) }),
        limit: t.arg.int({ defaultValue: 50, validate: z.number().int().min(1).max(100) }),
      },
      // Rows are leaves, so their cost is the field's own: one unit per row asked for.
      complexity: (args) => ({ field: args.limit ?? 50, multiplier: 1 }),
      resolve: (run, args, ctx) => readRunItems(ctx.core, run, { offset: args.offset ?? 0, limit: args.limit ?? 50 }),
    }),
  }),
});

builder.queryField('run', (t) =>
  t.field({
    type: RunRef,
    nullable: true,
    description: "One of the caller's runs; null when there is no such run in this account.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, args, ctx) => ctx.loaders.run.load(String(args.id)),
  }),
);

builder.queryField('runs', (t) =>
  t.connection({
    type: RunRef,
    description: "The caller's runs, newest first.",
    args: { status: t.arg({ type: RunStatusEnum, required: false }) },
    complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 20, 100) }),
    validate: z
      .object({ first: z.number().int().min(1).max(100).nullish(), last: z.null().optional(), before: z.null().optional() })
      .loose()
      .refine((a) => a.last == null && a.before == null, 'runs pages forward only: use first and after'),
    resolve: async (_, args, ctx) => {
      const { runs, hasNextPage } = await listRuns(ctx.core.db, ctx.principal.accountId, {
        first: args.first ?? 20,
        after: args.after,
        status: args.status,
      });
      const edges = runs.map((run) => ({ cursor: encodeRunCursor(run), node: run }));
      return {
        edges,
        pageInfo: { hasNextPage, hasPreviousPage: false, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
      };
    },
  }),
);

/** Current state first, then every change; completes after the terminal status. */
async function* followRun(ctx: GraphQLContext, id: string): AsyncGenerator<RunSnapshot> {
  const events = ctx.core.events.subscribe('runProgress', id);
  try {
    let current = snapshotOf(await getRun(ctx.core.db, ctx.principal.accountId, id));
    yield current;
    if (isTerminal(current.status)) return;
    for await (const next of events) {
      const stale = !isTerminal(next.status) && next.handled < current.handled;
      if (stale) continue;
      current = next;
      yield current;
      if (isTerminal(current.status)) return;
    }
  } finally {
    await events.return();
  }
}

builder.subscriptionField('runProgress', (t) =>
  t.field({
    type: RunRef,
    description: 'The run now, then every progress change; completes after SUCCEEDED, FAILED, ABORTED or TIMED-OUT.',
    args: { id: t.arg.id({ required: true }) },
    subscribe: (_, args, ctx) => followRun(ctx, String(args.id)),
    resolve: (run) => run,
  }),
);


builder.mutationField('cancelRun', (t) =>
  t.field({
    type: RunRef,
    description:
      'Cancels a run: a waiting run ends ABORTED at once, a running one becomes ABORTING and ends ABORTED within seconds, keeping and billing the rows already stored. Error code `not_cancellable` for tools that cannot be cancelled, `run_finished` once it has ended.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_, args, ctx) => cancelRun(ctx.core, ctx.principal, String(args.id)),
  }),
);

const RunEventKindEnum = builder.enumType('RunEventKind', {
  values: { CREATED: { value: 'created' }, PROGRESS: { value: 'progress' }, FINISHED: { value: 'finished' } } as const,
});

const RunEventRef = builder.objectRef<RunEvent>('RunEvent').implement({
  description: 'A change of one of the account’s runs.',
  fields: (t) => ({
    kind: t.field({ type: RunEventKindEnum, resolve: (e) => e.kind }),
    run: t.field({ type: RunRef, resolve: (e) => e.run }),
  }),
});

builder.subscriptionField('runEvents', (t) =>
  t.field({
    type: RunEventRef,
    description: 'Every run of the account from now on: created, progress, finished; from any gateway or worker process.',
    subscribe: (_, __, ctx) => followAccountRuns(ctx.core, ctx.principal),
    resolve: (event) => event,
  }),
);

const RunItemsBatchRef = builder.objectRef<RunItemsBatch>('RunItemsBatch').implement({
  description: 'Result rows of a run in order: `items[i]` is row `offset + i`.',
  fields: (t) => ({
    offset: t.exposeInt('offset'),
    items: t.field({ type: ['JSON'], resolve: (b) => b.items }),
    run: t.field({ type: RunRef, resolve: (b) => b.run }),
  }),
});

builder.subscriptionField('runItems', (t) =>
  t.field({
    type: RunItemsBatchRef,
    description: 'The rows already stored from `fromOffset`, then each batch as it is stored; completes after the last row of a finished run.',
    args: { id: t.arg.id({ required: true }), fromOffset: t.arg.int({ defaultValue: 0, validate: z.number().int().min(0) }) },
    subscribe: (_, args, ctx) => followRunItems(ctx.core, ctx.principal, String(args.id), args.fromOffset ?? 0),
    resolve: (batch) => batch,
  }),
);
