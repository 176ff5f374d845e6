/** Money is integer micro-dollars (1 USD = 1,000,000) everywhere; never floats. */
export const MICROS_PER_USD = 1_000_000n;

export function usdToMicros(usd: number | string): bigint {
  const text = typeof usd === 'number' ? usd.toFixed(6) : usd.trim();
  const match = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) throw new Error(`not a dollar amount: ${usd}`);
  const [, sign, whole = '0', frac = ''] = match;
  const micros = BigInt(whole) * MICROS_PER_USD + BigInt(frac.padEnd(6, '0'));
  return sign ? -micros : micros;
}

/** Decimal string with at least 2 decimals: 48000000n → "48.00", 47996100n → "47.9961". */
export function formatDollars(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  const whole = abs / MICROS_PER_USD;
  let frac = (abs % MICROS_PER_USD).toString().padStart(6, '0').replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return `${sign}${whole}.${frac}`;
}

export const microsToNumber = (micros: bigint) => Number(micros) / 1_000_000;
