import type { TaskList } from 'graphile-worker';
import type { Core } from '../src/core.ts';
import { executeRun } from '../src/runs/engine/index.ts';
import { housekeeping } from '../src/runs/retention.ts';
import { type DropSyncOutcome, syncWithDrop } from '../src/privacy/drop-sync.ts';
import { purgeExpiredAuditEvents } from '../src/audit/audit.ts';
import { purgeExpiredEnrichmentJobs } from '../src/endpoints/enrichment-jobs.ts';
import { deliverWebhook } from '../src/webhooks/deliver.ts';
import { settleUpstreamCost } from '../src/runs/upstream.ts';
import { applyStripeEvent } from '../src/billing/payments/events.ts';
import { mailPasswordReset } from '../src/accounts/password-reset.ts';
import { mailOptOutLink } from '../src/privacy/opt-out.ts';
import { JOBS, type JobPayloads } from '../src/workers/jobs.ts';
import { coerceError, DatabaseUnavailableError } from '../src/shared/errors.ts';
import { waitForDatabase } from '../src/database.ts';
import { fireDueSchedules } from '../src/workflows/schedules.ts';
import { advancePipeline } from '../src/workflows/pipeline-run.ts';
import { runDelivery } from '../src/destinations/deliveries.ts';

declare global {
  namespace GraphileWorker {
    /** The typed task list: the job names and payloads the domains add (src/workers/jobs.ts). */
    interface Tasks extends JobPayloads {}
  }
}

function assertPayload<K extends 'runId' | 'deliveryId' | 'eventId' | 'email' | 'pipelineId'>(
  payload: unknown,
  field: K,
): asserts payload is Record<K, string> {
  if (
    typeof payload !== 'object' ||
    payload === null ||
    typeof (payload as Record<string, unknown>)[field] !== 'string'
  ) {
    throw new Error(`payload must be {"${field}": string}`);
  }
}

/**
 * Runs a task through a database outage. With `resume`, a task the database was lost under waits for
 * it and runs again (`executeRun` resumes after the rows it stored); without, it fails once the
 * database is back, so graphile-worker can record the failure and retry the job later. Either way
 * graphile-worker never meets the outage: its own writes (completing or failing the job) would be
 * lost and the job left locked. When this process stops during the wait the error goes on as it is.
 */
async function throughOutages(
  core: Core,
  signal: AbortSignal,
  what: string,
  task: () => Promise<void>,
  resume: boolean,
): Promise<void> {
  for (;;) {
    try {
      return await task();
    } catch (err) {
      if (!(coerceError(err) instanceof DatabaseUnavailableError)) throw err;
      core.logger.warn({ task: what }, `database unavailable: ${what} waits for it to come back`);
      if (!(await waitForDatabase(core.sql, signal))) throw err;
      core.logger.info({ task: what }, `database back: ${what} ${resume ? 'resumes' : 'fails, to be retried'}`);
      if (!resume) throw err;
    }
  }
}

/** Tasks stay thin: check the payload, call a service. `shutdown` aborts when this process stops. */
export function createTaskList(core: Core, shutdown: AbortSignal): TaskList {
  return {
    [JOBS.runTool]: async (payload, helpers) => {
      assertPayload(payload, 'runId');
      const signal = helpers.abortSignal ? AbortSignal.any([shutdown, helpers.abortSignal]) : shutdown;
      await throughOutages(core, signal, `run ${payload.runId}`, () => executeRun(core, payload.runId, signal), true);
    },
    [JOBS.deliverWebhook]: async (payload, helpers) => {
      assertPayload(payload, 'deliveryId');
      const deliver = () =>
        deliverWebhook(
          { ...core, post: core.network.post },
          payload.deliveryId,
          helpers.job.attempts,
          helpers.job.max_attempts,
          helpers.abortSignal,
        );
      await throughOutages(core, shutdown, `webhook delivery ${payload.deliveryId}`, deliver, false);
    },
    [JOBS.applyStripeEvent]: async (payload) => {
      assertPayload(payload, 'eventId');
      // Events are received only with Stripe configured; a process
      // without it leaves them to be retried by one that has it.
      const payments = core.config.payments;
      if (payments.mode !== 'stripe')
        throw new Error(`stripe event ${payload.eventId}: this process has no STRIPE_SECRET_KEY`);
      await throughOutages(
        core,
        shutdown,
        `stripe event ${payload.eventId}`,
        () => applyStripeEvent({ db: core.db, config: payments, logger: core.logger }, payload.eventId),
        false,
      );
    },
    [JOBS.sendPasswordReset]: async (payload) => {
      assertPayload(payload, 'email');
      // Named without the address: the log hides mailboxes.
      await throughOutages(core, shutdown, 'password-reset mail', () => mailPasswordReset(core, payload.email), false);
    },
    [JOBS.sendOptOutLink]: async (payload) => {
      assertPayload(payload, 'email');
      await throughOutages(core, shutdown, 'opt-out link mail', () => mailOptOutLink(core, payload.email), false);
    },
    [JOBS.settleUpstreamCost]: async (payload) => {
      assertPayload(payload, 'runId');
      const settle = () => settleUpstreamCost({ db: core.db, engine: core.upstream }, payload.runId);
      await throughOutages(core, shutdown, `upstream cost of run ${payload.runId}`, settle, false);
    },
    [JOBS.fireSchedules]: async (_payload, helpers) => {
      await throughOutages(
        core,
        shutdown,
        'schedules',
        async () => {
          const fired = await fireDueSchedules(core, core.clock());
          if (fired.length > 0) helpers.logger.info(`schedules: ${fired.length} ticks fired`);
        },
        false,
      );
    },
    [JOBS.advancePipeline]: async (payload) => {
      assertPayload(payload, 'pipelineId');
      const advance = () => advancePipeline(core, payload.pipelineId);
      await throughOutages(core, shutdown, `pipeline ${payload.pipelineId}`, advance, true);
    },
    [JOBS.deliverRows]: async (payload, helpers) => {
      assertPayload(payload, 'deliveryId');
      const signal = helpers.abortSignal ? AbortSignal.any([shutdown, helpers.abortSignal]) : shutdown;
      const last = helpers.job.attempts >= helpers.job.max_attempts;
      const deliver = () => runDelivery(core, payload.deliveryId, signal, { last });
      await throughOutages(core, signal, `delivery ${payload.deliveryId}`, deliver, true);
    },
    [JOBS.dropCycle]: async (_payload, helpers) => {
      const config = core.config.drop;
      if (!config.apiKey) return; // scheduled by a process that had the key; this one has none
      let outcome: DropSyncOutcome | undefined;
      const sync = async () => {
        outcome = await syncWithDrop(core.db, config);
      };
      await throughOutages(core, shutdown, 'DROP cycle', sync, false);
      if (outcome?.kind === 'preparing') {
        const runAt = new Date(Date.now() + outcome.retryAfterSeconds * 1000);
        await helpers.addJob(JOBS.dropCycle, {}, { runAt, jobKey: JOBS.dropCycle });
      } else if (outcome?.kind === 'processed') {
        const c = outcome.cycle;
        helpers.logger.info(
          `DROP ${c.name}: ${c.workItems} work items, ${c.deleted} deleted, ${c.optedOut} opted out, ` +
            `${c.notFound} not found; answers sent`,
        );
      }
    },
    [JOBS.housekeeping]: async (_payload, helpers) => {
      await throughOutages(
        core,
        shutdown,
        'housekeeping',
        async () => {
          const done = await housekeeping(core.db, core.clock());
          const auditEvents = await purgeExpiredAuditEvents(core.db);
          // Enrichment jobs keep their rows as long as runs keep theirs (src/endpoints/enrichment-jobs.ts).
          const enrichmentJobs = await purgeExpiredEnrichmentJobs(core.db, core.clock());
          if (done.runs > 0 || done.idempotencyKeys > 0 || auditEvents > 0 || enrichmentJobs > 0)
            helpers.logger.info(
              `housekeeping: purged ${done.rows} rows of ${done.runs} expired runs, ` +
                `the rows of ${enrichmentJobs} enrichment jobs, ` +
                `${done.idempotencyKeys} idempotency keys, ${auditEvents} audit events past retention`,
            );
        },
        false,
      );
    },
  };
}

/**
 * Cron schedule (graphile-worker crontab, each entry fired once a minute across every worker):
 * housekeeping every hour, at minute 7; the account schedules' ticks every minute.
 */
export const CRONTAB = `7 * * * * ${JOBS.housekeeping}\n* * * * * ${JOBS.fireSchedules}\n`;
/** With DROP_API_KEY, the DROP cycle once a day (at 11:23 UTC: 3:23 in California, outside DROP's 1–3 AM window). */
export const DROP_CRONTAB = `23 11 * * * ${JOBS.dropCycle}\n`;
