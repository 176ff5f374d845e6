import { isDeepStrictEqual } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApifyApiError, ApifyClient, type ActorRun, type ActorRunListItem } from 'apify-client';
import {
  UPSTREAM_STATUSES,
  UpstreamMinimumChargeError,
  UpstreamUnavailableError,
  type UpstreamEngine,
  type UpstreamRun,
  type StartedRun,
  type UpstreamStart,
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
  // A start is not retried by the client: one whose answer was lost may have started a run, which a blind
  // retry would start twice (startRun retries it after looking for that run).
  const startClient = new ApifyClient({
    token: options.token,
    baseUrl: options.baseUrl,
    maxRetries: 0,
    timeoutSecs: REQUEST_TIMEOUT_SECS,
  });
  const retries = { max: options.maxRetries ?? 8, firstDelayMs: options.minDelayBetweenRetriesMillis ?? 500 };

  return {
    start: (start) => startRun(client, startClient, start, retries),
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

/**
 * How far before a start the platform's clock may put the run it started: the window in which a run
 * whose start answer was lost is looked for.
 */
const CLOCK_SKEW_MS = 120_000;

/**
 * Starts an actor run, retrying what the platform did not refuse (429, 5xx, a network error or timeout)
 * with backoff. A start whose answer was lost (5xx, network, timeout) may have started the run anyway:
 * before it is asked again, the actor's runs started since are looked for one with this start's input
 * (`startedHere`) and it is adopted; after a start that succeeds on a later attempt, such runs besides
 * the one adopted are orphans and are aborted, so one start never leaves two runs paying upstream.
 */
async function startRun(
  client: ApifyClient,
  startClient: ApifyClient,
  start: UpstreamStart,
  retries: { max: number; firstDelayMs: number },
): Promise<UpstreamRun & StartedRun> {
  const since = new Date(Date.now() - CLOCK_SKEW_MS);
  const what = `start actor ${start.actorId}`;
  let lost = false;
  for (let attempt = 0; ; attempt++) {
    try {
      const run = upstreamRun(
        await startClient.actor(start.actorId).start(start.input, {
          maxItems: start.maxItems,
          maxTotalChargeUsd: start.maxTotalChargeUsd,
          timeout: start.timeoutSecs,
          ...(start.memoryMbytes ? { memory: start.memoryMbytes } : {}),
        }),
      );
      return lost ? { ...run, orphansAborted: await abortOrphans(client, start, since, [run.id]) } : run;
    } catch (err) {
      const refused = err instanceof ApifyApiError && err.statusCode < 500;
      const retryable = !refused || (err as ApifyApiError).statusCode === 429;
      if (!refused) {
        lost = true;
        // A lookup that fails finds nothing: the start is asked again, and the run it may have left is
        // aborted once one succeeds.
        const [adopted, ...others] = await startedHere(client, start, since).catch(() => []);
        if (adopted) {
          const orphansAborted = others.length > 0 ? await abortOrphans(client, start, since, [adopted.id]) : [];
          return { ...upstreamRun(adopted), adopted: true, orphansAborted };
        }
      }
      if (!retryable || attempt >= retries.max)
        return await call(what, () => Promise.reject(err), start.maxTotalChargeUsd);
      await sleep(retries.firstDelayMs * 2 ** attempt);
    }
  }
}

/**
 * The actor's runs started since `since` with the input of `start` (every field sent, as the run's
 * INPUT record holds it; the platform may add the defaults of the actor's input schema) that no run of
 * ours reads (`start.taken`), oldest first.
 */
async function startedHere(client: ApifyClient, start: UpstreamStart, since: Date): Promise<ActorRunListItem[]> {
  const { items } = await client.actor(start.actorId).runs().list({ startedAfter: since, limit: 1000 });
  const candidates = items.filter((run) => run.status !== 'ABORTED' && run.status !== 'ABORTING');
  if (candidates.length === 0) return [];
  const taken = await start.taken(candidates.map((run) => run.id));
  const found: ActorRunListItem[] = [];
  for (const run of candidates) {
    if (taken.has(run.id)) continue;
    const record = await client.keyValueStore(run.defaultKeyValueStoreId).getRecord('INPUT');
    const stored = record?.value;
    if (stored && typeof stored === 'object' && sameInput(start.input, stored as Record<string, unknown>))
      found.push(run);
  }
  return found.sort((a, b) => new Date(a.startedAt).getTime() - new Date(b.startedAt).getTime());
}

/** Whether a stored input holds every field of the input sent, equal. */
const sameInput = (sent: Record<string, unknown>, stored: Record<string, unknown>) =>
  Object.entries(sent).every(([key, value]) => isDeepStrictEqual(JSON.parse(JSON.stringify(value)), stored[key]));

/**
 * Aborts the runs this start left behind (started with its input, not `kept`, no run of ours reads
 * them) and answers their ids; never throws: what could not be looked for or aborted is left (the
 * platform ends it at its timeout and charge limit).
 */
async function abortOrphans(client: ApifyClient, start: UpstreamStart, since: Date, kept: string[]) {
  const aborted: string[] = [];
  try {
    for (const orphan of await startedHere(client, start, since)) {
      if (kept.includes(orphan.id)) continue;
      await client.run(orphan.id).abort();
      aborted.push(orphan.id);
    }
  } catch {
    // Best effort: the run that was started is what matters to the caller.
  }
  return aborted;
}

function upstreamRun(
  run: Pick<ActorRun, 'id' | 'actId' | 'status' | 'defaultDatasetId' | 'usageTotalUsd'> & { statusMessage?: string },
): UpstreamRun {
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
