/**
 * A pipeline on its way (pipelines.ts declares, quotes and starts it): the job that moves it on when a
 * step's run ends, its end, its cancel, and a finished run's next step started by hand.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Database, Transaction } from '../../db/client.ts';
import { accountTable } from '../../db/tables/accounts.ts';
import { runItemTable, runTable, type Run } from '../../db/tables/runs.ts';
import { type Pipeline, pipelineTable } from '../../db/tables/workflows.ts';
import { lockAccount } from '../accounts/accounts.ts';
import type { Principal } from '../accounts/principal.ts';
import { passPipelineHold } from '../billing/hold.ts';
import type { Core } from '../core.ts';
import { cancelLockedRun } from '../runs/engine/index.ts';
import { assertNotExpired } from '../runs/exports.ts';
import { queuePipelineAdvance } from '../runs/queue.ts';
import { getRun } from '../runs/read.ts';
import { startRun, type StartDeps } from '../runs/start.ts';
import { isTerminal } from '../runs/view.ts';
import { AppError, ValidationError } from '../shared/errors.ts';
import { unstorable } from '../shared/params.ts';
import { getTool } from '../tools/index.ts';
import { findLink, linkValues, nextSteps, type StepLink } from '../tools/steps.ts';
import { queueAccountEvent } from '../webhooks/deliveries.ts';
import { queueDeliveries } from '../destinations/queue.ts';
import {
  announce,
  getPipeline,
  isPipelineEnded,
  linkOf,
  type PipelineStep,
  type PipelineView,
  pipelineNotFound,
  startStep,
} from './pipelines.ts';

/** The account as a pipeline's worker acts for it: its plan as it is now. */
async function actingPrincipal(tx: Transaction, pipeline: Pipeline): Promise<Principal | null> {
  const [account] = await tx
    .select({ plan: accountTable.plan, subscriptionStatus: accountTable.subscriptionStatus })
    .from(accountTable)
    .where(eq(accountTable.id, pipeline.accountId));
  return account ? { accountId: pipeline.accountId, keyId: pipeline.id, keyPrefix: '', ...account } : null;
}

/**
 * The values a run's rows give the next step through `link`: only the link's column is read, in row
 * order (a pipeline moves on with its account locked, so the read is kept small).
 */
async function valuesOfRun(db: Transaction | Database, runId: string, link: StepLink): Promise<string[]> {
  const cells = (await db.execute(
    sql`select data -> ${link.column} as cell from run_item where run_id = ${runId} order by seq`,
  )) as unknown as { cell: unknown }[];
  return linkValues(
    link,
    cells.map(({ cell }) => ({ [link.column]: cell })),
  );
}

/** Rows of a run, in order, read in pages (a pipeline step's, to feed the next and to join). */
export async function* runRows(
  tx: Transaction | Database,
  runId: string,
  start = 0,
): AsyncGenerator<Record<string, unknown>> {
  const PAGE = 1_000;
  let from = start;
  for (;;) {
    const page = await tx
      .select({ seq: runItemTable.seq, data: runItemTable.data })
      .from(runItemTable)
      .where(and(eq(runItemTable.runId, runId), sql`${runItemTable.seq} >= ${from}`))
      .orderBy(asc(runItemTable.seq))
      .limit(PAGE);
    for (const row of page) yield row.data as Record<string, unknown>;
    if (page.length < PAGE) return;
    from = (page.at(-1)?.seq ?? from) + 1;
  }
}

const collect = async <T>(rows: AsyncIterable<T>) => {
  const all: T[] = [];
  for await (const row of rows) all.push(row);
  return all;
};

/**
 * Moves a pipeline on once its current step's run has ended (the `advance_pipeline` job; safe to run
 * again): with the account and the pipeline locked, a cancel being made ends it ABORTED, a step that
 * failed ends it FAILED, the last step's end ends it SUCCEEDED, and otherwise the next step starts with
 * the values of the rows this one delivered, or, when there are none, the pipeline ends SUCCEEDED
 * saying so. Every end releases what is left of the hold.
 */
export async function advancePipeline(core: StartDeps, pipelineId: string): Promise<void> {
  await core.db.transaction(async (tx) => {
    const [found] = await tx.select().from(pipelineTable).where(eq(pipelineTable.id, pipelineId));
    if (!found || isPipelineEnded(found.status)) return;
    await lockAccount(tx, found.accountId);
    const [pipeline] = await tx.select().from(pipelineTable).where(eq(pipelineTable.id, pipelineId)).for('update');
    if (!pipeline || isPipelineEnded(pipeline.status)) return;
    const steps = pipeline.steps as PipelineStep[];
    const [current] = await tx
      .select()
      .from(runTable)
      .where(and(eq(runTable.pipelineId, pipeline.id), eq(runTable.pipelineStep, pipeline.step)));
    if (current && !isTerminal(current.status)) return;
    const title = getTool(steps[pipeline.step]?.tool ?? '').title;
    const at = `Step ${pipeline.step + 1} of ${steps.length} (${title})`;
    if (pipeline.status === 'ABORTING' || current?.status === 'ABORTED')
      return endPipeline(
        core,
        tx,
        pipeline,
        'ABORTED',
        `Cancelled at ${at.toLowerCase()}; the rest of the hold was released`,
      );
    if (!current || current.status === 'FAILED' || current.status === 'TIMED-OUT')
      return endPipeline(
        core,
        tx,
        pipeline,
        'FAILED',
        `${at} ended ${current?.status ?? 'without a run'}: ${current?.statusMessage ?? ''}; ` +
          'the steps after it did not run',
      );
    const next = pipeline.step + 1;
    const nextStep = steps[next];
    if (!nextStep) return endPipeline(core, tx, pipeline, 'SUCCEEDED', `All ${steps.length} steps ran`);
    const link = linkOf(nextStep);
    if (!link) throw new Error(`pipeline ${pipeline.id}: step ${next} has no link`);
    const values = await valuesOfRun(tx, current.id, link);
    if (values.length === 0)
      return endPipeline(
        core,
        tx,
        pipeline,
        'SUCCEEDED',
        `${at} found no ${link.what} for step ${next + 1}, so the steps after it had nothing to do`,
      );
    const left = pipeline.holdPlanMicros + pipeline.holdPurchasedMicros;
    if (core.config.enforceLimits && left < getTool(nextStep.tool).price.unitMicros)
      return endPipeline(
        core,
        tx,
        pipeline,
        'SUCCEEDED',
        `The pipeline's hold was used up after ${at.toLowerCase()}: step ${next + 1} did not run. ` +
          'Top up the wallet to run it again.',
        true,
      );
    const principal = await actingPrincipal(tx, pipeline);
    if (!principal) return;
    let moved: Pipeline;
    try {
      // A savepoint: a step its account cannot start now (its plan changed) ends the pipeline, not the job.
      moved = await tx.transaction((sp) =>
        startStep(core, sp, principal, pipeline, next, { ...nextStep.input, [link.field]: values }),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      return endPipeline(core, tx, pipeline, 'FAILED', `Step ${next + 1} could not start: ${err.message}`);
    }
    await announce(core, tx, moved);
  });
}

/** Ends a pipeline: what is left of its hold released, its end announced and sent to webhooks. */
async function endPipeline(
  core: StartDeps,
  tx: Transaction,
  pipeline: Pipeline,
  status: 'SUCCEEDED' | 'FAILED' | 'ABORTED',
  message: string,
  budgetExhausted = false,
): Promise<void> {
  const hold = { planMicros: pipeline.holdPlanMicros, purchasedMicros: pipeline.holdPurchasedMicros };
  await passPipelineHold(
    tx,
    pipeline.accountId,
    pipeline.id,
    hold,
    hold.planMicros + hold.purchasedMicros,
    'hold released',
  );
  const [ended] = await tx
    .update(pipelineTable)
    .set({
      status,
      statusMessage: message,
      stoppedReason: budgetExhausted ? 'budget_exhausted' : null,
      holdPlanMicros: 0n,
      holdPurchasedMicros: 0n,
      finishedAt: sql`now()`,
      // Its table is made of its steps' rows: it lasts as long as the first step's.
      expiresAt: sql`(select min(expires_at) from run where pipeline_id = ${pipeline.id})`,
    })
    .where(eq(pipelineTable.id, pipeline.id))
    .returning();
  if (!ended) return;
  await announce(core, tx, ended);
  if (ended.destinationIds?.length)
    await queueDeliveries(core, tx, ended.accountId, { pipelineId: ended.id }, ended.destinationIds);
  const event = `pipeline.${status.toLowerCase()}` as 'pipeline.succeeded' | 'pipeline.failed' | 'pipeline.aborted';
  await queueAccountEvent(tx, pipeline.accountId, event, {
    type: event,
    timestamp: new Date().toISOString(),
    data: {
      pipelineId: pipeline.id,
      status,
      statusMessage: message,
      taskId: pipeline.taskId,
      scheduleId: pipeline.scheduleId,
    },
  });
}

/**
 * Cancels a pipeline: it goes ABORTING and its running step is cancelled; once that run has ended the
 * pipeline ends ABORTED and the rest of its hold is released. A step whose tool cannot be cancelled runs
 * to its end first. 409 `pipeline_finished` once it has ended.
 */
export async function cancelPipeline(core: StartDeps, principal: Principal, id: string): Promise<PipelineView> {
  if (unstorable(id)) throw pipelineNotFound('');
  await core.db.transaction(async (tx) => {
    await lockAccount(tx, principal.accountId);
    const [pipeline] = await tx
      .select()
      .from(pipelineTable)
      .where(and(eq(pipelineTable.id, id), eq(pipelineTable.accountId, principal.accountId)))
      .for('update');
    if (!pipeline) throw pipelineNotFound(id);
    if (isPipelineEnded(pipeline.status))
      throw new AppError(409, 'pipeline_finished', `The pipeline has already ended (${pipeline.status}).`);
    if (pipeline.status === 'ABORTING') return;
    const [current] = await tx
      .select()
      .from(runTable)
      .where(and(eq(runTable.pipelineId, pipeline.id), eq(runTable.pipelineStep, pipeline.step)))
      .for('update');
    const cancellable = current && !isTerminal(current.status) && getTool(current.tool).cancellable;
    const [aborting] = await tx
      .update(pipelineTable)
      .set({
        status: 'ABORTING',
        statusMessage:
          current && !isTerminal(current.status) && !cancellable
            ? `Cancelling: step ${pipeline.step + 1} (${getTool(current.tool).title}) cannot be cancelled, ` +
              'so the pipeline stops when it ends'
            : 'Cancelling: the running step is being stopped',
      })
      .where(eq(pipelineTable.id, pipeline.id))
      .returning();
    if (aborting) await announce(core, tx, aborting);
    if (current && cancellable && current.status !== 'ABORTING') await cancelLockedRun(core, tx, current);
    // Between steps (or a step that ended a moment ago) the job moves it on to its end.
    if (!current || isTerminal(current.status)) await queuePipelineAdvance(tx, pipeline.id);
  });
  return getPipeline(core.db, principal.accountId, id);
}

/**
 * Starts a finished run's next step: `to` fed with the values of the run's rows through their link
 * (through `column` when several), `input` giving its other fields; an ordinary start, linked to the run
 * by `parentRunId`. 400 at `tool` when no link leads there, at `runId` when the run has not ended or its
 * rows give nothing.
 */
export async function startNextStep(
  core: StartDeps & Pick<Core, 'clock'>,
  principal: Principal,
  runId: string,
  next: { tool: string; column?: string; input?: Record<string, unknown> },
) {
  const given: unknown = next.input;
  if (given !== undefined && (given === null || typeof given !== 'object' || Array.isArray(given)))
    throw new ValidationError([{ path: 'input', message: 'must be an object of the tool’s other fields' }]);
  const run = await getRun(core.db, principal.accountId, runId);
  const link = findLink(run.tool, next.tool, next.column);
  if (!link) {
    const offered = nextSteps(run.tool).map((l) => `${l.to} (from ${l.column})`);
    throw new ValidationError([
      {
        path: 'tool',
        message: `${getTool(run.tool).title} rows cannot feed ${next.tool}; ${
          offered.length > 0 ? `they can feed ${offered.join(', ')}` : 'nothing can follow them'
        }`,
      },
    ]);
  }
  if (!isTerminal(run.status))
    throw new ValidationError([
      { path: 'runId', message: 'the run has not ended: its next step starts from its rows' },
    ]);
  assertNotExpired(run, core.clock());
  const values = await valuesOfRun(core.db, run.id, link);
  if (values.length === 0)
    throw new ValidationError([{ path: 'runId', message: `the run's rows have no ${link.what} for ${next.tool}` }]);
  if (next.input && link.field in next.input)
    throw new ValidationError([
      { path: `input.${link.field}`, message: `comes from the run's ${link.column}: leave it out` },
    ]);
  return startRun(
    core,
    principal,
    link.to,
    { ...next.input, [link.field]: values.slice(0, link.max) },
    {
      origin: { parentRunId: run.id },
    },
  );
}

/** What a finished run can feed next (src/tools/steps.ts), with how many values its rows give each. */
export async function runNextSteps(db: Database, run: Run) {
  const links = nextSteps(run.tool);
  if (links.length === 0 || !isTerminal(run.status)) return links.map((link) => ({ link, values: 0 }));
  const rows = await collect(runRows(db, run.id));
  return links.map((link) => ({ link, values: linkValues(link, rows).length }));
}
