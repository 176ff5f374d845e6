/**
 * Glossary
 * - tool: one scraper, finder or lookup, declared once here; every face is derived from it.
 * - run: one execution of a tool for an account (a row in `run`), started by any face.
 * - item: one result row of a run (a row in `run_item`), numbered from 0 by `seq`.
 * - batch: rows a runner yields at once; stored and announced together.
 * - source: where a catalog-backed runner reads (the catalog tables, or a live upstream).
 * - hold: money reserved for a run at start and settled when it ends.
 */
import type { Toolset } from './toolsets.ts';
import { z } from 'zod';
import type { Plan, SubscriptionStatus } from '../../db/tables/accounts.ts';
import type { Sources } from '../sources/types.ts';
import type { PriceRule } from '../billing/pricing.ts';
import { localAmount, usdAmount } from '../shared/amounts.ts';
import type { Deprecation } from '../shared/deprecation.ts';

export type Row = Record<string, unknown>;

export interface Column {
  /** Key in the row object. */
  key: string;
  /** Header in CSV downloads. */
  header: string;
  /** Its name for people (the console's tables); default: the key in words (tools/columns.ts). */
  label?: string;
  /**
   * Words for the codes the column holds (`c_suite` “C-suite”), for people; the rows keep the codes.
   */
  values?: Readonly<Record<string, string>>;
  description: string;
  /**
   * The value's type (GraphQL's row types derive from it); default text or null. Amounts of money are marked `usd(…)`.
   */
  type?: z.ZodType;
}

export interface RunBatch {
  rows: Row[];
  /** Items processed by this batch; defaults to rows.length. */
  handled?: number;
  /** New status message, if it changes. */
  message?: string;
  /** A remark kept in the run's final status message (e.g. where the answer came from). */
  note?: string;
  /**
   * Nothing follows this batch: the engine stores it with the run's end, in one transaction (one
   * commit and one announcement fewer), and does not ask the runner for more. Only for a runner that
   * knows without asking its source again.
   */
  last?: boolean;
}

/** Account state a run may keep beyond itself. Every method is safe to repeat when an attempt is replayed. */
export interface RunStore {
  /**
   * Of `rows`, which the account's named dataset `dataset` has not delivered before: each such row's
   * identity is claimed for this run (src/datasets), so later runs naming the dataset skip it. A
   * replayed attempt of the same run gets the same answer.
   */
  claimNew(dataset: string, rows: Row[]): Promise<boolean[]>;
  /**
   * A value shared by every account, computed once per `period` (e.g. "2026-11" for monthly data):
   * returns the cached value of (`tool`, `key`, `period`) or computes, stores and returns it.
   */
  cached<T>(tool: string, key: string, period: string, compute: () => Promise<T>): Promise<{ value: T; hit: boolean }>;
}

export interface RunContext<I> {
  runId: string;
  accountId: string;
  input: I;
  sources: Sources;
  store: RunStore;
  /** When the run started (fixed across attempts, so replays are deterministic). */
  startedAt: Date;
  /**
   * Rows already stored by an earlier attempt; a runner replays its deterministic output and the engine skips these.
   */
  startAt: number;
  signal: AbortSignal;
}

/** What a tool hands back to the caller when a run starts, beside the run itself. */
export interface StartInfo {
  message: string;
  /** Extra fields of this tool's start response (e.g. `search_translation`). */
  extra?: Record<string, unknown>;
}

/** Who starts a run, as far as a tool's start rules care (trial caps). */
export interface Caller {
  plan: Plan;
  subscriptionStatus: SubscriptionStatus;
}

/** What `describeStart` decides: the caller's message, and optionally the input actually run (e.g. capped). */
export interface StartPlan<I> extends StartInfo {
  input?: I;
}

/** A second run started with this one, in the same transaction (property lookup's owner contact). */
export interface LinkedRun {
  tool: string;
  input: unknown;
  /** Field of the start response that carries the linked run's id. */
  field: string;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  /** Stable identifier, stored on runs. */
  name: string;
  title: string;
  description: string;
  /** Start route; `aliases` are accepted too (e.g. the spec's examples without `/v1`), each possibly on its way out. */
  rest: { path: string; aliases?: { path: string; deprecated?: Deprecation }[] };
  graphql: { mutation: string; inputType: string };
  /**
   * The MCP tool: its name, the toolset clients choose it by (src/tools/toolsets.ts), and whether it
   * reaches beyond the stored catalog (a live upstream source, DNS, mail servers or websites).
   */
  mcp: { name: string; toolset: Toolset; openWorld?: boolean };
  /**
   * A start body that works, shown in the OpenAPI document (required for every tool with a route; a test runs each).
   */
  example?: z.input<S>;
  /** Started only as another tool's linked run: no route, mutation or MCP tool of its own. */
  linkedOnly?: boolean;
  /**
   * About individuals: not for regulated purposes (src/accounts/permissible-use.ts). Its runs are refused
   * until someone in the account has acknowledged the notice once.
   */
  permissibleUse?: boolean;
  input: S;
  price: PriceRule<z.output<S>>;
  /** Money a run may go below zero (the lead scraper's "wallet balance plus 1 USD"), micro-dollars. */
  overdraftMicros?: bigint;
  /** Lowest plan that may use the tool; absent means every plan. */
  plan?: Plan;
  cancellable: boolean;
  /**
   * What one result row is, when it is not the price's unit (the mobile finder bills numbers found, one row per input).
   */
  rowUnit?: string;
  /** Longest a run of this tool may take, seconds; at most the configured `runTimeoutSecs`. */
  maxRunSecs?: number;
  /** The tool's rules and the decisions behind them, one sentence each; listed in docs/tools.md. */
  notes?: string[];
  columns: Column[];
  /**
   * The columns that identify a row (a place id, a listing URL, an email…): two rows with the same
   * values in them are the same result. A named dataset keeps one row an identity and delivers only
   * rows whose identity it has not delivered before when a run asks for only new rows (`src/datasets`);
   * a row with none of them filled has no identity and is always new.
   */
  identity: string[];
  /**
   * The tool's own fields of the start answer (`extra` of describeStart, and the fields of its linked
   * runs), declared for the faces that type them (GraphQL's start payloads).
   */
  startDetails?: z.ZodObject;
  /** Items the run is expected to handle (spec: requested). */
  requested(input: z.output<S>): number;
  /**
   * Start-time work and refusals that need no database (link translation, caps for the caller);
   * throws AppError for the tool's named refusals.
   */
  describeStart(input: z.output<S>, caller: Caller): StartPlan<z.output<S>>;
  /** Runs started with this one, each held and billed on its own, linked by `parentRunId`. */
  linkedRuns?(input: z.output<S>): LinkedRun[];
  run(ctx: RunContext<z.output<S>>): AsyncIterable<RunBatch>;
}

/** The type of a column declared without one: text, or null when there is none. */
export const DEFAULT_COLUMN_TYPE = z.string().nullable();

/** Column types (`Column.type`); a row holds null where it has no value. */
export const cell = {
  text: DEFAULT_COLUMN_TYPE,
  int: z.int().nullable(),
  number: z.number().nullable(),
  bool: z.boolean().nullable(),
  texts: z.array(z.string()).nullable(),
  /** US dollars. */
  usd: usdAmount(z.number().nullable()),
  /** An amount in a currency named in another column. */
  localAmount: localAmount(z.number().nullable()),
  list: <T extends z.ZodType>(item: T) => z.array(item).nullable(),
};

/** Declares a tool with its input type inferred from the schema. */
export const defineTool = <S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition<S> => tool;
