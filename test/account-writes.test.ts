import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../db/client.ts';
import { createAccountWrites } from '../src/services/account-writes.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  await t.app.core.sql`create table if not exists account_writes_probe (account text not null, n int not null, txid bigint not null)`;
});
afterAll(() => t?.stop());

/** A write that records itself with the id of the transaction it ran in. */
const probe = (account: string, n: number) => async (tx: Transaction) => {
  const rows = (await tx.execute(sql`insert into account_writes_probe values (${account}, ${n}, txid_current()) returning txid::text as txid`)) as unknown as { txid: string }[];
  return rows[0]!.txid;
};

async function written(account: string) {
  return t.app.core.sql<{ n: number; txid: string }[]>`select n, txid::text as txid from account_writes_probe where account = ${account} order by n`;
}

describe('account writes: one commit for one account’s concurrent writes', () => {
  it('runs a lone write at once in its own transaction, and groups the writes that arrive while it is in flight', async () => {
    const writes = createAccountWrites(t.app.core.db, { group: true });
    const txids = await Promise.all(Array.from({ length: 30 }, (_, n) => writes.run('grouped', probe('grouped', n))));
    const rows = await written('grouped');
    expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 30 }, (_, n) => n));
    expect(rows.map((r) => r.txid)).toEqual(txids);
    // The first goes alone; the 29 that queued behind it share the next transaction.
    expect(new Set(txids).size).toBe(2);
    expect(txids.slice(1).every((id) => id === txids[1])).toBe(true);
    expect(txids[0]).not.toBe(txids[1]);
  });

  it('keeps batches to maxBatch writes', async () => {
    const writes = createAccountWrites(t.app.core.db, { group: true, maxBatch: 4 });
    const txids = await Promise.all(Array.from({ length: 9 }, (_, n) => writes.run('capped', probe('capped', n))));
    const sizes = [...txids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>()).values()];
    expect(sizes).toEqual([1, 4, 4]);
  });

  it('runs a failed group again write by write: the failed ones leave nothing, the others commit alone', async () => {
    const writes = createAccountWrites(t.app.core.db, { group: true });
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, n) =>
        writes.run('isolated', async (tx) => {
          const txid = await probe('isolated', n)(tx);
          if (n === 2) throw new Error('refused after writing');
          if (n === 4) await tx.execute(sql`select 1 / 0`); // an SQL error aborts only this write's savepoint
          return txid;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect(((results[2] as PromiseRejectedResult).reason as Error).message).toBe('refused after writing');
    expect(String(((results[4] as PromiseRejectedResult).reason as Error).cause)).toMatch(/division by zero/);
    const rows = await written('isolated');
    expect(rows.map((r) => r.n)).toEqual([0, 1, 3, 5]);
    // The first went alone; the group of the other five failed and each of its writes ran again alone.
    expect(new Set(rows.map((r) => r.txid)).size).toBe(4);
    expect(rows.map((r) => r.txid)).toEqual([0, 1, 3, 5].map((n) => (results[n] as PromiseFulfilledResult<string>).value));
  });

  it('fails a lone write with nothing written', async () => {
    const writes = createAccountWrites(t.app.core.db, { group: true });
    await expect(
      writes.run('alone', async (tx) => {
        await probe('alone', 0)(tx);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await written('alone')).toEqual([]);
  });

  it('runs a write marked alone in its own transaction even while its account has a group in flight', async () => {
    const writes = createAccountWrites(t.app.core.db, { group: true });
    const grouped = Array.from({ length: 4 }, (_, n) => writes.run('marked', probe('marked', n)));
    const alone = writes.run('marked', probe('marked', 9), { alone: true });
    const txids = await Promise.all([...grouped, alone]);
    expect(new Set(txids.slice(1, 4)).size).toBe(1);
    expect(txids.slice(0, 4)).not.toContain(txids[4]);
  });

  it('never groups writes of different accounts', async () => {
    const writes = createAccountWrites(t.app.core.db, { group: true });
    const txids = await Promise.all(['a1', 'a2', 'a3'].map((account) => writes.run(account, probe(account, 0))));
    expect(new Set(txids).size).toBe(3);
  });

  it('gives every write its own transaction when grouping is off (limits off: no lock to share)', async () => {
    const writes = createAccountWrites(t.app.core.db, { group: false });
    const txids = await Promise.all(Array.from({ length: 5 }, (_, n) => writes.run('single', probe('single', n))));
    expect(new Set(txids).size).toBe(5);
  });
});
