/**
 * The client side of the `subscribers` suite, in one or several child processes of their own (forked
 * by `subscribers.ts`, each holding its share of the clients): it opens graphql-ws subscribers to
 * runs' `runProgress` (one run per client, as told), or bare `ws` clients of the baseline's run
 * channels, and stamps every message it receives with the system-wide monotonic clock
 * (`process.hrtime`, CLOCK_MONOTONIC), which the parent reads too, so the two processes' stamps compare.
 * Commands arrive over the IPC channel; every answer carries the command's `seq`. It exits when the
 * channel closes.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export type Mode = 'graphql' | 'bare';

export type ClientCommand =
  | { cmd: 'clock'; seq: number }
  | {
      cmd: 'open';
      seq: number;
      mode: Mode;
      url: string;
      /** The run of each client to open: graphql subscribes to it, bare connects to `url?run=<id>`. */
      runIds: string[];
      /** Connections being opened at once. */
      concurrency: number;
      /** graphql only. */
      apiKey?: string;
      query?: string;
    }
  | { cmd: 'mark'; seq: number }
  /** Waits until every client has seen its run end (or `timeoutMs`); `expected`: each run's event keys in order. */
  | { cmd: 'collect'; seq: number; timeoutMs: number; expected: Record<string, string[]> }
  | { cmd: 'close'; seq: number };

/** Receipt times (ms, monotonic) of every client, by event key `${runId}:${status}:${handled}`. */
export interface Collected {
  receipts: Record<string, number[]>;
  /** Clients of this process. */
  clients: number;
  /** Clients that received exactly their run's events, each once, in order. */
  complete: number;
  /** Clients that saw their run end. */
  ended: number;
  /** Clients that received an event after a later one of their run. */
  outOfOrder: number;
  /** Events of their run that clients did not receive; events received twice. */
  missing: number;
  duplicates: number;
  /** graphql: the first payload received of each event, as sent (the bare baseline sends the same). */
  payloads: Record<string, unknown>;
  /** Size in bytes of one event message as sent on the wire (JSON). */
  messageBytes: number;
  errors: string[];
  /** Event-loop utilisation of this process from `mark` to the end of collection. */
  elu: number;
  /** This process's longest event-loop stall from `mark` to the end of collection, ms (10 ms resolution). */
  loopDelayMaxMs: number;
  cpuMs: number;
  wallMs: number;
}

export type ClientReply =
  | { seq: number; ok: true; clock?: number; opened?: { ms: number }; collected?: Collected }
  | { seq: number; ok: false; error: string };

export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

interface ProgressView {
  id: string;
  status: string;
  handled: number;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT', 'TIMED-OUT']);

class Subscriber {
  constructor(readonly runId: string) {}
  readonly seen: [key: string, at: number][] = [];
  private keys = new Set<string>();
  duplicates = 0;
  started = false;
  ended = false;
  error?: string;
  onEnd?: () => void;

  record(view: ProgressView, at: number) {
    if (!this.started) {
      // The current state sent on subscribing, before any event of the run.
      this.started = true;
      return;
    }
    const key = `${view.id}:${view.status}:${view.handled}`;
    if (this.keys.has(key)) this.duplicates++;
    this.keys.add(key);
    this.seen.push([key, at]);
    if (TERMINAL.has(view.status)) this.end();
  }

  end() {
    if (this.ended) return;
    this.ended = true;
    this.onEnd?.();
  }
}

interface Connection {
  subscriber: Subscriber;
  close(): Promise<void>;
}

let messageBytes = 0;
let payloads = new Map<string, unknown>();

function openGraphql(url: string, apiKey: string, query: string, runId: string): Promise<Connection> {
  const subscriber = new Subscriber(runId);
  let nexts = 0;
  const client: Client = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${apiKey}` },
    retryAttempts: 0,
    lazy: false,
    on: {
      // The second `next` is the first event (the first is the current state); as sent, since the server stringifies it.
      message: (message) => {
        if (message.type === 'next' && ++nexts === 2 && messageBytes === 0)
          messageBytes = Buffer.byteLength(JSON.stringify(message));
      },
    },
  });
  return new Promise((resolve, reject) => {
    let opened = false;
    const fail = (err: unknown) => {
      const text = err instanceof Error ? err.message : JSON.stringify(err);
      subscriber.error ??= text;
      if (!opened) {
        opened = true;
        void client.dispose();
        reject(new Error(text));
      }
      subscriber.end();
    };
    client.subscribe<{ runProgress: ProgressView }>(
      { query, variables: { id: runId } },
      {
        next: ({ data, errors }) => {
          const at = nowMs();
          if (errors?.length || !data) return fail(errors ?? 'no data');
          subscriber.record(data.runProgress, at);
          const key = `${data.runProgress.id}:${data.runProgress.status}:${data.runProgress.handled}`;
          if (!payloads.has(key)) payloads.set(key, { data });
          if (!opened) {
            opened = true;
            resolve({ subscriber, close: async () => void (await client.dispose()) });
          }
        },
        error: fail,
        complete: () => subscriber.end(),
      },
    );
  });
}

function openBare(url: string, runId: string): Promise<Connection> {
  const subscriber = new Subscriber(runId);
  subscriber.started = true; // the bare server sends no current state
  const socket = new WebSocket(`${url}/?run=${encodeURIComponent(runId)}`);
  socket.on('message', (data: Buffer) => {
    const at = nowMs();
    if (messageBytes === 0) messageBytes = data.length;
    const message = JSON.parse(data.toString()) as { payload: { data: { runProgress: ProgressView } } };
    subscriber.record(message.payload.data.runProgress, at);
  });
  return new Promise((resolve, reject) => {
    socket.once('open', () =>
      resolve({
        subscriber,
        close: () =>
          new Promise<void>((done) => {
            if (socket.readyState === WebSocket.CLOSED) return done();
            socket.once('close', () => done());
            socket.close();
          }),
      }),
    );
    socket.once('error', (err) => {
      subscriber.error ??= err.message;
      reject(err);
    });
  });
}

let connections: Connection[] = [];
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
let mark = { elu: performance.eventLoopUtilization(), cpu: process.cpuUsage(), at: nowMs() };

async function open(command: Extract<ClientCommand, { cmd: 'open' }>): Promise<{ ms: number }> {
  const t0 = nowMs();
  messageBytes = 0;
  payloads = new Map();
  const opened: Connection[] = [];
  let next = 0;
  const worker = async () => {
    while (next < command.runIds.length) {
      const runId = command.runIds[next++]!;
      opened.push(
        command.mode === 'graphql'
          ? await openGraphql(command.url, command.apiKey!, command.query!, runId)
          : await openBare(command.url, runId),
      );
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(command.concurrency, command.runIds.length) }, worker));
  } catch (err) {
    await Promise.all(opened.map((c) => c.close().catch(() => {})));
    throw err;
  }
  connections = opened;
  return { ms: nowMs() - t0 };
}

async function collect(timeoutMs: number, expected: Record<string, string[]>): Promise<Collected> {
  const pending = connections.filter((c) => !c.subscriber.ended);
  await new Promise<void>((resolve) => {
    let left = pending.length;
    if (left === 0) return resolve();
    const timer = setTimeout(resolve, timeoutMs);
    for (const c of pending) {
      c.subscriber.onEnd = () => {
        if (--left === 0) {
          clearTimeout(timer);
          resolve();
        }
      };
    }
  });
  const elu = performance.eventLoopUtilization(mark.elu).utilization;
  const cpu = process.cpuUsage(mark.cpu);
  loopDelay.disable();
  const loopDelayMaxMs = loopDelay.max / 1e6;
  const receipts: Record<string, number[]> = {};
  const errors: string[] = [];
  const order = new Map(
    Object.entries(expected).map(([runId, keys]) => [runId, new Map(keys.map((key, i) => [key, i]))]),
  );
  let complete = 0;
  let ended = 0;
  let outOfOrder = 0;
  let missing = 0;
  let duplicates = 0;
  for (const { subscriber } of connections) {
    for (const [key, at] of subscriber.seen) {
      const times = receipts[key] ?? [];
      times.push(at);
      receipts[key] = times;
    }
    if (subscriber.error && errors.length < 10) errors.push(subscriber.error);
    const want = expected[subscriber.runId] ?? [];
    const rank = order.get(subscriber.runId) ?? new Map<string, number>();
    let last = -1;
    let ordered = true;
    for (const [key] of subscriber.seen) {
      const i = rank.get(key);
      if (i === undefined) continue; // not of its run: counted as unexpected
      if (i < last) ordered = false; // i === last: a duplicate, counted as such
      last = Math.max(last, i);
    }
    const got = new Set(subscriber.seen.map(([key]) => key));
    missing += want.filter((key) => !got.has(key)).length;
    duplicates += subscriber.duplicates;
    if (!ordered) outOfOrder++;
    if (subscriber.ended) ended++;
    if (subscriber.seen.length === want.length && subscriber.seen.every(([key], i) => key === want[i])) complete++;
  }
  return {
    receipts,
    clients: connections.length,
    complete,
    ended,
    outOfOrder,
    missing,
    duplicates,
    payloads: Object.fromEntries(payloads),
    messageBytes,
    errors,
    elu,
    loopDelayMaxMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs: nowMs() - mark.at,
  };
}

async function handle(command: ClientCommand): Promise<ClientReply> {
  switch (command.cmd) {
    case 'clock':
      return { seq: command.seq, ok: true, clock: nowMs() };
    case 'open':
      return { seq: command.seq, ok: true, opened: await open(command) };
    case 'mark':
      mark = { elu: performance.eventLoopUtilization(), cpu: process.cpuUsage(), at: nowMs() };
      loopDelay.reset();
      loopDelay.enable();
      return { seq: command.seq, ok: true };
    case 'collect':
      return { seq: command.seq, ok: true, collected: await collect(command.timeoutMs, command.expected) };
    case 'close':
      await Promise.all(connections.map((c) => c.close().catch(() => {})));
      connections = [];
      return { seq: command.seq, ok: true };
  }
}

process.on('message', (command: ClientCommand) => {
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
process.on('disconnect', () => process.exit(0));
