/**
 * Glossary
 * - tool: one scraper, finder or lookup, declared once here; every face is derived from it.
 * - run: one execution of a tool for an account (a row in `run`), started by any face.
 * - item: one result row of a run (a row in `run_item`), numbered from 0 by `seq`.
 * - batch: rows a runner yields at once; stored and announced together.
 * - source: where a catalog-backed runner reads (the catalog tables, or a live upstream).
 * - hold: money reserved for a run at start and settled when it ends.
 */
import type { z } from 'zod';
import type { Plan } from '../../db/schema/accounts.ts';
import type { Sources } from '../sources/types.ts';
import type { PriceRule } from './pricing.ts';

export type Row = Record<string, unknown>;

export interface Column {
  /** Key in the row object. */
  key: string;
  /** Header in CSV downloads. */
  header: string;
  description: string;
}

export interface RunBatch {
  rows: Row[];
  /** Items processed by this batch; defaults to rows.length. */
  handled?: number;
  /** New status message, if it changes. */
  message?: string;
}

export interface RunContext<I> {
  runId: string;
  accountId: string;
  input: I;
  sources: Sources;
  /** Rows already stored by an earlier attempt; a runner replays its deterministic output and the engine skips these. */
  startAt: number;
  signal: AbortSignal;
}

/** What a tool hands back to the caller when a run starts, beside the run itself. */
export interface StartInfo {
  message: string;
  /** Extra fields of this tool's start response (e.g. `search_translation`). */
  extra?: Record<string, unknown>;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  /** Stable identifier, stored on runs. */
  name: string;
  title: string;
  description: string;
  rest: { path: string };
  graphql: { mutation: string; inputType: string };
  mcp: { name: string };
  input: S;
  price: PriceRule<z.output<S>>;
  /** Money a run may go below zero (the lead scraper's "wallet balance plus 1 USD"), micro-dollars. */
  overdraftMicros?: bigint;
  /** Lowest plan that may use the tool; absent means every plan. */
  plan?: Plan;
  cancellable: boolean;
  columns: Column[];
  /** Items the run is expected to handle (spec: requested). */
  requested(input: z.output<S>): number;
  /** Start-time work and refusals that need no database (e.g. link translation). */
  describeStart(input: z.output<S>): StartInfo;
  run(ctx: RunContext<z.output<S>>): AsyncIterable<RunBatch>;
}

/** Declares a tool with its input type inferred from the schema. */
export const defineTool = <S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition<S> => tool;
