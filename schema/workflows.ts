import type { SavedTask, Schedule, ScheduleFire } from '../db/tables/workflows.ts';
import {
  createSavedTask,
  createTaskSchedule,
  deleteSavedTask,
  deleteTaskSchedule,
  getSavedTask,
  getTaskSchedule,
  listSavedTasks,
  listTaskSchedules,
  pauseTaskSchedule,
  resumeTaskSchedule,
  startSavedTask,
} from '../src/endpoints/api/workflows.ts';
import { graphqlFieldOf } from '../src/endpoints/define.ts';
import { ValidationError } from '../src/shared/errors.ts';
import {
  createSchedule,
  deleteSchedule,
  findSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  scheduleFires,
} from '../src/workflows/schedules.ts';
import { createTask, deleteTask, findTask, listTasks, startTask, type TaskStart } from '../src/workflows/tasks.ts';
import { decodePipeline, PipelineRef, PipelineStepInputRef } from './pipelines.ts';
import { builder } from './builder.ts';
import { AFTER_DESCRIPTION, connectionOf, connectionType, FIRST_DESCRIPTION, pageSize } from './connection.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { NodeRef, registerNode } from './node.ts';
import { RunRef, ToolEnum } from './run.ts';
import { decodeToolInput } from './tools.ts';

const MAX_PAGE = 100;

export const TaskRef = builder.objectRef<SavedTask>('Task');
TaskRef.implement({
  description:
    'A saved task: a tool with a saved input and a name, started by hand (`startTask`, with overrides) or by a ' +
    '`Schedule`. Each start is an ordinary run of the tool.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'tsk_…: its global id.' }),
    name: t.exposeString('name', { description: 'Its name, unique in the account.' }),
    tool: t.field({ type: ToolEnum, description: 'The tool it runs.', resolve: (task) => task.tool }),
    input: t.field({
      type: 'JSON',
      description: 'The tool’s input it starts with, as REST and MCP take it (docs/tools.md).',
      resolve: (task) => task.input,
    }),
    datasetName: t.exposeString('datasetName', { nullable: true, description: 'The dataset its runs add rows to.' }),
    onlyNew: t.exposeBoolean('onlyNew', { description: 'Whether its runs deliver only rows new to the dataset.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was saved.', resolve: (task) => task.createdAt }),
  }),
});
registerNode('tsk', 'Task', {
  keepsPrefix: true,
  localId: /^tsk_[A-Za-z0-9]{1,64}$/,
  load: (ids, ctx) =>
    Promise.all(ids.map((id) => findTask(ctx.core.db, ctx.principal.accountId, id).catch(() => null))),
});

const FireOutcomeEnum = builder.enumType('ScheduleFireOutcome', {
  description: 'What a tick of a schedule did.',
  values: {
    STARTED: { value: 'started', description: 'It started a run.' },
    SKIPPED: { value: 'skipped', description: 'It was skipped: `reason` says why (the run before still going).' },
    PAUSED: { value: 'paused', description: 'The run could not start and the schedule paused: `reason` says why.' },
  },
});

const ScheduleFireRef = builder.objectRef<ScheduleFire>('ScheduleFire').implement({
  description: 'One tick of a schedule.',
  fields: (t) => ({
    tick: t.field({ type: 'DateTime', description: 'The tick’s time.', resolve: (f) => f.tick }),
    outcome: t.field({
      type: FireOutcomeEnum,
      nullable: true,
      description: 'What it did; null while it is being fired.',
      resolve: (f) => f.outcome,
    }),
    reason: t.exposeString('reason', { nullable: true, description: 'Why it was skipped or paused.' }),
    run: t.field({
      type: RunRef,
      nullable: true,
      description: 'The run it started.',
      resolve: (f, _, ctx) => (f.runId ? ctx.loaders.run.load(f.runId).catch(() => null) : null),
    }),
  }),
});

const ScheduleFireConnectionRef = connectionType<ScheduleFire>('ScheduleFire', ScheduleFireRef, {
  description: 'A page of a schedule’s ticks, newest first.',
  totalCount: 'Ticks on this page.',
});

export const ScheduleRef = builder.objectRef<Schedule>('Schedule');
ScheduleRef.implement({
  description:
    'A saved task fired on a five-field cron expression in a time zone (daylight saving followed): each tick an ' +
    'ordinary run, at most once however many workers run, one catch-up tick after downtime. Exclusive by default. ' +
    'A tick the account cannot pay for, or whose tool its plan no longer allows, pauses it with the reason ' +
    '(webhook event `schedule.paused`).',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'sch_…: its global id.' }),
    task: t.field({
      type: TaskRef,
      description: 'The task it fires.',
      resolve: (s, _, ctx) => findTask(ctx.core.db, s.accountId, s.taskId),
    }),
    cron: t.exposeString('cron', { description: 'Its cron expression.' }),
    timezone: t.exposeString('timezone', { description: 'The IANA time zone the expression is read in.' }),
    exclusive: t.exposeBoolean('exclusive', { description: 'Whether a tick is skipped while the run before goes.' }),
    paused: t.boolean({ description: 'Whether it is paused.', resolve: (s) => s.pausedAt !== null }),
    pausedReason: t.exposeString('pausedReason', { nullable: true, description: 'Why it paused.' }),
    nextFireAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Its next tick; null while paused.',
      resolve: (s) => (s.pausedAt ? null : s.nextFireAt),
    }),
    lastFiredAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it last fired.',
      resolve: (s) => s.lastFiredAt,
    }),
    fires: t.field({
      type: ScheduleFireConnectionRef,
      description: 'Its ticks, newest first.',
      args: {
        first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_PAGE, 20) }),
        after: t.arg.string({ description: AFTER_DESCRIPTION }),
      },
      complexity: (args) => ({ field: 1, multiplier: Math.min(args.first ?? 20, MAX_PAGE) }),
      resolve: async (s, args, ctx) => {
        const limit = pageSize(args.first, { max: MAX_PAGE, byDefault: 20 });
        const before = args.after ? new Date(args.after) : undefined;
        if (before && Number.isNaN(before.getTime()))
          throw new ValidationError([{ path: 'after', message: 'not a cursor returned by this API' }]);
        const fires = await scheduleFires(ctx.core.db, s.id, limit + 1, before);
        return connectionOf(fires.slice(0, limit), {
          cursorOf: (f) => f.tick.toISOString(),
          hasNextPage: fires.length > limit,
          totalCount: Math.min(limit, fires.length),
        });
      },
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was made.', resolve: (s) => s.createdAt }),
  }),
});
registerNode('sch', 'Schedule', {
  keepsPrefix: true,
  localId: /^sch_[A-Za-z0-9]{1,64}$/,
  load: (ids, ctx) =>
    Promise.all(ids.map((id) => findSchedule(ctx.core.db, ctx.principal.accountId, id).catch(() => null))),
});

/** A list read whole and paged here, each item's id its cursor. */
function paged<T extends { id: string }>(all: T[], args: { first?: number | null; after?: string | null }) {
  const first = pageSize(args.first, { max: MAX_PAGE, byDefault: 20 });
  const start = args.after ? all.findIndex((item) => item.id === args.after) + 1 : 0;
  if (start === 0 && args.after)
    throw new ValidationError([{ path: 'after', message: 'not a cursor returned by this API' }]);
  return connectionOf(all.slice(start, start + first), {
    cursorOf: (item) => item.id,
    hasNextPage: start + first < all.length,
    totalCount: all.length,
  });
}

const TaskConnectionRef = connectionType<SavedTask>('Task', TaskRef, {
  description: 'A page of the account’s saved tasks, newest first.',
  totalCount: 'How many tasks the account has.',
});
const ScheduleConnectionRef = connectionType<Schedule>('Schedule', ScheduleRef, {
  description: 'A page of the account’s schedules, newest first.',
  totalCount: 'How many schedules the account has.',
});

builder.queryField(graphqlFieldOf(listSavedTasks), (t) =>
  t.field({
    type: TaskConnectionRef,
    description: 'The account’s saved tasks, newest first.',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_PAGE, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    resolve: async (_, args, ctx) => paged(await listTasks(ctx.core.db, ctx.principal.accountId), args),
  }),
);
builder.queryField(graphqlFieldOf(getSavedTask), (t) =>
  t.field({
    type: TaskRef,
    nullable: true,
    description: 'A saved task by id (tsk_…) or name; null when the account has none.',
    args: { task: t.arg.string({ required: true, description: 'Its id or name.' }) },
    resolve: (_, args, ctx) => findTask(ctx.core.db, ctx.principal.accountId, args.task).catch(() => null),
  }),
);
builder.queryField(graphqlFieldOf(listTaskSchedules), (t) =>
  t.field({
    type: ScheduleConnectionRef,
    description: 'The account’s schedules, newest first.',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_PAGE, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    resolve: async (_, args, ctx) => paged(await listSchedules(ctx.core.db, ctx.principal.accountId), args),
  }),
);
builder.queryField(graphqlFieldOf(getTaskSchedule), (t) =>
  t.field({
    type: ScheduleRef,
    nullable: true,
    description: 'A schedule by id (sch_…), or its task’s id or name; null when the account has none.',
    args: { schedule: t.arg.string({ required: true, description: 'Its id, or its task’s id or name.' }) },
    resolve: (_, args, ctx) => findSchedule(ctx.core.db, ctx.principal.accountId, args.schedule).catch(() => null),
  }),
);

const TaskInputRef = builder.inputType('CreateTaskInput', {
  description: 'A task to save.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Its name, unique in the account.' }),
    tool: t.field({ type: ToolEnum, required: true, description: 'The tool it runs.' }),
    input: t.field({
      type: 'JSON',
      required: true,
      description: 'The tool’s input, as its start mutation’s `input` takes it (enum values by name).',
    }),
    datasetName: t.string({ description: 'The dataset its runs add rows to.' }),
    onlyNew: t.boolean({ description: 'Its runs deliver only rows new to the dataset.' }),
    steps: t.field({
      type: [PipelineStepInputRef],
      description: 'Makes it a saved pipeline: the steps after the tool’s, each fed by the rows of the one before.',
    }),
    destinations: t.idList({ description: 'Destinations (dest_…) each of its starts delivers its rows to.' }),
  }),
});

type TaskPayload = { task?: SavedTask; userErrors: UserError[] };
const CreateTaskPayloadRef = builder.objectRef<TaskPayload>('CreateTaskPayload').implement({
  description: 'What `createTask` answers.',
  fields: (t) => ({
    task: t.field({
      type: TaskRef,
      nullable: true,
      description: 'The task; null when refused.',
      resolve: (p) => p.task ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});
builder.mutationField(graphqlFieldOf(createSavedTask), (t) =>
  t.field({
    type: CreateTaskPayloadRef,
    description:
      'Saves a task. Its input is checked as a start would check it: user error VALIDATION_FAILED naming the field; ' +
      'TASK_EXISTS for a name the account uses.',
    args: { input: t.arg({ type: TaskInputRef, required: true, description: 'The task.' }) },
    resolve: (_, { input }, ctx, info) =>
      mutationPayload(async () => {
        const body = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined));
        const decoded = decodeToolInput(info.schema, input.tool, input.input, ['input']);
        // A saved pipeline's later steps are decoded as a pipeline's steps after the first.
        const steps = input.steps
          ? {
              steps: (
                decodePipeline(info.schema, { steps: [{ tool: input.tool }, ...input.steps] }).steps as unknown[]
              ).slice(1),
            }
          : {};
        return { task: await createTask(ctx.core, ctx.principal, { ...body, input: decoded, ...steps }) };
      }, ['input']),
  }),
);

type StartTaskPayload = { started?: TaskStart; userErrors: UserError[] };
const StartTaskPayloadRef = builder.objectRef<StartTaskPayload>('StartTaskPayload').implement({
  description: 'What `startTask` answers.',
  fields: (t) => ({
    run: t.field({
      type: RunRef,
      nullable: true,
      description: 'The run started; null for a saved pipeline (then `pipeline`).',
      resolve: (p) => p.started?.run?.run ?? null,
    }),
    pipeline: t.field({
      type: PipelineRef,
      nullable: true,
      description: 'The pipeline started, for a saved pipeline (a task with steps).',
      resolve: (p) => p.started?.pipeline ?? null,
    }),
    message: t.string({
      nullable: true,
      description: 'What the run (or the pipeline) will do.',
      resolve: (p) => p.started?.run?.start.message ?? p.started?.pipeline?.statusMessage ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});
builder.mutationField(graphqlFieldOf(startSavedTask), (t) =>
  t.field({
    type: StartTaskPayloadRef,
    description: 'Starts a saved task’s run; `input` replaces saved fields. An ordinary start in every other way.',
    args: {
      task: t.arg.string({ required: true, description: 'Its id (tsk_…) or name.' }),
      input: t.arg({
        type: 'JSON',
        description: 'Fields replacing the saved input’s, as REST and MCP take them (docs/tools.md).',
      }),
    },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => ({
        started: await startTask(ctx.core, ctx.principal, args.task, args.input ? { input: args.input } : {}),
      })),
  }),
);

type DeletedPayload = { deletedId?: string; userErrors: UserError[] };
const deletedPayload = (name: string, what: string) =>
  builder.objectRef<DeletedPayload>(name).implement({
    description: `What the deletion of a ${what} answers.`,
    fields: (t) => ({
      deletedId: t.id({
        nullable: true,
        description: `The id of the ${what} deleted.`,
        resolve: (p) => p.deletedId ?? null,
      }),
      userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
    }),
  });
builder.mutationField(graphqlFieldOf(deleteSavedTask), (t) =>
  t.field({
    type: deletedPayload('DeleteTaskPayload', 'task'),
    description: 'Deletes a saved task and its schedules; its runs stay. User error TASK_NOT_FOUND.',
    args: { task: t.arg.string({ required: true, description: 'Its id (tsk_…) or name.' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const task = await findTask(ctx.core.db, ctx.principal.accountId, args.task);
        await deleteTask(ctx.core.db, ctx.principal.accountId, task.id);
        return { deletedId: task.id };
      }),
  }),
);

type SchedulePayload = { schedule?: Schedule; userErrors: UserError[] };
const SchedulePayloadRef = builder.objectRef<SchedulePayload>('SchedulePayload').implement({
  description: 'What a schedule’s mutations answer: the schedule as it is now.',
  fields: (t) => ({
    schedule: t.field({
      type: ScheduleRef,
      nullable: true,
      description: 'The schedule.',
      resolve: (p) => p.schedule ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});
builder.mutationField(graphqlFieldOf(createTaskSchedule), (t) =>
  t.field({
    type: SchedulePayloadRef,
    description: 'Schedules a saved task on a five-field cron expression in a time zone (default UTC).',
    args: {
      task: t.arg.string({ required: true, description: 'The task’s id (tsk_…) or name.' }),
      cron: t.arg.string({ required: true, description: 'Five-field cron expression, e.g. "0 9 * * 1".' }),
      timezone: t.arg.string({ description: 'IANA time zone; default UTC.' }),
      exclusive: t.arg.boolean({ description: 'Skip a tick while the run before goes; default true.' }),
    },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => ({
        schedule: await createSchedule(
          ctx.core,
          ctx.principal,
          Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null && v !== undefined)),
        ),
      })),
  }),
);
for (const [endpoint, act] of [
  [pauseTaskSchedule, 'pause'],
  [resumeTaskSchedule, 'resume'],
] as const)
  builder.mutationField(graphqlFieldOf(endpoint), (t) =>
    t.field({
      type: SchedulePayloadRef,
      description: act === 'pause' ? 'Pauses a schedule.' : 'Resumes a schedule from its next tick to come.',
      args: { schedule: t.arg.string({ required: true, description: 'Its id (sch_…), or its task’s id or name.' }) },
      resolve: (_, args, ctx) =>
        mutationPayload(async () => ({
          schedule:
            act === 'pause'
              ? await pauseSchedule(ctx.core.db, ctx.principal, args.schedule)
              : await resumeSchedule(ctx.core, ctx.principal, args.schedule),
        })),
    }),
  );
builder.mutationField(graphqlFieldOf(deleteTaskSchedule), (t) =>
  t.field({
    type: deletedPayload('DeleteSchedulePayload', 'schedule'),
    description: 'Deletes a schedule; its runs stay. User error SCHEDULE_NOT_FOUND.',
    args: { schedule: t.arg.string({ required: true, description: 'Its id (sch_…), or its task’s id or name.' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const schedule = await findSchedule(ctx.core.db, ctx.principal.accountId, args.schedule);
        await deleteSchedule(ctx.core.db, ctx.principal, schedule.id);
        return { deletedId: schedule.id };
      }),
  }),
);
