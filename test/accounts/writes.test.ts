import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../../db/client.ts';
import { createAccountWrites } from '../../src/accounts/writes.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import { AppError } from '../../src/shared/errors.ts';
import { withIdempotency } from '../../src/accounts/idempotency.ts';
import { prepareStart } from '../../src/runs/start.ts';
import { prepareCreditPurchase } from '../../src/billing/payments/index.ts';
import { demoPayments } from '../../src/billing/payments/demo.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  await t.app.core
    .sql`create table if not exists account_writes_probe (account text not null, n int not null, txid bigint not null)`;
});
afterAll(() => t?.stop());

/** A write that records itself with the id of the transaction it ran in. */
const probe = (account: string, n: number) => async (tx: Transaction) => {
  const rows = (await tx.execute(
    sql`insert into account_writes_probe values (${account}, ${n}, txid_current()) returning txid::text as txid`,
  )) as unknown as { txid: string }[];
  return rows[0]!.txid;
};

async function written(account: string) {
  return t.app.core.sql<
    { n: number; txid: string }[]
  >`select n, txid::text as txid from account_writes_probe where account = ${account} order by n`;
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
          if (n === 4) await tx.execute(sql`select 1 / 0`); // an SQL error aborts the whole transaction
          return txid;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(((results[2] as PromiseRejectedResult).reason as Error).message).toBe('refused after writing');
    expect(String(((results[4] as PromiseRejectedResult).reason as Error).cause)).toMatch(/division by zero/);
    const rows = await written('isolated');
    expect(rows.map((r) => r.n)).toEqual([0, 1, 3, 5]);
    // The first went alone; the group of the other five failed and each of its writes ran again alone.
    expect(new Set(rows.map((r) => r.txid)).size).toBe(4);
    expect(rows.map((r) => r.txid)).toEqual(
      [0, 1, 3, 5].map((n) => (results[n] as PromiseFulfilledResult<string>).value),
    );
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

  /**
   * Sends one account's requests at once, as the faces do without an Idempotency-Key: `prepare`
   * checks a request and returns its write. Each answer is the id of the transaction it committed in.
   */
  async function burst(
    requests: unknown[],
    prepare: (principal: Principal, request: unknown) => (tx: Transaction) => Promise<unknown>,
  ) {
    const { accountId, apiKey } = await t.account();
    const principal = await t.app.core.auth.authenticate(`Bearer ${apiKey}`);
    const results = await Promise.allSettled(
      requests.map(async (request) => {
        const response = await withIdempotency(t.app.core.accountWrites, accountId, undefined, 'test', request, () => {
          const write = prepare(principal, request);
          return async (tx) => {
            await write(tx);
            const [row] = (await tx.execute(sql`select txid_current()::text as txid`)) as unknown as { txid: string }[];
            return { status: 200, body: row!.txid };
          };
        });
        return response.body as string;
      }),
    );
    return { accountId, results };
  }

  /** The bad requests were refused with 400; the good ones: the first went alone, the rest committed together. */
  function expectGoodOnesGrouped(results: PromiseSettledResult<string>[], bad: number[]) {
    results.forEach((result, n) => {
      expect(result.status).toBe(bad.includes(n) ? 'rejected' : 'fulfilled');
      if (result.status === 'rejected') {
        expect(result.reason).toBeInstanceOf(AppError);
        expect(result.reason).toMatchObject({ status: 400, code: 'validation_failed' });
      }
    });
    const txids = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(new Set(txids.slice(1)).size).toBe(1);
    expect(txids[0]).not.toBe(txids[1]);
  }

  it('refuses the bad starts of a burst with 400 before they are queued, so the good ones stay one group', async () => {
    const bad: Record<number, unknown> = {
      0: {},
      3: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: -1 },
      6: { ...DENVER_DENTISTS, webhookUrl: 'not a url' },
    };
    const bodies = Array.from({ length: 9 }, (_, n) => bad[n] ?? DENVER_DENTISTS);
    const { accountId, results } = await burst(bodies, (principal, body) =>
      prepareStart(t.app.core, principal, 'maps', body),
    );
    expectGoodOnesGrouped(results, [0, 3, 6]);
    const [runs] = await t.app.core.sql`select count(*)::int as n from run where account_id = ${accountId}`;
    expect(runs!.n).toBe(6);
  });

  it('refuses the bad credit purchases of a burst with 400 before they are queued, so the good ones stay one group', async () => {
    const amounts = [20, 5, 20, 20, 'ten', 20, 20.001, 20];
    const { accountId, results } = await burst(amounts, (principal, amount) =>
      prepareCreditPurchase(demoPayments, principal, amount, undefined),
    );
    expectGoodOnesGrouped(results, [1, 4, 6]);
    const [purchases] = await t.app.core
      .sql`select count(*)::int as n from ledger_entry where account_id = ${accountId} and kind = 'purchase'`;
    expect(purchases!.n).toBe(5);
  });

  it('gives every write its own transaction when grouping is off (limits off: no lock to share)', async () => {
    const writes = createAccountWrites(t.app.core.db, { group: false });
    const txids = await Promise.all(Array.from({ length: 5 }, (_, n) => writes.run('single', probe('single', n))));
    expect(new Set(txids).size).toBe(5);
  });
});
