import { setMaxListeners } from 'node:events';
import { createPubSub, Repeater, type PubSub } from 'graphql-yoga';
import { and, gte, inArray, notInArray, or, sql as dsql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Executor, Sql } from '../../db/client.ts';
import { runTable, TERMINAL_STATUSES } from '../../db/schema/runs.ts';
import { randomBase62 } from '../shared/ids.ts';
import { observeEvent } from '../shared/metrics.ts';
import { isTerminal, snapshotOf, type RunSnapshot } from './view.ts';

/**
 * Topics of the one typed pubsub. A topic with an id is routed as `${topic}:${id}`.
 * Every event crosses processes through Postgres LISTEN/NOTIFY, so a gateway sees runs that a
 * worker in another process executes.
 */
export type Topics = {
  /** Every change of one run: status, counts, message. */
  runProgress: [runId: string, snapshot: RunSnapshot];
  /** Every run of one account: created, progress, finished. */
  runEvents: [accountId: string, event: RunEvent];
};

export type RunEventKind = 'created' | 'progress' | 'finished';

export interface RunEvent {
  kind: RunEventKind;
  run: RunSnapshot;
}

export type EventBus = PubSub<Topics> & {
  /**
   * Publishes a change of a run to its own topic and its account's, in one notification per channel
   * (see EventScope), as part of `tx`: delivered only if and when it commits, in commit order.
   */
  publishRun(tx: Executor, accountId: string, kind: RunEventKind, snapshot: RunSnapshot): Promise<void>;
  /**
   * What `publishRun` sends for a run being created, on a gateway's bus: its channel and payload, for a
   * statement that notifies by itself (only on the main channel: the start of a run is never a cancel,
   * and a gateway hears that channel).
   */
  runNotification(accountId: string, kind: RunEventKind, snapshot: RunSnapshot): { channel: string; payload: string };
  /** Resolves once this process is listening, so a subscriber cannot miss what follows. */
  ready: Promise<void>;
  close(): Promise<void>;
};

const CHANNEL = 'leadgate_events';
/**
 * Runs entering ABORTING, sent on this channel as well: all a process that only executes runs (a
 * standalone worker) acts on, so it listens here and is not woken by every change of every run. Each
 * listening process pays for each notification it gets (a wake-up, a read, a parse).
 */
const CONTROL_CHANNEL = 'leadgate_run_control';
/** A bus's own channel: what it published comes back to it after commit (metrics count a change where it was made). */
const ownChannel = (origin: string) => `leadgate_events_${origin}`;

/**
 * What a process's bus hears. `all` (a gateway): every change of every run, for its long polls,
 * subscriptions and streams. `control` (a standalone worker): the cancels of runs, for the run in
 * hand, and the changes it published itself. Every change is published to all the others alike.
 */
export type EventScope = 'all' | 'control';

interface Envelope {
  type: string;
  detail: unknown;
  /** A run change also goes to its account's topic. */
  account?: { type: string; kind: RunEventKind };
  /** The bus that published it and when (ms since the epoch): metrics count a change once, where it was made, and time the fan-out. */
  origin?: string;
  at?: number;
}

/** An EventTarget whose dispatches go through NOTIFY and whose listeners are fed by LISTEN. */
class PostgresEventTarget extends EventTarget {
  readonly origin = randomBase62(12);

  constructor(private readonly sql: Sql) {
    super();
  }

  /** graphql-yoga's `publish` (the service publishes through publishRun, in its transactions). */
  override dispatchEvent(event: Event): boolean {
    const envelope: Envelope = { type: event.type, detail: (event as CustomEvent).detail, origin: this.origin, at: Date.now() };
    this.sql`select pg_notify(${CHANNEL}, ${JSON.stringify(envelope)})`.catch(() => {});
    return true;
  }

  /** The topics this process listens to, with their listeners: what a resync reads again after LISTEN was lost. */
  readonly topics = new Map<string, Set<unknown>>();

  override addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: AddEventListenerOptions | boolean) {
    super.addEventListener(type, listener, options);
    if (listener) (this.topics.get(type) ?? this.topics.set(type, new Set()).get(type)!).add(listener);
  }

  override removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: EventListenerOptions | boolean) {
    super.removeEventListener(type, listener, options);
    const listeners = this.topics.get(type);
    if (listeners && listener && listeners.delete(listener) && listeners.size === 0) this.topics.delete(type);
  }

  /** A run as it is now, to this process's listeners only (a resync): its own topic and its account's. */
  redeliver(accountId: string, kind: RunEventKind, snapshot: RunSnapshot) {
    super.dispatchEvent(new CustomEvent(`runProgress:${snapshot.id}`, { detail: snapshot }));
    super.dispatchEvent(new CustomEvent(`runEvents:${accountId}`, { detail: { kind, run: snapshot } satisfies RunEvent }));
  }

  deliver(payload: string) {
    const envelope = JSON.parse(payload) as Envelope;
    observeEvent(envelope.at, envelope.origin === this.origin, envelope.account && { kind: envelope.account.kind, run: envelope.detail as RunSnapshot });
    super.dispatchEvent(new CustomEvent(envelope.type, { detail: envelope.detail }));
    if (envelope.account) {
      const event: RunEvent = { kind: envelope.account.kind, run: envelope.detail as RunSnapshot };
      super.dispatchEvent(new CustomEvent(envelope.account.type, { detail: event }));
    }
  }
}

function runNotification(origin: string, accountId: string, kind: RunEventKind, snapshot: RunSnapshot) {
  const envelope: Envelope = { type: `runProgress:${snapshot.id}`, detail: snapshot, account: { type: `runEvents:${accountId}`, kind }, origin, at: Date.now() };
  return { channel: CHANNEL, payload: JSON.stringify(envelope) };
}

/**
 * Listens on `type` from the call on, not from the first `next()` as graphql-yoga's pubsub does: a
 * reader that subscribes, then reads the current state, misses no change made in between. Events
 * that arrive before the first `next()` wait in order; `return()` stops listening, started or not.
 */
function subscribeNow(target: EventTarget, type: string): Repeater<unknown> {
  const early: unknown[] = [];
  let push: ((value: unknown) => unknown) | undefined;
  const listener = (event: Event) => {
    const detail = (event as CustomEvent).detail;
    if (push) void push(detail);
    else early.push(detail);
  };
  target.addEventListener(type, listener);
  const repeater = new Repeater<unknown>(async (next, stop) => {
    for (const value of early.splice(0)) void next(value);
    push = next;
    await stop;
    target.removeEventListener(type, listener);
  });
  const stopRepeater = repeater.return.bind(repeater);
  repeater.return = (value) => {
    target.removeEventListener(type, listener);
    return stopRepeater(value);
  };
  return repeater;
}

/** How long before the loss of LISTEN a run may have ended unannounced, against clocks that differ a little. */
const RESYNC_MARGIN_MS = 60_000;

/**
 * After LISTEN was lost and holds again, what was published in between never arrives. Each run topic
 * this process listens to gets its run as it is now; each account topic gets the account's runs in
 * flight and those ended since the loss (as `finished`). Subscribers skip what they have seen, so a
 * subscriber waiting for a run's end is not left waiting.
 */
async function resync(sql: Sql, target: PostgresEventTarget, lostAt: Date) {
  const runIds: string[] = [];
  const accountIds: string[] = [];
  for (const type of target.topics.keys()) {
    const at = type.indexOf(':');
    if (type.slice(0, at) === 'runProgress') runIds.push(type.slice(at + 1));
    else if (type.slice(0, at) === 'runEvents') accountIds.push(type.slice(at + 1));
  }
  if (runIds.length === 0 && accountIds.length === 0) return;
  const runs = await drizzle(sql)
    .select()
    .from(runTable)
    .where(
      or(
        runIds.length > 0 ? inArray(runTable.id, runIds) : undefined,
        accountIds.length > 0
          ? and(inArray(runTable.accountId, accountIds), or(notInArray(runTable.status, [...TERMINAL_STATUSES]), gte(runTable.finishedAt, new Date(lostAt.getTime() - RESYNC_MARGIN_MS))))
          : undefined,
      ),
    )
    .orderBy(runTable.createdAt);
  for (const run of runs) target.redeliver(run.accountId, isTerminal(run.status) ? 'finished' : 'progress', snapshotOf(run));
}

/**
 * LISTEN on a connection of its own that outlives database restarts. postgres.js's `listen` listens
 * again once when its connection drops, and gives up for good when the database is still down at that
 * moment; here LISTEN is issued again, backing off, until it holds, and `onListening` runs each time it
 * does (with when it was lost, after a loss). `ready` settles with the first attempt: a database out
 * of reach at start fails the start.
 */
function listenAcrossRestarts(sql: Sql, channels: readonly string[], onPayload: (payload: string) => void, onListening: (lostAt: Date | undefined) => Promise<void>) {
  let stopped = false;
  let dropped: (() => void) | undefined;
  let wake: (() => void) | undefined;
  // A copy of the pool's options, as postgres.js's own listen makes: one connection, never recycled.
  const connection = postgres({
    ...(sql.options as object),
    max: 1,
    idle_timeout: null,
    max_lifetime: null,
    fetch_types: false,
    onnotify: (from: string, payload: string) => {
      if (channels.includes(from)) onPayload(payload);
    },
    onclose: () => dropped?.(),
  } as unknown as postgres.Options<Record<string, never>>);
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, ms).unref();
    });

  let settle!: (err?: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => (settle = (err) => (err === undefined ? resolve() : reject(err))));
  void (async () => {
    let first = true;
    let lostAt: Date | undefined;
    for (let attempt = 0; !stopped; ) {
      const lost = new Promise<void>((resolve) => (dropped = resolve));
      try {
        for (const channel of channels) await connection.unsafe(`listen "${channel}"`);
        await onListening(lostAt);
      } catch (err) {
        if (first) return settle(err);
        lostAt ??= new Date();
        await pause(Math.min(100 * 2 ** attempt++, 2_000));
        continue;
      }
      if (first) settle();
      first = false;
      attempt = 0;
      await lost;
      lostAt = new Date();
    }
  })();

  return {
    ready,
    async close() {
      stopped = true;
      wake?.();
      await connection.end({ timeout: 1 });
    },
  };
}

export function createEventBus(sql: Sql, options: { scope?: EventScope } = {}): EventBus {
  const target = new PostgresEventTarget(sql);
  // Every subscriber of a run listens on its topic: many listeners are the normal case, not a leak.
  setMaxListeners(0, target);
  const control = options.scope === 'control';
  const own = ownChannel(target.origin);
  // Every change goes to CHANNEL; a cancel to the workers' channel too; and a control bus's own change
  // back to it (it does not hear CHANNEL). Each process listens on channels no notification shares, so it
  // hears each change at most once.
  const notify = (payload: string, status: RunSnapshot['status']) => {
    const channels = [CHANNEL, ...(status === 'ABORTING' ? [CONTROL_CHANNEL] : control ? [own] : [])];
    return dsql`select ${dsql.join(
      channels.map((channel) => dsql`pg_notify(${channel}, ${payload})`),
      dsql`, `,
    )}`;
  };
  // Re-listens after a database restart and resyncs this process's subscribers (see listenAcrossRestarts, resync).
  const listening = listenAcrossRestarts(sql, control ? [CONTROL_CHANNEL, own] : [CHANNEL], (payload) => target.deliver(payload), (lostAt) =>
    lostAt ? resync(sql, target, lostAt) : Promise.resolve(),
  );
  const pubsub = createPubSub<Topics>({ eventTarget: target as never });
  return Object.assign(pubsub, {
    subscribe: ((topic: string, id?: string) => subscribeNow(target, id === undefined ? topic : `${topic}:${id}`)) as PubSub<Topics>['subscribe'],
    async publishRun(tx: Executor, accountId: string, kind: RunEventKind, snapshot: RunSnapshot) {
      await tx.execute(notify(runNotification(target.origin, accountId, kind, snapshot).payload, snapshot.status));
    },
    runNotification: (accountId: string, kind: RunEventKind, snapshot: RunSnapshot) => runNotification(target.origin, accountId, kind, snapshot),
    ready: listening.ready,
    close: listening.close,
  });
}
