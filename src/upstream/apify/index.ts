import { ApifyApiError, ApifyClient, type ActorRun } from 'apify-client';
import {
  UPSTREAM_STATUSES,
  UpstreamMinimumChargeError,
  UpstreamUnavailableError,
  type UpstreamEngine,
  type UpstreamRun,
  type UpstreamStatus,
} from '../engine.ts';

export interface ApifyOptions {
  token: string;
  /** The API's origin (APIFY_BASE_URL); the only host the connector talks to. */
  baseUrl: string;
  /** Retries of a request answered 429 or 5xx or lost on the network; default 8 (apify-client's). */
  maxRetries?: number;
  /** First delay between retries, doubled at each; default 500 ms. */
  minDelayBetweenRetriesMillis?: number;
}

/** Longest one request may take, seconds: a status wait is at most 60 s of it. */
const REQUEST_TIMEOUT_SECS = 75;

/**
 * The Apify API v2 through the official client (`apify-client`), which retries 429, 5xx and network
 * errors with exponential backoff and answers other refusals at once. Those refusals, and retries
 * used up, become `UpstreamUnavailableError` with the API's own words as the operator's detail.
 */
export function createApifyEngine(options: ApifyOptions): UpstreamEngine {
  const client = new ApifyClient({
    token: options.token,
    // The versioned path is the client's: it appends /v2.
    baseUrl: options.baseUrl,
    maxRetries: options.maxRetries ?? 8,
    minDelayBetweenRetriesMillis: options.minDelayBetweenRetriesMillis ?? 500,
    timeoutSecs: REQUEST_TIMEOUT_SECS,
  });

  return {
    async start(start) {
      const run = await call(
        `start actor ${start.actorId}`,
        () =>
          client.actor(start.actorId).start(start.input, {
            maxItems: start.maxItems,
            maxTotalChargeUsd: start.maxTotalChargeUsd,
            timeout: start.timeoutSecs,
            ...(start.memoryMbytes ? { memory: start.memoryMbytes } : {}),
          }),
        start.maxTotalChargeUsd,
      );
      return upstreamRun(run);
    },
    async get(runId, waitSecs) {
      const run = await call(`get run ${runId}`, () =>
        client.run(runId).get({ waitForFinish: Math.min(60, Math.max(0, Math.round(waitSecs))) }),
      );
      if (!run) throw new UpstreamUnavailableError('404', `Apify run ${runId} not found`);
      return upstreamRun(run);
    },
    async abort(runId) {
      return upstreamRun(await call(`abort run ${runId}`, () => client.run(runId).abort()));
    },
    async items(datasetId, offset, limit) {
      const page = await call(
        `read dataset ${datasetId}`,
        async () => await client.dataset(datasetId).listItems({ offset, limit }),
      );
      return { items: page.items as Record<string, unknown>[], total: page.total };
    },
  };
}

function upstreamRun(run: ActorRun): UpstreamRun {
  const status = (UPSTREAM_STATUSES as readonly string[]).includes(run.status)
    ? (run.status as UpstreamStatus)
    : 'RUNNING';
  return {
    id: run.id,
    actorId: run.actId,
    status,
    statusMessage: run.statusMessage ?? null,
    datasetId: run.defaultDatasetId,
    // Null until the platform has counted it (a new run; one just aborted).
    costUsd: typeof run.usageTotalUsd === 'number' && Number.isFinite(run.usageTotalUsd) ? run.usageTotalUsd : null,
  };
}

/** The error type of a start whose `maxTotalChargeUsd` is below the actor's minimum charge per run. */
const BELOW_MINIMUM = 'max-total-charge-usd-below-minimum';

/**
 * One API call; what the client could not get past (after its retries) becomes `UpstreamUnavailableError`:
 * a start below the actor's minimum charge (`allowedUsd` its limit), `UpstreamMinimumChargeError`.
 */
async function call<T>(what: string, fn: () => Promise<T>, allowedUsd?: number): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApifyApiError && err.type === BELOW_MINIMUM && allowedUsd !== undefined) {
      // The platform names the minimum in its message ("… minimum of $0.50 …"), when it does.
      const named = /\$\s?(\d+(?:\.\d+)?)/.exec(err.message);
      throw new UpstreamMinimumChargeError(
        `Apify API refused to ${what}: ${err.statusCode} ${err.type} ${err.message}`,
        named ? Number(named[1]) : null,
        allowedUsd,
      );
    }
    if (err instanceof ApifyApiError) {
      throw new UpstreamUnavailableError(
        String(err.statusCode),
        `Apify API refused to ${what}: ${err.statusCode} ${err.type ?? ''} ${err.message}`.replace(/\s+/g, ' '),
      );
    }
    throw new UpstreamUnavailableError('network', `Apify API unreachable to ${what}: ${(err as Error).message}`);
  }
}
