/**
 * A run's start: the input checked, the run planned and priced, then written in the caller's
 * transaction (the run, its linked runs, its webhook) and placed by the queue; a dry run does all of
 * it and rolls it back.
 */
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Transaction } from '../../db/client.ts';
import { runTable } from '../../db/tables/runs.ts';
import { oneRow } from '../../db/rows.ts';
import type { Core } from '../core.ts';
import { getTool } from '../tools/index.ts';
import type { StartInfo, ToolDefinition } from '../tools/types.ts';
import type { Principal } from '../accounts/accounts.ts';
import { AppError, fromZodError, ValidationError } from '../shared/errors.ts';
import { assertStorable } from '../shared/params.ts';
import { assertKnownFields } from '../shared/fields.ts';
import { formatDollars, microsToNumber, usdToMicros } from '../billing/money.ts';
import { assertPlan } from '../billing/plans.ts';
import { assertPermissibleUse } from '../accounts/permissible-use.ts';
import { getBalances } from '../billing/wallet.ts';
import { idempotentWrite } from '../accounts/idempotency.ts';
import { checkWebhookUrl, newSigningSecret, webhookUrl } from '../webhooks/subscriptions.ts';
import type { OutboundGuard } from '../net/guard.ts';
import { newRunId } from '../shared/ids.ts';
import { snapshotOf, type RunSnapshot } from './view.ts';
import { placeRun } from './queue.ts';
import { getRun } from './read.ts';
import { upstreamActor } from './upstream.ts';
import { type DatasetChoice, datasetName, onlyNew, openDataset } from '../datasets/index.ts';
import { assertDestinations, takeDestinations } from '../destinations/destinations.ts';

/**
 * Validates a tool's input at the boundary: 400 `validation_failed` naming every bad field, or every field the tool
 * does not know.
 */
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

export type StartDeps = Pick<Core, 'db' | 'events' | 'config' | 'accountWrites' | 'network'>;

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

/**
 * Any tool start may carry `datasetName` and `onlyNew` (src/datasets): the run adds its rows to the
 * account's dataset of that name, and with `onlyNew` delivers only rows it has not delivered before.
 * A tool whose own input declares `datasetName` (the business-for-sale scraper) keeps it in its input,
 * and always delivers only new rows (its spec); `onlyNew: false` is refused there.
 */
function takeDataset(tool: ToolDefinition, raw: unknown): { body: unknown; dataset?: DatasetChoice } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { body: raw };
  const own = ownDatasetName(tool);
  const { onlyNew: onlyNewValue, ...rest } = raw as Record<string, unknown>;
  const { datasetName: nameValue, ...others } = rest;
  const body = own ? rest : others;
  const issues: { path: string; message: string }[] = [];
  const name = nameValue === undefined || nameValue === null ? undefined : datasetName.safeParse(nameValue);
  if (name && !name.success)
    issues.push(...name.error.issues.map((i) => ({ path: 'datasetName', message: i.message })));
  const only = onlyNewValue === undefined || onlyNewValue === null ? undefined : onlyNew.safeParse(onlyNewValue);
  if (only && !only.success) issues.push(...only.error.issues.map((i) => ({ path: 'onlyNew', message: i.message })));
  if (issues.length > 0) throw new ValidationError(issues);
  if (only?.data === true && !name)
    throw new ValidationError([{ path: 'onlyNew', message: 'needs datasetName: the dataset whose rows are not new' }]);
  if (own && only?.data === false && name)
    throw new ValidationError([
      { path: 'onlyNew', message: `${tool.title}'s datasetName always skips what it delivered before: remove onlyNew` },
    ]);
  if (!name?.data) return { body };
  return { body, dataset: { name: name.data, onlyNew: only?.data ?? own } };
}

/** Whether the tool's own input declares `datasetName` (and so keeps it). */
const ownDatasetName = (tool: ToolDefinition) =>
  tool.input instanceof z.ZodObject && 'datasetName' in (tool.input as z.ZodObject).shape;

interface PlannedRun {
  tool: ToolDefinition;
  input: unknown;
  start: StartInfo;
  requested: number;
  estimated: bigint;
}

/**
 * Plans a run of `toolName` as a start would, with no database: its input checked (400), the plan gate
 * (403), what a live source cannot take (400); answers the input as run, the items requested and the
 * estimate. A pipeline quotes its steps with it.
 */
export function planToolRun(config: StartDeps['config'], principal: Principal, toolName: string, raw: unknown) {
  const tool = getTool(toolName);
  // The start's own fields (webhookUrl, datasetName, onlyNew) are not the tool's input.
  const plan = planRun(principal, tool, takeDataset(tool, takeWebhookUrl(takeDestinations(raw).body).body).body);
  assertUpstreamCanRun(config, plan);
  return { input: plan.input, requested: plan.requested, estimated: plan.estimated };
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
  dataset?: DatasetChoice,
  origin: RunOrigin = {},
  holdAtMost?: bigint,
): Promise<{ run: RunSnapshot; heldMicros: bigint }> {
  const { tool, input, requested, estimated } = plan;
  await assertPermissibleUse(tx, accountId, tool);
  const id = newRunId();
  if (dataset) await openDataset(tx, accountId, dataset.name, tool);
  const created = await tx
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
      parentRunId: parentRunId ?? origin.parentRunId ?? null,
      webhookUrl: webhook?.url ?? null,
      webhookSecret: webhook?.secret ?? null,
      datasetName: dataset?.name ?? null,
      onlyNew: dataset?.onlyNew ?? false,
      taskId: origin.taskId ?? null,
      scheduleId: origin.scheduleId ?? null,
      pipelineId: origin.pipeline?.id ?? null,
      pipelineStep: origin.pipeline?.step ?? null,
      destinationIds: origin.destinations?.length ? origin.destinations : null,
    })
    .returning()
    // Prepared: the statement is parsed once per connection.
    .prepare('insert_run')
    .execute();
  const placed = await placeRun(core, tx, accountId, snapshotOf(oneRow(created, 'the inserted run')), {
    wanted:
      tool.price.unitMicros === 0n ? 0n : holdAtMost !== undefined && holdAtMost < estimated ? holdAtMost : estimated,
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
        ? `The wallet is ${formatDollars(total)} USD, below zero: credits of a refunded or disputed purchase ` +
            `were taken back after they were spent. No run starts until it is settled; ` +
            `buy credits with POST /api/v1/buy-credits.`
        : `The wallet cannot pay for one ${tool.price.unit} (${formatDollars(tool.price.unitMicros)} USD). ` +
            `Buy credits with POST /api/v1/buy-credits.`,
    );
  }
  const heldMicros = held ? held.planMicros + held.purchasedMicros : estimated;
  assertAboveMinimumCharge(core.config, tool, heldMicros, estimated);
  // With the limits off nothing is held: the estimate stands.
  return { run: placed.run, heldMicros };
}

/**
 * A tool running on an upstream actor: 400 `validation_failed` when the input asks for what the actor
 * cannot be asked for (its declaration's `unsupported`), naming each.
 */
function assertUpstreamCanRun(config: StartDeps['config'], plan: PlannedRun) {
  const unsupported = upstreamActor(config, plan.tool.name)?.declaration.unsupported?.(plan.input) ?? [];
  if (unsupported.length === 0) return;
  const message =
    `${plan.tool.title} runs on a live source here, which cannot take ${unsupported.join('; ')}. ` +
    'Change or remove them to start it.';
  throw new ValidationError(
    unsupported.map((what) => ({ path: '', message: `The live source this tool runs on cannot take ${what}.` })),
    message,
  );
}

/**
 * A tool running on an upstream actor with a minimum charge per run (its declaration's
 * `minimumChargeUsd`): a start that would hold less is refused, 402 when the wallet capped the hold,
 * 400 when the start itself is quoted below it.
 */
function assertAboveMinimumCharge(config: StartDeps['config'], tool: ToolDefinition, held: bigint, estimated: bigint) {
  const minimum = upstreamActor(config, tool.name)?.declaration.minimumChargeUsd;
  if (minimum === undefined || held >= usdToMicros(minimum)) return;
  const least = formatDollars(usdToMicros(minimum));
  const source = `${tool.title} runs on a live source that charges at least ${least} USD a run`;
  if (held < estimated)
    throw new AppError(
      402,
      'insufficient_funds',
      `${source}; the wallet can hold ${formatDollars(held)} USD for this one. Top up the wallet to start it.`,
    );
  const message = `${source}; this start is quoted at ${formatDollars(estimated)} USD. Ask for more results.`;
  throw new ValidationError([{ path: '', message }], message);
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
export function prepareStart(
  core: StartDeps,
  principal: Principal,
  toolName: string,
  raw: unknown,
  limits: StartLimits = {},
  origin: RunOrigin = {},
): PreparedStart {
  const tool = getTool(toolName);
  // Text Postgres cannot hold (NUL, unpaired surrogates), anywhere in the input, is refused first.
  assertStorable(raw);
  const { body: withoutDestinations, destinations } = takeDestinations(raw);
  const { body: withoutWebhook, webhook } = takeWebhookUrl(withoutDestinations);
  const { body, dataset } = takeDataset(tool, withoutWebhook);
  const main = planRun(principal, tool, body);
  assertUpstreamCanRun(core.config, main);
  const linked = (tool.linkedRuns?.(main.input) ?? []).map((link) => ({
    link,
    plan: planRun(principal, getTool(link.tool), link.input),
  }));
  assertWithinCost(limits, [main, ...linked.map((l) => l.plan)]);
  // The guard's verdict on the webhook URL is looked up while the write waits its turn.
  const webhookGuarded = webhook?.guarded(core.network.guard);
  return async (tx) => {
    await webhookGuarded;
    await assertDestinations(tx, principal.accountId, destinations);
    const { run, heldMicros } = await createRun(
      core,
      tx,
      principal.accountId,
      main,
      null,
      webhook,
      dataset,
      { ...origin, destinations },
      limits.holdAtMostMicros,
    );
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

/** Where a run came from besides a caller's start: the saved task it runs, the schedule that fired it. */
export interface RunOrigin {
  taskId?: string;
  scheduleId?: string;
  /** The pipeline the run is a step of, and which step (src/workflows/pipelines.ts). */
  pipeline?: { id: string; step: number };
  /** The finished run whose rows it was started from (a run's next step, src/workflows/pipelines.ts). */
  parentRunId?: string;
  /** Destinations its rows are delivered to when it ends. */
  destinations?: string[];
}

/** What a caller may bound a start by, beyond its input. */
export interface StartLimits {
  /** The most the start may be quoted (its runs' estimates together), micro-USD: above it nothing starts. */
  maxCostMicros?: bigint;
  /**
   * The most the run may hold, micro-USD, below its estimate: a pipeline's step holds what is left of
   * the pipeline's hold (src/workflows/pipelines.ts), never more of the wallet.
   */
  holdAtMostMicros?: bigint;
}

/** 400 `cost_limit_exceeded` when the runs' estimate together is over the caller's `maxCostMicros`. */
function assertWithinCost(limits: StartLimits, plans: readonly PlannedRun[]) {
  if (limits.maxCostMicros === undefined) return;
  const quoted = plans.reduce((sum, plan) => sum + plan.estimated, 0n);
  if (quoted <= limits.maxCostMicros) return;
  throw new AppError(
    400,
    'cost_limit_exceeded',
    `This start is quoted at ${formatDollars(quoted)} USD, over the limit of ` +
      `${formatDollars(limits.maxCostMicros)} USD it was given: nothing was started or held. ` +
      'Ask for fewer results, or raise the limit.',
    [{ path: 'maxCostUsd', message: `the quote is ${formatDollars(quoted)} USD` }],
  );
}

/**
 * A start as REST and MCP answer it (run id and status, message, the tool's own fields), and as an
 * idempotency key they share stores it.
 */
export const startAnswerOf = ({ run, start }: StartedRun) => ({
  runId: run.id,
  status: run.status,
  message: start.message,
  ...start.extra,
});

/**
 * Starts a run (see `prepareStart`) as one of the account's writes. With an idempotency key, a retry
 * of the same start (same tool, same input) within 24 hours answers the first start instead of
 * starting another; the key is shared with the tool's REST route, whose scope it takes and whose
 * answer it stores (`startAnswerOf`), so a retry through either face replays the other's start.
 */
export async function startRun(
  core: StartDeps,
  principal: Principal,
  toolName: string,
  raw: unknown,
  options: StartLimits & { idempotencyKey?: string; origin?: RunOrigin } = {},
): Promise<StartedRun> {
  const { idempotencyKey, origin, ...limits } = options;
  const prepare = () => prepareStart(core, principal, toolName, raw, limits, origin);
  if (idempotencyKey === undefined)
    return (await idempotentWrite(core, { principal, key: undefined, scope: toolName }, prepare)).body;
  const scope = `POST ${getTool(toolName).rest.path}`;
  const { body } = await idempotentWrite(
    core,
    { principal, key: idempotencyKey, scope, request: raw ?? null },
    prepare,
    startAnswerOf,
  );
  // The stored answer names the run; the run itself is read as it is now.
  const { runId, status: _status, message, ...extra } = body;
  return { run: snapshotOf(await getRun(core.db, principal.accountId, runId)), start: { message, extra } };
}

/** Thrown to roll a dry run's transaction back with the start it made. */
class DryRunRollback {
  constructor(readonly started: StartedRun) {}
}

/**
 * Everything a start does, in a transaction rolled back at the end: the input's checks, the plan
 * gate, the estimate and the wallet's hold (402 when it cannot pay for one unit); nothing is kept
 * (notifications and jobs are part of the transaction, so none goes out).
 */
export async function dryRunStart(
  core: StartDeps,
  principal: Principal,
  toolName: string,
  raw: unknown,
  limits: StartLimits = {},
): Promise<StartedRun> {
  const start = prepareStart(core, principal, toolName, raw, limits);
  try {
    await core.db.transaction(async (tx) => {
      throw new DryRunRollback(await start(tx));
    });
  } catch (err) {
    if (err instanceof DryRunRollback) return err.started;
    throw err;
  }
  throw new Error('unreachable: a dry run always rolls back');
}
