import { isDeepStrictEqual } from 'node:util';
import { round, timed, timing, type Timing } from './harness.ts';

/**
 * An enrichment tool against its naive baseline, one query per row (parts 3 and 4 of
 * bench/lib/database.ts): both must produce the same rows, then they are timed alternately.
 */

/** What an enrichment call answers (a preview has no rows). */
export interface EnrichAnswer {
  rows?: Record<string, unknown>[];
  summary: { matched: number; by: Record<string, number> };
}

export interface EnrichComparison {
  rows: number;
  matched: number;
  /** The tool's summary.by: matches by key. */
  by: Record<string, number>;
  /** The per-row baseline produced exactly the tool's rows, fields in the same order. */
  sameMatches: boolean;
  bulk: Timing;
  perRow: Timing;
  /** Per-row queries sent by one baseline pass. */
  perRowQueries: number;
  /** Per-row p50 ÷ bulk p50. */
  speedup: number;
  timeMet: boolean;
  speedupMet: boolean;
}

export interface EnrichComparisonOptions {
  /** Timed bulk calls, and baseline passes beside them. */
  iterations: number;
  baselineIterations: number;
  warmups: number;
  goals: { enrichMs: number; enrichSpeedup: number };
}

export async function compareEnrichment(
  bulkCall: () => Promise<EnrichAnswer>,
  baseline: () => Promise<{ queries: number; rows: Record<string, unknown>[] }>,
  options: EnrichComparisonOptions,
): Promise<EnrichComparison> {
  const { iterations, baselineIterations, warmups, goals } = options;
  const result = await bulkCall();
  if (!result.rows) throw new Error('the enrichment answered a preview');
  const reference = await baseline();
  // Same values, and the same fields in the same order (what a caller reads in the JSON).
  const sameMatches =
    isDeepStrictEqual(result.rows, reference.rows) && JSON.stringify(result.rows) === JSON.stringify(reference.rows);

  // Bulk calls are short and many, the baseline long and few: each iteration runs one baseline
  // pass beside bulk calls, alternating, until both have their counts.
  const bulk: number[] = [];
  const perRow: number[] = [];
  for (let i = 0; i < warmups; i++) await bulkCall();
  const perBaseline = Math.ceil(iterations / baselineIterations);
  for (let i = 0; i < baselineIterations; i++) {
    for (let j = 0; j < perBaseline && bulk.length < iterations; j++) bulk.push(await timed(bulkCall));
    perRow.push(await timed(baseline));
  }
  const bulkTiming = timing(bulk);
  const perRowTiming = timing(perRow);
  const speedup = round(perRowTiming.p50 / bulkTiming.p50, 1);
  return {
    rows: result.rows.length,
    matched: result.summary.matched,
    by: result.summary.by,
    sameMatches,
    bulk: bulkTiming,
    perRow: perRowTiming,
    perRowQueries: reference.queries,
    speedup,
    timeMet: bulkTiming.p95 <= goals.enrichMs,
    speedupMet: speedup >= goals.enrichSpeedup,
  };
}
