/**
 * The topics of the event bus and their delivery inside one process: what each topic carries, and the
 * local target that hands an event to every subscriber of its topic here.
 */
import { Repeater } from 'graphql-yoga';
import type { RunSnapshot } from '../runs/view.ts';
import { setUnder } from '../shared/maps.ts';

/**
 * Topics of the event bus, each followed for one id. Every event crosses processes through Postgres
 * LISTEN/NOTIFY, so a gateway sees runs that a worker in another process executes.
 */
export type Topics = {
  /** Every change of one run: status, counts, message. */
  runProgress: [runId: string, snapshot: RunSnapshot];
  /** Every run of one account: created, progress, finished. */
  runEvents: [accountId: string, event: RunEvent];
  /** The schedules of one account: paused by themselves (src/workflows/schedules.ts). */
  scheduleEvents: [accountId: string, event: ScheduleEvent];
  /** The pipelines of one account: each change of status or step (src/workflows/pipelines.ts). */
  pipelineEvents: [accountId: string, event: PipelineEvent];
  /** The deliveries of one account: each change of status or counts (src/destinations/deliveries.ts). */
  deliveryEvents: [accountId: string, event: DeliveryEvent];
};

/** A delivery as it stands after a change: created, sending, a batch acknowledged, ended or paused. */
export interface DeliveryEvent {
  id: string;
  destinationId: string;
  runId: string | null;
  pipelineId: string | null;
  status: string;
  message: string;
  total: number;
  sent: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  createdAt: string;
  finishedAt: string | null;
}

/** A pipeline moved on: started, went to its next step, is being cancelled, or ended. */
export interface PipelineEvent {
  pipelineId: string;
  status: string;
  step: number;
  at: string;
}

/** A schedule paused itself: its account could not pay, or its plan no longer allows its tool. */
export interface ScheduleEvent {
  kind: 'paused';
  scheduleId: string;
  taskId: string;
  reason: string;
  at: string;
}

export type RunEventKind = 'created' | 'progress' | 'finished';

export interface RunEvent {
  kind: RunEventKind;
  run: RunSnapshot;
}

/** A topic's events in order, from the moment its `subscribe` resolved; `return()` stops listening. */
export type Subscription<T> = Repeater<T>;

/** Delivers events to this process's subscribers, each topic under `${topic}:${id}`. */
export class LocalTopics extends EventTarget {
  /** The topics this process listens to, with their listeners: what a resync reads again after LISTEN was lost. */
  readonly topics = new Map<string, Set<unknown>>();

  override addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: AddEventListenerOptions | boolean,
  ) {
    super.addEventListener(type, listener, options);
    if (listener) setUnder(this.topics, type).add(listener);
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
  /** A schedule's event to the subscribers of its account's schedules. */
  scheduleEvents(accountId: string, event: ScheduleEvent) {
    this.dispatchEvent(new CustomEvent(`scheduleEvents:${accountId}`, { detail: event }));
  }

  /** A pipeline's change to the subscribers of its account's pipelines. */
  pipelineEvents(accountId: string, event: PipelineEvent) {
    this.dispatchEvent(new CustomEvent(`pipelineEvents:${accountId}`, { detail: event }));
  }

  /** A delivery's change to the subscribers of its account's deliveries. */
  deliveryEvents(accountId: string, event: DeliveryEvent) {
    this.dispatchEvent(new CustomEvent(`deliveryEvents:${accountId}`, { detail: event }));
  }

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
export function listenLocally<T>(target: EventTarget, type: string): Repeater<T> {
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
