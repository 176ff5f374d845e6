/**
 * The event bus: a run's changes published through Postgres NOTIFY, on the channels of its run and its
 * account, and followed by topic in every process (docs/architecture.md, Events).
 */
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { sql as dsql } from 'drizzle-orm';
import { afterCommit, type Executor, type Sql } from '../../db/client.ts';
import { randomBase62 } from '../shared/ids.ts';
import { observeEventFanout, observeRunChange } from '../shared/metrics.ts';
import type { RunSnapshot } from '../runs/view.ts';
import { listenAcrossRestarts } from './listen.ts';
import { resync } from './resync.ts';
import {
  type DeliveryEvent,
  listenLocally,
  LocalTopics,
  type PipelineEvent,
  type RunEventKind,
  type ScheduleEvent,
  type Subscription,
  type Topics,
} from './topics.ts';
import { setUnder } from '../shared/maps.ts';

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
  /**
   * What `publishRun` sends: the channels and the one payload, for a statement that notifies by itself (a run's
   * start).
   */
  runNotification(
    accountId: string,
    kind: RunEventKind,
    snapshot: RunSnapshot,
  ): { channels: string[]; payload: string };
  /**
   * What `publishRun` does besides notifying, for a statement that notified by itself in `tx`: the change as
   * published.
   */
  published(tx: Executor, accountId: string, kind: RunEventKind, snapshot: RunSnapshot): void;
  /** Publishes a schedule's event to its account's followers once `tx` commits. */
  publishSchedule(tx: Executor, accountId: string, event: ScheduleEvent): Promise<void>;
  /** Publishes a pipeline's change to its account's followers once `tx` commits. */
  publishPipeline(tx: Executor, accountId: string, event: PipelineEvent): Promise<void>;
  /** Publishes a delivery's change to its account's followers once `tx` commits. */
  publishDelivery(tx: Executor, accountId: string, event: DeliveryEvent): Promise<void>;
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
  /**
   * The bus that published it (a control bus has handed its own changes over already) and when (ms since the epoch,
   * for the fan-out delay).
   */
  origin: string;
  at: number;
}

/** A schedule's, a pipeline's or a delivery's event on its account's channel, beside the runs'. */
interface ScheduleEnvelope {
  schedule?: ScheduleEvent;
  pipeline?: PipelineEvent;
  delivery?: DeliveryEvent;
  accountId: string;
  origin: string;
  at: number;
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

  /**
   * Once `tx` commits: the change counted where it was made; a control bus's subscribers get it here (no channel
   * brings it back).
   */
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
    const parsed = JSON.parse(payload) as Envelope | ScheduleEnvelope;
    observeEventFanout(parsed.at);
    if ('schedule' in parsed && parsed.schedule) {
      target.scheduleEvents(parsed.accountId, parsed.schedule);
      return;
    }
    if ('pipeline' in parsed && parsed.pipeline) {
      target.pipelineEvents(parsed.accountId, parsed.pipeline);
      return;
    }
    if ('delivery' in parsed && parsed.delivery) {
      target.deliveryEvents(parsed.accountId, parsed.delivery);
      return;
    }
    const e = parsed as Envelope;
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
        unfollow = await listening.follow(topic === 'runProgress' ? runChannel(id) : accountChannel(id as string));
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
    async publishSchedule(tx: Executor, accountId: string, event: ScheduleEvent) {
      const envelope: ScheduleEnvelope = { schedule: event, accountId, origin, at: Date.now() };
      await tx.execute(dsql`select pg_notify(${accountChannel(accountId)}, ${JSON.stringify(envelope)})`);
      if (control) afterCommit(tx, () => target.scheduleEvents(accountId, event));
    },
    async publishPipeline(tx: Executor, accountId: string, event: PipelineEvent) {
      const envelope: ScheduleEnvelope = { pipeline: event, accountId, origin, at: Date.now() };
      await tx.execute(dsql`select pg_notify(${accountChannel(accountId)}, ${JSON.stringify(envelope)})`);
      if (control) afterCommit(tx, () => target.pipelineEvents(accountId, event));
    },
    async publishDelivery(tx: Executor, accountId: string, event: DeliveryEvent) {
      const envelope: ScheduleEnvelope = { delivery: event, accountId, origin, at: Date.now() };
      await tx.execute(dsql`select pg_notify(${accountChannel(accountId)}, ${JSON.stringify(envelope)})`);
      if (control) afterCommit(tx, () => target.deliveryEvents(accountId, event));
    },
    async hear(channels, onNotify) {
      const unfollows: (() => void)[] = [];
      const stop = () => {
        for (const channel of channels) {
          const hearers = heard.get(channel);
          if (hearers?.delete(onNotify) && hearers.size === 0) heard.delete(channel);
        }
        for (const unfollow of unfollows.splice(0)) unfollow();
      };
      for (const channel of channels) setUnder(heard, channel).add(onNotify);
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
