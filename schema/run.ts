import { RUN_STATUSES, RUN_STOP_REASONS, type RunStatus, type RunStopReason } from '../db/tables/runs.ts';
import { outputUrl, priceRuleOf, runTimeSecs, type RunSnapshot } from '../src/runs/view.ts';
import { countRuns, encodeRunCursor, itemsRequest, listRuns } from '../src/runs/read.ts';
import { assertNotExpired } from '../src/runs/exports.ts';
import { isPlainView, MAX_SEARCH_CHARS, readRunRowsView } from '../src/runs/rows-view.ts';
import { followAccountRuns, followRun, followRunItems, type RunItemsBatch } from '../src/runs/follow.ts';
import { cancelRun } from '../src/runs/engine/index.ts';
import type { RunEvent } from '../src/events/topics.ts';
import { TOOLS } from '../src/tools/index.ts';
import { ValidationError } from '../src/shared/errors.ts';
import { builder } from './builder.ts';
import { AFTER_DESCRIPTION, connectionOf, connectionType, FIRST_DESCRIPTION, pageSize } from './connection.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { NodeRef, registerNode } from './node.ts';
import { resultRows, RunResultRef, type ResultRow } from './results.ts';

const STATUS_TEXT: Record<RunStatus, string> = {
  READY: 'Waiting for a slot: the account has its maximum of runs RUNNING; it starts first come, first served.',
  RUNNING: 'Working: rows are stored as they come.',
  SUCCEEDED: 'Ended normally; its rows are kept 48 hours.',
  FAILED: 'Ended on an error; `statusMessage` says which. Rows already stored are kept and billed.',
  ABORTING: 'Cancelled while running; ends ABORTED within seconds.',
  ABORTED: 'Cancelled; rows already stored are kept and billed.',
  'TIMED-OUT': 'Stopped at the tool’s longest run time; rows already stored are kept and billed.',
};

export const RunStatusEnum = builder.enumType('RunStatus', {
  description:
    'READY (queued) → RUNNING → SUCCEEDED | FAILED | ABORTED | TIMED_OUT; ABORTING while a cancel takes effect.',
  values: Object.fromEntries(
    RUN_STATUSES.map((s) => [s.replace('-', '_'), { value: s, description: STATUS_TEXT[s] }]),
  ) as Record<string, { value: RunStatus; description: string }>,
});

const STOP_REASON_TEXT: Record<RunStopReason, string> = {
  budget_exhausted:
    'The money held for the run (`estimatedCost`) was used up, so it stopped early; it ends SUCCEEDED with the ' +
    'rows it has, kept and billed. Buy credits and start another run for more.',
  cancelled: 'The run was cancelled (`cancelRun`); it ends ABORTED. Rows already stored are kept and billed.',
  time_limit:
    'The run reached the tool’s longest run time; it ends TIMED_OUT. Rows already stored are kept and billed.',
  upstream_failed:
    'The external source the run ran on failed, was aborted on its side or could not be reached; it ends FAILED ' +
    '(or ABORTED). Rows already stored are kept and billed.',
};

export const RunStopReasonEnum = builder.enumType('RunStopReason', {
  description: 'Why a run ended before it did all it was asked (`Run.stoppedReason`).',
  values: Object.fromEntries(
    RUN_STOP_REASONS.map((r) => [r.toUpperCase(), { value: r, description: STOP_REASON_TEXT[r] }]),
  ) as Record<string, { value: RunStopReason; description: string }>,
});

/** A tool name as an enum value: `lead-scraper` → LEAD_SCRAPER. */
export const toolValue = (name: string) => name.replace(/-/g, '_').toUpperCase();

export const ToolEnum = builder.enumType('Tool', {
  description: 'The tools of the registry (docs/tools.md); a run is one execution of one of them.',
  values: Object.fromEntries(
    TOOLS.map((tool) => [
      toolValue(tool.name),
      { value: tool.name, description: `${tool.title}: ${tool.description}` },
    ]),
  ) as Record<string, { value: string; description: string }>,
});

export const RunRef = builder.objectRef<RunSnapshot>('Run');

const PriceRuleRef = builder.objectRef<ReturnType<typeof priceRuleOf>>('PriceRule').implement({
  description: 'How a tool bills: what one unit is and its price.',
  fields: (t) => ({
    text: t.exposeString('text', { description: 'The price as the tool states it, e.g. "0.0039 USD per lead".' }),
    unit: t.exposeString('unit', { description: 'What one billed unit is, e.g. "lead".' }),
    unitPrice: t.field({ type: 'Money', description: 'The price of one unit.', resolve: (rule) => rule.unit_price }),
  }),
});

/** A run's rows are paged by their position: the cursor of row n stands for n. */
const rowCursor = (seq: number) => Buffer.from(`row:${seq}`).toString('base64url');
function rowAfter(after: string | null | undefined): number {
  if (!after) return 0;
  const match = /^row:(\d{1,9})$/.exec(Buffer.from(after, 'base64url').toString('utf8'));
  if (!match) throw new ValidationError([{ path: 'after', message: 'not a cursor returned by this API' }]);
  return Number(match[1]) + 1;
}

const RunResultConnectionRef = connectionType<ResultRow>('RunResult', RunResultRef as never, {
  description: 'A page of a run’s result rows, in the order they were stored.',
  totalCount: 'Rows the run has stored so far (its `itemCount`); with a `search`, the rows that match it.',
});

const MAX_ROWS = 100;

const SortDirectionEnum = builder.enumType('SortDirection', {
  description: 'Which way a sort goes.',
  values: {
    ASC: { value: 'asc', description: 'Ascending: A to Z, smallest first.' },
    DESC: { value: 'desc', description: 'Descending: Z to A, largest first.' },
  } as const,
});

const RunResultOrderRef = builder.inputType('RunResultOrder', {
  description: 'How a run’s rows are sorted: by one of its tool’s columns.',
  fields: (t) => ({
    column: t.string({
      required: true,
      description:
        'A column’s key (`ToolInfo.columns.key`, e.g. `review_count`); other keys are refused (VALIDATION_FAILED).',
    }),
    direction: t.field({ type: SortDirectionEnum, description: 'ASC (default) or DESC; empty values come last.' }),
  }),
});

RunRef.implement({
  description: 'One execution of a tool. Its id is the runId the REST routes use.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The runId: the run’s global id, the same in REST, MCP and the CLI.' }),
    tool: t.field({ type: ToolEnum, description: 'The tool the run executes.', resolve: (run) => run.tool }),
    input: t.field({
      type: 'JSON',
      description:
        'The input the run was started with, as the tool’s REST start body has it (after defaults and caps).',
      resolve: async (run, _, ctx) => ctx.loaders.runInput.load(run.id),
    }),
    status: t.field({ type: RunStatusEnum, description: 'Where the run stands.', resolve: (run) => run.status }),
    statusMessage: t.exposeString('statusMessage', {
      description: 'What the run is doing or how it ended, for people.',
    }),
    complete: t.exposeBoolean('complete', {
      nullable: true,
      description:
        'Whether the run did all it was asked: true when it ended SUCCEEDED with no `stoppedReason`; false for any ' +
        'other end, a SUCCEEDED run whose budget was used up included; null while it runs.',
    }),
    stoppedReason: t.field({
      type: RunStopReasonEnum,
      nullable: true,
      description:
        'Why the run ended before it was done; null while it runs, when it ran to completion, and when it FAILED ' +
        'on an error of its own (`statusMessage` says which).',
      resolve: (run) => run.stoppedReason,
    }),
    handled: t.exposeInt('handled', { description: 'Items processed so far.' }),
    requested: t.exposeInt('requested', { description: 'Items requested.' }),
    itemCount: t.exposeInt('itemCount', { description: 'Result rows stored so far.' }),
    runTimeSecs: t.float({
      nullable: true,
      description: 'Seconds from start to end, to the millisecond; null until the run ends.',
      resolve: (run) => runTimeSecs(run),
    }),
    estimatedCost: t.field({
      type: 'Money',
      description: 'Estimated and held when the run started.',
      resolve: (run) => run.estimatedCost,
    }),
    cost: t.field({
      type: 'Money',
      description: 'Charged for the rows so far; final once the run has ended.',
      resolve: (run) => run.cost,
    }),
    billedUnits: t.exposeInt('billedUnits', {
      description:
        'Units of the price rule in `cost`: cost = billedUnits × priceRule.unitPrice; final once the run has ended.',
    }),
    datasetName: t.exposeString('datasetName', {
      nullable: true,
      description: 'The account’s named dataset the run adds its rows to (`datasets`); null when it names none.',
    }),
    onlyNew: t.exposeBoolean('onlyNew', {
      description: 'Whether the run delivers only rows its dataset has not delivered before.',
    }),
    skippedDelivered: t.exposeInt('skippedDelivered', {
      description: 'Rows its dataset had delivered before, skipped (`onlyNew`): neither returned nor billed.',
    }),
    suppressed: t.exposeInt('suppressed', {
      description: 'Rows about people on a suppression list (opted out, erased), dropped: neither returned nor billed.',
    }),
    priceRule: t.field({
      type: PriceRuleRef,
      description: 'The price rule the run is billed by.',
      resolve: (run) => priceRuleOf(run.tool),
    }),
    outputUrl: t.string({
      nullable: true,
      description: 'Where the rows download (CSV, JSON, XLSX) once the run has ended; null before.',
      resolve: (run, _, ctx) => outputUrl(ctx.core.config.publicUrl, run),
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When the run was started.', resolve: (run) => run.createdAt }),
    startedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it began working.',
      resolve: (run) => run.startedAt,
    }),
    finishedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it ended; null while in flight.',
      resolve: (run) => run.finishedAt,
    }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When its rows are deleted (48 hours after the end); null while in flight.',
      resolve: (run) => run.expiresAt,
    }),
    results: t.field({
      type: RunResultConnectionRef,
      nullable: true,
      description:
        'The rows stored so far, typed by the run’s tool: in stored order, or sorted by a column (`orderBy`) and ' +
        'narrowed by a `search`; a cursor stands for a position in that view. Null with error RESULTS_EXPIRED ' +
        'once past `expiresAt`.',
      args: {
        first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_ROWS, 50) }),
        after: t.arg.string({ description: AFTER_DESCRIPTION }),
        orderBy: t.arg({
          type: RunResultOrderRef,
          description: 'Sorts the rows by a column (numbers as numbers, text ignoring case); default: stored order.',
        }),
        search: t.arg.string({
          description:
            `Only rows where some value contains this text, ignoring case (at most ${MAX_SEARCH_CHARS} ` +
            'characters); `totalCount` counts them.',
        }),
      },
      // Each row costs what its selection costs, once per row asked for.
      complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 50, MAX_ROWS) }),
      resolve: async (run, args, ctx) => {
        const limit = pageSize(args.first, { max: MAX_ROWS, byDefault: 50 });
        const offset = rowAfter(args.after);
        const view = { orderBy: args.orderBy, search: args.search };
        if (!isPlainView(view)) {
          const { rows, totalCount } = await readRunRowsView(ctx.core, run, view, { offset, limit: limit + 1 });
          return connectionOf(resultRows(run.tool, rows.slice(0, limit)), {
            cursorOf: (_, i) => rowCursor(offset + i),
            hasNextPage: rows.length > limit,
            totalCount,
          });
        }
        assertNotExpired(run, ctx.core.clock());
        // Batched across the runs of a list: one statement for every run's page.
        const rows = await ctx.loaders.runItems.load(itemsRequest(run, offset, limit + 1));
        return connectionOf(resultRows(run.tool, rows.slice(0, limit)), {
          cursorOf: (_, i) => rowCursor(offset + i),
          hasNextPage: rows.length > limit,
          totalCount: run.itemCount,
        });
      },
    }),
  }),
});

registerNode('run', 'Run', {
  localId: /^[A-Za-z0-9]{17}$/,
  load: (ids, ctx) => ctx.loaders.run.loadMany(ids).then((runs) => runs.map((r) => (r instanceof Error ? null : r))),
});

builder.queryField('run', (t) =>
  t.field({
    type: RunRef,
    nullable: true,
    description: "One of the caller's runs by its runId; null when there is no such run in this account.",
    args: { id: t.arg.id({ required: true, description: 'The runId (the run’s `id`).' }) },
    resolve: (_, args, ctx) => ctx.loaders.run.load(String(args.id)),
  }),
);

const RunConnectionRef = connectionType<RunSnapshot>('Run', RunRef, {
  description: 'A page of the caller’s runs, newest first.',
  totalCount: 'How many runs the account has (of the status asked for).',
});

const MAX_RUNS = 100;

builder.queryField('runs', (t) =>
  t.field({
    type: RunConnectionRef,
    description: "The caller's runs, newest first.",
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_RUNS, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
      status: t.arg({ type: RunStatusEnum, required: false, description: 'Only runs with this status.' }),
      tool: t.arg({ type: ToolEnum, required: false, description: 'Only runs of this tool.' }),
    },
    complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 20, MAX_RUNS) }),
    resolve: async (_, args, ctx) => {
      const first = pageSize(args.first, { max: MAX_RUNS, byDefault: 20 });
      const { runs, hasNextPage } = await listRuns(ctx.core.db, ctx.principal.accountId, {
        first,
        after: args.after,
        status: args.status,
        tool: args.tool,
      });
      for (const run of runs) ctx.loaders.run.prime(run.id, run);
      return connectionOf(runs, {
        cursorOf: encodeRunCursor,
        hasNextPage,
        totalCount: () => countRuns(ctx.core.db, ctx.principal.accountId, args.status, args.tool),
      });
    },
  }),
);

builder.subscriptionField('runProgress', (t) =>
  t.field({
    type: RunRef,
    description: 'The run now, then every progress change; completes after SUCCEEDED, FAILED, ABORTED or TIMED_OUT.',
    args: { id: t.arg.id({ required: true, description: 'The runId.' }) },
    subscribe: (_, args, ctx) => followRun(ctx.core, ctx.principal, String(args.id)),
    resolve: (run) => run,
  }),
);

interface CancelRunPayload {
  run?: RunSnapshot;
  userErrors: UserError[];
}

const CancelRunPayloadRef = builder.objectRef<CancelRunPayload>('CancelRunPayload').implement({
  description: 'What `cancelRun` answers.',
  fields: (t) => ({
    run: t.field({
      type: RunRef,
      nullable: true,
      description: 'The run after the cancel: ABORTED, or ABORTING while it stops; null when refused.',
      resolve: (p) => p.run ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField('cancelRun', (t) =>
  t.field({
    type: CancelRunPayloadRef,
    description:
      'Cancels a run: a waiting run ends ABORTED at once, a running one becomes ABORTING and ends ABORTED within ' +
      'seconds, keeping and billing the rows already stored. User errors NOT_CANCELLABLE for tools that cannot be ' +
      'cancelled, RUN_FINISHED once it has ended, NOT_FOUND for no such run in this account.',
    args: { id: t.arg.id({ required: true, description: 'The runId.' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => ({ run: await cancelRun(ctx.core, ctx.principal, String(args.id)) }), ['id']),
  }),
);

const RunEventKindEnum = builder.enumType('RunEventKind', {
  description: 'What happened to a run.',
  values: {
    CREATED: { value: 'created', description: 'The run was started.' },
    PROGRESS: { value: 'progress', description: 'The run changed: rows, counts, status or message.' },
    FINISHED: { value: 'finished', description: 'The run ended.' },
  } as const,
});

const RunEventRef = builder.objectRef<RunEvent>('RunEvent').implement({
  description: 'A change of one of the account’s runs.',
  fields: (t) => ({
    kind: t.field({ type: RunEventKindEnum, description: 'What happened.', resolve: (e) => e.kind }),
    run: t.field({ type: RunRef, description: 'The run as it is now.', resolve: (e) => e.run }),
  }),
});

builder.subscriptionField('runEvents', (t) =>
  t.field({
    type: RunEventRef,
    description:
      'Every run of the account from now on: created, progress, finished; from any gateway or worker process. Runs ' +
      'in flight come first.',
    subscribe: (_, __, ctx) => followAccountRuns(ctx.core, ctx.principal),
    resolve: (event) => event,
  }),
);

const RunItemsBatchRef = builder.objectRef<RunItemsBatch>('RunItemsBatch').implement({
  description: 'Result rows of a run in order: `results[i]` is row `offset + i`.',
  fields: (t) => ({
    offset: t.exposeInt('offset', { description: 'The position of the first row of `results` (from 0).' }),
    results: t.field({
      type: [RunResultRef],
      description: 'The rows, typed by the run’s tool as in `Run.results`.',
      resolve: (b) => resultRows(b.run.tool, b.items) as never,
    }),
    run: t.field({ type: RunRef, description: 'The run as it was when these rows were read.', resolve: (b) => b.run }),
  }),
});

builder.subscriptionField('runItems', (t) =>
  t.field({
    type: RunItemsBatchRef,
    description:
      'The rows already stored from `fromOffset`, then each batch as it is stored; completes after the last row of ' +
      'a finished run.',
    args: {
      id: t.arg.id({ required: true, description: 'The runId.' }),
      fromOffset: t.arg.int({
        defaultValue: 0,
        description: 'The position of the first row to send (from 0); default 0.',
      }),
    },
    subscribe: (_, args, ctx) => {
      const from = args.fromOffset ?? 0;
      if (!Number.isInteger(from) || from < 0)
        throw new ValidationError([{ path: 'fromOffset', message: 'must be 0 or more' }]);
      return followRunItems(ctx.core, ctx.principal, String(args.id), from);
    },
    resolve: (batch) => batch,
  }),
);
