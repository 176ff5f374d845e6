import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../logger.ts';
import { AppError, coerceError } from '../shared/errors.ts';
import { errorBody } from '../http/errors.ts';
import { ENDPOINTS } from '../endpoints/index.ts';
import type { EndpointDefinition } from '../endpoints/define.ts';
import { TOOLS } from '../tools/index.ts';
import { MAX_WAIT_SECS } from './limits.ts';

/**
 * Errors as an agent reads them: the service's code and details, the message in the MCP tools' words
 * (a route becomes the tool that does the same, a status number never shows), and the tool to call next.
 */

/** The service's routes that have an MCP tool, by method and path, as that tool. */
const TOOL_OF_ROUTE = new Map<string, string>([
  ...(ENDPOINTS as readonly EndpointDefinition[]).flatMap(({ rest, mcp }) =>
    mcp ? rest.methods.map((m) => [`${m.toUpperCase()} ${rest.path}`, `the ${mcp.tool} tool`] as const) : [],
  ),
  ...TOOLS.filter((t) => !t.linkedOnly).map((t) => [`POST ${t.rest.path}`, `the ${t.mcp.name} tool`] as const),
]);

/** Sentences of the service's messages that name a route no MCP tool serves, in the tools' words. */
const REWORDED: readonly [RegExp, string][] = [
  [
    /[Bb]uy credits with POST \/api\/v1\/buy-credits/g,
    'Top up the wallet in the console (Billing), then call the tool again; get_wallet shows the balance',
  ],
  [
    /poll GET \/api\/v1\/scrape\/status\/(\S+) until it is SUCCEEDED, then download/g,
    `call check_run_status with runId $1 and waitSecs up to ${MAX_WAIT_SECS} until it is SUCCEEDED, ` +
      'then call download_results',
  ],
  [/GET \/api\/v1\/scrape\/status\/(\S+)/g, 'check_run_status with runId $1'],
  [/GET \/api\/downloads\/(\S+)/g, 'download_results with runId $1'],
  [/GET \/api\/v1\/wallet\/ledger/g, 'the wallet history in the console (Billing)'],
];

/** A service message in the MCP tools' words. */
export function mcpMessage(message: string): string {
  let text = message;
  for (const [pattern, words] of REWORDED) text = text.replace(pattern, words);
  return text
    .replace(
      /\b(GET|POST|DELETE) (\/api\/[\w\-/{}:.]+[\w}])/g,
      (route: string) => TOOL_OF_ROUTE.get(route) ?? 'the API',
    )
    .replace(/ \((?:HTTP )?[45]\d\d\)/g, '')
    .replace(/\b[45]\d\d ([a-z]+_[a-z_]+)\b/g, '$1')
    .replace(/ with [45]\d\d\b/g, '');
}

/** A JSON Schema with its descriptions in the MCP tools' words. */
export function wordedSchema<T>(schema: T): T {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => [
        key,
        key === 'description' && typeof v === 'string' ? mcpMessage(v) : walk(v),
      ]),
    );
  };
  return walk(schema) as T;
}

/** The tool an agent should call after an error with this code, when there is one. */
const NEXT_TOOL: Record<string, string> = {
  insufficient_funds: 'get_wallet',
  wallet_negative: 'get_wallet',
  run_not_finished: 'check_run_status',
  cost_limit_exceeded: 'quote',
  daily_limit_reached: 'get_wallet',
};

/** What an agent reads of an error: `isError` with the body as text (no structured content, which is for answers). */
export function toolError(err: unknown, logger: Pick<Logger, 'error'>): CallToolResult {
  if (!(coerceError(err) instanceof AppError)) logger.error({ err }, 'MCP tool call failed');
  const { error, ...extra } = errorBody(err) as {
    error: { code: string; message: string; details?: { path: string; message: string }[] };
  };
  const next = NEXT_TOOL[error.code];
  const body = {
    error: {
      ...error,
      message: mcpMessage(error.message),
      ...(error.details ? { details: error.details.map((d) => ({ ...d, message: mcpMessage(d.message) })) } : {}),
    },
    ...extra,
    ...(next ? { nextTool: next } : {}),
  };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}
