import { eq, sql, type SQL } from 'drizzle-orm';
import type { Executor, Transaction } from '../../db/client.ts';
import { runTable } from '../../db/tables/runs.ts';
import { oneRow } from '../../db/rows.ts';
import type { Core } from '../core.ts';
import type { Balances } from '../billing/wallet.ts';
import { holdExpressions, type HoldTerms, type WalletRowShare } from '../billing/hold.ts';
import { JOBS } from '../workers/jobs.ts';
import { snapshotOf, type RunSnapshot } from './view.ts';

/**
 * The run queue owns the concurrency rule whole: an account has at most `config.maxRunningRuns` runs
 * RUNNING; a start beyond waits as READY and starts, oldest first, when a slot frees. The count of
 * RUNNING (and ABORTING) runs is kept on the account's wallet row (`active_runs`), the row every start
 * already locks for its hold, so placing a run takes no lock of its own. Only this file reads or
 * writes that counter.
 */

type QueueDeps = Pick<Core, 'events' | 'config'>;

/** The call that adds a run's worker job (keyed by the run, so it is added at most once). */
const runJob = (runId: string) =>
  sql`graphile_worker.add_job(${JOBS.runTool}::text, json_build_object('runId', ${runId}::text),
    max_attempts => 5, job_key => ${runId}::text)`;

/** Adds the worker job of a run, in the caller's transaction. */
export async function enqueueRun(tx: Executor, runId: string) {
  await tx.execute(sql`select ${runJob(runId)}`);
}

/**
 * Adds the job that moves a pipeline on (workflows/pipelines.ts `advancePipeline`), in the caller's
 * transaction: keyed by the pipeline, so steps ending together leave one job waiting.
 */
export async function queuePipelineAdvance(tx: Executor, pipelineId: string) {
  await tx.execute(sql`select graphile_worker.add_job(${JOBS.advancePipeline}::text,
    json_build_object('pipelineId', ${pipelineId}::text), max_attempts => 10,
    job_key => ${`pipeline:${pipelineId}`}::text)`);
}

/** Status message of a run waiting for a slot. */
export const waitingMessage = (max: number) =>
  `Waiting: ${max} runs of this account are running; this one starts when one of them finishes`;

export interface HoldRequest extends HoldTerms {
  /** RUNNING runs an account may have; a start beyond waits as READY. */
  maxRunning: number;
  /** Status message of a run that waits. */
  waitingMessage: string;
  /** The run's notification for each outcome (its channels and payloads). */
  notify: { channels: string[]; running: string; ready: string };
  /** A call that adds the run's worker job; made only when the run is placed RUNNING. */
  enqueue: SQL;
}

/**
 * Places a new run, in one statement: locks the account's wallet row, reserves up to `wanted`
 * (purchased credits first) with its ledger entry, decides RUNNING or READY from the active-run count
 * kept on that same row (read after the lock is granted, so concurrent starts and ends are all
 * seen), updates the run (inserted RUNNING by the caller, in the same transaction), adds its worker
 * job if it runs now (a waiting run gets one when a slot frees) and sends its notification. The
 * wallet row is the only lock a start takes, and it is held from this statement to the commit,
 * nothing longer. The guard is in the UPDATE, so concurrent holds never overdraw.
 *
 * The hold is billing's rule: billing/hold.ts writes it (`holdExpressions`) and settles it at the
 * run's end. It is taken inside the queue's statement, not in one of its own: the balances and the
 * slot count are columns of the one wallet row, and PostgreSQL updates a row once per statement, so a
 * hold in a statement of billing's would cost a second statement (a round trip, with the row lock
 * held across it) on every start. The queue hands its slot count to the hold's update instead.
 */
export async function holdAndPlace(tx: Executor, h: HoldRequest): Promise<Balances & { queued: boolean }> {
  const slot: WalletRowShare = {
    decide: sql`active_runs >= ${h.maxRunning} as queued`,
    set: sql`active_runs = w.active_runs + case when d.queued then 0 else 1 end`,
    returning: sql`d.queued`,
  };
  const rows = (await tx.execute(sql`
    with ${holdExpressions(h, slot)}, placed as (
      update run r set
        status = case when u.queued then 'READY'::run_status else r.status end,
        status_message = case when u.queued then ${h.waitingMessage} else r.status_message end,
        started_at = case when u.queued then null else r.started_at end,
        hold_purchased_micros = u.from_purchased,
        hold_plan_micros = u.from_plan
      from updated u
      where r.id = ${h.runId}
      returning r.id
    ), job as (
      select ${h.enqueue} from updated where not queued
    )
    select u.from_purchased::text as purchased, u.from_plan::text as plan, u.queued,
      ${sql.join(
        h.notify.channels.map((channel) => sql`pg_notify(${channel}, n.payload)`),
        sql`, `,
      )},
      (select count(*)::int from placed) as placed,
      (select count(*)::int from job) as enqueued
    from updated u cross join lateral (
      select case when u.queued then ${h.notify.ready} else ${h.notify.running} end as payload
    ) n`)) as unknown as {
    purchased: string;
    plan: string;
    queued: boolean;
    placed: number;
    enqueued: number;
  }[];
  const row = rows[0];
  if (row?.placed !== 1)
    throw new Error(`account ${h.accountId} has no wallet, or run ${h.runId} was not inserted first`);
  if (row.enqueued !== (row.queued ? 0 : 1)) throw new Error(`run ${h.runId}: its job was not added`);
  return { purchasedMicros: BigInt(row.purchased), planMicros: BigInt(row.plan), queued: row.queued };
}

/**
 * Queues a run just inserted RUNNING (in the caller's transaction). With the limits off it simply
 * runs: its job is added and its creation announced. With them on, `holdAndPlace` holds `wanted` and
 * decides RUNNING or READY in one statement, last before the commit, so concurrent starts of one
 * account wait on each other for as short a time as possible. Returns the run as placed and what
 * was held (null with the limits off).
 */
export async function placeRun(
  deps: QueueDeps,
  tx: Executor,
  accountId: string,
  running: RunSnapshot,
  hold: { wanted: bigint; overdraftMicros: bigint },
): Promise<{ run: RunSnapshot; held: Balances | null }> {
  if (!deps.config.enforceLimits) {
    await enqueueRun(tx, running.id);
    await deps.events.publishRun(tx, accountId, 'created', running);
    return { run: running, held: null };
  }
  const max = deps.config.maxRunningRuns;
  const ready: RunSnapshot = { ...running, status: 'READY', statusMessage: waitingMessage(max), startedAt: null };
  const note = (snapshot: RunSnapshot) => deps.events.runNotification(accountId, 'created', snapshot);
  const held = await holdAndPlace(tx, {
    accountId,
    runId: running.id,
    wanted: hold.wanted,
    overdraftMicros: hold.overdraftMicros,
    maxRunning: max,
    waitingMessage: waitingMessage(max),
    notify: { channels: note(running).channels, running: note(running).payload, ready: note(ready).payload },
    enqueue: runJob(running.id),
  });
  // A waiting run has no job; it gets one when a slot frees (promoteNextRun).
  const placed = held.queued ? ready : running;
  deps.events.published(tx, accountId, 'created', placed);
  return { run: placed, held };
}

/** One active run fewer (it ended), in the caller's transaction; never below zero. */
export async function releaseRunSlot(tx: Executor, accountId: string) {
  await tx.execute(sql`update wallet set active_runs = greatest(active_runs - 1, 0) where account_id = ${accountId}`);
}

/**
 * The next READY run of the account takes a free slot, if there is one, oldest first (the caller
 * holds the account's lock): it becomes RUNNING, gets its job and is announced. Its start time is
 * the statement's, taken under the lock, so start times follow the order of promotion even when the
 * transactions that end runs began in another order.
 */
export async function promoteNextRun(deps: QueueDeps, tx: Transaction, accountId: string) {
  const [next] = (await tx.execute(sql`
    with slot as (
      update wallet set active_runs = active_runs + 1
      where account_id = ${accountId} and active_runs < ${deps.config.maxRunningRuns}
        and exists (select 1 from run where account_id = ${accountId} and status = 'READY')
      returning 1
    )
    update run set status = 'RUNNING', started_at = clock_timestamp(), status_message = 'Starting'
    where id = (select id from run where account_id = ${accountId} and status = 'READY' order by created_at, id limit 1)
      and exists (select 1 from slot)
    returning id`)) as unknown as { id: string }[];
  if (!next) return;
  await enqueueRun(tx, next.id);
  const promoted = await tx.select().from(runTable).where(eq(runTable.id, next.id));
  await deps.events.publishRun(tx, accountId, 'progress', snapshotOf(oneRow(promoted, `run ${next.id} promoted`)));
}
