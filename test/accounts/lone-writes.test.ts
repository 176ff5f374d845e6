import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountWrites } from '../../src/accounts/writes.ts';
import { openDirectDb, type DirectDb } from '../helpers/direct-db.ts';

let d: DirectDb;

beforeAll(async () => {
  d = await openDirectDb();
});
afterAll(() => d?.close());

const txid = async (tx: { execute: (q: ReturnType<typeof sql>) => Promise<unknown> }) =>
  ((await tx.execute(sql`select txid_current()::text as id`)) as { id: string }[])[0]!.id;

describe('account writes: a write that goes alone', () => {
  it('runs a lone failing write once, and rejects with its own error', async () => {
    const writes = createAccountWrites(d.db, { group: true });
    let calls = 0;
    const refused = new Error('refused');
    await expect(
      writes.run('lone', async () => {
        calls++;
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(calls).toBe(1);
  });

  it('runs each write of a failed group once more, alone; a lone write is never run twice', async () => {
    const writes = createAccountWrites(d.db, { group: true });
    const calls = [0, 0, 0];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = writes.run('grouped', async (tx) => {
      calls[0]!++;
      await gate;
      return txid(tx);
    });
    const later = [1, 2].map((n) =>
      writes.run('grouped', async (tx) => {
        calls[n]!++;
        if (n === 2 && calls[n] === 1) throw new Error('fails in the group only');
        return txid(tx);
      }),
    );
    // `run` queues a write behind the one in flight as it is called: both are waiting now.
    release();
    const [a, b, c] = await Promise.all([first, ...later]);
    expect(calls).toEqual([1, 2, 2]);
    expect(new Set([a, b, c]).size).toBe(3);
  });

  it('gives every write a transaction of its own when grouping is off', async () => {
    const writes = createAccountWrites(d.db, { group: false });
    const ids = await Promise.all(Array.from({ length: 4 }, () => writes.run('ungrouped', (tx) => txid(tx))));
    expect(new Set(ids).size).toBe(4);
    await expect(writes.run('ungrouped', async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
  });
});
