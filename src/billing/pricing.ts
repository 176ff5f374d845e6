import { usdToMicros } from './money.ts';
import type { RunStatus } from '../../db/schema/runs.ts';
import type { Row } from '../tools/types.ts';

/**
 * How a tool is billed. The run engine charges `rowCost` for each result row as it is stored (never
 * past the run's hold), then `settle` may turn the total into the final charge (flat prices,
 * per-search charges).
 */
export interface PriceRule<I = any> {
  /** What one billable unit is, e.g. "business". */
  unit: string;
  /** The spec's price text. */
  text: string;
  /** Micro-dollars of one unit; the least a run must be able to hold to start. */
  unitMicros: bigint;
  /** True when only rows where something was found are billed (the final message then says how many). */
  billsFound?: boolean;
  /** What a run is expected to cost, held at start. */
  estimate(input: I, requested: number): bigint;
  rowCost(row: Row, input: I): bigint;
  /** Final charge from what the rows cost, how many there were and how the run ended; default: their cost. */
  settle?(rowsCost: bigint, rowCount: number, input: I, status: RunStatus): bigint;
}

const micros = (usd: string) => usdToMicros(usd);

/** A price per result row. */
export function perResult(unit: string, usd: string, text = `${usd} USD per ${unit}`): PriceRule {
  const each = micros(usd);
  return { unit, text, unitMicros: each, estimate: (_, requested) => each * BigInt(requested), rowCost: () => each };
}

/** A price per row for which `found(row)` holds; free when nothing is found. */
export function perFound(unit: string, usd: string, found: (row: Row) => boolean, text = `${usd} USD per ${unit} found; free if not found`): PriceRule {
  const each = micros(usd);
  return { unit, text, unitMicros: each, billsFound: true, estimate: (_, requested) => each * BigInt(requested), rowCost: (row) => (found(row) ? each : 0n) };
}

/** A flat price per run, whatever it returns (tech stack: per technology), when the run succeeds. */
export function flat(unit: string, usd: string, text: string): PriceRule {
  const price = micros(usd);
  // Charged for a run that delivered its answer; a failed or timed-out one is free.
  return { unit, text, unitMicros: price, estimate: () => price, rowCost: () => 0n, settle: (_, __, ___, status) => (status === 'SUCCEEDED' ? price : 0n) };
}

/** A price per search, charged only when the search found something. */
export function perSearchWhenFound(unit: string, usd: string, text: string): PriceRule {
  const price = micros(usd);
  return { unit, text, unitMicros: price, estimate: () => price, rowCost: () => 0n, settle: (_, rows) => (rows > 0 ? price : 0n) };
}

/** A price per result row; a run that returns nothing bills as one result (people finder). */
export function perResultAtLeastOne(unit: string, usd: string, text: string): PriceRule {
  const each = micros(usd);
  return {
    unit,
    text,
    unitMicros: each,
    estimate: (_, requested) => each * BigInt(Math.max(1, requested)),
    rowCost: () => each,
    // A search that ran to its end and found nobody bills one result; a failed or cancelled one does not.
    settle: (rowsCost, rows, _, status) => (rows > 0 || status !== 'SUCCEEDED' ? rowsCost : each),
  };
}

/** Included with the plan: no charge per record. */
export function included(unit: string, text: string): PriceRule {
  return { unit, text, unitMicros: 0n, estimate: () => 0n, rowCost: () => 0n };
}
