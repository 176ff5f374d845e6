import { setMaxListeners } from 'node:events';
import { createPubSub, Repeater, type PubSub } from 'graphql-yoga';
import { sql as dsql } from 'drizzle-orm';
import type { Executor, Sql } from '../../db/client.ts';
import type { RunSnapshot } from './view.ts';

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
  /** Publishes as part of `tx`: delivered only if and when it commits, in commit order. */
  publishInTx<K extends keyof Topics & string>(tx: Executor, topic: K, ...args: Topics[K]): Promise<void>;
  /** Publishes a change of a run to its own topic and its account's, in one notification, as part of `tx`. */
  publishRun(tx: Executor, accountId: string, kind: RunEventKind, snapshot: RunSnapshot): Promise<void>;
  /** What `publishRun` sends: its channel and payload, for a statement that notifies by itself. */
  runNotification(accountId: string, kind: RunEventKind, snapshot: RunSnapshot): { channel: string; payload: string };
  /** Resolves once this process is listening, so a subscriber cannot miss what follows. */
  ready: Promise<void>;
  close(): Promise<void>;
};

const CHANNEL = 'leadgate_events';

interface Envelope {
  type: string;
  detail: unknown;
  /** A run change also goes to its account's topic. */
  account?: { type: string; kind: RunEventKind };
}

function routingKey(topic: string, args: unknown[]): Envelope {
  return args.length === 2 ? { type: `${topic}:${String(args[0])}`, detail: args[1] } : { type: topic, detail: args[0] };
}

/** An EventTarget whose dispatches go through NOTIFY and whose listeners are fed by LISTEN. */
class PostgresEventTarget extends EventTarget {
  constructor(private readonly sql: Sql) {
    super();
  }

  override dispatchEvent(event: Event): boolean {
    const envelope: Envelope = { type: event.type, detail: (event as CustomEvent).detail };
    this.sql`select pg_notify(${CHANNEL}, ${JSON.stringify(envelope)})`.catch(() => {});
    return true;
  }

  deliver(payload: string) {
    const envelope = JSON.parse(payload) as Envelope;
    super.dispatchEvent(new CustomEvent(envelope.type, { detail: envelope.detail }));
    if (envelope.account) {
      const event: RunEvent = { kind: envelope.account.kind, run: envelope.detail as RunSnapshot };
      super.dispatchEvent(new CustomEvent(envelope.account.type, { detail: event }));
    }
  }
}

function runNotification(accountId: string, kind: RunEventKind, snapshot: RunSnapshot) {
  const envelope: Envelope = { type: `runProgress:${snapshot.id}`, detail: snapshot, account: { type: `runEvents:${accountId}`, kind } };
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

export function createEventBus(sql: Sql): EventBus {
  const target = new PostgresEventTarget(sql);
  // Every subscriber of a run listens on its topic: many listeners are the normal case, not a leak.
  setMaxListeners(0, target);
  const listening = sql.listen(CHANNEL, (payload) => target.deliver(payload));
  const pubsub = createPubSub<Topics>({ eventTarget: target as never });
  return Object.assign(pubsub, {
    subscribe: ((topic: string, id?: string) => subscribeNow(target, id === undefined ? topic : `${topic}:${id}`)) as PubSub<Topics>['subscribe'],
    async publishInTx<K extends keyof Topics & string>(tx: Executor, topic: K, ...args: Topics[K]) {
      const envelope = routingKey(topic, args as unknown[]);
      await tx.execute(dsql`select pg_notify(${CHANNEL}, ${JSON.stringify(envelope)})`);
    },
    async publishRun(tx: Executor, accountId: string, kind: RunEventKind, snapshot: RunSnapshot) {
      const { channel, payload } = runNotification(accountId, kind, snapshot);
      await tx.execute(dsql`select pg_notify(${channel}, ${payload})`);
    },
    runNotification,
    ready: listening.then(() => undefined),
    async close() {
      const { unlisten } = await listening;
      await unlisten();
    },
  });
}
