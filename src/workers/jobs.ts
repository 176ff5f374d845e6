/**
 * The worker jobs the domains add, by their graphile-worker task identifier, with their payloads.
 * Declared once here: the statements that add them (`graphile_worker.add_job`) and the worker's typed
 * task list (workers/tasks.ts) both read these names.
 */
export const JOBS = {
  /** Executes one run (runs/engine/execute.ts); added when the run is placed RUNNING (runs/queue.ts). */
  runTool: 'run_tool',
  /** Delivers one webhook (webhooks/deliver.ts). */
  deliverWebhook: 'deliver_webhook',
  /** Purges expired results and idempotency keys (runs/retention.ts), from the crontab. */
  housekeeping: 'housekeeping',
  /** Applies one verified Stripe event (billing/payments/events.ts); added by POST /hooks/stripe. */
  applyStripeEvent: 'apply_stripe_event',
  /**
   * Mails a password-reset link to the user of an email, if any (accounts/password-reset.ts);
   * added by POST /auth/password-reset.
   */
  sendPasswordReset: 'send_password_reset',
  /**
   * Mails a single-use opt-out confirmation link to an email, whoever it belongs to
   * (privacy/opt-out.ts); added by POST /opt-out.
   */
  sendOptOutLink: 'send_opt_out_link',
  /**
   * Stores what a run's upstream run cost once the platform has settled it (runs/upstream.ts); added
   * when the run ended before its cost was final.
   */
  settleUpstreamCost: 'settle_upstream_cost',
  /** Fires the schedules due now (workflows/schedules.ts), from the crontab every minute. */
  fireSchedules: 'fire_schedules',
  /**
   * Moves a pipeline on once one of its steps' runs has ended (workflows/pipelines.ts): the next step
   * starts, or the pipeline ends. Added by the run's end, in its transaction.
   */
  advancePipeline: 'advance_pipeline',
  /** Sends a run's (or a pipeline's) rows to a destination (destinations/deliveries.ts); added by its end. */
  deliverRows: 'deliver_rows',
  /**
   * Answers DROP's last archive if still unsent, then fetches and processes the next (privacy/drop-sync.ts);
   * from the crontab daily when DROP_API_KEY is set, and again at the time DROP names while it prepares one.
   */
  dropCycle: 'drop_cycle',
} as const;

export interface JobPayloads {
  [JOBS.runTool]: { runId: string };
  [JOBS.deliverWebhook]: { deliveryId: string };
  [JOBS.housekeeping]: Record<string, never>;
  [JOBS.applyStripeEvent]: { eventId: string };
  [JOBS.sendPasswordReset]: { email: string };
  [JOBS.sendOptOutLink]: { email: string };
  [JOBS.settleUpstreamCost]: { runId: string };
  [JOBS.fireSchedules]: Record<string, never>;
  [JOBS.advancePipeline]: { pipelineId: string };
  [JOBS.deliverRows]: { deliveryId: string };
  [JOBS.dropCycle]: Record<string, never>;
}
