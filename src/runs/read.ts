/**
 * Reading runs: one run of the caller's account, lists and counts of its runs, pages of a run's rows
 * (several runs' at once, ended runs' on the read replica) and the inputs runs were started with.
 */
import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Executor, Sql } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import { runItemTable, runTable, type Run, type RunStatus } from '../../db/tables/runs.ts';
import { NotReplayed } from '../catalog/reader.ts';
import type { Core } from '../core.ts';
import { notFound, ValidationError } from '../shared/errors.ts';
import { assertNotExpired, endedOnServer, rowsInRange } from './exports.ts';
import { assertStorable, cursorTime, unstorable } from '../shared/params.ts';
import { isTerminal, snapshotOf, type RunSnapshot } from './view.ts';

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
  assertStorable(runId, 'runId');
  let statement = getRunStatements.get(db);
  if (!statement) {
    statement = prepareGetRun(db);
    getRunStatements.set(db, statement);
  }
  const [run] = await statement.execute({ id: runId, accountId });
  if (!run) throw notFound('Run');
  return run;
}

/** Batch loader for per-request DataLoaders: results in the order of `ids`, null where not found. */
export async function loadRuns(
  db: Executor,
  accountId: string,
  ids: readonly string[],
): Promise<(RunSnapshot | null)[]> {
  // An id Postgres could not store names no run.
  const storable = ids.filter((id) => unstorable(id) === undefined);
  const rows =
    storable.length === 0
      ? []
      : await db
          .select()
          .from(runTable)
          .where(and(eq(runTable.accountId, accountId), inArray(runTable.id, storable)));
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
    if (typeof value.id === 'string' && unstorable(value.id) === undefined && cursorTime(value.createdAt)) return value;
  } catch {
    // fall through
  }
  throw new ValidationError([{ path: 'after', message: 'not a cursor returned by this API' }]);
}

/** The account's runs, newest first, by keyset; returns one extra row to tell if more follow. */
export async function listRuns(
  db: Executor,
  accountId: string,
  options: { first: number; after?: string | null; status?: RunStatus | null; tool?: string | null },
): Promise<{ runs: RunSnapshot[]; hasNextPage: boolean }> {
  const cursor = options.after ? decodeRunCursor(options.after) : undefined;
  const rows = await db
    .select()
    .from(runTable)
    .where(
      and(
        eq(runTable.accountId, accountId),
        options.status ? eq(runTable.status, options.status) : undefined,
        options.tool ? eq(runTable.tool, options.tool) : undefined,
        // After the cursor's run in (created_at, id) order, read at the stored precision (microseconds;
        // the cursor's copy has milliseconds, and runs written together differ below that).
        cursor
          ? sql`(${runTable.createdAt}, ${runTable.id}) < (select c.created_at, c.id from run c
              where c.id = ${cursor.id} and c.account_id = ${accountId})`
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

/**
 * A page of a run's result rows for a face that reads them while the run goes on (GraphQL `Run.items`);
 * 410 `results_expired` past the run's `expiresAt`, as the downloads answer.
 */
export async function readRunItems(
  core: Pick<Core, 'db' | 'clock'>,
  run: Pick<RunSnapshot, 'id' | 'expiresAt'>,
  options: { offset: number; limit: number },
) {
  assertNotExpired(run, core.clock());
  return listRunItems(core.db, run.id, options);
}

/** How many runs the account has, of one status when given (a connection's `totalCount`). */
export async function countRuns(
  db: Executor,
  accountId: string,
  status?: RunStatus | null,
  tool?: string | null,
): Promise<number> {
  const rows = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(runTable)
    .where(
      and(
        eq(runTable.accountId, accountId),
        status ? eq(runTable.status, status) : undefined,
        tool ? eq(runTable.tool, tool) : undefined,
      ),
    );
  return oneRow(rows, 'count of runs').n;
}

export interface ItemsRequest {
  runId: string;
  offset: number;
  limit: number;
  /**
   * For a run that has ended (its rows are final): how many rows the page holds, min(limit, itemCount −
   * offset). Such pages are read on the read replica when it has them all; absent while the run goes on.
   */
  expected?: number;
}

/**
 * Pages of the rows of several runs in one statement (a list of runs, each with its first rows): for
 * each request, up to `limit` rows from seq `offset`, in order. Callers check the runs belong to the
 * account and have not expired (`assertNotExpired`). `endedOnly`: rows only of runs that have ended
 * on this server (a replica's copy of a run is whole once it shows the run's end, see exports.ts
 * `itemRows`); the others' pages are empty, without reading their rows.
 */
async function itemsOfRuns(
  sqlClient: Sql,
  requests: readonly ItemsRequest[],
  endedOnly: boolean,
): Promise<Record<string, unknown>[][]> {
  if (requests.length === 0) return [];
  const ended = endedOnly ? endedOnServer(sqlClient, sqlClient`r.run_id`) : sqlClient`true`;
  // The requests are filtered first (materialized), so the rows of a run left out are never read.
  const rows = await sqlClient<{ i: string; data: Record<string, unknown> }[]>`
    with r as materialized (
      select * from unnest(
        ${requests.map((r) => r.runId)}::text[],
        ${requests.map((r) => r.offset)}::int[],
        ${requests.map((r) => r.limit)}::int[]
      )
        with ordinality as r(run_id, off, lim, i)
      where ${ended}
    )
    select r.i::text as i, item.data
    from r cross join lateral (
      select seq, data from run_item where run_id = r.run_id and seq >= r.off order by seq limit r.lim
    ) item
    order by r.i, item.seq`;
  const pages = requests.map((): Record<string, unknown>[] => []);
  for (const row of rows) pages[Number(row.i) - 1]?.push(row.data);
  return pages;
}

/** The request for up to `limit` rows of `run` from `offset`; an ended run's says how many it holds. */
export const itemsRequest = (
  run: { id: string; status: RunStatus; itemCount: number },
  offset: number,
  limit: number,
): ItemsRequest => ({
  runId: run.id,
  offset,
  limit,
  ...(isTerminal(run.status) ? { expected: rowsInRange(run.itemCount, { offset, limit }) } : {}),
});

/**
 * `itemsOfRuns` for GraphQL's `Run.results`, batched: pages of runs in flight on the primary; pages of
 * ended runs on the read replica when it is healthy and holds each of them whole (`expected` rows),
 * else on the primary, as the downloads read them.
 */
export async function listItemsOfRuns(
  core: Pick<Core, 'sql' | 'catalogReader'>,
  requests: readonly ItemsRequest[],
): Promise<Record<string, unknown>[][]> {
  const numbered = requests.map((request, at) => ({ request, at }));
  const ended = numbered.filter((n) => n.request.expected !== undefined);
  const live = numbered.filter((n) => n.request.expected === undefined);
  const [livePages, endedPages] = await Promise.all([
    itemsOfRuns(
      core.sql,
      live.map((n) => n.request),
      false,
    ),
    ended.length === 0
      ? []
      : core.catalogReader.read(async (sql) => {
          const onReplica = sql !== core.sql;
          const pages = await itemsOfRuns(
            sql,
            ended.map((n) => n.request),
            onReplica,
          );
          if (onReplica)
            pages.forEach((page, k) => {
              const { runId, expected = 0 } = ended[k]?.request ?? { runId: '' };
              if (page.length < expected)
                throw new NotReplayed(`the replica has ${page.length} of ${expected} rows of run ${runId}`);
            });
          return pages;
        }),
  ]);
  const pages: Record<string, unknown>[][] = requests.map(() => []);
  for (const [k, n] of live.entries()) pages[n.at] = livePages[k] ?? [];
  for (const [k, n] of ended.entries()) pages[n.at] = endedPages[k] ?? [];
  return pages;
}

/**
 * The inputs the caller's runs among `ids` were started with, in the order of `ids` (null where another account's or
 * none).
 */
export async function loadRunInputs(
  db: Executor,
  accountId: string,
  ids: readonly string[],
): Promise<(unknown | null)[]> {
  const rows = await db
    .select({ id: runTable.id, input: runTable.input })
    .from(runTable)
    .where(and(eq(runTable.accountId, accountId), inArray(runTable.id, [...ids])));
  const byId = new Map(rows.map((r) => [r.id, r.input]));
  return ids.map((id) => byId.get(id) ?? null);
}
