import { formatDollars, usdToMicros } from './money.ts';
import type { RunStatus } from '../../db/tables/runs.ts';

/** A result row as billing sees it. */
type Row = Record<string, unknown>;

/**
 * How a tool is billed. The run engine charges `rowCost` for each result row as it is stored (never
 * past the run's hold), then `settle` may turn the total into the final charge (flat prices,
 * per-search charges).
 */
export interface PriceRule<I = unknown> {
  /** What one billable unit is, e.g. "business". */
  unit: string;
  /** The spec's price text, generated from the rule (`each` and the rule's wording). */
  text: string;
  /** One unit's price as texts write it, e.g. "0.0199 USD": tools quote it, never the number again. */
  each: string;
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

/** How a rule's price text reads, given one unit's price as written ("0.0199 USD") and in micro-dollars. */
export type Wording = (each: string, unitMicros: bigint) => string;

/** The unit price in micro-dollars and as texts write it. */
function unitPrice(usd: string) {
  const unitMicros = usdToMicros(usd);
  return { unitMicros, each: `${formatDollars(unitMicros)} USD` };
}

/** A price per result row. */
export function perResult(unit: string, usd: string, wording: Wording = (each) => `${each} per ${unit}`): PriceRule {
  const { unitMicros, each } = unitPrice(usd);
  return {
    unit,
    text: wording(each, unitMicros),
    each,
    unitMicros,
    estimate: (_, requested) => unitMicros * BigInt(requested),
    rowCost: () => unitMicros,
  };
}

/** A price per row for which `found(row)` holds; free when nothing is found. */
export function perFound(
  unit: string,
  usd: string,
  found: (row: Row) => boolean,
  wording: Wording = (each) => `${each} per ${unit} found; free if not found`,
): PriceRule {
  const { unitMicros, each } = unitPrice(usd);
  return {
    unit,
    text: wording(each, unitMicros),
    each,
    unitMicros,
    billsFound: true,
    estimate: (_, requested) => unitMicros * BigInt(requested),
    rowCost: (row) => (found(row) ? unitMicros : 0n),
  };
}

/** A flat price per run, whatever it returns (tech stack: per technology), when the run succeeds. */
export function flat(unit: string, usd: string, wording: Wording): PriceRule {
  const { unitMicros, each } = unitPrice(usd);
  // Charged for a run that delivered its answer; a failed or timed-out one is free.
  return {
    unit,
    text: wording(each, unitMicros),
    each,
    unitMicros,
    estimate: () => unitMicros,
    rowCost: () => 0n,
    settle: (_, __, ___, status) => (status === 'SUCCEEDED' ? unitMicros : 0n),
  };
}

/** A price per search, charged only when the search found something. */
export function perSearchWhenFound(unit: string, usd: string, wording: Wording): PriceRule {
  const { unitMicros, each } = unitPrice(usd);
  return {
    unit,
    text: wording(each, unitMicros),
    each,
    unitMicros,
    estimate: () => unitMicros,
    rowCost: () => 0n,
    settle: (_, rows) => (rows > 0 ? unitMicros : 0n),
  };
}

/** A price per result row; a run that returns nothing bills as one result (people finder). */
export function perResultAtLeastOne(unit: string, usd: string, wording: Wording): PriceRule {
  const { unitMicros, each } = unitPrice(usd);
  return {
    unit,
    text: wording(each, unitMicros),
    each,
    unitMicros,
    estimate: (_, requested) => unitMicros * BigInt(Math.max(1, requested)),
    rowCost: () => unitMicros,
    // A search that ran to its end and found nobody bills one result; a failed or cancelled one does not.
    settle: (rowsCost, rows, _, status) => (rows > 0 || status !== 'SUCCEEDED' ? rowsCost : unitMicros),
  };
}

/** Included with the plan: no charge per record. */
export function included(unit: string, text: string): PriceRule {
  return { unit, text, each: '0.00 USD', unitMicros: 0n, estimate: () => 0n, rowCost: () => 0n };
}
