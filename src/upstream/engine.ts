import { AppError } from '../shared/errors.ts';

/**
 * A distributed scraping engine that runs a tool's work upstream (Apify today, `src/upstream/apify`):
 * the run engine starts one upstream run per run, reads its dataset by offset while it runs, and
 * aborts it on a cancel. Statuses and fields follow Apify's API v2.
 */
export interface UpstreamEngine {
  /**
   * Starts an actor run; answers at once (the run is READY or RUNNING). A start whose answer was lost
   * is asked again only after looking for the run it may have started (adopted if found); runs a lost
   * answer left behind are aborted.
   */
  start(start: UpstreamStart): Promise<UpstreamRun & StartedRun>;
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

/** What a start did besides starting the run. */
export interface StartedRun {
  /** The run was started by an earlier attempt whose answer was lost, and found among the actor's runs. */
  adopted?: boolean;
  /** Runs started by attempts whose answers were lost, aborted as orphans. */
  orphansAborted?: string[];
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
  /**
   * Of the given upstream run ids, those a run of ours already reads: never adopted or aborted as an
   * orphan of this start, whatever their input.
   */
  taken(ids: string[]): Promise<Set<string>>;
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
