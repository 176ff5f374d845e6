import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Repeater } from 'graphql-yoga';
import { and, gte, inArray, notInArray, or, sql as dsql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterCommit, type Executor, type Sql } from '../../db/client.ts';
import { quoteIdentifier } from '../../db/identifiers.ts';
import { runTable, TERMINAL_STATUSES } from '../../db/tables/runs.ts';
import { DatabaseUnavailableError } from '../shared/errors.ts';
import { randomBase62 } from '../shared/ids.ts';
import { observeEventFanout, observeRunChange } from '../shared/metrics.ts';
import { isTerminal, snapshotOf, type RunSnapshot } from './view.ts';

/**
 * Topics of the event bus, each followed for one id. Every event crosses processes through Postgres
 * LISTEN/NOTIFY, so a gateway sees runs that a worker in another process executes.
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

/** A topic's events in order, from the moment its `subscribe` resolved; `return()` stops listening. */
export type Subscription<T> = Repeater<T>;

export interface EventBus {
  /**
   * Follows one topic for one id. Resolves once this process hears it (its channel is listened on):
   * a reader that subscribes, then reads the current state, misses no change committed in between.
   * Rejects with `database_unavailable` while the bus has lost its connection.
   */
  subscribe<K extends keyof Topics>(topic: K, id: Topics[K][0]): Promise<Subscription<Topics[K][1]>>;
  /**
   * Publishes a change of a run to its topic and its account's (see EventScope for the channels), as
   * part of `tx`: delivered only if and when it commits, in commit order.
   */
  publishRun(tx: Executor, accountId: string, kind: RunEventKind, snapshot: RunSnapshot): Promise<void>;
  /** What `publishRun` sends: the channels and the one payload, for a statement that notifies by itself (a run's start). */
  runNotification(
    accountId: string,
    kind: RunEventKind,
    snapshot: RunSnapshot,
  ): { channels: string[]; payload: string };
  /** What `publishRun` does besides notifying, for a statement that notified by itself in `tx`: the change as published. */
  published(tx: Executor, accountId: string, kind: RunEventKind, snapshot: RunSnapshot): void;
  /**
   * Hears channels of another component of this process (graphile-worker's `jobs:insert`) on the bus's
   * listening session, so the process has one: Postgres wakes every listening session of the database
   * for every notification. Resolves once they are listened on; they are listened on again after the
   * session is lost (what was sent meanwhile is not heard). The returned function stops hearing them.
   * Not for run topics: their payloads are the bus's own.
   */
  hear(channels: readonly string[], onNotify: (channel: string, payload: string) => void): Promise<() => void>;
  /** Resolves once this process is listening, so a subscriber cannot miss what follows. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * An id in a channel name: as it is when short and of letters, digits and `_` only (this service's ids
 * are), else its digest. A caller's id (a run id in a URL) never reaches a LISTEN statement as written,
 * and no name passes Postgres's 63 bytes.
 */
const channelId = (id: string) =>
  /^[A-Za-z0-9_]{1,40}$/.test(id) ? id : createHash('sha256').update(id).digest('hex').slice(0, 40);
const RUN_PREFIX = 'leadgate_run_';
/** A run's changes: what a long poll, a run subscription or a stream of its rows waits on. */
const runChannel = (runId: string) => `${RUN_PREFIX}${channelId(runId)}`;
/** An account's run changes: what its dashboards follow. */
const accountChannel = (accountId: string) => `leadgate_account_${channelId(accountId)}`;
/**
 * Runs entering ABORTING, sent on this channel as well: all a process that only executes runs (a
 * standalone worker) acts on, so it listens here and is not woken by every change of every run. Each
 * listening process pays for each notification it gets (a wake-up, a read, a parse).
 */
const CONTROL_CHANNEL = 'leadgate_control';

/**
 * What a process's bus hears besides its own changes. `topics` (a gateway, or a gateway with its inline
 * worker): the topics it follows, each on its channel, listened on while something in the process
 * waits on it (a long poll, a subscription, a stream, a run in hand), so a gateway hears the runs it
 * serves and not every run of the fleet. `control` (a standalone worker): the cancels of all runs, on
 * one channel listened on from the start, for the run in hand, and its own changes, handed to its
 * subscribers once committed, without a notification. Every change goes to its run's channel and its
 * account's, a cancel to the control channel too. No change comes back to the process that made it
 * for that reason alone: it is counted there once committed (`afterCommit`), not woken for.
 */
export type EventScope = 'topics' | 'control';

interface Envelope {
  kind: RunEventKind;
  accountId: string;
  run: RunSnapshot;
  /** The bus that published it (a control bus has handed its own changes over already) and when (ms since the epoch, for the fan-out delay). */
  origin: string;
  at: number;
}

/** Delivers events to this process's subscribers, each topic under `${topic}:${id}`. */
class LocalTopics extends EventTarget {
  /** The topics this process listens to, with their listeners: what a resync reads again after LISTEN was lost. */
  readonly topics = new Map<string, Set<unknown>>();

  override addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: AddEventListenerOptions | boolean,
  ) {
    super.addEventListener(type, listener, options);
    if (listener) (this.topics.get(type) ?? this.topics.set(type, new Set()).get(type)!).add(listener);
  }

  override removeEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: EventListenerOptions | boolean,
  ) {
    super.removeEventListener(type, listener, options);
    const listeners = this.topics.get(type);
    if (listeners && listener && listeners.delete(listener) && listeners.size === 0) this.topics.delete(type);
  }

  /** A run's change to the subscribers of its run's topic. */
  runProgress(snapshot: RunSnapshot) {
    this.dispatchEvent(new CustomEvent(`runProgress:${snapshot.id}`, { detail: snapshot }));
  }

  /** A run's change to the subscribers of its account's topic. */
  runEvents(accountId: string, kind: RunEventKind, snapshot: RunSnapshot) {
    this.dispatchEvent(
      new CustomEvent(`runEvents:${accountId}`, { detail: { kind, run: snapshot } satisfies RunEvent }),
    );
  }
}

/**
 * Listens on `type` from the call on: events that arrive before the first `next()` wait in order;
 * `return()` stops listening, started or not.
 */
function listenLocally<T>(target: EventTarget, type: string): Repeater<T> {
  const early: T[] = [];
  let push: ((value: T) => unknown) | undefined;
  const listener = (event: Event) => {
    const detail = (event as CustomEvent<T>).detail;
    if (push) void push(detail);
    else early.push(detail);
  };
  target.addEventListener(type, listener);
  const repeater = new Repeater<T>(async (next, stop) => {
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
async function resync(sql: Sql, target: LocalTopics, lostAt: Date) {
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
          ? and(
              inArray(runTable.accountId, accountIds),
              or(
                notInArray(runTable.status, [...TERMINAL_STATUSES]),
                gte(runTable.finishedAt, new Date(lostAt.getTime() - RESYNC_MARGIN_MS)),
              ),
            )
          : undefined,
      ),
    )
    .orderBy(runTable.createdAt);
  for (const run of runs) {
    const kind = isTerminal(run.status) ? 'finished' : 'progress';
    const snapshot = snapshotOf(run);
    if (target.topics.has(`runProgress:${run.id}`)) target.runProgress(snapshot);
    if (target.topics.has(`runEvents:${run.accountId}`)) target.runEvents(run.accountId, kind, snapshot);
  }
}

/** The listening session's `application_name`. */
export const LISTENER_NAME = 'leadgate-events';

/** How long a channel nothing follows any more stays listened on, in case it is followed again (an account's dashboard reloading), before one UNLISTEN drops all such channels. */
const UNLISTEN_AFTER_MS = 2_000;

/**
 * LISTEN on a connection of its own that outlives database restarts, on fixed channels and on
 * channels added and dropped while it runs (counted: a channel is listened on while anything follows
 * it). LISTENs asked for in one turn of the event loop go as one statement; channels nothing follows
 * are dropped together, a little later.
 *
 * postgres.js's own `listen` listens again once when its connection drops, and gives up for good when
 * the database is still down at that moment; here LISTEN is issued again, for every channel followed,
 * backing off, until it holds, and `onListening` runs each time it does (with when it was lost, after a
 * loss). `ready` settles with the first attempt: a database out of reach at start fails the start.
 */
function listenAcrossRestarts(
  sql: Sql,
  fixed: readonly string[],
  onNotify: (channel: string, payload: string) => void,
  onListening: (lostAt: Date | undefined) => Promise<void>,
) {
  let stopped = false;
  let dropped: (() => void) | undefined;
  let wake: (() => void) | undefined;
  /** Channels followed, with how many follow each (fixed ones forever). */
  const followed = new Map<string, number>(fixed.map((channel) => [channel, 1]));
  /** Channels listened on in the current session, or being: the LISTEN that covers each. */
  const listened = new Map<string, Promise<void>>();
  /** Whether the current session listens on every channel followed (false while it is being restored). */
  let listening = false;
  let batch: { channels: string[]; done: Promise<void> } | undefined;
  let sweep: NodeJS.Timeout | undefined;

  // A copy of the pool's options, as postgres.js's own listen makes: one connection, never recycled,
  // named so that an operator tells it apart in pg_stat_activity.
  const options = sql.options as unknown as { connection?: Record<string, unknown> };
  const connection = postgres({
    ...options,
    connection: { ...options.connection, application_name: LISTENER_NAME },
    max: 1,
    idle_timeout: null,
    max_lifetime: null,
    fetch_types: false,
    onnotify: (channel: string, payload: string) => {
      if (listened.has(channel)) onNotify(channel, payload);
    },
    onclose: () => dropped?.(),
  } as unknown as postgres.Options<Record<string, never>>);
  const statement = (verb: 'listen' | 'unlisten', channels: readonly string[]) =>
    connection.unsafe(channels.map((c) => `${verb} ${quoteIdentifier(c)}`).join('; ')).simple();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, ms).unref();
    });

  /** LISTEN on `channel` with the others asked for in this turn, in one statement. */
  function listenOn(channel: string): Promise<void> {
    if (!batch) {
      const channels: string[] = [];
      const done = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        batch = undefined;
        await statement('listen', channels);
      });
      batch = { channels, done };
    }
    batch.channels.push(channel);
    const done = batch.done;
    listened.set(channel, done);
    // A failed LISTEN (the session was lost) is for the session's restore to redo; the follower gets the error.
    done.catch(() => {
      if (listened.get(channel) === done) listened.delete(channel);
    });
    return done;
  }

  /** One UNLISTEN for every channel nothing has followed since the last sweep. */
  function sweepUnfollowed() {
    sweep = undefined;
    const idle = [...listened.keys()].filter((channel) => !followed.has(channel));
    if (idle.length === 0 || !listening) return;
    for (const channel of idle) listened.delete(channel);
    // Lost with the session, the channels are not listened on anyway.
    statement('unlisten', idle).catch(() => {});
  }

  let settle!: (err?: unknown) => void;
  const ready = new Promise<void>(
    (resolve, reject) => (settle = (err) => (err === undefined ? resolve() : reject(err))),
  );
  void (async () => {
    let first = true;
    let lostAt: Date | undefined;
    for (let attempt = 0; !stopped; ) {
      const lost = new Promise<void>((resolve) => (dropped = resolve));
      try {
        const channels = [...followed.keys()];
        // With nothing followed yet, the session is still opened: a database out of reach fails the start.
        await (channels.length > 0 ? statement('listen', channels) : connection.unsafe('select 1').simple());
        for (const channel of channels) listened.set(channel, Promise.resolve());
        listening = true;
        await onListening(lostAt);
      } catch (err) {
        listening = false;
        listened.clear();
        if (first) return settle(err);
        lostAt ??= new Date();
        await pause(Math.min(100 * 2 ** attempt++, 2_000));
        continue;
      }
      if (first) settle();
      first = false;
      attempt = 0;
      await lost;
      listening = false;
      listened.clear();
      lostAt = new Date();
    }
  })();

  return {
    ready,
    /** Follows `channel`: resolves once it is listened on; the returned function stops following it. */
    async follow(channel: string): Promise<() => void> {
      if (!listening) throw new DatabaseUnavailableError(2);
      followed.set(channel, (followed.get(channel) ?? 0) + 1);
      let followedNow = true;
      const unfollow = () => {
        if (!followedNow) return;
        followedNow = false;
        const count = (followed.get(channel) ?? 1) - 1;
        if (count > 0) return void followed.set(channel, count);
        followed.delete(channel);
        sweep ??= setTimeout(sweepUnfollowed, UNLISTEN_AFTER_MS).unref();
      };
      try {
        await (listened.get(channel) ?? listenOn(channel));
      } catch (err) {
        unfollow();
        throw err;
      }
      return unfollow;
    },
    async close() {
      stopped = true;
      if (sweep) clearTimeout(sweep);
      wake?.();
      await connection.end({ timeout: 1 });
    },
  };
}

export function createEventBus(sql: Sql, options: { scope?: EventScope } = {}): EventBus {
  const target = new LocalTopics();
  // Every subscriber of a run listens on its topic: many listeners are the normal case, not a leak.
  setMaxListeners(0, target);
  const origin = randomBase62(12);
  const control = options.scope === 'control';

  const notification = (accountId: string, kind: RunEventKind, snapshot: RunSnapshot) => {
    const envelope: Envelope = { kind, accountId, run: snapshot, origin, at: Date.now() };
    const channels = [
      runChannel(snapshot.id),
      accountChannel(accountId),
      ...(snapshot.status === 'ABORTING' ? [CONTROL_CHANNEL] : []),
    ];
    return { channels, payload: JSON.stringify(envelope) };
  };

  /** Once `tx` commits: the change counted where it was made; a control bus's subscribers get it here (no channel brings it back). */
  const published = (tx: Executor, accountId: string, kind: RunEventKind, snapshot: RunSnapshot) =>
    afterCommit(tx, () => {
      observeRunChange({ kind, run: snapshot });
      if (control) {
        target.runProgress(snapshot);
        target.runEvents(accountId, kind, snapshot);
      }
    });

  /** Other components' channels (`hear`), with who hears each. */
  const heard = new Map<string, Set<(channel: string, payload: string) => void>>();

  const deliver = (channel: string, payload: string) => {
    const hearers = heard.get(channel);
    if (hearers) {
      for (const onNotify of hearers) onNotify(channel, payload);
      return;
    }
    const e = JSON.parse(payload) as Envelope;
    observeEventFanout(e.at);
    if (channel === CONTROL_CHANNEL) {
      // A control bus hears a cancel's topics on this one channel; its own cancel it has handed over.
      if (e.origin === origin) return;
      target.runProgress(e.run);
      target.runEvents(e.accountId, e.kind, e.run);
    } else if (channel.startsWith(RUN_PREFIX)) target.runProgress(e.run);
    else target.runEvents(e.accountId, e.kind, e.run);
  };

  // Re-listens after a database restart and resyncs this process's subscribers (see listenAcrossRestarts, resync).
  const listening = listenAcrossRestarts(sql, control ? [CONTROL_CHANNEL] : [], deliver, (lostAt) =>
    lostAt ? resync(sql, target, lostAt) : Promise.resolve(),
  );

  return {
    async subscribe<K extends keyof Topics>(topic: K, id: Topics[K][0]): Promise<Subscription<Topics[K][1]>> {
      // Listen here first, then on the channel: what arrives once it holds reaches this subscriber.
      const events = listenLocally<Topics[K][1]>(target, `${topic}:${id}`);
      if (control) return events;
      let unfollow: () => void;
      try {
        unfollow = await listening.follow(topic === 'runProgress' ? runChannel(id) : accountChannel(id));
      } catch (err) {
        await events.return();
        throw err;
      }
      const stop = events.return.bind(events);
      events.return = (value) => {
        unfollow();
        return stop(value);
      };
      return events;
    },
    async publishRun(tx: Executor, accountId: string, kind: RunEventKind, snapshot: RunSnapshot) {
      const { channels, payload } = notification(accountId, kind, snapshot);
      await tx.execute(
        dsql`select ${dsql.join(
          channels.map((channel) => dsql`pg_notify(${channel}, ${payload})`),
          dsql`, `,
        )}`,
      );
      published(tx, accountId, kind, snapshot);
    },
    runNotification: notification,
    published,
    async hear(channels, onNotify) {
      const unfollows: (() => void)[] = [];
      const stop = () => {
        for (const channel of channels) {
          const hearers = heard.get(channel);
          if (hearers?.delete(onNotify) && hearers.size === 0) heard.delete(channel);
        }
        for (const unfollow of unfollows.splice(0)) unfollow();
      };
      for (const channel of channels) (heard.get(channel) ?? heard.set(channel, new Set()).get(channel)!).add(onNotify);
      const followed = await Promise.allSettled(channels.map((channel) => listening.follow(channel)));
      for (const result of followed) if (result.status === 'fulfilled') unfollows.push(result.value);
      const failed = followed.find((result) => result.status === 'rejected');
      if (failed) {
        stop();
        throw failed.reason;
      }
      return stop;
    },
    ready: listening.ready,
    close: listening.close,
  };
}
