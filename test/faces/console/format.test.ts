import { describe, expect, it } from 'vitest';
import { usd, usd2 } from '../../../console/src/lib/format.ts';

/** How the console writes money: the sign before the dollar, thousands separated, 2 or up to 4 decimals. */
describe('money for people', () => {
  it('writes amounts in lists to 2 decimals and in detail to up to 4, a spend with its sign first', () => {
    expect(usd2('1234.5')).toBe('$1,234.50');
    expect(usd2('-0.1782')).toBe('-$0.18');
    expect(usd('-0.1782')).toBe('-$0.1782');
    expect(usd('48')).toBe('$48.00');
    expect(usd('0.000001')).toBe('$0.00');
    expect(usd2(null)).toBe('—');
  });
});

describe('times for people', () => {
  it('says how long ago or how soon, to the nearest unit', async () => {
    const { ago } = await import('../../../console/src/lib/format.ts');
    const now = Date.parse('2026-12-05T12:00:00Z');
    const at = (ms: number) => new Date(now + ms).toISOString();
    expect(ago(at(-20_000), now)).toBe('just now');
    expect(ago(at(-2 * 3_600_000 - 5_000), now)).toBe('2 hours ago');
    // An invitation made a second ago expires in a week, not "in 6 days".
    expect(ago(at(7 * 86_400_000 - 1_000), now)).toBe('in 7 days');
  });
});
