/**
 * Saved tasks: a tool with a saved input and a name (Apify's actor tasks). Started by hand with
 * overrides of its input, or by a schedule (schedules.ts); each start is an ordinary run of the tool
 * (queue, hold, limits, events, webhooks), tagged with the task.
 */
import { and, desc, eq, or } from 'drizzle-orm';
import { z } from 'zod';
import type { Database } from '../../db/client.ts';
import { savedTaskTable, type SavedTask } from '../../db/tables/workflows.ts';
import type { Principal } from '../accounts/accounts.ts';
import { datasetName, onlyNew } from '../datasets/index.ts';
import { destinationIds } from '../destinations/destinations.ts';
import { dryRunStart, startRun, type StartDeps, type StartedRun } from '../runs/start.ts';
import {
  MAX_STEPS,
  type PipelineView,
  parsePipeline,
  pipelineStepInput,
  planPipeline,
  startPipeline,
} from './pipelines.ts';
import { AppError, type ErrorDetail, fromZodError, ValidationError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { assertStorable, unstorable } from '../shared/params.ts';
import { TOOLS } from '../tools/index.ts';

export const newTaskId = () => `tsk_${randomBase62(16)}`;

/** The tools a task may run: those with a start of their own, by registry name. */
const TASK_TOOLS = TOOLS.filter((tool) => !tool.linkedOnly).map((tool) => tool.name) as [string, ...string[]];

export const taskInput = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters').describe('Its name.'),
    tool: z
      .enum(TASK_TOOLS, { message: `must be one of ${TASK_TOOLS.join(', ')}` })
      .describe('The tool it runs, by name (maps, lead-scraper, …).'),
    input: z.record(z.string(), z.unknown()).describe('The tool’s input, as its start takes it.'),
    datasetName: datasetName.optional(),
    onlyNew: onlyNew.optional(),
    steps: z
      .array(pipelineStepInput)
      .min(1, 'a saved pipeline has at least one step after the tool’s')
      .max(MAX_STEPS - 1, `a saved pipeline has at most ${MAX_STEPS - 1} steps after the tool’s`)
      .optional()
      .describe(
        'Makes the task a saved pipeline: the steps after the tool’s, each fed by the rows of the one before ' +
          '(as a pipeline’s steps after the first).',
      ),
  })
  .extend({
    destinations: destinationIds.optional().describe('Destinations each start’s rows are delivered to.'),
  })
  .strict();
export type TaskInput = z.output<typeof taskInput>;

/** Overrides of a task's input for one start: fields of the tool's input, replacing the saved ones. */
export const taskOverrides = z
  .object({ input: z.record(z.string(), z.unknown()).optional().describe('Fields replacing the saved input’s.') })
  .strict();

/** The start body of a task, with overrides: its input, dataset and only-new choice. */
const bodyOf = (task: SavedTask, overrides: Record<string, unknown> = {}) => ({
  ...(task.input as Record<string, unknown>),
  ...overrides,
  ...(task.datasetName ? { datasetName: task.datasetName, onlyNew: task.onlyNew } : {}),
  ...(task.destinationIds?.length ? { destinations: task.destinationIds } : {}),
});

/**
 * Saves a task: its input is checked as a start of its tool would check it (a dry run: no run, no
 * hold), so a task that cannot start is refused when saved, naming the field. 409 `task_exists` for a
 * name the account already uses.
 */
export async function createTask(core: StartDeps, principal: Principal, raw: unknown): Promise<SavedTask> {
  assertStorable(raw);
  const parsed = taskInput.safeParse(raw ?? {});
  if (!parsed.success) throw fromZodError(parsed.error);
  const task = parsed.data;
  const candidate = {
    id: newTaskId(),
    accountId: principal.accountId,
    name: task.name,
    tool: task.tool,
    input: task.input,
    datasetName: task.datasetName ?? null,
    onlyNew: task.onlyNew ?? false,
    steps: task.steps ?? null,
    destinationIds: task.destinations?.length ? [...new Set(task.destinations)] : null,
  };
  await checkStart(core, principal, candidate as SavedTask);
  const [created] = await core.db.insert(savedTaskTable).values(candidate).onConflictDoNothing().returning();
  if (!created) throw new AppError(409, 'task_exists', `The account has a task named "${task.name}" already.`);
  return created;
}

/** The pipeline a saved pipeline starts: the tool's step with the (overridden) input, then its steps. */
const pipelineOf = (task: SavedTask, overrides: Record<string, unknown> = {}) => ({
  steps: [
    { tool: task.tool, input: { ...(task.input as Record<string, unknown>), ...overrides } },
    ...(task.steps as unknown[]),
  ],
  ...(task.datasetName ? { datasetName: task.datasetName, onlyNew: task.onlyNew } : {}),
  ...(task.destinationIds?.length ? { destinations: task.destinationIds } : {}),
});

/**
 * A dry run of the task's start: its refusals, with their fields under `input` (a saved pipeline's:
 * its steps checked as a pipeline's, the tool's step under `input`, the others under `steps`).
 */
async function checkStart(core: StartDeps, principal: Principal, task: SavedTask) {
  if (task.steps) {
    try {
      planPipeline(core.config, principal, parsePipeline(pipelineOf(task)));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const details = ((err.details ?? []) as ErrorDetail[]).map((d) => {
        const at = /^steps\.(\d+)(.*)$/.exec(d.path);
        if (!at) return d;
        const index = Number(at[1]);
        return {
          path: index === 0 ? `input${(at[2] ?? '').replace(/^\.input/, '')}` : `steps.${index - 1}${at[2]}`,
          message: d.message,
        };
      });
      throw new ValidationError(details, err.message);
    }
    return;
  }
  try {
    await dryRunStart(core, principal, task.tool, bodyOf(task));
  } catch (err) {
    if (err instanceof ValidationError) {
      const details = ((err.details ?? []) as ErrorDetail[]).map((d) => ({
        path: d.path === 'datasetName' || d.path === 'onlyNew' ? d.path : `input${d.path ? `.${d.path}` : ''}`,
        message: d.message,
      }));
      throw new ValidationError(details, err.message);
    }
    // What the wallet or the queue says now is a fact of the moment, not of the task.
    if (err instanceof AppError && (err.status === 402 || err.code === 'cost_limit_exceeded')) return;
    throw err;
  }
}

export async function listTasks(db: Database, accountId: string): Promise<SavedTask[]> {
  return db
    .select()
    .from(savedTaskTable)
    .where(eq(savedTaskTable.accountId, accountId))
    .orderBy(desc(savedTaskTable.createdAt), desc(savedTaskTable.id));
}

/** A task of the account by id (`tsk_…`) or name; 404 `task_not_found`. */
export async function findTask(db: Database, accountId: string, idOrName: string): Promise<SavedTask> {
  if (unstorable(idOrName)) throw new AppError(404, 'task_not_found', 'The account has no such task.');
  const [task] = await db
    .select()
    .from(savedTaskTable)
    .where(
      and(
        eq(savedTaskTable.accountId, accountId),
        or(eq(savedTaskTable.id, idOrName), eq(savedTaskTable.name, idOrName)),
      ),
    )
    .limit(1);
  if (!task) throw new AppError(404, 'task_not_found', `The account has no task ${idOrName}.`);
  return task;
}

/** Deletes a task and its schedules; its runs stay. */
export async function deleteTask(db: Database, accountId: string, idOrName: string): Promise<void> {
  const task = await findTask(db, accountId, idOrName);
  await db.delete(savedTaskTable).where(eq(savedTaskTable.id, task.id));
}

/** What a task's start started: a run, or (a saved pipeline) a pipeline. */
export type TaskStart = { run: StartedRun; pipeline?: undefined } | { pipeline: PipelineView; run?: undefined };

/**
 * Starts a task, its input overridden by `overrides.input`: an ordinary start of its tool, or of its
 * pipeline for a saved pipeline, tagged with the task (and the schedule that fired it).
 */
export async function startTask(
  core: StartDeps,
  principal: Principal,
  idOrName: string,
  rawOverrides: unknown,
  origin: { scheduleId?: string } = {},
): Promise<TaskStart> {
  assertStorable(rawOverrides);
  const overrides = taskOverrides.safeParse(rawOverrides ?? {});
  if (!overrides.success) throw fromZodError(overrides.error);
  const task = await findTask(core.db, principal.accountId, idOrName);
  if (task.steps)
    return {
      pipeline: await startPipeline(core, principal, pipelineOf(task, overrides.data.input), {
        origin: { taskId: task.id, ...origin },
      }),
    };
  return {
    run: await startRun(core, principal, task.tool, bodyOf(task, overrides.data.input), {
      origin: { taskId: task.id, ...origin },
    }),
  };
}

/** A task as the faces answer it. */
export const taskView = (task: SavedTask) => ({
  id: task.id,
  name: task.name,
  tool: task.tool,
  input: task.input as Record<string, unknown>,
  datasetName: task.datasetName,
  onlyNew: task.onlyNew,
  steps: (task.steps as TaskInput['steps']) ?? null,
  destinations: task.destinationIds ?? [],
  createdAt: task.createdAt.toISOString(),
});
