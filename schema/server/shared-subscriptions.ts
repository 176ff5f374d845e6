import type { ExecutionResult } from 'graphql';

type Result = ExecutionResult;
type Source = AsyncIterator<Result> & Partial<AsyncIterable<Result>>;

/**
 * Where a member's results can be sent without its transport's per-message work: `send` takes the
 * result already serialised once for every member (its JSON) and sends the whole
 * message itself; it answers false when it cannot (the socket is closing), and the result takes the
 * transport's way.
 */
export interface DirectSend {
  send(resultJson: string): boolean;
}

/**
 * A member's access (src/http/access.ts's LiveAccess): a result reaches the member only while it is
 * `fresh`, or after `confirm` has resolved; a refusal ends the member with it.
 */
export interface MemberGate {
  fresh(): boolean;
  confirm(): Promise<unknown>;
}

/** One subscriber's queue of a shared stream. */
class Member implements AsyncIterableIterator<Result> {
  private readonly buffer: Result[] = [];
  private waiting: ((r: IteratorResult<Result>) => void) | undefined;
  private failWaiting: ((e: unknown) => void) | undefined;
  private done = false;
  private error: unknown;
  /** A check of the gate is under way: results wait in the buffer until it answers. */
  private checking = false;

  constructor(
    private readonly leave: (m: Member) => void,
    private readonly direct?: DirectSend,
    private readonly gate?: MemberGate,
  ) {}

  /**
   * Sends `json` (the serialised `result`) directly when nothing of this member is in flight and its
   * access is fresh: its reader waits for the next result, so everything before was sent already, and
   * the order holds. Otherwise the result is queued for the reader.
   */
  offer(result: Result, json: string | undefined) {
    if (
      json !== undefined &&
      this.direct &&
      this.waiting &&
      !this.done &&
      (!this.gate || this.gate.fresh()) &&
      this.direct.send(json)
    )
      return;
    this.push(result);
  }

  push(result: Result) {
    if (this.done) return;
    if (this.waiting && !this.checking && (!this.gate || this.gate.fresh())) {
      const wake = this.waiting;
      this.waiting = this.failWaiting = undefined;
      wake({ value: result, done: false });
      return;
    }
    this.buffer.push(result);
    if (this.waiting) this.check();
  }

  /** Checks the gate, then hands the reader the oldest result waiting; a refusal ends the member. */
  private check() {
    if (this.checking || !this.gate) return;
    this.checking = true;
    this.gate.confirm().then(
      () => {
        this.checking = false;
        const wake = this.waiting;
        const value = this.buffer[0];
        if (wake && value !== undefined) {
          this.buffer.shift();
          this.waiting = undefined;
          this.failWaiting = undefined;
          wake({ value, done: false });
        }
      },
      (refusal: unknown) => {
        this.checking = false;
        this.buffer.length = 0;
        this.end(refusal ?? new Error('access ended'));
      },
    );
  }

  end(error?: unknown) {
    if (this.done) return;
    this.done = true;
    this.error = error;
    // Results still waiting for a check of the gate go first: the check hands them over, then next() ends.
    const wake = this.waiting;
    const fail = this.failWaiting;
    if (wake && fail && this.buffer.length === 0) {
      this.waiting = undefined;
      this.failWaiting = undefined;
      if (error !== undefined) fail(error);
      else wake({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<Result>> {
    const value = this.buffer[0];
    if (value !== undefined && !this.checking && (!this.gate || this.gate.fresh())) {
      this.buffer.shift();
      return Promise.resolve({ value, done: false });
    }
    if (this.done && this.buffer.length === 0)
      return this.error !== undefined ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
    const waiting = new Promise<IteratorResult<Result>>((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
    if (this.buffer.length > 0) this.check();
    return waiting;
  }

  return(): Promise<IteratorResult<Result>> {
    this.leave(this);
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

interface Group {
  members: Set<Member>;
  /** The shared stream has ended: a subscriber arriving now starts a new one. */
  closed?: boolean;
  /** Reading has begun: only once the first member is in, so whatever the stream does reaches someone. */
  pumping?: boolean;
  latest?: Result;
  source: Source;
}

const isIterable = (value: unknown): value is Source => typeof (value as Source | null)?.next === 'function';

/**
 * Subscriptions that many clients open with the same operation (1,000 dashboards following one run)
 * share one execution in this process: the first subscriber starts it, each result is sent to every
 * member, a later member starts from the latest result (the run's current state), and the last one
 * to leave stops it. A subscription that fails to start is not shared. Each result is serialised
 * once, and sent straight to the members that can take it (`DirectSend`), so an event costs one
 * execution, one serialisation and a write per subscriber.
 */
export class SharedSubscriptions {
  private readonly groups = new Map<string, Promise<Group | Result>>();

  async join(
    key: string,
    start: () => Promise<Source | Result> | Source | Result,
    direct?: DirectSend,
    gate?: MemberGate,
  ): Promise<Source | Result> {
    let pending = this.groups.get(key);
    if (!pending) {
      pending = this.open(key, start);
      this.groups.set(key, pending);
    }
    const group = await pending;
    if (!('members' in group)) {
      this.groups.delete(key);
      return group;
    }
    if (group.closed) {
      if (this.groups.get(key) === pending) this.groups.delete(key);
      return this.join(key, start, direct, gate);
    }
    const member = new Member((m) => this.leave(key, group, m), direct, gate);
    if (group.latest) member.push(group.latest);
    group.members.add(member);
    if (!group.pumping) {
      group.pumping = true;
      void this.pump(key, group, group.source);
    }
    return member;
  }

  private async open(key: string, start: () => Promise<Source | Result> | Source | Result): Promise<Group | Result> {
    let started: Source | Result;
    try {
      started = await start();
    } catch (err) {
      this.groups.delete(key);
      throw err;
    }
    if (!isIterable(started)) return started;
    return { members: new Set(), source: started };
  }

  private async pump(key: string, group: Group, source: Source) {
    let failure: unknown;
    try {
      for (;;) {
        const next = await source.next();
        if (next.done) break;
        group.latest = next.value;
        // Serialised once for every member (the response size limit has serialised it already: its
        // `stringify` hands that text back); a result with errors
        // takes each transport's way (its errors are formatted there).
        const json = next.value.errors?.length
          ? undefined
          : ((next.value as Result & { stringify?: (r: Result) => string }).stringify?.(next.value) ??
            JSON.stringify(next.value));
        for (const member of group.members) member.offer(next.value, json);
      }
    } catch (err) {
      failure = err ?? new Error('subscription failed');
    }
    group.closed = true;
    if (this.groups.get(key) !== undefined && (await this.groups.get(key)) === group) this.groups.delete(key);
    for (const member of group.members) member.end(failure);
    group.members.clear();
  }

  private leave(key: string, group: Group, member: Member) {
    group.members.delete(member);
    if (group.members.size > 0) return;
    group.closed = true;
    void (async () => {
      if ((await this.groups.get(key)) === group) this.groups.delete(key);
      await group.source.return?.();
    })();
  }
}
