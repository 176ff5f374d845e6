import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dollarsOfNumber, moneyString } from '../../schema/scalars.ts';
import { type AppError, ValidationError } from '../../src/shared/errors.ts';
import { formatDollars, MICROS_PER_USD, microsToNumber, usdToMicros } from '../../src/billing/money.ts';
import {
  MAX_PURCHASE_USD,
  MIN_PURCHASE_USD,
  parsePurchaseAmount,
  PURCHASE_BONUS_PERCENT,
} from '../../src/billing/wallet.ts';
import { walletView } from '../../src/endpoints/api/account.ts';

describe('usdToMicros: dollars to integer micro-dollars, never through a float sum', () => {
  it.each([
    ['0', 0n],
    ['1', 1_000_000n],
    ['48', 48_000_000n],
    ['0.5', 500_000n],
    ['0.05', 50_000n],
    ['0.0099', 9_900n],
    ['12.345678', 12_345_678n],
    ['0.000001', 1n],
    ['-1.5', -1_500_000n],
    ['-0.000001', -1n],
    ['  7.25\n', 7_250_000n],
    ['10000', 10_000_000_000n],
  ])('%j → %s', (text, micros) => expect(usdToMicros(text)).toBe(micros));

  it.each([
    [48, 48_000_000n],
    [0.1, 100_000n],
    [0.29, 290_000n],
    [1234.56, 1_234_560_000n],
    [-2.5, -2_500_000n],
    [0.0000004, 0n],
    [0.0000006, 1n],
  ])('number %d → %s (rounded to the micro)', (usd, micros) => expect(usdToMicros(usd)).toBe(micros));

  it.each(['', '1e3', '1.2345678', '$5', '5.', '.5', '1,000', '--1', '+1', '1.5 USD', 'abc', '1 2', '0x10'])(
    'refuses %j naming it',
    (text) => {
      expect(() => usdToMicros(text)).toThrow(`not a dollar amount: ${text}`);
    },
  );

  it('refuses numbers that have no plain decimal form', () => {
    expect(() => usdToMicros(Number.NaN)).toThrow(/not a dollar amount: NaN/);
    expect(() => usdToMicros(Number.POSITIVE_INFINITY)).toThrow(/not a dollar amount/);
    expect(() => usdToMicros(1e21)).toThrow(/not a dollar amount/);
  });
});

describe('formatDollars: at least 2 decimals, no trailing zeros past them', () => {
  it.each([
    [0n, '0.00'],
    [1n, '0.000001'],
    [10n, '0.00001'],
    [9_900n, '0.0099'],
    [100_000n, '0.10'],
    [120_000n, '0.12'],
    [123_000n, '0.123'],
    [1_000_000n, '1.00'],
    [48_000_000n, '48.00'],
    [47_996_100n, '47.9961'],
    [1_234_567_891n, '1234.567891'],
    [-1n, '-0.000001'],
    [-100_000n, '-0.10'],
    [-1_500_000n, '-1.50'],
    [-48_000_000n, '-48.00'],
  ])('%s → %j', (micros, text) => expect(formatDollars(micros)).toBe(text));

  it('round-trips with usdToMicros', () => {
    for (const micros of [0n, 1n, 99n, 9_900n, 990_000n, 5_000_000n, 47_996_100n, -3n, -7_250_000n])
      expect(usdToMicros(formatDollars(micros))).toBe(micros);
  });
});

describe('GraphQL Money from a dollar number: the same string as through micro-dollars', () => {
  it('for any number, formats as formatDollars(usdToMicros(n)) does', () => {
    const numbers = fc.oneof(
      fc.double({ min: -1e12, max: 1e12, noNaN: true }),
      fc.integer({ min: -1e9, max: 1e9 }).map((n) => n / 1e6),
      fc.integer({ min: -1e6, max: 1e6 }).map((n) => n / 100),
      fc.constantFrom(0, -0, 0.0000005, -0.0000005, 1.0000005, 48, 47.9961, -0.000001, 1e14 + 0.5),
    );
    fc.assert(
      fc.property(numbers, (n) => {
        expect(dollarsOfNumber(n)).toBe(formatDollars(usdToMicros(n)));
      }),
      { numRuns: 20_000 },
    );
  });

  it('answers the numbers past its range through micro-dollars, and refuses what is not money', () => {
    expect(moneyString(1e15)).toBe('1000000000000000.00');
    expect(moneyString(2_500_000n)).toBe('2.50');
    expect(moneyString('47.99610')).toBe('47.9961');
    expect(() => moneyString(Number.NaN)).toThrow('Money cannot represent NaN');
  });
});

describe('microsToNumber', () => {
  it('converts to dollars as a number for JSON answers', () => {
    expect(MICROS_PER_USD).toBe(1_000_000n);
    expect(microsToNumber(990_000n)).toBe(0.99);
    expect(microsToNumber(48_000_000n)).toBe(48);
    expect(microsToNumber(-9_900n)).toBe(-0.0099);
    expect(microsToNumber(0n)).toBe(0);
  });
});

describe('walletView: the spec wallet object', () => {
  it('shows plan credits, purchased credits and their sum as decimal strings', () => {
    expect(walletView({ planMicros: 48_000_000n, purchasedMicros: 12_500_000n })).toEqual({
      balance_dollars: '48.00',
      purchased_credits_dollars: '12.50',
      total_balance_dollars: '60.50',
    });
    expect(walletView({ planMicros: -9_900n, purchasedMicros: 0n })).toEqual({
      balance_dollars: '-0.0099',
      purchased_credits_dollars: '0.00',
      total_balance_dollars: '-0.0099',
    });
  });
});

describe('parsePurchaseAmount: 10 to 10,000 US dollars with at most 2 decimals', () => {
  const refusal = (raw: unknown) => {
    try {
      parsePurchaseAmount(raw);
    } catch (err) {
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as AppError).status).toBe(400);
      expect((err as AppError).code).toBe('validation_failed');
      const details = (err as ValidationError).details as { path: string; message: string }[];
      expect(details).toHaveLength(1);
      expect(details[0]!.path).toBe('amount');
      return details[0]!.message;
    }
    throw new Error(`${JSON.stringify(raw)} was accepted`);
  };

  it('accepts the bounds and cents', () => {
    expect(MIN_PURCHASE_USD).toBe(10);
    expect(MAX_PURCHASE_USD).toBe(10_000);
    for (const amount of [10, 10.01, 25.5, 99.99, 9_999.99, 10_000]) expect(parsePurchaseAmount(amount)).toBe(amount);
  });

  it('requires an amount', () => {
    expect(refusal(undefined)).toBe('amount is required (USD, 10 to 10000)');
    expect(refusal(null)).toBe('amount is required (USD, 10 to 10000)');
  });

  it('requires a finite number', () => {
    for (const raw of ['20', Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, true, {}, [20]])
      expect(refusal(raw)).toBe('amount must be a number of US dollars');
  });

  it('refuses fractions of a cent', () => {
    for (const raw of [10.001, 20.555, 10_000.001]) expect(refusal(raw)).toBe('amount must have at most 2 decimals');
  });

  it('refuses amounts outside 10–10,000', () => {
    for (const raw of [9.99, 0, -20, 10_000.01, 10_001, 1e9])
      expect(refusal(raw)).toBe('amount must be between 10 and 10000 USD');
  });

  it('gives each plan its purchase bonus', () => {
    expect(PURCHASE_BONUS_PERCENT).toEqual({ starter: 0, growth: 10, scale: 30 });
  });
});
