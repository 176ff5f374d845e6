import type { Database, Transaction } from '../../db/client.ts';

/**
 * Runs an account's writes (run starts, credit purchases: everything that takes the account's wallet
 * row lock) in transactions.
 *
 * A start holds the wallet row lock from its hold to its commit, so one account's concurrent starts
 * pass one at a time, and each one's turn lasts several round trips through a busy event loop. With
 * `group` on, the writes of one account that arrive while its transaction is in flight wait, and
 * then go together in the next transaction: they run concurrently on its connection, so their
 * statements are pipelined, and all of them pass the lock once and share one commit. A write
 * arriving when nothing is in flight starts at once, alone, so a quiet account pays nothing.
 *
 * A group is all or nothing: if any of its writes fails, the transaction is rolled back and every
 * write of the group runs again alone, in a transaction of its own, so each gets its own outcome
 * and a failed write never leaves anything behind. A write must therefore be safe to run again
 * after a rollback (it has no effect outside the transaction). The group is per process; across
 * processes the row lock still orders everything.
 *
 * So that a caller's mistake costs its group nothing, what can be checked without the database is
 * checked before a write is queued (`prepareStart`, `prepareCreditPurchase`, `withIdempotency`); only
 * failures found in the transaction (402, an SQL error) roll a group back. A savepoint per write
 * cannot take that rollback's place: the writes' statements interleave on the one connection, so a
 * savepoint would bracket other writes' statements too, and an SQL error aborts the transaction for
 * every write of the group until it is rolled back.
 */
export interface AccountWrites {
  /** `alone`: never grouped (a write whose statements depend on another write of the same group). */
  run<T>(accountId: string, fn: (tx: Transaction) => Promise<T>, options?: { alone?: boolean }): Promise<T>;
}

interface Pending {
  fn: (tx: Transaction) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

class GroupFailed extends Error {
  constructor(readonly reason: unknown) {
    super('a write of the group failed');
  }
}

export function createAccountWrites(db: Database, options: { group: boolean; maxBatch?: number }): AccountWrites {
  if (!options.group) return { run: (_accountId, fn) => db.transaction(fn) };
  const runAlone = (write: Pending) => db.transaction(write.fn).then(write.resolve, write.reject);
  const maxBatch = options.maxBatch ?? 64;
  /** Per account with a transaction in flight: the writes waiting for the next one. */
  const queues = new Map<string, Pending[]>();

  async function runBatch(batch: Pending[]) {
    const [only, ...others] = batch;
    if (only && others.length === 0) {
      await runAlone(only);
      return;
    }
    let values: unknown[];
    try {
      values = await db.transaction(async (tx) => {
        const settled = await Promise.allSettled(batch.map((write) => write.fn(tx)));
        const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
        if (failed) throw new GroupFailed(failed.reason);
        return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value);
      });
    } catch {
      // Rolled back: each write again on its own, for its own outcome.
      await Promise.all(batch.map(runAlone));
      return;
    }
    for (const [i, write] of batch.entries()) write.resolve(values[i]);
  }

  async function drain(accountId: string, first: Pending[]) {
    let batch = first;
    for (;;) {
      try {
        await runBatch(batch);
      } catch (error) {
        // runBatch settles every write itself; should it ever throw, no write of the account may hang.
        for (const write of [...batch, ...(queues.get(accountId) ?? [])]) write.reject(error);
        queues.delete(accountId);
        return;
      }
      const waiting = queues.get(accountId);
      if (!waiting || waiting.length === 0) {
        queues.delete(accountId);
        return;
      }
      batch = waiting.splice(0, maxBatch);
    }
  }

  return {
    run<T>(accountId: string, fn: (tx: Transaction) => Promise<T>, runOptions: { alone?: boolean } = {}): Promise<T> {
      if (runOptions.alone) return db.transaction(fn);
      return new Promise<T>((resolve, reject) => {
        const write: Pending = { fn, resolve: resolve as (value: unknown) => void, reject };
        const waiting = queues.get(accountId);
        if (waiting) {
          waiting.push(write);
          return;
        }
        queues.set(accountId, []);
        void drain(accountId, [write]);
      });
    },
  };
}
