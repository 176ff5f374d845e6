/**
 * The run side of the `subscribers` suite, in a child process of its own (forked by
 * `subscribers.ts`), as a worker process would run it: `executeRun` on its own `Core`, for one or
 * several maps runs at once whose source hands out a page of 50 made-up places every `paceMs` (run k
 * of K starting k/K of a pace later, so the runs' events interleave evenly), so each batch is one
 * progress event. Each event is stamped (`process.hrtime`, CLOCK_MONOTONIC, the clock the other
 * processes read) as soon as the transaction that published it has committed: `executeRun` gets a
 * `db` whose `transaction` and an event bus whose `publishRun` are wrapped to note that. This process
 * does nothing else, so the stamp is not held back by the gateway's work, which is what is measured.
 */
import type { Database } from '../../db/client.ts';
import { loopbackConfig } from '../../src/config.ts';
import type { Core } from '../../src/core.ts';
import { createCore } from '../../src/create-core.ts';
import { createLogger } from '../../src/logger.ts';
import type { EventBus } from '../../src/events/bus.ts';
import { executeRun } from '../../src/runs/engine/index.ts';
import type { RunSnapshot } from '../../src/runs/view.ts';
import type { LocalBusinessSource, Place } from '../../src/sources/types.ts';

export type EngineCommand =
  | { cmd: 'clock'; seq: number }
  | {
      cmd: 'connect';
      seq: number;
      databaseUrl: string /** Postgres connections: one per run running at once and a few more. */;
      poolSize: number;
    }
  | { cmd: 'run'; seq: number; runIds: string[]; paceMs: number };

export interface Publication {
  runId: string;
  key: string;
  /** When its transaction had committed, ms (monotonic). */
  at: number;
  snapshot: RunSnapshot;
}

export type EngineReply =
  | {
      seq: number;
      ok: true;
      clock?: number;
      /** Every run's events in the order they committed. */
      publications?: Publication[];
      /** Per run, per batch, when the source handed it out. */
      yields?: Record<string, number[]>;
    }
  | { seq: number; ok: false; error: string };

/** Identifies an event the way a client sees it: its run, its status (as the GraphQL enum) and count. */
export const eventKey = (snapshot: Pick<RunSnapshot, 'id' | 'status' | 'handled'>) =>
  `${snapshot.id}:${snapshot.status.replace('-', '_')}:${snapshot.handled}`;

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

const place = (id: number): Place => ({
  id,
  placeId: `bench-place-${id}`,
  name: `Bench Dental Care ${id}`,
  category: 'Dentist',
  street: `${id} Market Street`,
  city: 'Denver',
  state: 'CO',
  postalCode: '80202',
  countryCode: 'US',
  lat: 39.7392,
  lng: -104.9903,
  phone: '+1 303-555-0142',
  website: `https://bench-dental-${id}.example.com`,
  emails: [`office@bench-dental-${id}.example.com`],
  rating: 4.6,
  reviewCount: 128,
  openingHours: [
    'Monday: 8 AM–5 PM',
    'Tuesday: 8 AM–5 PM',
    'Wednesday: 8 AM–5 PM',
    'Thursday: 8 AM–5 PM',
    'Friday: 8 AM–2 PM',
  ],
});

/** The catalog's map-listing source, except that its search hands out page i at `start + (i + 1) × paceMs`. */
function pacedSource(
  catalog: LocalBusinessSource,
  paceMs: number,
  start: number,
  yields: number[],
): LocalBusinessSource {
  const source: LocalBusinessSource = Object.create(catalog);
  source.searchPlaces = async (query) => {
    const i = yields.length;
    yields.push(NaN);
    await sleep(start + (i + 1) * paceMs - nowMs());
    yields[i] = nowMs();
    const first = (query.afterId ?? 0) + 1;
    return Array.from({ length: query.limit }, (_, k) => place(first + k));
  };
  return source;
}

let core: Core | undefined;

async function run(runIds: string[], paceMs: number) {
  if (!core) throw new Error('not connected');
  const base = core;
  const ours = new Set(runIds);
  const publications: Publication[] = [];
  // Snapshots published in each open transaction (the runs' transactions overlap).
  const open = new Map<unknown, RunSnapshot[]>();
  const events: EventBus = Object.create(base.events);
  events.publishRun = async (tx, accountId, kind, snapshot) => {
    await base.events.publishRun(tx, accountId, kind, snapshot);
    if (!ours.has(snapshot.id)) return;
    const published = open.get(tx);
    if (!published) throw new Error('publishRun outside a transaction of the engine');
    published.push(snapshot);
  };
  const db: Database = Object.create(base.db);
  db.transaction = (async (callback: Parameters<Database['transaction']>[0], ...rest: unknown[]) => {
    const published: RunSnapshot[] = [];
    const result = await (base.db.transaction as (...args: unknown[]) => Promise<unknown>)(
      async (tx: unknown) => {
        open.set(tx, published);
        try {
          return await (callback as (tx: unknown) => Promise<unknown>)(tx);
        } finally {
          open.delete(tx);
        }
      },
      ...rest,
    );
    const at = nowMs();
    for (const snapshot of published) publications.push({ runId: snapshot.id, key: eventKey(snapshot), at, snapshot });
    return result;
  }) as Database['transaction'];
  const start = nowMs();
  const yields: Record<string, number[]> = {};
  await Promise.all(
    runIds.map((runId, k) => {
      yields[runId] = [];
      const source = pacedSource(
        base.sources.localBusinesses,
        paceMs,
        start + (k * paceMs) / runIds.length,
        yields[runId],
      );
      return executeRun(
        { config: base.config, logger: base.logger, sources: { ...base.sources, localBusinesses: source }, db, events },
        runId,
      );
    }),
  );
  return { publications, yields };
}

async function handle(command: EngineCommand): Promise<EngineReply> {
  switch (command.cmd) {
    case 'clock':
      return { seq: command.seq, ok: true, clock: nowMs() };
    case 'connect':
      core = await createCore(loopbackConfig(command.databaseUrl, 0), command.databaseUrl, createLogger('silent'), {
        poolSize: command.poolSize,
      });
      return { seq: command.seq, ok: true };
    case 'run':
      return { seq: command.seq, ok: true, ...(await run(command.runIds, command.paceMs)) };
  }
}

process.on('message', (command: EngineCommand) => {
  handle(command)
    .then((reply) => process.send?.(reply))
    .catch((err: unknown) =>
      process.send?.({
        seq: command.seq,
        ok: false,
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      }),
    );
});
process.on('disconnect', () => {
  void (core?.close() ?? Promise.resolve()).finally(() => process.exit(0));
});
