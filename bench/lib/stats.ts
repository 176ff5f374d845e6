/** Nearest-rank percentile of `values` (0 < p ≤ 100). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('percentile of no values');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface Spread {
  p50: number;
  p90: number;
  max: number;
}

export const spread = (values: readonly number[]): Spread => ({
  p50: percentile(values, 50),
  p90: percentile(values, 90),
  max: Math.max(...values),
});

export const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** Milliseconds. */
export interface Timing {
  p50: number;
  p95: number;
  mean: number;
  max: number;
  n: number;
}

export const timing = (values: number[]): Timing => ({
  p50: round(percentile(values, 50), 2),
  p95: round(percentile(values, 95), 2),
  mean: round(values.reduce((a, b) => a + b, 0) / values.length, 2),
  max: round(Math.max(...values), 2),
  n: values.length,
});

/** Milliseconds `fn` took. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}
