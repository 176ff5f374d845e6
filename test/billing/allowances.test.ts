import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DailyLimitError, takeAllowance, utcDay } from '../../src/billing/allowances.ts';
import { openDirectDb, type DirectDb } from '../helpers/direct-db.ts';

let d: DirectDb;

beforeAll(async () => {
  d = await openDirectDb();
});
afterAll(() => d?.close());

const DAY = new Date('2031-05-17T12:00:00.000Z');

async function refusal(promise: Promise<unknown>): Promise<DailyLimitError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DailyLimitError);
  expect(err).toMatchObject({ status: 429, code: 'daily_limit_reached' });
  return err as DailyLimitError;
}

describe('utcDay', () => {
  it.each([
    ['2031-05-17T00:00:00.000Z', '2031-05-17', 86_400],
    ['2031-05-17T00:00:00.001Z', '2031-05-17', 86_400],
    ['2031-05-17T12:00:00.000Z', '2031-05-17', 43_200],
    ['2031-05-17T23:59:59.000Z', '2031-05-17', 1],
    ['2031-05-17T23:59:59.999Z', '2031-05-17', 1],
    ['2031-12-31T23:00:00.000Z', '2031-12-31', 3_600],
  ])('%s is day %s, %d s before its end', (at, day, secondsToReset) =>
    expect(utcDay(new Date(at))).toEqual({ day, secondsToReset }),
  );
});

describe('takeAllowance: a daily allowance per account and kind, in Postgres', () => {
  it('grants what is asked until the limit, cuts the last page short, then refuses with the time to midnight', async () => {
    const id = await d.account();
    expect(await takeAllowance(d.sql, id, 'database', 4, 10, DAY)).toEqual({ granted: 4, remaining: 6 });
    expect(await takeAllowance(d.sql, id, 'database', 4, 10, DAY)).toEqual({ granted: 4, remaining: 2 });
    expect(await takeAllowance(d.sql, id, 'database', 4, 10, DAY)).toEqual({ granted: 2, remaining: 0 });
    const err = await refusal(takeAllowance(d.sql, id, 'database', 1, 10, DAY));
    expect(err.retryAfterSecs).toBe(43_200);
    expect(err.message).toBe(
      'The daily allowance of 10 database records is used up; it resets at midnight UTC, in 43200 s.',
    );
    const [row] =
      await d.sql`select used from daily_usage where account_id = ${id} and day = '2031-05-17' and kind = 'database'`;
    expect(row!.used).toBe(10);
  });

  it('grants a request exactly the size of what is left', async () => {
    const id = await d.account();
    expect(await takeAllowance(d.sql, id, 'enrichment', 10, 10, DAY)).toEqual({ granted: 10, remaining: 0 });
    const err = await refusal(takeAllowance(d.sql, id, 'enrichment', 10, 10, DAY));
    expect(err.message).toBe(
      'The daily allowance of 10 enrichment matches is used up; it resets at midnight UTC, in 43200 s.',
    );
  });

  it('writes large limits with thousands separators', async () => {
    const id = await d.account();
    await takeAllowance(d.sql, id, 'database', 25_000, 25_000, DAY);
    expect((await refusal(takeAllowance(d.sql, id, 'database', 5, 25_000, DAY))).message).toMatch(
      /^The daily allowance of 25,000 database records is used up/,
    );
  });

  it('reports what is left without taking anything when nothing is wanted', async () => {
    const id = await d.account();
    expect(await takeAllowance(d.sql, id, 'database', 0, 10, DAY)).toEqual({ granted: 0, remaining: 10 });
    await takeAllowance(d.sql, id, 'database', 3, 10, DAY);
    expect(await takeAllowance(d.sql, id, 'database', 0, 10, DAY)).toEqual({ granted: 0, remaining: 7 });
    expect(await takeAllowance(d.sql, id, 'database', -5, 10, DAY)).toEqual({ granted: 0, remaining: 7 });
    await takeAllowance(d.sql, id, 'database', 7, 10, DAY);
    // Used up: asking for nothing is not refused.
    expect(await takeAllowance(d.sql, id, 'database', 0, 10, DAY)).toEqual({ granted: 0, remaining: 0 });
    // A lowered limit shows nothing left, never a negative count.
    expect(await takeAllowance(d.sql, id, 'database', 0, 5, DAY)).toEqual({ granted: 0, remaining: 0 });
    const [row] = await d.sql`select used from daily_usage where account_id = ${id} and kind = 'database'`;
    expect(row!.used).toBe(10);
  });

  it('starts afresh each UTC day', async () => {
    const id = await d.account();
    await takeAllowance(d.sql, id, 'database', 10, 10, DAY);
    await refusal(takeAllowance(d.sql, id, 'database', 1, 10, new Date('2031-05-17T23:59:59.999Z')));
    expect(await takeAllowance(d.sql, id, 'database', 3, 10, new Date('2031-05-18T00:00:00.000Z'))).toEqual({
      granted: 3,
      remaining: 7,
    });
  });

  it('keeps kinds and accounts apart', async () => {
    const a = await d.account();
    const b = await d.account();
    await takeAllowance(d.sql, a, 'database', 10, 10, DAY);
    expect(await takeAllowance(d.sql, a, 'enrichment', 2, 10, DAY)).toEqual({ granted: 2, remaining: 8 });
    expect(await takeAllowance(d.sql, b, 'database', 2, 10, DAY)).toEqual({ granted: 2, remaining: 8 });
    expect(await takeAllowance(d.sql, a, 'database', 0, 10, DAY)).toEqual({ granted: 0, remaining: 0 });
  });

  it('never grants more than the limit to concurrent first requests of the day', async () => {
    const id = await d.account();
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => takeAllowance(d.sql, id, 'database', 3, 10, DAY)),
    );
    const granted = results
      .filter((r) => r.status === 'fulfilled')
      .reduce((sum, r) => sum + (r as PromiseFulfilledResult<{ granted: number }>).value.granted, 0);
    expect(granted).toBe(10);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(DailyLimitError);
  });

  it('gives the allowance back when the caller’s transaction rolls back', async () => {
    const id = await d.account();
    await d.sql
      .begin(async (tx) => {
        await takeAllowance(tx as never, id, 'database', 6, 10, DAY);
        throw new Error('request failed');
      })
      .catch(() => {});
    expect(await takeAllowance(d.sql, id, 'database', 0, 10, DAY)).toEqual({ granted: 0, remaining: 10 });
  });
});
