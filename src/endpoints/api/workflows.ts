import { z } from 'zod';
import { startAnswerOf } from '../../runs/start.ts';
import {
  createSchedule,
  deleteSchedule,
  findSchedule,
  fireView,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  scheduleFires,
  scheduleInput,
  scheduleView,
} from '../../workflows/schedules.ts';
import {
  createTask,
  deleteTask,
  findTask,
  listTasks,
  startTask,
  taskInput,
  taskOverrides,
  taskView,
} from '../../workflows/tasks.ts';
import { defineEndpoint, type RestRequest } from '../define.ts';

const TASKS = '/api/v1/tasks';
const SCHEDULES = '/api/v1/schedules';
const idOf = (request: RestRequest) => request.params.id ?? '';
/** An id from REST's path, or the `task`/`schedule` argument of an MCP call. */
const idIn = (input: string | Record<string, unknown>, field: string) =>
  typeof input === 'string' ? input : String(input[field] ?? '');

const taskView_ = z
  .object({
    id: z.string().describe('tsk_…'),
    name: z.string(),
    tool: z.string(),
    input: z.record(z.string(), z.unknown()),
    datasetName: z.string().nullable(),
    onlyNew: z.boolean(),
    steps: z
      .array(
        z.object({
          tool: z.string(),
          input: z.record(z.string(), z.unknown()).optional(),
          column: z.string().optional(),
        }),
      )
      .nullable()
      .describe('A saved pipeline’s steps after the tool’s; null for a task of one tool.'),
    destinations: z.array(z.string()).describe('Destinations each start’s rows are delivered to.'),
    createdAt: z.string(),
  })
  .strict();

const scheduleView_ = z
  .object({
    id: z.string().describe('sch_…'),
    taskId: z.string(),
    cron: z.string(),
    timezone: z.string(),
    exclusive: z.boolean(),
    paused: z.boolean(),
    pausedReason: z.string().nullable().describe('Why it paused, by hand or by itself.'),
    nextFireAt: z.string().nullable().describe('The next tick; null while paused.'),
    lastFiredAt: z.string().nullable(),
    lastRunId: z.string().nullable(),
    createdAt: z.string(),
  })
  .strict();

const fireView_ = z
  .object({
    tick: z.string(),
    outcome: z.enum(['started', 'skipped', 'paused']).nullable(),
    reason: z.string().nullable(),
    runId: z.string().nullable(),
  })
  .strict();

const taskArg = z.object({ task: z.string().min(1).describe('The task’s id (tsk_…) or name.') }).strict();
const scheduleArg = z
  .object({ schedule: z.string().min(1).describe('The schedule’s id (sch_…), or its task’s id or name.') })
  .strict();
const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const REMOVE = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

export const createSavedTask = defineEndpoint({
  name: 'createTask',
  title: 'Save a task',
  tag: 'Workflows',
  description:
    'A tool with a saved input and a name, started by hand (with overrides) or by a schedule. The input is checked ' +
    'as a start would check it: a task that cannot start is refused when saved, naming the field.',
  rest: {
    path: TASKS,
    methods: ['post'],
    status: 201,
    input: (request) => request.body,
    example: {
      name: 'denver-dentists',
      tool: 'maps',
      input: { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO' },
      datasetName: 'dentists',
      onlyNew: true,
    },
    ok: 'The task.',
  },
  graphql: { field: 'createTask' },
  mcp: {
    tool: 'save_task',
    toolset: 'workflows',
    title: 'Save a task',
    description: ['Saves a tool’s input under a name, to start later with start_task or on a schedule.'],
    annotations: WRITE,
  },
  request: taskInput,
  response: z.object({ task: taskView_ }).strict(),
  errors: { 400: ['validation_failed'], 403: ['plan_required'], 409: ['task_exists'] },
  handler: ({ core, principal }, body: unknown) => createTask(core, principal, body),
  respond: (task) => ({ task: taskView(task) }),
});

export const listSavedTasks = defineEndpoint({
  name: 'listTasks',
  title: "The account's tasks",
  tag: 'Workflows',
  rest: { path: TASKS, methods: ['get'], input: () => undefined, ok: 'Newest first.' },
  graphql: { field: 'tasks' },
  mcp: {
    tool: 'list_tasks',
    toolset: 'workflows',
    title: 'List tasks',
    description: ['The account’s saved tasks.'],
    annotations: READ,
  },
  response: z.object({ tasks: z.array(taskView_) }).strict(),
  errors: {},
  handler: ({ core, principal }) => listTasks(core.db, principal.accountId),
  respond: (tasks) => ({ tasks: tasks.map(taskView) }),
});

export const getSavedTask = defineEndpoint({
  name: 'getTask',
  title: 'A task',
  tag: 'Workflows',
  rest: { path: `${TASKS}/:id`, methods: ['get'], input: idOf, ok: 'The task.' },
  graphql: { field: 'task' },
  response: z.object({ task: taskView_ }).strict(),
  errors: { 404: ['task_not_found'] },
  handler: ({ core, principal }, id: string) => findTask(core.db, principal.accountId, id),
  respond: (task) => ({ task: taskView(task) }),
});

export const deleteSavedTask = defineEndpoint({
  name: 'deleteTask',
  title: 'Delete a task',
  tag: 'Workflows',
  description: 'Its schedules go with it; its runs stay.',
  rest: { path: `${TASKS}/:id`, methods: ['delete'], status: 204, input: idOf, ok: 'Deleted.' },
  graphql: { field: 'deleteTask' },
  mcp: {
    tool: 'delete_task',
    toolset: 'workflows',
    title: 'Delete a task',
    description: ['Deletes a saved task and its schedules.'],
    args: taskArg,
    example: { task: 'denver-dentists' },
    annotations: REMOVE,
  },
  errors: { 404: ['task_not_found'] },
  handler: ({ core, principal }, input: string | Record<string, unknown>) =>
    deleteTask(core.db, principal.accountId, idIn(input, 'task')),
});

export const startSavedTask = defineEndpoint({
  name: 'startTask',
  title: 'Start a task',
  tag: 'Workflows',
  description:
    'An ordinary run of the task’s tool with its saved input, `input` replacing saved fields: queued, held, ' +
    'limited, billed and followed like any start; the answer is the start’s. A saved pipeline (a task with ' +
    '`steps`) starts its pipeline instead, answering `pipelineId`.',
  rest: {
    path: `${TASKS}/:id/runs`,
    methods: ['post'],
    input: (request) => ({ task: idOf(request), ...(request.body as object) }),
    example: { input: { maxCrawledPlacesPerSearch: 20 } },
    ok: 'The run started.',
  },
  graphql: { field: 'startTask' },
  mcp: {
    tool: 'start_task',
    toolset: 'workflows',
    title: 'Start a task',
    description: ['Starts a saved task’s run; input overrides saved fields. Follow it with check_run_status.'],
    args: taskArg.extend(taskOverrides.shape),
    example: { task: 'denver-dentists' },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  request: taskOverrides,
  response: z.record(z.string(), z.unknown()),
  errors: { 400: ['validation_failed'], 402: ['insufficient_funds'], 403: ['plan_required'], 404: ['task_not_found'] },
  handler: ({ core, principal }, input: Record<string, unknown>) => {
    const { task, ...overrides } = input;
    return startTask(core, principal, String(task ?? ''), overrides);
  },
  // A saved pipeline answers its pipeline (as POST /api/v1/pipelines), a task of one tool its run's start.
  respond: (started) =>
    started.run
      ? startAnswerOf(started.run)
      : {
          pipelineId: started.pipeline.id,
          status: started.pipeline.status,
          message: started.pipeline.statusMessage,
          estimatedCost: started.pipeline.heldCost,
        },
});

export const createTaskSchedule = defineEndpoint({
  name: 'createSchedule',
  title: 'Schedule a task',
  tag: 'Workflows',
  description:
    'Fires the task on a five-field cron expression in a time zone (daylight saving followed): each tick an ordinary ' +
    'run, at most once however many workers run, one catch-up tick after downtime. Exclusive by default: a tick ' +
    'whose previous run is still going is skipped, with its reason. A tick the account cannot pay for, or whose ' +
    'tool its plan no longer allows, pauses the schedule with the reason and sends schedule.paused to webhooks.',
  rest: {
    path: SCHEDULES,
    methods: ['post'],
    status: 201,
    input: (request) => request.body,
    example: { task: 'denver-dentists', cron: '0 9 * * 1', timezone: 'America/Denver' },
    ok: 'The schedule, with its next tick.',
  },
  graphql: { field: 'createSchedule' },
  mcp: {
    tool: 'schedule_task',
    toolset: 'workflows',
    title: 'Schedule a task',
    description: ['Fires a saved task on a cron expression ("0 9 * * 1": Mondays at 9) in a time zone.'],
    example: { task: 'denver-dentists', cron: '0 9 * * 1', timezone: 'America/Denver' },
    annotations: WRITE,
  },
  request: scheduleInput,
  response: z.object({ schedule: scheduleView_ }).strict(),
  errors: { 400: ['validation_failed'], 404: ['task_not_found'] },
  handler: ({ core, principal }, body: unknown) => createSchedule(core, principal, body),
  respond: (schedule) => ({ schedule: scheduleView(schedule) }),
});

export const listTaskSchedules = defineEndpoint({
  name: 'listSchedules',
  title: "The account's schedules",
  tag: 'Workflows',
  rest: { path: SCHEDULES, methods: ['get'], input: () => undefined, ok: 'Newest first.' },
  graphql: { field: 'schedules' },
  mcp: {
    tool: 'list_schedules',
    toolset: 'workflows',
    title: 'List schedules',
    description: ['The account’s schedules with their next and last ticks.'],
    annotations: READ,
  },
  response: z.object({ schedules: z.array(scheduleView_) }).strict(),
  errors: {},
  handler: ({ core, principal }) => listSchedules(core.db, principal.accountId),
  respond: (schedules) => ({ schedules: schedules.map(scheduleView) }),
});

export const getTaskSchedule = defineEndpoint({
  name: 'getSchedule',
  title: 'A schedule, with its last ticks',
  tag: 'Workflows',
  rest: {
    path: `${SCHEDULES}/:id`,
    methods: ['get'],
    input: idOf,
    ok: 'The schedule and its last 20 ticks, newest first.',
  },
  graphql: { field: 'schedule' },
  response: z.object({ schedule: scheduleView_, fires: z.array(fireView_) }).strict(),
  errors: { 404: ['schedule_not_found'] },
  handler: async ({ core, principal }, id: string) => {
    const schedule = await findSchedule(core.db, principal.accountId, id);
    return { schedule, fires: await scheduleFires(core.db, schedule.id) };
  },
  respond: ({ schedule, fires }) => ({ schedule: scheduleView(schedule), fires: fires.map(fireView) }),
});

const scheduleAction = (action: 'pause' | 'resume') =>
  defineEndpoint({
    name: `${action}Schedule`,
    title: action === 'pause' ? 'Pause a schedule' : 'Resume a schedule',
    tag: 'Workflows',
    description:
      action === 'pause'
        ? 'No tick fires until it is resumed.'
        : 'Fires again from the next tick to come; ticks missed while paused are not fired.',
    rest: { path: `${SCHEDULES}/:id/${action}`, methods: ['post'], input: idOf, ok: 'The schedule.' },
    graphql: { field: `${action}Schedule` },
    mcp: {
      tool: `${action}_schedule`,
      toolset: 'workflows',
      title: action === 'pause' ? 'Pause a schedule' : 'Resume a schedule',
      description: [action === 'pause' ? 'Stops a schedule firing until resumed.' : 'Resumes a paused schedule.'],
      args: scheduleArg,
      example: { schedule: 'denver-dentists' },
      annotations: { ...WRITE, idempotentHint: true },
    },
    response: z.object({ schedule: scheduleView_ }).strict(),
    errors: { 404: ['schedule_not_found'] },
    handler: ({ core, principal }, input: string | Record<string, unknown>) =>
      action === 'pause'
        ? pauseSchedule(core.db, principal, idIn(input, 'schedule'))
        : resumeSchedule(core, principal, idIn(input, 'schedule')),
    respond: (schedule) => ({ schedule: scheduleView(schedule) }),
  });

export const pauseTaskSchedule = scheduleAction('pause');
export const resumeTaskSchedule = scheduleAction('resume');

export const deleteTaskSchedule = defineEndpoint({
  name: 'deleteSchedule',
  title: 'Delete a schedule',
  tag: 'Workflows',
  rest: { path: `${SCHEDULES}/:id`, methods: ['delete'], status: 204, input: idOf, ok: 'Deleted.' },
  graphql: { field: 'deleteSchedule' },
  mcp: {
    tool: 'delete_schedule',
    toolset: 'workflows',
    title: 'Delete a schedule',
    description: ['Deletes a schedule; its runs stay.'],
    args: scheduleArg,
    example: { schedule: 'denver-dentists' },
    annotations: REMOVE,
  },
  errors: { 404: ['schedule_not_found'] },
  handler: ({ core, principal }, input: string | Record<string, unknown>) =>
    deleteSchedule(core.db, principal, idIn(input, 'schedule')),
});
