import { AppError } from '../shared/errors.ts';

/**
 * A distributed scraping engine that runs a tool's work upstream (Apify today, `src/upstream/apify`):
 * the run engine starts one upstream run per run, reads its dataset by offset while it runs, and
 * aborts it on a cancel. Statuses and fields follow Apify's API v2.
 */
export interface UpstreamEngine {
  /** Starts an actor run; answers at once (the run is READY or RUNNING). */
  start(start: UpstreamStart): Promise<UpstreamRun>;
  /** The run now, or once it ends if that is within `waitSecs` (0: at once; at most 60). */
  get(runId: string, waitSecs: number): Promise<UpstreamRun>;
  /** Aborts the run (a finished run is left as it is); answers the run after the request. */
  abort(runId: string): Promise<UpstreamRun>;
  /**
   * Dataset items from `offset` (0-based, in the order they were pushed),
   * at most `limit`; `total` is the dataset's item count.
   */
  items(datasetId: string, offset: number, limit: number): Promise<{ items: UpstreamItem[]; total: number }>;
}

export type UpstreamItem = Record<string, unknown>;

export const UPSTREAM_STATUSES = [
  'READY',
  'RUNNING',
  'SUCCEEDED',
  'FAILED',
  'TIMING-OUT',
  'TIMED-OUT',
  'ABORTING',
  'ABORTED',
] as const;
export type UpstreamStatus = (typeof UPSTREAM_STATUSES)[number];
/** Statuses after which an upstream run changes no more and its dataset is complete. */
export const UPSTREAM_ENDED: readonly UpstreamStatus[] = ['SUCCEEDED', 'FAILED', 'TIMED-OUT', 'ABORTED'];

export interface UpstreamRun {
  id: string;
  actorId: string;
  status: UpstreamStatus;
  /** The actor's own account of its progress (Apify's `statusMessage`), if it gave one. */
  statusMessage: string | null;
  datasetId: string;
  /**
   * What the run has cost so far, USD (Apify's `usageTotalUsd`); null while the platform has not
   * counted it (a new run, one just aborted): final only once the run has ended and it is a number.
   */
  costUsd: number | null;
}

export interface UpstreamStart {
  actorId: string;
  input: Record<string, unknown>;
  /** Items the run may be charged for (pay-per-result actors). */
  maxItems: number;
  /** The most the run may cost, USD (pay-per-event actors). */
  maxTotalChargeUsd: number;
  /** Memory of the run, MB; absent: the actor's default. */
  memoryMbytes?: number;
  /** Seconds after which the engine ends the run TIMED-OUT. */
  timeoutSecs: number;
}

/**
 * The upstream engine refused or could not be reached for good: a bad token (401), no money left on
 * the operator's account (402), an unknown actor or run (404), or retries used up. The caller reads
 * only "upstream source unavailable"; `detail` is for the operator's logs.
 */
export class UpstreamUnavailableError extends AppError {
  constructor(
    /** The engine's status code, or `network`: the `reason` label of the metric. */
    readonly reason: string,
    readonly detail: string,
    message = 'upstream source unavailable',
  ) {
    super(502, 'upstream_unavailable', message);
    this.name = 'UpstreamUnavailableError';
  }
}

/**
 * The actor charges at least `minimumUsd` a run (Apify's `max-total-charge-usd-below-minimum`), more
 * than the run may cost: nothing ran and nothing is charged. The caller is told so in words.
 */
export class UpstreamMinimumChargeError extends UpstreamUnavailableError {
  constructor(
    detail: string,
    readonly minimumUsd: number | null,
    readonly allowedUsd: number,
  ) {
    const minimum = minimumUsd === null ? 'more' : `at least ${minimumUsd.toFixed(2)} USD`;
    super(
      'minimum_charge',
      detail,
      `The live source of this tool charges ${minimum} a run, more than the ${allowedUsd.toFixed(2)} USD ` +
        'held for this one: nothing ran and nothing was charged. Ask for more results, or top up the wallet.',
    );
    this.name = 'UpstreamMinimumChargeError';
  }
}
