import { describe, expect, it } from 'vitest';
import { escapeFormula, toCell } from '../../src/runs/exports.ts';
import { formatDollars, usdToMicros } from '../../src/billing/money.ts';
import { csvOf } from '../../console/src/lib/csv.ts';

describe('escapeFormula', () => {
  it.each([
    ['=HYPERLINK("http://evil","x")', `'=HYPERLINK("http://evil","x")`],
    ['+SUM(A1:A2)', `'+SUM(A1:A2)`],
    ["-2+3+cmd|' /C calc'!A0", `'-2+3+cmd|' /C calc'!A0`],
    ['@SUM(1)', `'@SUM(1)`],
    ['+1 303-555-0101; =cmd()', `'+1 303-555-0101; =cmd()`],
    ['\t=1', `'\t=1`],
    ['\r=1', `'\r=1`],
  ])('prefixes %j', (input, expected) => expect(escapeFormula(input)).toBe(expected));

  it.each([
    '+1 303-555-0100',
    '-12.5',
    '+44 (20) 7946 0958',
    '+1 303-555-0101; +1 512-555-0102',
    'Acme = best',
    'plain text',
    '',
  ])('leaves %j alone', (input) => expect(escapeFormula(input)).toBe(input));
});

describe('toCell', () => {
  it('renders lists, objects, numbers and empty values', () => {
    expect(toCell(['a@x.com', 'b@x.com'])).toBe('a@x.com; b@x.com');
    expect(toCell({ min: 1, max: 2 })).toBe('min: 1; max: 2');
    expect(toCell(-5)).toBe('-5');
    expect(toCell(null)).toBe('');
    expect(toCell(undefined)).toBe('');
    expect(toCell(['=cmd()'])).toBe(`'=cmd()`);
  });
});

describe('money', () => {
  it('converts dollars to micro-dollars without floats and back', () => {
    expect(usdToMicros(48)).toBe(48_000_000n);
    expect(usdToMicros('0.0099')).toBe(9_900n);
    expect(formatDollars(48_000_000n)).toBe('48.00');
    expect(formatDollars(47_996_100n)).toBe('47.9961');
    expect(formatDollars(-1_500_000n)).toBe('-1.50');
    expect(() => usdToMicros('1e3')).toThrow();
  });
});

describe('the console’s CSV exports', () => {
  it('escape formula cells by the downloads’ rule, and leave phone numbers and other values as they are', () => {
    const text = csvOf([
      { name: '=HYPERLINK("http://evil","x")', phone: '+1 303-555-0101', employees: 12, note: '@SUM(1)' },
    ]);
    expect(text.split('\r\n')).toEqual([
      'name,phone,employees,note',
      `"'=HYPERLINK(""http://evil"",""x"")",+1 303-555-0101,12,'@SUM(1)`,
    ]);
  });
});
