import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../../db/client.ts';
import { createAccountWrites, type AccountWrites } from '../../src/accounts/writes.ts';
import { AppError, ValidationError } from '../../src/shared/errors.ts';
import { purgeIdempotencyKeys, withIdempotency, type StoredResponse } from '../../src/accounts/idempotency.ts';
import { openDirectDb, type DirectDb } from '../helpers/direct-db.ts';
import { failure } from '../helpers/assertions.ts';

let d: DirectDb;
let writes: AccountWrites;

beforeAll(async () => {
  d = await openDirectDb();
  writes = createAccountWrites(d.db, { group: true });
  await d.sql`create table if not exists idempotency_probe (account text not null, label text not null)`;
});
afterAll(() => d?.close());

/** A write that records itself, answering 201 with what it was asked. */
function probe(account: string, label: string, calls: { n: number }, answer: unknown = { label }) {
  return () => {
    calls.n++;
    return async (tx: Transaction): Promise<StoredResponse> => {
      await tx.execute(sql`insert into idempotency_probe values (${account}, ${label})`);
      return { status: 201, body: answer };
    };
  };
}

const writesOf = async (account: string) =>
  (await d.sql`select label from idempotency_probe where account = ${account} order by label`).map(
    (r) => r.label as string,
  );

describe('withIdempotency', () => {
  it('runs a request without a key every time, storing nothing', async () => {
    const account = await d.account();
    const calls = { n: 0 };
    for (const key of [undefined, null]) {
      expect(
        await withIdempotency(writes, account, key, 'scope', { a: 1 }, probe(account, `no-key-${key}`, calls)),
      ).toEqual({ status: 201, body: { label: `no-key-${key}` }, replayed: false });
    }
    expect(calls.n).toBe(2);
    expect(await writesOf(account)).toEqual(['no-key-null', 'no-key-undefined']);
    expect((await d.sql`select count(*)::int as n from idempotency_key where account_id = ${account}`)[0]!.n).toBe(0);
  });

  it('replays the first response for the same key and request, without writing again', async () => {
    const account = await d.account();
    const calls = { n: 0 };
    const body = { runId: 'r1', nested: { list: [1, 'two', null], flag: true } };
    const first = await withIdempotency(
      writes,
      account,
      'key-1',
      'POST /x',
      { a: 1, b: [1, 2] },
      probe(account, 'first', calls, body),
    );
    expect(first).toEqual({ status: 201, body, replayed: false });
    const again = await withIdempotency(
      writes,
      account,
      'key-1',
      'POST /x',
      { b: [1, 2], a: 1 },
      probe(account, 'second', calls),
    );
    expect(again).toEqual({ status: 201, body, replayed: true });
    expect(calls.n).toBe(1);
    expect(await writesOf(account)).toEqual(['first']);
  });

  it('reads requests as canonical JSON: key order does not matter at any depth, list order and values do', async () => {
    const account = await d.account();
    const calls = { n: 0 };
    const request = { outer: { z: 1, a: { y: [{ q: 1, p: 2 }], x: null } }, list: ['a', 'b'] };
    await withIdempotency(writes, account, 'canon', 's', request, probe(account, 'canon', calls));
    const reordered = { list: ['a', 'b'], outer: { a: { x: null, y: [{ p: 2, q: 1 }] }, z: 1 } };
    expect((await withIdempotency(writes, account, 'canon', 's', reordered, probe(account, 'x', calls))).replayed).toBe(
      true,
    );
    const undefinedAsNull = { list: ['a', 'b'], outer: { a: { x: undefined, y: [{ p: 2, q: 1 }] }, z: 1 } };
    expect(
      (await withIdempotency(writes, account, 'canon', 's', undefinedAsNull, probe(account, 'x', calls))).replayed,
    ).toBe(true);
    for (const other of [
      { ...request, list: ['b', 'a'] },
      { ...request, list: ['a', 'b', 'c'] },
      { ...request, outer: { ...request.outer, z: 2 } },
      { ...request, outer: { ...request.outer, z: '1' } },
      { ...request, extra: true },
      { outer: request.outer },
      [request],
      'text',
    ]) {
      const err = await failure(withIdempotency(writes, account, 'canon', 's', other, probe(account, 'x', calls)));
      expect(err).toMatchObject({
        status: 422,
        code: 'idempotency_key_reused',
        message: 'This Idempotency-Key was already used with a different request; send a new key for a new request.',
      });
    }
    expect(calls.n).toBe(1);
  });

  it('does not confuse a list with an object, nor lists whose items run together', async () => {
    const account = await d.account();
    const calls = { n: 0 };
    await withIdempotency(writes, account, 'list', 's', ['a'], probe(account, 'list', calls));
    expect(
      (await failure(withIdempotency(writes, account, 'list', 's', { 0: 'a' }, probe(account, 'x', calls)))).status,
    ).toBe(422);
    await withIdempotency(writes, account, 'numbers', 's', [1, 23], probe(account, 'numbers', calls));
    expect(
      (await failure(withIdempotency(writes, account, 'numbers', 's', [12, 3], probe(account, 'x', calls)))).status,
    ).toBe(422);
    expect(calls.n).toBe(2);
  });

  it('tells requests of different routes apart by their scope', async () => {
    const account = await d.account();
    const calls = { n: 0 };
    await withIdempotency(
      writes,
      account,
      'scoped',
      'POST /api/v1/scrape/maps',
      { a: 1 },
      probe(account, 'maps', calls),
    );
    const err = await failure(
      withIdempotency(writes, account, 'scoped', 'POST /api/v1/buy-credits', { a: 1 }, probe(account, 'buy', calls)),
    );
    expect(err.status).toBe(422);
  });

  it('keeps keys per account', async () => {
    const a = await d.account();
    const b = await d.account();
    const calls = { n: 0 };
    await withIdempotency(writes, a, 'shared-key', 's', { n: 1 }, probe(a, 'a', calls));
    expect(await withIdempotency(writes, b, 'shared-key', 's', { n: 2 }, probe(b, 'b', calls))).toEqual({
      status: 201,
      body: { label: 'b' },
      replayed: false,
    });
    expect(calls.n).toBe(2);
  });

  it('stores nothing for a refused request: the same key may be sent again', async () => {
    const account = await d.account();
    const refuse = () => {
      throw new AppError(402, 'insufficient_funds', 'no money');
    };
    expect((await failure(withIdempotency(writes, account, 'refused', 's', { a: 1 }, refuse))).code).toBe(
      'insufficient_funds',
    );
    const failingWrite =
      () =>
      async (tx: Transaction): Promise<StoredResponse> => {
        await tx.execute(sql`insert into idempotency_probe values (${account}, 'rolled back')`);
        throw new AppError(402, 'insufficient_funds', 'no money');
      };
    await failure(withIdempotency(writes, account, 'refused', 's', { a: 1 }, failingWrite));
    const calls = { n: 0 };
    expect(
      await withIdempotency(writes, account, 'refused', 's', { a: 2 }, probe(account, 'later', calls)),
    ).toMatchObject({ status: 201, replayed: false });
    expect(await writesOf(account)).toEqual(['later']);
  });

  it('lets concurrent requests with one key write once', async () => {
    const account = await d.account();
    const calls = { n: 0 };
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        withIdempotency(writes, account, 'race', 's', { a: 1 }, probe(account, 'race', calls)),
      ),
    );
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(results.every((r) => r.status === 201 && (r.body as { label: string }).label === 'race')).toBe(true);
    expect(await writesOf(account)).toEqual(['race']);
  });

  it('never lets two requests with one key share a write group, even when they arrive behind another write', async () => {
    const account = await d.account();
    const calls = { n: 0 };
    // A write in flight: what arrives meanwhile waits and would go together in the next transaction.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const busy = writes.run(account, async () => gate);
    const body = { first: true };
    const same = [0, 1].map(() =>
      withIdempotency(writes, account, 'queued', 's', { a: 1 }, probe(account, 'queued', calls, body)),
    );
    // Both requests queued behind the write in flight as they were made (no await comes before the queue).
    release();
    await busy;
    const results = await Promise.all(same);
    expect(results.map((r) => [r.status, r.body])).toEqual([
      [201, body],
      [201, body],
    ]);
    expect(results.filter((r) => r.replayed)).toHaveLength(1);
    expect(await writesOf(account)).toEqual(['queued']);
  });

  it('forgets a key after 24 hours: it may then carry another request', async () => {
    const account = await d.account();
    const calls = { n: 0 };
    await withIdempotency(writes, account, 'aging', 's', { a: 1 }, probe(account, 'day-1', calls));
    await d.sql`update idempotency_key set created_at = now() - interval '23 hours' where account_id = ${account}`;
    expect(
      (await failure(withIdempotency(writes, account, 'aging', 's', { a: 2 }, probe(account, 'x', calls)))).status,
    ).toBe(422);
    await d.sql`update idempotency_key set created_at = now() - interval '25 hours' where account_id = ${account}`;
    expect(await withIdempotency(writes, account, 'aging', 's', { a: 2 }, probe(account, 'day-2', calls))).toEqual({
      status: 201,
      body: { label: 'day-2' },
      replayed: false,
    });
    // The new request is the one kept now.
    expect((await withIdempotency(writes, account, 'aging', 's', { a: 2 }, probe(account, 'x', calls))).body).toEqual({
      label: 'day-2',
    });
    expect(await writesOf(account)).toEqual(['day-1', 'day-2']);
  });

  it('accepts 1 to 255 visible ASCII characters as a key', async () => {
    const account = await d.account();
    const calls = { n: 0 };
    for (const key of ['!', '~', 'a'.repeat(255), 'order-2024/05#1']) {
      expect(
        (await withIdempotency(writes, account, key, 's', { key }, probe(account, key.slice(0, 20), calls))).replayed,
      ).toBe(false);
    }
    for (const key of ['', 'a'.repeat(256), 'with space', 'tab\there', 'café', 'line\n', '\u007f']) {
      let err: unknown;
      try {
        await withIdempotency(writes, account, key, 's', {}, probe(account, 'never', calls));
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(key)).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).details).toEqual([
        { path: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' },
      ]);
    }
    expect(calls.n).toBe(4);
  });
});

describe('purgeIdempotencyKeys', () => {
  it('deletes the keys older than 24 hours and says how many', async () => {
    const account = await d.account();
    const calls = { n: 0 };
    for (const key of ['old-1', 'old-2', 'fresh'])
      await withIdempotency(writes, account, key, 's', {}, probe(account, key, calls));
    await d.sql`delete from idempotency_key where account_id <> ${account}`;
    await d.sql`update idempotency_key set created_at = now() - interval '25 hours' where key like 'old-%'`;
    await d.sql`update idempotency_key set created_at = now() - interval '23 hours' where key = 'fresh'`;
    expect(await purgeIdempotencyKeys(d.db)).toBe(2);
    expect((await d.sql`select key from idempotency_key`).map((r) => r.key)).toEqual(['fresh']);
    expect(await purgeIdempotencyKeys(d.db)).toBe(0);
  });
});
