import { setTimeout as sleep } from 'node:timers/promises';
import { eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { runTable, type Run } from '../../db/tables/runs.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { TOOLS } from '../tools/index.ts';
import type { Row, ToolDefinition } from '../tools/types.ts';
import { upstreamDeclaration } from '../tools/upstream/index.ts';
import type { UpstreamDeclaration } from '../tools/upstream/types.ts';
import {
  UPSTREAM_ENDED,
  UpstreamUnavailableError,
  type UpstreamEngine,
  type UpstreamRun,
  type UpstreamStatus,
} from '../upstream/engine.ts';
import { createApifyEngine } from '../upstream/apify/index.ts';
import { upstreamItemsRead } from '../shared/metrics.ts';
import { JOBS } from '../workers/jobs.ts';

/** Dataset items read per request. */
const PAGE_SIZE = 1_000;
/** Seconds a status request waits for the upstream run to end when no new item was there: the poll interval. */
const WAIT_SECS = 1;
/**
 * How long after its start a run (and its dataset) answering 404 is taken for one the platform has not
 * spread to every replica yet, and asked again (apify-client notes that replicas may not know a
 * brand-new run); after it a 404 is an answer.
 */
const NEW_RUN_GRACE_MS = 20_000;
/** Status reads, a second apart, for an upstream run that ended to settle its cost before a job takes over. */
const COST_READS = 3;

/**
 * Checks TOOL_SOURCES against the tools and their upstream declarations and builds the engine the
 * runs of those tools use; throws (stopping start-up) on a tool that does not exist or cannot run
 * upstream. Undefined when no tool runs upstream and no token is set.
 */
export function createUpstreamEngine(config: Pick<Config, 'apify' | 'toolSources'>): UpstreamEngine | undefined {
  const names = new Set(TOOLS.map((t) => t.name));
  for (const tool of Object.keys(config.toolSources)) {
    if (!names.has(tool))
      throw new Error(`TOOL_SOURCES names ${tool}, which is not a tool (tools: ${[...names].join(', ')})`);
    if (!upstreamDeclaration(tool)) {
      const able = TOOLS.filter((t) => upstreamDeclaration(t.name)).map((t) => t.name);
      throw new Error(`TOOL_SOURCES names ${tool}, which cannot run upstream (tools that can: ${able.join(', ')})`);
    }
  }
  // Without a token nothing can run upstream; a run that was attached to an upstream run fails with the caller's
  // message.
  return config.apify.token
    ? createApifyEngine({ token: config.apify.token, baseUrl: config.apify.baseUrl })
    : undefined;
}

/** The actor a run of `tool` starts under this configuration, or undefined: the catalog. */
export function upstreamActor(
  config: Pick<Config, 'toolSources'>,
  tool: string,
): { declaration: UpstreamDeclaration; actorId: string } | undefined {
  const source = config.toolSources[tool];
  const declaration = upstreamDeclaration(tool);
  if (!source || !declaration) return undefined;
  return { declaration, actorId: source.actorId ?? declaration.defaultActor };
}

/** A batch read from the upstream dataset, with the dataset offset after it (stored with the rows). */
export interface UpstreamBatch {
  rows: Row[];
  handled: number;
  message: string;
  offset: number;
}

/** The upstream run ended without succeeding; the run ends the same way, keeping the rows delivered. */
export class UpstreamEndedError extends Error {
  constructor(
    readonly status: Exclude<UpstreamStatus, 'SUCCEEDED'>,
    readonly upstreamMessage: string | null,
  ) {
    super(`upstream run ended ${status}${upstreamMessage ? `: ${upstreamMessage}` : ''}`);
    this.name = 'UpstreamEndedError';
  }
}

/** The caller's words for how an upstream run ended, and the status our run takes. */
export function upstreamEnding(
  err: UpstreamEndedError,
  kept: string,
): { status: 'FAILED' | 'TIMED-OUT' | 'ABORTED'; message: string } {
  const why = err.upstreamMessage ? ` (${err.upstreamMessage})` : '';
  if (err.status === 'TIMED-OUT' || err.status === 'TIMING-OUT')
    return { status: 'TIMED-OUT', message: `The upstream run timed out${why}: ${kept} kept` };
  if (err.status === 'ABORTED' || err.status === 'ABORTING')
    return { status: 'ABORTED', message: `The upstream run was aborted${why}: ${kept} kept` };
  return { status: 'FAILED', message: `The upstream run failed${why}: ${kept} kept` };
}

export interface UpstreamDeps {
  db: Database;
  logger: Logger;
  engine: UpstreamEngine | undefined;
}

/**
 * The upstream side of a run whose tool runs upstream (TOOL_SOURCES), or that is attached to an
 * upstream run already: undefined for a catalog run; the error when it cannot run (no token).
 * A run that started on the catalog (rows stored, no upstream run) stays there.
 */
export function openUpstream(
  deps: UpstreamDeps & { config: Pick<Config, 'toolSources' | 'enforceLimits'> },
  run: Run,
  tool: ToolDefinition,
  limitSecs: number,
): UpstreamRunner | UpstreamUnavailableError | undefined {
  const declaration = upstreamDeclaration(tool.name);
  const planned = run.upstreamRunId
    ? declaration && { declaration, actorId: run.upstreamActorId ?? declaration.defaultActor }
    : run.itemCount === 0 && run.handled === 0
      ? upstreamActor(deps.config, tool.name)
      : undefined;
  if (!planned) return undefined;
  const input = tool.input.parse(run.input);
  const estimate = tool.price.estimate(input, run.requested);
  const holdMicros = deps.config.enforceLimits ? run.holdPlanMicros + run.holdPurchasedMicros : estimate;
  // Rows the hold pays for (the hold is the estimate of what the run asked for, or less when the wallet
  // held less): the upstream run may deliver and be charged no more.
  const maxItems = Math.max(1, tool.price.unitMicros > 0n ? Number(holdMicros / tool.price.unitMicros) : run.requested);
  const limitMs = (run.startedAt ?? run.createdAt).getTime() + limitSecs * 1000 - Date.now();
  try {
    return new UpstreamRunner(deps, run, tool, planned.declaration, planned.actorId, {
      maxItems,
      maxTotalChargeUsd: Number(holdMicros) / 1_000_000,
      timeoutSecs: Math.max(1, Math.ceil(limitMs / 1000)),
      capped: holdMicros < estimate,
    });
  } catch (err) {
    if (err instanceof UpstreamUnavailableError) return err;
    throw err;
  }
}

/**
 * One run's upstream side: starts the actor run (or re-attaches to the one stored on the run), reads
 * its dataset from the offset stored with the rows, and aborts it when our run stops early. The
 * bound caps what the upstream run may deliver and cost: what the caller's hold pays for.
 */
export class UpstreamRunner<I = unknown> {
  private current: UpstreamRun | undefined;
  private readonly engine: UpstreamEngine;
  /** Dataset items read up to now (stored or skipped), from the offset stored with the run. */
  private read: number;
  /** When this runner started the upstream run (not set for one it re-attached to). */
  private startedAt: number | undefined;
  /** Whether this runner asked the platform to abort the upstream run. */
  private abortedHere = false;
  /** The run's stop signal, once `batches` reads: a 404 asked again is not waited for past a stop. */
  private signal: AbortSignal | undefined;
  /**
   * Whether the platform ended the upstream run at the most it was allowed to charge (its
   * `maxTotalChargeUsd`, the hold): the hold used up, not a failure.
   */
  chargeLimitReached = false;

  constructor(
    private readonly deps: UpstreamDeps,
    private readonly run: Run,
    private readonly tool: ToolDefinition,
    private readonly declaration: UpstreamDeclaration<I>,
    private readonly actorId: string,
    /** `capped`: the hold (so `maxItems`) is below the estimate of what the run asked for. */
    private readonly bound: { maxItems: number; maxTotalChargeUsd: number; timeoutSecs: number; capped: boolean },
  ) {
    if (!deps.engine)
      throw new UpstreamUnavailableError('config', `${tool.name} runs upstream but APIFY_TOKEN is not set`);
    this.engine = deps.engine;
    this.read = run.upstreamOffset;
  }

  /**
   * The upstream run was bounded below what the run asked for, by a hold short of its estimate, and
   * delivered up to that bound: the hold used up, not the search, ended it.
   */
  get readToCappedBound() {
    return this.bound.capped && this.read >= this.bound.maxItems;
  }

  /** The upstream run's id once started or re-attached. */
  get upstreamRunId() {
    return this.current?.id ?? this.run.upstreamRunId ?? undefined;
  }

  async *batches(input: I, signal: AbortSignal): AsyncGenerator<UpstreamBatch> {
    this.signal = signal;
    let current = this.run.upstreamRunId ? await this.get(this.run.upstreamRunId, 0) : await this.start(input);
    this.current = current;
    const keep = this.declaration.limit?.(input);
    let offset = this.run.upstreamOffset;
    for (;;) {
      if (signal.aborted) return;
      // Read the status before the items: once an ended run's dataset reads empty, nothing is left.
      const ended = UPSTREAM_ENDED.includes(current.status);
      const datasetId = current.datasetId;
      const page = await this.fresh(() => this.engine.items(datasetId, offset, PAGE_SIZE));
      if (page.items.length > 0) {
        offset += page.items.length;
        this.read = offset;
        upstreamItemsRead.inc({ tool: this.tool.name }, page.items.length);
        const rows = page.items
          .map((item) => this.declaration.row(item, input))
          .filter((row): row is Row => row !== null && (keep?.(row) ?? true));
        yield { rows, handled: page.items.length, message: this.message(current, offset), offset };
        if (page.items.length === PAGE_SIZE || ended) continue;
      } else if (ended) {
        break;
      }
      const before = current.statusMessage;
      current = await this.get(current.id, page.items.length > 0 ? 0 : WAIT_SECS);
      this.current = current;
      if (current.statusMessage !== before)
        yield { rows: [], handled: 0, message: this.message(current, offset), offset };
    }
    if (current.status === 'ABORTED' && (await this.endedAtChargeLimit(current))) {
      this.chargeLimitReached = true;
      return;
    }
    if (current.status !== 'SUCCEEDED')
      throw new UpstreamEndedError(current.status as Exclude<UpstreamStatus, 'SUCCEEDED'>, current.statusMessage);
  }

  /**
   * Whether an upstream run that ended ABORTED was aborted by the platform at its charge limit: not by
   * this runner, and it delivered every item the hold pays for or cost what it was allowed (its cost
   * read again while the platform has not counted it).
   */
  private async endedAtChargeLimit(run: UpstreamRun): Promise<boolean> {
    if (this.abortedHere) return false;
    if (this.read >= this.bound.maxItems) return true;
    let cost = run.costUsd;
    for (let reads = 0; cost === null && reads < COST_READS; reads++) cost = (await this.get(run.id, 1)).costUsd;
    // Cents are the platform's rounding: a run within one of the limit reached it.
    return cost !== null && cost >= this.bound.maxTotalChargeUsd - 0.01;
  }

  /** The upstream run now, or once it ends within `waitSecs`; a new run's 404 is asked again (`fresh`). */
  private get(id: string, waitSecs: number) {
    return this.fresh(() => this.engine.get(id, waitSecs));
  }

  /**
   * `request`, asked again while it answers 404 within NEW_RUN_GRACE_MS of the start of the upstream run
   * this runner started, a quarter of a second first, doubling to two seconds, until the run stops.
   */
  private async fresh<T>(request: () => Promise<T>): Promise<T> {
    for (let delay = 250; ; delay = Math.min(2_000, delay * 2)) {
      try {
        return await request();
      } catch (err) {
        const young = this.startedAt !== undefined && Date.now() - this.startedAt < NEW_RUN_GRACE_MS;
        if (!(err instanceof UpstreamUnavailableError && err.reason === '404' && young)) throw err;
        // A stop ends the wait: the 404 is the answer then.
        await sleep(delay, undefined, this.signal ? { signal: this.signal } : {}).catch(() => {
          throw err;
        });
      }
    }
  }

  /**
   * Aborts the upstream run if it is still going (a cancel, the time limit, the hold used up, a failure); never
   * throws.
   */
  async abort() {
    const id = this.upstreamRunId;
    if (!id || (this.current && UPSTREAM_ENDED.includes(this.current.status))) return;
    this.abortedHere = true;
    try {
      this.current = await this.engine.abort(id);
    } catch (err) {
      this.deps.logger.warn({ err, runId: this.run.id, upstreamRunId: id }, 'upstream run could not be aborted');
    }
  }

  /**
   * Stores what the upstream run has cost, once the platform has settled it (the run ended, its usage
   * counted): read a few times a second apart, then left to a job that asks again with backoff
   * (`settleUpstreamCost`). Never throws.
   */
  async recordCost() {
    const id = this.upstreamRunId;
    if (!id) return;
    try {
      for (let reads = 0; reads < COST_READS; reads++) {
        const run = await this.get(id, reads === 0 ? 0 : 1);
        if (await storeSettledCost(this.deps.db, this.run.id, run)) return;
      }
      await this.deps.db.execute(sql`select ${costJob(this.run.id)}`);
    } catch (err) {
      this.deps.logger.warn({ err, runId: this.run.id, upstreamRunId: id }, 'upstream run cost not recorded');
    }
  }

  private async start(input: I): Promise<UpstreamRun> {
    this.startedAt = Date.now();
    const started = await this.engine.start({
      actorId: this.actorId,
      input: this.declaration.input(input, this.bound.maxItems),
      maxItems: this.bound.maxItems,
      maxTotalChargeUsd: this.bound.maxTotalChargeUsd,
      timeoutSecs: this.bound.timeoutSecs,
      ...(this.declaration.memoryMbytes ? { memoryMbytes: this.declaration.memoryMbytes } : {}),
      taken: async (ids) => {
        const rows = await this.deps.db
          .select({ id: runTable.upstreamRunId })
          .from(runTable)
          .where(inArray(runTable.upstreamRunId, ids));
        return new Set(rows.map((row) => row.id ?? ''));
      },
    });
    // Stored at once: a worker that takes the run over after this one dies re-attaches instead of starting another.
    await this.deps.db
      .update(runTable)
      .set({ upstreamRunId: started.id, upstreamActorId: this.actorId, upstreamDatasetId: started.datasetId })
      .where(eq(runTable.id, this.run.id));
    this.deps.logger.info(
      { runId: this.run.id, upstreamRunId: started.id, actorId: this.actorId, maxItems: this.bound.maxItems },
      started.adopted ? 'upstream run started (found after its start answer was lost)' : 'upstream run started',
    );
    if (started.orphansAborted?.length)
      this.deps.logger.warn(
        { runId: this.run.id, upstreamRunId: started.id, orphans: started.orphansAborted },
        'upstream runs left by lost start answers aborted',
      );
    return started;
  }

  private message(run: UpstreamRun, offset: number) {
    return (
      run.statusMessage ?? `Upstream run ${run.status.toLowerCase()}: ${offset} item${offset === 1 ? '' : 's'} read`
    );
  }
}

/** The call that adds the job settling a run's upstream cost (keyed by the run: at most one waits). */
const costJob = (runId: string) =>
  sql`graphile_worker.add_job(${JOBS.settleUpstreamCost}::text, json_build_object('runId', ${runId}::text),
    run_at => now() + interval '30 seconds', max_attempts => 10, job_key => ${`upstream-cost:${runId}`}::text)`;

/** Stores an ended upstream run's cost on the run; false (nothing stored) while it is not final. */
async function storeSettledCost(db: Database, runId: string, run: UpstreamRun): Promise<boolean> {
  if (!UPSTREAM_ENDED.includes(run.status) || run.costUsd === null) return false;
  await db
    .update(runTable)
    .set({ upstreamCostMicros: BigInt(Math.round(run.costUsd * 1_000_000)) })
    .where(eq(runTable.id, runId));
  return true;
}

/**
 * The job of a run whose upstream cost was not final when the run ended: reads the upstream run again
 * and stores its cost; throws while it is not settled, so the worker asks again later (backoff, ten
 * attempts). A run without an upstream run, or no engine, has nothing to settle.
 */
export async function settleUpstreamCost(deps: Pick<UpstreamDeps, 'db' | 'engine'>, runId: string): Promise<void> {
  const [run] = await deps.db
    .select({ upstreamRunId: runTable.upstreamRunId })
    .from(runTable)
    .where(eq(runTable.id, runId));
  if (!run?.upstreamRunId || !deps.engine) return;
  const upstream = await deps.engine.get(run.upstreamRunId, 0);
  if (!(await storeSettledCost(deps.db, runId, upstream)))
    throw new Error(`upstream run ${run.upstreamRunId} has not settled its cost yet (${upstream.status})`);
}
