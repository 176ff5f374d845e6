import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Executor, Sql, Transaction } from '../../db/client.ts';
import { runItemTable, runTable, type Run, type RunStatus } from '../../db/tables/runs.ts';
import { NotReplayed } from '../catalog/reader.ts';
import type { Core } from '../core.ts';
import { getTool } from '../tools/index.ts';
import type { StartInfo, ToolDefinition } from '../tools/types.ts';
import type { Principal } from '../accounts/accounts.ts';
import { AppError, fromZodError, notFound, ValidationError } from '../shared/errors.ts';
import { assertNotExpired, endedOnServer, rowsInRange } from './exports.ts';
import { assertStorable, cursorTime, unstorable } from '../shared/params.ts';
import { assertKnownFields } from '../shared/fields.ts';
import { formatDollars, microsToNumber } from '../billing/money.ts';
import { assertPlan } from '../billing/plans.ts';
import { getBalances } from '../billing/wallet.ts';
import { checkWebhookUrl, newSigningSecret, webhookUrl } from './webhooks.ts';
import type { OutboundGuard } from '../net/guard.ts';
import { newRunId } from '../shared/ids.ts';
import { isTerminal, snapshotOf, type RunSnapshot } from './view.ts';
import { placeRun } from './queue.ts';

/** Validates a tool's input at the boundary: 400 `validation_failed` naming every bad field, or every field the tool does not know. */
export function parseToolInput<T extends ToolDefinition>(tool: T, raw: unknown) {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ValidationError([{ path: '', message: 'the request body must be a JSON object' }]);
  }
  assertKnownFields(tool.input, raw);
  const parsed = tool.input.safeParse(raw);
  if (!parsed.success) throw fromZodError(parsed.error);
  return parsed.data;
}

export interface StartedRun {
  run: RunSnapshot;
  start: StartInfo;
}

type StartDeps = Pick<Core, 'db' | 'events' | 'config' | 'accountWrites' | 'network'>;

/**
 * Any tool start may carry `webhookUrl`: the run's end is POSTed there, signed with a secret of
 * the run's own, returned once in the start response (`webhookSecret`). Its form is checked here;
 * `guarded` then asks the outbound guard (a DNS lookup, so it is awaited by the write): a URL the
 * guard refuses is a 400 at `webhookUrl` and the start writes nothing.
 */
function takeWebhookUrl(raw: unknown): {
  body: unknown;
  webhook?: { url: string; secret: string; guarded(guard: OutboundGuard): Promise<void> };
} {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || !('webhookUrl' in raw)) return { body: raw };
  const { webhookUrl: value, ...body } = raw as Record<string, unknown>;
  if (value === undefined || value === null) return { body };
  const parsed = webhookUrl.safeParse(value);
  if (!parsed.success)
    throw new ValidationError(parsed.error.issues.map((issue) => ({ path: 'webhookUrl', message: issue.message })));
  const url = parsed.data;
  return {
    body,
    webhook: {
      url,
      secret: newSigningSecret(),
      guarded(guard) {
        const checked = checkWebhookUrl(guard, url, 'webhookUrl');
        checked.catch(() => {}); // the write awaits it; until then a refusal is not unhandled
        return checked;
      },
    },
  };
}

interface PlannedRun {
  tool: ToolDefinition;
  input: unknown;
  start: StartInfo;
  requested: number;
  estimated: bigint;
}

/** Validates and plans one run of `tool` for the caller; nothing is written. */
function planRun(principal: Principal, tool: ToolDefinition, raw: unknown): PlannedRun {
  assertPlan(principal, tool.plan, tool.title);
  const parsed = parseToolInput(tool, raw);
  const { input = parsed, ...start } = tool.describeStart(parsed, principal);
  const requested = tool.requested(input);
  return { tool, input, start, requested, estimated: tool.price.estimate(input, requested) };
}

/**
 * Creates one planned run in the caller's transaction: inserts it RUNNING, then the queue places it
 * (runs/queue.ts): its hold, RUNNING or READY, its job and its notification. 402 when the hold cannot
 * pay for one unit.
 */
async function createRun(
  core: StartDeps,
  tx: Transaction,
  accountId: string,
  plan: PlannedRun,
  parentRunId: string | null,
  webhook?: { url: string; secret: string },
): Promise<{ run: RunSnapshot; heldMicros: bigint }> {
  const { tool, input, requested, estimated } = plan;
  const id = newRunId();
  const [created] = await tx
    .insert(runTable)
    .values({
      id,
      accountId,
      tool: tool.name,
      status: 'RUNNING',
      statusMessage: 'Starting',
      input,
      requested,
      // The statement's own time, not the transaction's: starts written together in one transaction
      // keep the order they arrived in, which is the order waiting runs start (promoteNextRun).
      createdAt: sql`clock_timestamp()`,
      startedAt: new Date(),
      fileName:
        typeof (input as { fileName?: unknown }).fileName === 'string'
          ? (input as { fileName: string }).fileName
          : null,
      estimatedMicros: estimated,
      parentRunId,
      webhookUrl: webhook?.url ?? null,
      webhookSecret: webhook?.secret ?? null,
    })
    .returning()
    // Prepared: the statement is parsed once per connection.
    .prepare('insert_run')
    .execute();
  const placed = await placeRun(core, tx, accountId, snapshotOf(created!), {
    wanted: tool.price.unitMicros > 0n ? estimated : 0n,
    overdraftMicros: tool.overdraftMicros ?? 0n,
  });
  const { held } = placed;
  if (held && tool.price.unitMicros > 0n && held.planMicros + held.purchasedMicros < tool.price.unitMicros) {
    const wallet = await getBalances(tx, accountId);
    const total = wallet.planMicros + wallet.purchasedMicros;
    throw new AppError(
      402,
      'insufficient_funds',
      total < 0n
        ? `The wallet is ${formatDollars(total)} USD, below zero: credits of a refunded or disputed purchase were taken back after they were spent. No run starts until it is settled; buy credits with POST /api/v1/buy-credits.`
        : `The wallet cannot pay for one ${tool.price.unit} (${formatDollars(tool.price.unitMicros)} USD). Buy credits with POST /api/v1/buy-credits.`,
    );
  }
  // With the limits off nothing is held: the estimate stands.
  return { run: placed.run, heldMicros: held ? held.planMicros + held.purchasedMicros : estimated };
}

/**
 * What a start answers about money: `estimatedCost` is what is held, the most the run can be charged;
 * when the wallet (plus the lead scraper's 1 USD) caps the hold below the estimate of everything
 * requested, `uncappedCost` states that estimate too.
 */
function costOf(estimated: bigint, held: bigint): { estimatedCost: number; uncappedCost?: number } {
  return held < estimated
    ? { estimatedCost: microsToNumber(held), uncappedCost: microsToNumber(estimated) }
    : { estimatedCost: microsToNumber(estimated) };
}

/** A start that passed its checks: writing it creates the run in the caller's transaction. */
export type PreparedStart = (tx: Transaction) => Promise<StartedRun>;

/**
 * Checks a start without touching the database (400 for the input, 403 for the plan) and returns its
 * write: in one transaction it creates the run with its worker job and holds its estimated cost (402
 * when the wallet cannot pay for one unit); when the account already has its maximum of runs RUNNING,
 * the run waits as READY. A tool's linked runs (property lookup's owner contact) are created the same
 * way in the same transaction. A run never exists without its hold and job, nor a job without its run.
 * Checking first keeps refused starts out of the account's write groups (account-writes.ts).
 */
export function prepareStart(core: StartDeps, principal: Principal, toolName: string, raw: unknown): PreparedStart {
  const tool = getTool(toolName);
  // Text Postgres cannot hold (NUL, unpaired surrogates), anywhere in the input, is refused first.
  assertStorable(raw);
  const { body, webhook } = takeWebhookUrl(raw);
  const main = planRun(principal, tool, body);
  const linked = (tool.linkedRuns?.(main.input) ?? []).map((link) => ({
    link,
    plan: planRun(principal, getTool(link.tool), link.input),
  }));
  // The guard's verdict on the webhook URL is looked up while the write waits its turn.
  const webhookGuarded = webhook?.guarded(core.network.guard);
  return async (tx) => {
    await webhookGuarded;
    const { run, heldMicros } = await createRun(core, tx, principal.accountId, main, null, webhook);
    const extra: Record<string, unknown> = {};
    for (const { link, plan } of linked) {
      const linkedRun = await createRun(core, tx, principal.accountId, plan, run.id);
      extra[link.field] = linkedRun.run.id;
    }
    const secret = webhook ? { webhookSecret: webhook.secret } : {};
    return {
      run,
      start: {
        message: main.start.message,
        extra: { ...costOf(main.estimated, heldMicros), ...main.start.extra, ...extra, ...secret },
      },
    };
  };
}

/** Starts a run (see `prepareStart`) as one of the account's writes. */
export async function startRun(
  core: StartDeps,
  principal: Principal,
  toolName: string,
  raw: unknown,
): Promise<StartedRun> {
  return core.accountWrites.run(principal.accountId, prepareStart(core, principal, toolName, raw));
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
  assertStorable(runId, 'runId');
  let statement = getRunStatements.get(db);
  if (!statement) getRunStatements.set(db, (statement = prepareGetRun(db)));
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
          ? sql`(${runTable.createdAt}, ${runTable.id}) < (select c.created_at, c.id from run c where c.id = ${cursor.id} and c.account_id = ${accountId})`
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
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(runTable)
    .where(
      and(
        eq(runTable.accountId, accountId),
        status ? eq(runTable.status, status) : undefined,
        tool ? eq(runTable.tool, tool) : undefined,
      ),
    );
  return row!.n;
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
      select * from unnest(${requests.map((r) => r.runId)}::text[], ${requests.map((r) => r.offset)}::int[], ${requests.map((r) => r.limit)}::int[])
        with ordinality as r(run_id, off, lim, i)
      where ${ended}
    )
    select r.i::text as i, item.data
    from r cross join lateral (
      select seq, data from run_item where run_id = r.run_id and seq >= r.off order by seq limit r.lim
    ) item
    order by r.i, item.seq`;
  const pages = requests.map((): Record<string, unknown>[] => []);
  for (const row of rows) pages[Number(row.i) - 1]!.push(row.data);
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
  const ended = requests.flatMap((r, i) => (r.expected === undefined ? [] : [i]));
  const live = requests.flatMap((r, i) => (r.expected === undefined ? [i] : []));
  const [livePages, endedPages] = await Promise.all([
    itemsOfRuns(
      core.sql,
      live.map((i) => requests[i]!),
      false,
    ),
    ended.length === 0
      ? []
      : core.catalogReader.read(async (sql) => {
          const onReplica = sql !== core.sql;
          const pages = await itemsOfRuns(
            sql,
            ended.map((i) => requests[i]!),
            onReplica,
          );
          const short = pages.findIndex((page, k) => page.length < requests[ended[k]!]!.expected!);
          if (onReplica && short >= 0)
            throw new NotReplayed(
              `the replica has ${pages[short]!.length} of ${requests[ended[short]!]!.expected} rows of run ${requests[ended[short]!]!.runId}`,
            );
          return pages;
        }),
  ]);
  const pages: Record<string, unknown>[][] = [];
  live.forEach((i, k) => (pages[i] = livePages[k]!));
  ended.forEach((i, k) => (pages[i] = endedPages[k]!));
  return pages;
}

/** The inputs the caller's runs among `ids` were started with, in the order of `ids` (null where another account's or none). */
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
