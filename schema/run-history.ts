import { startRunAgain } from '../src/runs/again.ts';
import { RUN_LOG_KINDS, type RunLogEntry, type RunLogKind, runLog } from '../src/runs/log.ts';
import { getRun } from '../src/runs/read.ts';
import type { StartedRun } from '../src/runs/start.ts';
import { builder } from './builder.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { RunRef } from './run.ts';

/** A run's log (what its record tells of its life) and starting a run again with the same input. */

const KIND_TEXT: Record<RunLogKind, string> = {
  created: 'The run was created: by what, what it asked for and what it held.',
  started: 'It began working.',
  progress: 'What it is doing now, and what it has stored (a run in flight; no time).',
  finished: 'It ended: its status, its message, what it stored and why it stopped early, if it did.',
  settled: 'It was billed: the charge, and the rest of its hold released.',
  rows_deleted: 'Its rows were deleted, or when they will be (48 hours after its end).',
};

const RunLogKindEnum = builder.enumType('RunLogKind', {
  description: 'What a run log entry tells.',
  values: Object.fromEntries(
    RUN_LOG_KINDS.map((kind) => [kind.toUpperCase(), { value: kind, description: KIND_TEXT[kind] }]),
  ) as Record<string, { value: RunLogKind; description: string }>,
});

const RunLogEntryRef = builder.objectRef<RunLogEntry>('RunLogEntry').implement({
  description: 'An entry of a run’s log.',
  fields: (t) => ({
    at: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it happened (or, for rows still kept, when they will be deleted); null for PROGRESS.',
      resolve: (e) => e.at,
    }),
    kind: t.field({ type: RunLogKindEnum, description: 'What it tells.', resolve: (e) => e.kind }),
    message: t.exposeString('message', { description: 'The entry in words.' }),
  }),
});

builder.objectField(RunRef, 'log', (t) =>
  t.field({
    type: [RunLogEntryRef],
    description:
      'The run’s life as its record tells it, oldest first: created (by what, asked, held), began working, what ' +
      'it is doing (in flight) or how it ended (status, message, rows stored, dropped and skipped), billed, rows ' +
      'deleted. Nothing is kept beyond the run’s own record: there is no entry per batch.',
    resolve: async (run, _, ctx) =>
      runLog(await getRun(ctx.core.db, ctx.principal.accountId, run.id), ctx.core.clock()),
  }),
);

interface StartRunAgainPayload {
  started?: StartedRun;
  dryRun?: boolean;
  userErrors: UserError[];
}

const StartRunAgainPayloadRef = builder.objectRef<StartRunAgainPayload>('StartRunAgainPayload').implement({
  description: 'What `startRunAgain` answers.',
  fields: (t) => ({
    run: t.field({
      type: RunRef,
      nullable: true,
      description: 'The new run; null for a dry run and when refused.',
      resolve: (p) => (p.dryRun ? null : (p.started?.run ?? null)),
    }),
    estimatedCost: t.field({
      type: 'Money',
      nullable: true,
      description: 'What the start holds (or, for a dry run, would hold) of the wallet; null when refused.',
      resolve: (p) =>
        p.started
          ? ((p.started.start.extra?.estimatedCost as number | undefined) ?? p.started.run.estimatedCost)
          : null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField('startRunAgain', (t) =>
  t.field({
    type: StartRunAgainPayloadRef,
    description:
      'Starts the tool of one of the caller’s runs again with the same input (as the run was started, after ' +
      'defaults and caps), its dataset and its destinations: an ordinary start with its own estimate, hold and ' +
      'bill, refused as the tool’s own start mutation would be (INSUFFICIENT_FUNDS, PLAN_REQUIRED…). A per-run ' +
      'webhook is not carried over. NOT_FOUND for no such run in this account.',
    args: {
      id: t.arg.id({ required: true, description: 'The runId of the run to start again.' }),
      dryRun: t.arg.boolean({
        description: 'Answers what the start would hold (`estimatedCost`) and its `userErrors`; nothing starts.',
      }),
    },
    resolve: (_, args, ctx) =>
      mutationPayload(
        async () => ({
          started: await startRunAgain(ctx.core, ctx.principal, String(args.id), { dryRun: args.dryRun === true }),
          dryRun: args.dryRun === true,
        }),
        // A refusal of the stored input names its field as the tool's input does.
        (path) => path,
      ),
  }),
);
