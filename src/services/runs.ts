import { and, asc, desc, eq, inArray, lt, or, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { runItemTable, runTable, type Run, type RunStatus } from '../../db/schema/runs.ts';
import type { Core } from '../core.ts';
import { getTool } from '../tools/index.ts';
import type { StartInfo, ToolDefinition } from '../tools/types.ts';
import type { Principal } from './accounts.ts';
import { fromZodError, notFound, ValidationError } from './errors.ts';
import { newRunId } from './ids.ts';
import { snapshotOf, type RunSnapshot } from './run-view.ts';

/** Validates a tool's input at the boundary: 400 `validation_failed` naming every bad field. */
export function parseToolInput<T extends ToolDefinition>(tool: T, raw: unknown) {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ValidationError([{ path: '', message: 'the request body must be a JSON object' }]);
  }
  const parsed = tool.input.safeParse(raw);
  if (!parsed.success) throw fromZodError(parsed.error);
  return parsed.data;
}

export interface StartedRun {
  run: RunSnapshot;
  start: StartInfo;
}

/**
 * Starts a run: validates the input, then creates the run row and its worker job in one
 * transaction, so a run never exists without its job nor a job without its run.
 */
export async function startRun(core: Pick<Core, 'db' | 'events'>, principal: Principal, toolName: string, raw: unknown): Promise<StartedRun> {
  const tool = getTool(toolName);
  const input = parseToolInput(tool, raw);
  const start = tool.describeStart(input);
  const id = newRunId();
  const run = await core.db.transaction(async (tx) => {
    const [created] = await tx
      .insert(runTable)
      .values({
        id,
        accountId: principal.accountId,
        tool: tool.name,
        status: 'RUNNING',
        statusMessage: 'Starting',
        input,
        requested: tool.requested(input),
        startedAt: new Date(),
        fileName: typeof (input as { fileName?: unknown }).fileName === 'string' ? (input as { fileName: string }).fileName : null,
      })
      .returning();
    await tx.execute(sql`select graphile_worker.add_job('run_tool', json_build_object('runId', ${id}::text), max_attempts => 5, job_key => ${id}::text)`);
    const snapshot = snapshotOf(created!);
    await core.events.publishInTx(tx, 'runProgress', id, snapshot);
    return snapshot;
  });
  return { run, start };
}

const prepareGetRun = (db: Executor) =>
  db
    .select()
    .from(runTable)
    .where(and(eq(runTable.id, sql.placeholder('id')), eq(runTable.accountId, sql.placeholder('accountId'))))
    .prepare('get_run');
/** Status polling is the hottest path: the query is built once per connection pool, not per call. */
const getRunStatements = new WeakMap<Executor, ReturnType<typeof prepareGetRun>>();

/** A run of the caller's account; another account's run is indistinguishable from a missing one. */
export async function getRun(db: Executor, accountId: string, runId: string): Promise<Run> {
  let statement = getRunStatements.get(db);
  if (!statement) getRunStatements.set(db, (statement = prepareGetRun(db)));
  const [run] = await statement.execute({ id: runId, accountId });
  if (!run) throw notFound('Run');
  return run;
}

/** Batch loader for per-request DataLoaders: results in the order of `ids`, null where not found. */
export async function loadRuns(db: Executor, accountId: string, ids: readonly string[]): Promise<(RunSnapshot | null)[]> {
  const rows = await db
    .select()
    .from(runTable)
    .where(and(eq(runTable.accountId, accountId), inArray(runTable.id, [...ids])));
  const byId = new Map(rows.map((r) => [r.id, snapshotOf(r)]));
  return ids.map((id) => byId.get(id) ?? null);
}

export interface RunCursor {
  createdAt: string;
  id: string;
}

export const encodeRunCursor = (run: RunSnapshot) =>
  Buffer.from(JSON.stringify({ createdAt: run.createdAt, id: run.id } satisfies RunCursor)).toString('base64url');

export function decodeRunCursor(cursor: string): RunCursor {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as RunCursor;
    if (typeof value.id === 'string' && !Number.isNaN(Date.parse(value.createdAt))) return value;
  } catch {
    // fall through
  }
  throw new ValidationError([{ path: 'after', message: 'not a cursor returned by this API' }]);
}

/** The account's runs, newest first, by keyset; returns one extra row to tell if more follow. */
export async function listRuns(
  db: Executor,
  accountId: string,
  options: { first: number; after?: string | null; status?: RunStatus | null },
): Promise<{ runs: RunSnapshot[]; hasNextPage: boolean }> {
  const cursor = options.after ? decodeRunCursor(options.after) : undefined;
  const rows = await db
    .select()
    .from(runTable)
    .where(
      and(
        eq(runTable.accountId, accountId),
        options.status ? eq(runTable.status, options.status) : undefined,
        cursor
          ? or(
              lt(runTable.createdAt, new Date(cursor.createdAt)),
              and(eq(runTable.createdAt, new Date(cursor.createdAt)), lt(runTable.id, cursor.id)),
            )
          : undefined,
      ),
    )
    .orderBy(desc(runTable.createdAt), desc(runTable.id))
    .limit(options.first + 1);
  return { runs: rows.slice(0, options.first).map(snapshotOf), hasNextPage: rows.length > options.first };
}

/** A page of a run's result rows in order. */
export async function listRunItems(db: Executor, runId: string, options: { offset: number; limit: number }) {
  const rows = await db
    .select({ data: runItemTable.data })
    .from(runItemTable)
    .where(and(eq(runItemTable.runId, runId), sql`${runItemTable.seq} >= ${options.offset}`))
    .orderBy(asc(runItemTable.seq))
    .limit(options.limit);
  return rows.map((r) => r.data as Record<string, unknown>);
}
