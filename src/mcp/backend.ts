import type { EndpointDefinition } from '../endpoints/define.ts';
import type { Row, ToolDefinition } from '../tools/types.ts';

export interface StartOptions {
  /** Replays the first start of the same tool and input for 24 hours instead of starting another. */
  idempotencyKey?: string;
  /** Refuses the start (`cost_limit_exceeded`) when it is quoted over this many USD. */
  maxCostUsd?: number;
}

/**
 * What the MCP tools need from leadgate. The remote server (/mcp) calls the services in-process for
 * the caller's account; the stdio server calls a leadgate server's API with a key. Both answer the
 * run views REST answers (with `itemCount` where known), and throw AppError with the service's code.
 */
export interface McpBackend {
  /** Starts a run of `tool` with the caller's arguments: the start view. */
  startRun(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    options: StartOptions,
  ): Promise<Record<string, unknown>>;
  /** What a start would hold, and whether the wallet covers it; nothing is started. */
  quote(tool: ToolDefinition, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  /**
   * The run view, once the run has ended or `waitSecs` have passed; `onProgress` hears the run's changes
   * while the call waits.
   */
  runStatus(
    runId: string,
    waitSecs: number,
    signal?: AbortSignal,
    onProgress?: (view: Record<string, unknown>) => void,
  ): Promise<Record<string, unknown>>;
  /** Up to `limit` result rows from `offset`, refused like downloads (unfinished, expired, unknown). */
  runRows(runId: string, offset: number, limit: number, signal?: AbortSignal): Promise<Row[]>;
  /** A link to the finished run's file that works without a key for a few minutes; null before it ends. */
  downloadLink(runId: string, format: 'csv' | 'ndjson'): Promise<string | null>;
  cancelRun(runId: string): Promise<Record<string, unknown>>;
  /** Calls a declared endpoint with the tool's arguments: its answer. */
  call(endpoint: EndpointDefinition, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}
