import { z } from 'zod';
import { fromZodError } from '../shared/errors.ts';
import { assertKnownFields, NO_FIELDS } from '../shared/fields.ts';
import { rowOffset } from '../shared/params.ts';
import { loadConfig } from '../config.ts';
import { PLAN_PRICE_USD } from '../billing/plans.ts';
import type { EndpointDefinition } from '../endpoints/define.ts';
import { ENDPOINTS } from '../endpoints/index.ts';
import { TOOLS } from '../tools/index.ts';
import type { Row, ToolDefinition } from '../tools/types.ts';

/**
 * What the MCP tools need from leadgate. The remote server (/mcp) calls the services in-process for
 * the caller's account; the stdio server calls a leadgate server's REST API. Both answer exactly
 * what the REST routes answer, and throw AppError with the REST error code and message.
 */
export interface McpBackend {
  /** Starts a run of `tool` with the caller's arguments: the REST start response. */
  startRun(tool: ToolDefinition, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The REST run view, once the run has ended or `waitSecs` have passed. */
  runStatus(runId: string, waitSecs: number, signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** Up to `limit` result rows from `offset`, refused like the download route (unfinished, expired, unknown). */
  runRows(runId: string, offset: number, limit: number, signal?: AbortSignal): Promise<Row[]>;
  cancelRun(runId: string): Promise<Record<string, unknown>>;
  /** Calls a declared endpoint with the tool's arguments: its REST answer. */
  call(endpoint: EndpointDefinition, args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

type JsonSchema = {
  type: 'object';
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
  [key: string]: unknown;
};

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  call(backend: McpBackend, args: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
}

/** Clients drop a tool call after about 60 seconds, so a status call waits at most this long. */
export const MAX_WAIT_SECS = 45;
/** Rows per download_results call, and the most bytes of JSON they may take, so an agent's context is never flooded. */
export const MAX_PAGE_ROWS = 100;
export const MAX_PAGE_BYTES = 50 * 1024;

function inputSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    unrepresentable: 'any',
  }) as JsonSchema;
  return json;
}

/**
 * Arguments of the tools defined here are checked like REST parameters:
 * 400 `validation_failed` naming each bad or unknown field.
 */
function parseArgs<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  assertKnownFields(schema, args);
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw fromZodError(parsed.error);
  return parsed.data;
}

/**
 * "count 500–50000, default 1000; fileName at most 50 characters": the bounds of the top-level
 * parameters that an agent should know (not the practically unbounded ones, nor false defaults).
 */
function limitsOf(schema: JsonSchema): string {
  const parts: string[] = [];
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    const bounds: string[] = [];
    const max = typeof p.maximum === 'number' && p.maximum < 1e9 ? p.maximum : undefined;
    const min = typeof p.minimum === 'number' && p.minimum !== 0 ? p.minimum : undefined;
    if (max !== undefined) bounds.push(min !== undefined || p.minimum === 0 ? `${p.minimum}–${max}` : `at most ${max}`);
    else if (min !== undefined) bounds.push(`at least ${min}`);
    if (typeof p.maxItems === 'number') bounds.push(`at most ${p.maxItems} items`);
    if (typeof p.maxLength === 'number' && p.maxLength <= 100) bounds.push(`at most ${p.maxLength} characters`);
    if (p.default !== undefined && p.default !== false && bounds.length)
      bounds.push(`default ${JSON.stringify(p.default)}`);
    if (bounds.length) parts.push(`${name} ${bounds.join(', ')}`);
  }
  return parts.join('; ');
}

const runIdArg = z.string().trim().min(1, 'runId is required').max(100).describe('The runId a tool returned.');

/** One MCP tool per tool of the registry (linked-only tools have no entry point of their own). */
function registryTool(tool: ToolDefinition): McpTool {
  const inputSchema = inputSchemaOf(tool.input);
  const limits = limitsOf(inputSchema);
  const description = [
    `${tool.title}: ${tool.description}`,
    `Price: ${tool.price.text}.${tool.plan ? ` Needs the ${tool.plan} plan or higher.` : ''}`,
    ...(limits ? [`Limits: ${limits}.`] : []),
    `Cancellable: ${tool.cancellable ? 'yes, with cancel_run (rows stored so far are kept and billed)' : 'no'}.`,
    ...(tool.notes ?? []).map((note) => `- ${note}`),
    'Starts a run and answers its runId at once (with estimatedCost, the USD held): ' +
      `call check_run_status with waitSecs up to ${MAX_WAIT_SECS} until status is SUCCEEDED, ` +
      'then read the rows with download_results.',
  ].join('\n');
  return {
    name: tool.mcp.name,
    title: tool.title,
    description,
    inputSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    call: (backend, args) => backend.startRun(tool, args),
  };
}

const checkRunStatusInput = z
  .object({
    runId: runIdArg,
    waitSecs: z
      .number()
      .int('must be a whole number')
      .min(0, 'must be at least 0')
      .max(MAX_WAIT_SECS, `must be at most ${MAX_WAIT_SECS}`)
      .default(0)
      .describe(
        `Seconds to wait for the run to end before answering, at most ${MAX_WAIT_SECS}; 0 (default) answers at once.`,
      ),
  })
  .strict();

const downloadResultsInput = z
  .object({
    runId: runIdArg,
    offset: rowOffset()
      .default(0)
      .describe('First row to return (0-based): 0, then the nextOffset of the previous answer.'),
    limit: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(MAX_PAGE_ROWS, `must be at most ${MAX_PAGE_ROWS}`)
      .default(MAX_PAGE_ROWS)
      .describe(
        `Rows to return, at most ${MAX_PAGE_ROWS} (default); ` +
          `fewer come back when they would pass ${MAX_PAGE_BYTES / 1024} KB.`,
      ),
  })
  .strict();

const cancelRunInput = z.object({ runId: runIdArg }).strict();

/** "included with the growth plan (149 USD/month) or higher": the top plan has nothing higher. */
const planText = (plan: keyof typeof PLAN_PRICE_USD) =>
  `the ${plan} plan (${PLAN_PRICE_USD[plan]} USD/month)${plan === 'scale' ? '' : ' or higher'}`;
const ALLOWANCE_UNIT = { database: 'records', enrichment: 'matches' } as const;

/**
 * The MCP tool of a declared endpoint: its description, price (the plan gate) and limits (the daily
 * allowance as configured by default) are generated from the declaration; it answers what REST does.
 */
function endpointTool(
  endpoint: EndpointDefinition,
  mcp: NonNullable<EndpointDefinition['mcp']>,
  allowances = loadConfig({}),
): McpTool {
  const perDay =
    endpoint.allowance === 'database' ? allowances.dailyDatabaseRecords : allowances.dailyEnrichmentMatches;
  const daily = endpoint.allowance
    ? `${perDay.toLocaleString('en-US')} ${ALLOWANCE_UNIT[endpoint.allowance]} per UTC day`
    : undefined;
  const limits = mcp.limits ? [mcp.limits.perCall, daily, mcp.limits.besides].filter(Boolean).join('; ') : undefined;
  const price = endpoint.plan ? `Price: included with ${planText(endpoint.plan)}.` : undefined;
  const { request } = endpoint;
  const args = mcp.args ?? (request ? undefined : NO_FIELDS);
  return {
    name: mcp.tool,
    title: mcp.title,
    description: [
      ...mcp.description,
      ...(price || limits ? [[price, limits ? `Limits: ${limits}.` : undefined].filter(Boolean).join(' ')] : []),
      ...(mcp.notes ?? []),
    ].join('\n'),
    inputSchema: inputSchemaOf(args ?? request ?? NO_FIELDS),
    annotations: mcp.annotations,
    call: (backend, raw) => {
      // The unknown-field rule of every face, from the declaration; the service validates the rest.
      if (args) parseArgs(args, raw);
      else if (request) assertKnownFields(request, raw);
      return backend.call(endpoint, raw);
    },
  };
}

/** Rows from `offset` that fit in one answer, and where the next answer starts (null after the last row). */
async function pageOfRows(backend: McpBackend, args: z.output<typeof downloadResultsInput>, signal: AbortSignal) {
  const { runId, offset, limit } = args;
  // One row more than asked tells whether any follow.
  const rows = await backend.runRows(runId, offset, limit + 1, signal);
  const page: Row[] = [];
  let bytes = 200; // the envelope around the rows
  for (const row of rows.slice(0, limit)) {
    const size = Buffer.byteLength(JSON.stringify(row)) + 1;
    if (bytes + size > MAX_PAGE_BYTES) break;
    page.push(row);
    bytes += size;
  }
  const more = page.length < rows.length;
  if (page.length === 0 && more) {
    // A single row over the byte limit: skip it rather than flood the caller or stall.
    return {
      runId,
      offset,
      count: 0,
      rows: [],
      nextOffset: offset + 1,
      note:
        `Row ${offset} alone is over ${MAX_PAGE_BYTES / 1024} KB; ` +
        `download it from GET /api/downloads/${runId}?format=json.`,
    };
  }
  return { runId, offset, count: page.length, rows: page, nextOffset: more ? offset + page.length : null };
}

const EXTRA_TOOLS: McpTool[] = [
  {
    name: 'check_run_status',
    title: 'Check run status',
    description: [
      'Status of a run: status (READY, RUNNING, SUCCEEDED, FAILED, ABORTING, ABORTED, ' +
        'TIMED-OUT), statusMessage, handled, requested, runTimeSecs, outputUrl, expiresAt; ' +
        'once it has ended, cost (USD charged), billed_units and price_rule.',
      `With waitSecs (at most ${MAX_WAIT_SECS}) the call first waits for the run to end, ` +
        `so poll with waitSecs 30–${MAX_WAIT_SECS} rather than often.`,
      'SUCCEEDED means the rows are ready for download_results; ' +
        'ABORTED, FAILED and TIMED-OUT runs keep their partial rows. Free.',
    ].join('\n'),
    inputSchema: inputSchemaOf(checkRunStatusInput),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    call: (backend, args, signal) => {
      const { runId, waitSecs } = parseArgs(checkRunStatusInput, args);
      return backend.runStatus(runId, waitSecs, signal);
    },
  },
  {
    name: 'download_results',
    title: 'Download results',
    description: [
      `Result rows of a finished run as JSON, at most ${MAX_PAGE_ROWS} rows or ${MAX_PAGE_BYTES / 1024} KB per call.`,
      'When nextOffset is a number, call again with offset = nextOffset for the next rows; ' +
        'null means every row has been returned.',
      'A run still going answers run_not_finished; ' +
        'results are kept 48 hours (then results_expired). Free: rows are billed by the run.',
    ].join('\n'),
    inputSchema: inputSchemaOf(downloadResultsInput),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    call: (backend, args, signal) => pageOfRows(backend, parseArgs(downloadResultsInput, args), signal),
  },
  {
    name: 'cancel_run',
    title: 'Cancel a run',
    description:
      'Cancels a run: a waiting one ends ABORTED at once; a running one becomes ABORTING, ' +
      'then ABORTED, keeping (and billing) the rows stored so far, which download_results returns. ' +
      'Tools that cannot be cancelled answer not_cancellable; a finished run answers run_finished.',
    inputSchema: inputSchemaOf(cancelRunInput),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    call: (backend, args) => backend.cancelRun(parseArgs(cancelRunInput, args).runId),
  },
];

/**
 * Every MCP tool: the registry's tools, the run tools, then the declared
 * endpoints that have one (database, account, enrichment).
 */
export const MCP_TOOLS: readonly McpTool[] = [
  ...TOOLS.filter((t) => !t.linkedOnly).map(registryTool),
  ...EXTRA_TOOLS,
  ...(ENDPOINTS as readonly EndpointDefinition[]).flatMap((e) => (e.mcp ? [endpointTool(e, e.mcp)] : [])),
];

/** How an agent uses the tools, sent at initialisation. */
export const MCP_INSTRUCTIONS = [
  'leadgate collects and enriches lead data. Scrapers and finders run asynchronously ' +
    'and are billed per result from the account wallet (each tool states its price):',
  '1. Call the tool: it answers a runId at once. 2. ' +
    `Call check_run_status with the runId and waitSecs (up to ${MAX_WAIT_SECS}) until status is SUCCEEDED.`,
  '3. Call download_results from offset 0, then from each nextOffset until it is ' +
    `null (at most ${MAX_PAGE_ROWS} rows or ${MAX_PAGE_BYTES / 1024} KB per call).`,
  'query_lead_database, enrich_leads and enrich_local_businesses answer at once. ' +
    'Errors come back as {"error": {"code", "message", "details"}}, the same as the REST API; ' +
    'an argument a tool does not declare is refused, naming the closest one it does.',
].join('\n');
