/**
 * Schedules: a saved task fired on a cron expression in a time zone (croner: five fields, daylight
 * saving handled by the zone's rules). The worker pool looks for due schedules every minute
 * (`fire_schedules` in the crontab); each tick fires at most once however many workers look, keyed by
 * (schedule, tick) in `schedule_fire`. After downtime a schedule fires once for the ticks it missed,
 * then goes on from the next tick to come. A schedule is exclusive by default: a tick whose previous
 * run is still going is skipped, with the reason recorded. A tick the account cannot pay for, or whose
 * tool its plan no longer allows, pauses the schedule with the reason and emits `schedule.paused`.
 * Creating, pausing (by hand or by the gateway), resuming and deleting a schedule are audited.
 */
import { Cron } from 'croner';
import { and, desc, eq, isNull, lt, lte, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Database, Executor } from '../../db/client.ts';
import { accountTable } from '../../db/tables/accounts.ts';
import { runTable, TERMINAL_STATUSES } from '../../db/tables/runs.ts';
import {
  pipelineTable,
  savedTaskTable,
  scheduleFireTable,
  scheduleTable,
  type FireOutcome,
  type Schedule,
  type ScheduleFire,
} from '../../db/tables/workflows.ts';
import type { Principal } from '../accounts/accounts.ts';
import type { AuditDetails } from '../audit/actions.ts';
import { type AuditActor, type AuditClient, byCaller, recordAudit, SYSTEM } from '../audit/audit.ts';
import type { Core } from '../core.ts';
import type { StartDeps } from '../runs/start.ts';
import { AppError, fromZodError, ValidationError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { assertStorable, unstorable } from '../shared/params.ts';
import { queueAccountEvent } from '../webhooks/deliveries.ts';
import { findTask, startTask } from './tasks.ts';

export const newScheduleId = () => `sch_${randomBase62(16)}`;

/** A time zone the runtime knows (IANA: `America/Denver`, `UTC`). */
const isTimeZone = (zone: string) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

/** The cron of a schedule, or the words of what is wrong with it. */
function cronOf(pattern: string, timezone: string): Cron | string {
  if (pattern.trim().split(/\s+/).length !== 5)
    return 'must have five fields: minute, hour, day of month, month, day of week (e.g. "0 9 * * 1")';
  try {
    return new Cron(pattern, { timezone, paused: true });
  } catch (err) {
    return `is not a cron expression: ${(err as Error).message}`;
  }
}

export const scheduleInput = z
  .object({
    task: z.string().min(1, 'must not be empty').describe('The saved task it fires, by id (tsk_…) or name.'),
    cron: z.string().trim().min(1, 'must not be empty').describe('Five-field cron expression, e.g. "0 9 * * 1".'),
    timezone: z
      .string()
      .default('UTC')
      .refine(isTimeZone, 'is not a time zone (IANA names such as America/Denver, or UTC)')
      .describe('IANA time zone the expression is read in; default UTC.'),
    exclusive: z
      .boolean()
      .default(true)
      .describe('Skip a tick while the run of the one before is still going; default true.'),
  })
  .strict();

type ScheduleAction = 'schedule.created' | 'schedule.paused' | 'schedule.resumed' | 'schedule.deleted';

/** The audit log's event of a change of a schedule, in the change's transaction; the target named by its task. */
const audited = <A extends ScheduleAction>(
  tx: Executor,
  who: { accountId: string; actor: AuditActor; client?: AuditClient | null },
  action: A,
  schedule: Schedule,
  details: AuditDetails[A],
) =>
  recordAudit(tx, {
    ...who,
    action,
    target: {
      type: 'schedule',
      id: schedule.id,
      label: sql`(select name from saved_task where id = ${schedule.taskId})`,
    },
    details,
  });

/** The next tick of a schedule after `now`, or null when its expression has none. */
export function nextTick(schedule: Pick<Schedule, 'cron' | 'timezone'>, now: Date): Date | null {
  const cron = cronOf(schedule.cron, schedule.timezone);
  return typeof cron === 'string' ? null : cron.nextRun(now);
}

export async function createSchedule(
  core: Pick<Core, 'db' | 'clock'>,
  principal: Principal,
  raw: unknown,
): Promise<Schedule> {
  assertStorable(raw);
  const parsed = scheduleInput.safeParse(raw ?? {});
  if (!parsed.success) throw fromZodError(parsed.error);
  const input = parsed.data;
  const cron = cronOf(input.cron, input.timezone);
  if (typeof cron === 'string') throw new ValidationError([{ path: 'cron', message: cron }]);
  const task = await findTask(core.db, principal.accountId, input.task);
  return core.db.transaction(async (tx) => {
    const [created] = await tx
      .insert(scheduleTable)
      .values({
        id: newScheduleId(),
        accountId: principal.accountId,
        taskId: task.id,
        cron: input.cron,
        timezone: input.timezone,
        exclusive: input.exclusive,
        nextFireAt: cron.nextRun(core.clock()),
      })
      .returning();
    if (!created) throw new Error('the schedule was not created');
    const { cron: pattern, timezone, exclusive } = created;
    await audited(tx, byCaller(principal), 'schedule.created', created, {
      taskId: task.id,
      cron: pattern,
      timezone,
      exclusive,
    });
    return created;
  });
}

export async function listSchedules(db: Database, accountId: string): Promise<Schedule[]> {
  return db
    .select()
    .from(scheduleTable)
    .where(eq(scheduleTable.accountId, accountId))
    .orderBy(desc(scheduleTable.createdAt), desc(scheduleTable.id));
}

/**
 * A schedule of the account by id (`sch_…`), or by its task's id or name (its newest schedule); 404
 * `schedule_not_found`.
 */
export async function findSchedule(db: Database, accountId: string, ref: string): Promise<Schedule> {
  if (unstorable(ref)) throw new AppError(404, 'schedule_not_found', 'The account has no such schedule.');
  const [schedule] = await db
    .select({ schedule: scheduleTable })
    .from(scheduleTable)
    .innerJoin(savedTaskTable, eq(savedTaskTable.id, scheduleTable.taskId))
    .where(
      and(
        eq(scheduleTable.accountId, accountId),
        or(eq(scheduleTable.id, ref), eq(savedTaskTable.id, ref), eq(savedTaskTable.name, ref)),
      ),
    )
    .orderBy(sql`${scheduleTable.id} = ${ref} desc`, desc(scheduleTable.createdAt))
    .limit(1);
  if (!schedule) throw new AppError(404, 'schedule_not_found', `The account has no schedule ${ref}.`);
  return schedule.schedule;
}

/** Pauses a schedule by hand: no tick fires until it is resumed. */
export async function pauseSchedule(db: Database, principal: Principal, ref: string): Promise<Schedule> {
  const schedule = await findSchedule(db, principal.accountId, ref);
  const reason = 'Paused by hand.';
  return db.transaction(async (tx) => {
    const [paused] = await tx
      .update(scheduleTable)
      .set({ pausedAt: new Date(), pausedReason: reason })
      .where(eq(scheduleTable.id, schedule.id))
      .returning();
    await audited(tx, byCaller(principal), 'schedule.paused', schedule, { taskId: schedule.taskId, reason });
    return paused ?? schedule;
  });
}

/** Resumes a schedule from the next tick to come (ticks missed while paused are not fired). */
export async function resumeSchedule(
  core: Pick<Core, 'db' | 'clock'>,
  principal: Principal,
  ref: string,
): Promise<Schedule> {
  const schedule = await findSchedule(core.db, principal.accountId, ref);
  return core.db.transaction(async (tx) => {
    const [resumed] = await tx
      .update(scheduleTable)
      .set({ pausedAt: null, pausedReason: null, nextFireAt: nextTick(schedule, core.clock()) })
      .where(eq(scheduleTable.id, schedule.id))
      .returning();
    await audited(tx, byCaller(principal), 'schedule.resumed', schedule, { taskId: schedule.taskId });
    return resumed ?? schedule;
  });
}

export async function deleteSchedule(db: Database, principal: Principal, ref: string): Promise<void> {
  const schedule = await findSchedule(db, principal.accountId, ref);
  await db.transaction(async (tx) => {
    // The event first: its label reads the task's name, which the delete leaves in place anyway.
    await audited(tx, byCaller(principal), 'schedule.deleted', schedule, {
      taskId: schedule.taskId,
      cron: schedule.cron,
    });
    await tx.delete(scheduleTable).where(eq(scheduleTable.id, schedule.id));
  });
}

/** A schedule's ticks, newest first (at most `limit`), before the tick `before` when given. */
export async function scheduleFires(
  db: Database,
  scheduleId: string,
  limit = 20,
  before?: Date,
): Promise<ScheduleFire[]> {
  return db
    .select()
    .from(scheduleFireTable)
    .where(and(eq(scheduleFireTable.scheduleId, scheduleId), before ? lt(scheduleFireTable.tick, before) : undefined))
    .orderBy(desc(scheduleFireTable.tick))
    .limit(limit);
}

/** Schedules looked at a tick of the worker pool, at most. */
const DUE_BATCH = 100;

/**
 * Fires the schedules due at `now`: each due tick once, however many workers call this at once. Answers
 * what each tick did. Called every minute by the `fire_schedules` job; tests drive `now`.
 */
export async function fireDueSchedules(
  core: StartDeps & Pick<Core, 'logger'>,
  now: Date,
): Promise<{ scheduleId: string; tick: Date; outcome: FireOutcome; runId?: string; reason?: string }[]> {
  const due = await core.db
    .select()
    .from(scheduleTable)
    .where(and(isNull(scheduleTable.pausedAt), lte(scheduleTable.nextFireAt, now)))
    .orderBy(scheduleTable.nextFireAt)
    .limit(DUE_BATCH);
  const fired = [];
  for (const schedule of due) {
    const result = await fireOnce(core, schedule, now);
    if (result) fired.push(result);
  }
  return fired;
}

async function fireOnce(core: StartDeps & Pick<Core, 'logger'>, schedule: Schedule, now: Date) {
  const tick = schedule.nextFireAt;
  if (!tick) return undefined;
  // The tick's row is the key: the worker that inserts it fires the tick; any other finds it taken.
  const [claimed] = await core.db
    .insert(scheduleFireTable)
    .values({ scheduleId: schedule.id, tick })
    .onConflictDoNothing()
    .returning();
  // Ticks missed while nothing looked are not fired one by one: this one stands for them all. Moved on
  // by whoever looks, so a worker that died between the claim and this leaves no schedule stuck.
  await core.db
    .update(scheduleTable)
    .set({ nextFireAt: nextTick(schedule, now), ...(claimed ? { lastFiredAt: now } : {}) })
    .where(and(eq(scheduleTable.id, schedule.id), eq(scheduleTable.nextFireAt, tick)));
  if (!claimed) return undefined;
  const record = async (outcome: FireOutcome, details: { runId?: string; reason?: string }) => {
    await core.db
      .update(scheduleFireTable)
      .set({ outcome, runId: details.runId ?? null, reason: details.reason ?? null })
      .where(and(eq(scheduleFireTable.scheduleId, schedule.id), eq(scheduleFireTable.tick, tick)));
    return { scheduleId: schedule.id, tick, outcome, ...details };
  };

  if (schedule.exclusive && schedule.lastRunId) {
    const [last] = schedule.lastRunId.startsWith('plp_')
      ? await core.db
          .select({ status: pipelineTable.status })
          .from(pipelineTable)
          .where(eq(pipelineTable.id, schedule.lastRunId))
      : await core.db.select({ status: runTable.status }).from(runTable).where(eq(runTable.id, schedule.lastRunId));
    if (last && !(TERMINAL_STATUSES as readonly string[]).includes(last.status))
      return record('skipped', {
        reason: `The run of the tick before (${schedule.lastRunId}) is still ${last.status}.`,
      });
  }
  const [account] = await core.db
    .select({ plan: accountTable.plan, subscriptionStatus: accountTable.subscriptionStatus })
    .from(accountTable)
    .where(eq(accountTable.id, schedule.accountId));
  if (!account) return record('skipped', { reason: 'The account is gone.' });
  // The schedule acts for the account, with its plan as it is at the tick.
  const principal: Principal = { accountId: schedule.accountId, keyId: schedule.id, keyPrefix: '', ...account };
  try {
    const started = await startTask(core, principal, schedule.taskId, {}, { scheduleId: schedule.id });
    // A saved pipeline's tick is its pipeline: the id kept (plp_…) is the pipeline's.
    const runId = started.run ? started.run.run.id : started.pipeline.id;
    await core.db.update(scheduleTable).set({ lastRunId: runId }).where(eq(scheduleTable.id, schedule.id));
    return record('started', { runId });
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) {
      core.logger.error({ err, scheduleId: schedule.id }, 'scheduled run could not start');
      return record('skipped', { reason: 'The run could not start because of an internal error.' });
    }
    // What the account cannot do now (pay, its plan, the task's input) stays so until someone acts.
    const reason = pauseReason(err);
    await pause(core, schedule, reason, now);
    return record('paused', { reason });
  }
}

/**
 * Why a tick's run could not start, in words every face can show (the start's own message may name a
 * REST route), with what to do before resuming.
 */
function pauseReason(err: AppError): string {
  if (err.code === 'insufficient_funds')
    return 'The wallet cannot pay for the run: buy credits, then resume the schedule.';
  if (err.code === 'plan_required' || err.code === 'subscription_inactive')
    return `The account's plan does not allow the task's tool now: change the plan, then resume the schedule.`;
  if (err.code === 'validation_failed')
    return `The task's input is refused now (${err.message}): save the task again, then resume the schedule.`;
  return `The run could not start (${err.message}): resume the schedule once that is settled.`;
}

/** Pauses a schedule for a reason, and tells the account's webhooks and subscribers (`schedule.paused`). */
async function pause(core: StartDeps, schedule: Schedule, reason: string, now: Date) {
  await core.db.transaction(async (tx) => {
    await tx
      .update(scheduleTable)
      .set({ pausedAt: now, pausedReason: reason })
      .where(eq(scheduleTable.id, schedule.id));
    await queueAccountEvent(tx, schedule.accountId, 'schedule.paused', {
      type: 'schedule.paused',
      timestamp: now.toISOString(),
      data: { scheduleId: schedule.id, taskId: schedule.taskId, reason },
    });
    await core.events.publishSchedule(tx, schedule.accountId, {
      kind: 'paused',
      scheduleId: schedule.id,
      taskId: schedule.taskId,
      reason,
      at: now.toISOString(),
    });
    await audited(tx, { accountId: schedule.accountId, actor: SYSTEM }, 'schedule.paused', schedule, {
      taskId: schedule.taskId,
      reason,
    });
  });
}

/** A schedule as the faces answer it. */
export const scheduleView = (s: Schedule) => ({
  id: s.id,
  taskId: s.taskId,
  cron: s.cron,
  timezone: s.timezone,
  exclusive: s.exclusive,
  paused: s.pausedAt !== null,
  pausedReason: s.pausedReason,
  nextFireAt: s.pausedAt ? null : (s.nextFireAt?.toISOString() ?? null),
  lastFiredAt: s.lastFiredAt?.toISOString() ?? null,
  lastRunId: s.lastRunId,
  createdAt: s.createdAt.toISOString(),
});

export const fireView = (f: ScheduleFire) => ({
  tick: f.tick.toISOString(),
  outcome: f.outcome,
  reason: f.reason,
  runId: f.runId,
});
