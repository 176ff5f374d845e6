import { describe, expect, it } from 'vitest';
import type { ExecutionResult } from 'graphql';
import { SharedSubscriptions } from '../../../schema/server/shared-subscriptions.ts';
import { waitFor } from '../../helpers/wait.ts';

/** A controllable source of results, counting how often it was started and stopped. */
function source() {
  const pending: Array<(r: IteratorResult<ExecutionResult>) => void> = [];
  const queued: IteratorResult<ExecutionResult>[] = [];
  const stats = { starts: 0, returns: 0 };
  const emit = (r: IteratorResult<ExecutionResult>) => (pending.length ? pending.shift()!(r) : queued.push(r));
  const iterator: AsyncIterator<ExecutionResult> = {
    next: () => (queued.length ? Promise.resolve(queued.shift()!) : new Promise((resolve) => pending.push(resolve))),
    return: async () => {
      stats.returns += 1;
      emit({ value: undefined, done: true });
      return { value: undefined, done: true };
    },
  };
  return {
    stats,
    start: () => {
      stats.starts += 1;
      return iterator;
    },
    send: (n: number) => emit({ value: { data: { n } }, done: false }),
    end: () => emit({ value: undefined, done: true }),
  };
}

const take = async (it: AsyncIterator<ExecutionResult>, count: number) => {
  const got: unknown[] = [];
  while (got.length < count) {
    const next = await it.next();
    if (next.done) break;
    got.push(next.value.data);
  }
  return got;
};

describe('SharedSubscriptions', () => {
  it('starts one execution for identical subscriptions and gives every member every result', async () => {
    const shared = new SharedSubscriptions();
    const s = source();
    const a = (await shared.join('k', s.start)) as AsyncIterator<ExecutionResult>;
    const b = (await shared.join('k', s.start)) as AsyncIterator<ExecutionResult>;
    s.send(1);
    s.send(2);
    expect(await take(a, 2)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await take(b, 2)).toEqual([{ n: 1 }, { n: 2 }]);
    // A late member starts from the latest result.
    const c = (await shared.join('k', s.start)) as AsyncIterator<ExecutionResult>;
    s.send(3);
    expect(await take(c, 2)).toEqual([{ n: 2 }, { n: 3 }]);
    expect(s.stats.starts).toBe(1);
    s.end();
    for (const it of [a, b, c]) expect(await take(it, 5)).toHaveLength(it === c ? 0 : 1);
  });

  it('stops the execution when the last member leaves, and starts a new one for the next subscriber', async () => {
    const shared = new SharedSubscriptions();
    const s = source();
    const a = (await shared.join('k', s.start)) as AsyncIterator<ExecutionResult>;
    const b = (await shared.join('k', s.start)) as AsyncIterator<ExecutionResult>;
    await a.return!();
    expect(s.stats.returns).toBe(0);
    await b.return!();
    await waitFor(
      () => s.stats.returns,
      (n) => n > 0,
      { what: 'the shared execution to stop' },
    );
    expect(s.stats.returns).toBe(1);
    await shared.join('k', s.start);
    expect(s.stats.starts).toBe(2);
  });

  it('does not share a subscription that failed to start, nor different keys', async () => {
    const shared = new SharedSubscriptions();
    const failure: ExecutionResult = { errors: [] };
    let starts = 0;
    const start = () => {
      starts += 1;
      return failure;
    };
    expect(await shared.join('bad', start)).toBe(failure);
    expect(await shared.join('bad', start)).toBe(failure);
    expect(starts).toBe(2);
    const s1 = source();
    const s2 = source();
    await shared.join('one', s1.start);
    await shared.join('two', s2.start);
    expect([s1.stats.starts, s2.stats.starts]).toEqual([1, 1]);
  });

  it('passes a failure of the shared stream to every member', async () => {
    const shared = new SharedSubscriptions();
    const broken: AsyncIterator<ExecutionResult> = { next: () => Promise.reject(new Error('gone')) };
    const a = (await shared.join('k', () => broken)) as AsyncIterator<ExecutionResult>;
    await expect(a.next()).rejects.toThrow('gone');
  });

  it('hands a member its results only while its gate is fresh or after a check, in order; a refusal ends that member only', async () => {
    const shared = new SharedSubscriptions();
    const s = source();
    let fresh = true;
    let checks = 0;
    let refuse: Error | undefined;
    const gate = {
      fresh: () => fresh,
      confirm: async () => {
        checks += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (refuse) throw refuse;
      },
    };
    const sent: string[] = [];
    const a = (await shared.join(
      'g',
      s.start,
      {
        send: (json) => {
          sent.push(json);
          return true;
        },
      },
      gate,
    )) as AsyncIterator<ExecutionResult>;
    const b = (await shared.join('g', s.start)) as AsyncIterator<ExecutionResult>;
    // Fresh: the result goes straight out, without a check.
    const waiting = a.next();
    s.send(1);
    await waitFor(
      () => sent.length,
      (n) => n === 1,
      { what: 'the direct send' },
    );
    expect(JSON.parse(sent[0]!)).toEqual({ data: { n: 1 } });
    expect(checks).toBe(0);
    // Not fresh: results wait for a check, then come in order through the queue.
    fresh = false;
    s.send(2);
    s.send(3);
    expect((await waiting).value).toEqual({ data: { n: 2 } });
    expect((await a.next()).value).toEqual({ data: { n: 3 } });
    expect(checks).toBeGreaterThanOrEqual(1);
    expect(sent).toHaveLength(1);
    // A refusal ends this member with it; the other goes on.
    refuse = new Error('access ended');
    const refused = a.next();
    s.send(4);
    await expect(refused).rejects.toThrow('access ended');
    expect(await take(b, 4)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  });
});
