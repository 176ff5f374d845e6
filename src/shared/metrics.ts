import type { WorkerEvents } from 'graphile-worker';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every metric of the service, defined once, in this process's registry (docs/operations.md lists
 * them). Each process (gateway, standalone worker) serves its own registry at /metrics; Prometheus adds
 * the processes up. The faces are measured by one hook each (src/http/metrics.ts); the domains report
 * through the few functions below, called where the thing happens: a run's change once, in the process
 * whose transaction made it (as the event bus delivers it after the commit), a job by the worker that
 * ran it, a webhook delivery where it was attempted.
 *
 * Label values are bounded: route patterns, never URLs; tool and task names from the registries;
 * statuses and outcomes from fixed sets.
 */

export const registry = new Registry();

let defaultsOn = false;
/**
 * How often the event-loop delay histogram (`nodejs_eventloop_lag_*`) samples the loop, in ms.
 * prom-client's default, 10 ms, wakes every process 100 times a second, busy or idle: on a machine
 * shared by several processes that costs more CPU than the sampling is worth, most of all in a process
 * carrying a small load (docs/benchmarks-history.md, `processes`). At 100 ms every stall of 100 ms or more is
 * recorded, shorter ones in proportion to their length; `nodejs_eventloop_lag_seconds`, measured at
 * each scrape, is unaffected.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * Node's own metrics (CPU, memory, event-loop delay, GC, handles),
 * collected on scrape; turned on by the first /metrics route.
 */
export function collectProcessMetrics() {
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
}

const registers = [registry];

/** The faces a request comes in through; `other` is what belongs to none (/health, /ready, /metrics, unknown paths). */
export type Face = 'rest' | 'graphql' | 'graphql-ws' | 'mcp' | 'other';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const RUN_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

export const requestsTotal = new Counter({
  name: 'leadgate_requests_total',
  help:
    'Requests answered, by face, route pattern (GraphQL: operation type and root field), ' +
    'method and status (HTTP status; graphql-ws: the status the same refusal or answer has over HTTP).',
  labelNames: ['face', 'route', 'method', 'status'] as const,
  registers,
});

export const requestDuration = new Histogram({
  name: 'leadgate_request_duration_seconds',
  help: "Time to answer a request (graphql-ws: from the subscribe message to the operation's first answer).",
  labelNames: ['face', 'route', 'method', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

export const refusalsTotal = new Counter({
  name: 'leadgate_refusals_total',
  help: 'Requests refused by authentication (401) or a limit (429), by face and error code.',
  labelNames: ['face', 'code'] as const,
  registers,
});

export const graphqlWsConnections = new Gauge({
  name: 'leadgate_graphql_ws_connections',
  help: 'graphql-ws sockets open and acknowledged (their key accepted) in this process.',
  registers,
});

export const runsStarted = new Counter({
  name: 'leadgate_runs_started_total',
  help:
    'Runs created, by tool and the status they were placed in (RUNNING, ' +
    'or READY when the account has its maximum running).',
  labelNames: ['tool', 'status'] as const,
  registers,
});

export const runsFinished = new Counter({
  name: 'leadgate_runs_finished_total',
  help: 'Runs that reached a terminal status, by tool and status.',
  labelNames: ['tool', 'status'] as const,
  registers,
});

export const runDuration = new Histogram({
  name: 'leadgate_run_duration_seconds',
  help: 'Run duration, from its start (placed RUNNING or promoted) to its terminal status, by tool and status.',
  labelNames: ['tool', 'status'] as const,
  buckets: RUN_BUCKETS,
  registers,
});

export const runFirstRow = new Histogram({
  name: 'leadgate_run_first_row_seconds',
  help: "Time from a run's start to its first stored row, by tool.",
  labelNames: ['tool'] as const,
  buckets: RUN_BUCKETS,
  registers,
});

export const jobDuration = new Histogram({
  name: 'leadgate_job_duration_seconds',
  help:
    'Worker job attempts, by task and outcome (success, error: ' +
    'the attempt threw and the job is retried or has failed for good).',
  labelNames: ['task', 'outcome'] as const,
  buckets: RUN_BUCKETS,
  registers,
});

export const jobWait = new Histogram({
  name: 'leadgate_job_wait_seconds',
  help: 'Time a job waited from when it could run (run_at) to when a worker of this process took it, by task.',
  labelNames: ['task'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

export const webhookDeliveries = new Counter({
  name: 'leadgate_webhook_deliveries_total',
  help:
    'Webhook delivery attempts by outcome: delivered, retrying (failed, tried again later), ' +
    'failed (failed for good), refused (the outbound guard refused the URL: ' +
    'not retried), dropped (the webhook or its secret is gone).',
  labelNames: ['outcome'] as const,
  registers,
});

export const upstreamErrors = new Counter({
  name: 'leadgate_upstream_errors_total',
  help:
    'Runs failed because the upstream engine (TOOL_SOURCES) refused or could not be reached, ' +
    'by tool and reason: the API status (401 bad token, 402 no money on the operator account, ' +
    '404 unknown actor or run, 429 or 5xx after retries), network, or config (no token).',
  labelNames: ['tool', 'reason'] as const,
  registers,
});

export const upstreamItemsRead = new Counter({
  name: 'leadgate_upstream_items_read_total',
  help: 'Dataset items read from upstream runs, by tool.',
  labelNames: ['tool'] as const,
  registers,
});

export const eventFanout = new Histogram({
  name: 'leadgate_event_fanout_seconds',
  help:
    'Delay from publishing a run change (in the transaction that makes it) ' +
    'to this process receiving its notification, after the commit and Postgres NOTIFY: ' +
    'one observation per notification received, on each channel the process listens on.',
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers,
});

export const runsWaiting = new Gauge({
  name: 'leadgate_runs_waiting',
  help: 'Runs READY, waiting for a slot of their account (read from the database on scrape).',
  registers,
});

export const runsActive = new Gauge({
  name: 'leadgate_runs_active',
  help: 'Runs holding a slot, RUNNING or ABORTING (read from the database on scrape).',
  registers,
});

export const jobsQueued = new Gauge({
  name: 'leadgate_jobs',
  help:
    'Worker jobs by task and state: waiting (can run now), scheduled (a retry or a later start), ' +
    'running (locked by a worker), failed (out of attempts). Read from the database on scrape.',
  labelNames: ['task', 'state'] as const,
  registers,
});

export const catalogReadsOnReplica = new Gauge({
  name: 'leadgate_catalog_reads_on_replica',
  help:
    '1 while read-only catalog work goes to the read replica (DATABASE_READ_URL), ' +
    '0 while it falls back to the primary or none is configured.',
  registers,
});

export const databaseUp = new Gauge({
  name: 'leadgate_database_up',
  help: '1 when the queue figures could be read from the database at the last scrape, 0 when not.',
  registers,
});

const seconds = (fromIso: string | null | undefined, toMs: number) => {
  const from = fromIso ? Date.parse(fromIso) : NaN;
  return Number.isNaN(from) ? undefined : Math.max(0, (toMs - from) / 1000);
};

/** What the event bus hands over of a run change: the kind and the run's snapshot. */
interface RunChange {
  kind: string;
  run: { tool: string; status: string; startedAt: string | null; finishedAt: string | null };
}

/** A notification the bus received (after its commit): the fan-out delay from `publishedAt`. */
export function observeEventFanout(publishedAt: number) {
  eventFanout.observe(Math.max(0, (Date.now() - publishedAt) / 1000));
}

/**
 * A run change this process published, once its transaction committed: the run counters. Counting
 * where a change was made counts it once across processes, and never a change rolled back.
 */
export function observeRunChange(change: RunChange) {
  const { tool, status } = change.run;
  if (change.kind === 'created') runsStarted.inc({ tool, status });
  else if (change.kind === 'finished') {
    runsFinished.inc({ tool, status });
    const duration = seconds(
      change.run.startedAt,
      change.run.finishedAt ? Date.parse(change.run.finishedAt) : Date.now(),
    );
    if (duration !== undefined) runDuration.observe({ tool, status }, duration);
  }
}

/** The first row of a run was stored. */
export function observeFirstRow(tool: string, startedAt: Date) {
  runFirstRow.observe({ tool }, Math.max(0, (Date.now() - startedAt.getTime()) / 1000));
}

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'refused' | 'dropped';

/** One attempt of a webhook delivery ended. */
export function observeWebhookDelivery(outcome: DeliveryOutcome) {
  webhookDeliveries.inc({ outcome });
}

/** Times the jobs a worker runs: how long each waited to be taken, and each attempt's duration and outcome. */
export function observeJobs(events: WorkerEvents) {
  const started = new Map<string, number>();
  events.on('job:start', ({ job }) => {
    started.set(job.id, performance.now());
    jobWait.observe({ task: job.task_identifier }, Math.max(0, (Date.now() - new Date(job.run_at).getTime()) / 1000));
  });
  events.on('job:complete', ({ job, error }) => {
    const start = started.get(job.id);
    started.delete(job.id);
    if (start === undefined) return;
    jobDuration.observe(
      { task: job.task_identifier, outcome: error ? 'error' : 'success' },
      (performance.now() - start) / 1000,
    );
  });
}
