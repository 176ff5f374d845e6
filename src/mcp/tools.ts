import { datasetStartFields } from '../datasets/index.ts';
import { z } from 'zod';
import { NO_FIELDS, assertKnownFields } from '../shared/fields.ts';
import { loadConfig } from '../config.ts';
import { PLAN_PRICE_USD } from '../billing/plans.ts';
import type { EndpointDefinition } from '../endpoints/define.ts';
import { ENDPOINTS } from '../endpoints/index.ts';
import { TOOLS } from '../tools/index.ts';
import type { ToolDefinition } from '../tools/types.ts';
import { FIRST_PAGE_ROWS, MAX_PAGE_BYTES, MAX_PAGE_ROWS, MAX_WAIT_SECS } from './limits.ts';
import { RUN_TOOLS, columnList, finishedRunAnswer } from './run-tools.ts';
import type { McpTool } from './types.ts';
import { jsonSchemaOf, parseArgs, startAnswer, waitSecsArg, type JsonSchema } from './schemas.ts';
import { isEnded, mcpRunOf } from './views.ts';
import { mcpMessage, wordedSchema } from './errors.ts';
import { MAX_COST_DESCRIPTION, maxCostUsdSchema } from '../runs/quote.ts';

/** The arguments every start takes beside the tool's own. */
const startOptions = z
  .object({
    waitSecs: waitSecsArg(
      `Seconds to wait for the run to end, at most ${MAX_WAIT_SECS}: a run that ends in time is answered ` +
        `with its first ${FIRST_PAGE_ROWS} rows and a CSV link. 0 (default) answers at once.`,
    ),
    idempotencyKey: z
      .string()
      .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 visible ASCII characters')
      .optional()
      .describe('Send the same key when retrying: the first start is answered again instead of a second run.'),
    fields: columnList
      .optional()
      .describe('With waitSecs: only these columns in the rows answered (the CSV link has every column).'),
    maxCostUsd: maxCostUsdSchema.optional().describe(`${MAX_COST_DESCRIPTION} The quote tool tells the cost first.`),
  })
  .strict();
const START_OPTIONS = Object.keys(startOptions.shape);

/** Notes of a tool's declaration that its MCP description carries. */
const NOTES_LISTED = 2;

/** The tool's own arguments and the start's options, each checked by its owner. */
function splitStart(args: Record<string, unknown>) {
  const own: Record<string, unknown> = {};
  const options: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) (START_OPTIONS.includes(name) ? options : own)[name] = value;
  return { own, options: parseArgs(startOptions, options) };
}

/**
 * A schema without its fields' labels and examples (`title`, `examples`, declared for people's forms
 * and OpenAPI): the tool list an agent reads stays within its 32 KB budget (test/faces/mcp/agent), and
 * each field's description already says what it is, most with an example.
 */
function withoutFormHints(schema: JsonSchema): JsonSchema {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== 'examples' && key !== 'title')
        .map(([key, v]) => [key, walk(v)]),
    );
  };
  return walk(schema) as JsonSchema;
}

/** One MCP tool per tool of the registry (linked-only tools have no entry point of their own). */
function registryTool(tool: ToolDefinition): McpTool {
  const own = jsonSchemaOf(tool.input, 'input');
  const options = jsonSchemaOf(startOptions, 'input');
  // The dataset fields travel in the start's body, as over REST.
  const dataset = jsonSchemaOf(datasetStartFields, 'input');
  const inputSchema: JsonSchema = {
    ...own,
    properties: { ...own.properties, ...dataset.properties, ...options.properties },
  };
  const description = [
    `${tool.title}: ${tool.description}`,
    `Price: ${tool.price.text}.${tool.plan ? ` Needs the ${tool.plan} plan or higher.` : ''}`,
    // The first notes say how the arguments combine; the rest (and the bounds) are in the input schema
    // and the refusals, which keeps the list an agent reads short.
    ...(tool.notes ?? []).slice(0, NOTES_LISTED),
    `Starts a run; waitSecs (up to ${MAX_WAIT_SECS}) answers its rows if it ends in time, else follow it ` +
      `with check_run_status.${tool.cancellable ? ' cancel_run stops it, keeping the rows so far.' : ''}`,
  ].join('\n');
  return {
    name: tool.mcp.name,
    title: tool.title,
    description: mcpMessage(description),
    inputSchema: wordedSchema(inputSchema),
    outputSchema: jsonSchemaOf(startAnswer, 'output'),
    toolset: tool.mcp.toolset,
    ...(tool.plan ? { plan: tool.plan } : {}),
    // A start spends money and cannot be undone: destructive in the specification's sense.
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: tool.mcp.openWorld === true,
    },
    async call({ backend, signal, progress }, args) {
      const { own: body, options } = splitStart(args);
      const { waitSecs, idempotencyKey, maxCostUsd, fields } = options;
      const started = await backend.startRun(tool, body, { idempotencyKey, maxCostUsd });
      const runId = String(started.runId);
      if (waitSecs > 0) {
        const view = await backend.runStatus(runId, waitSecs, signal, progress);
        if (isEnded(mcpRunOf(view))) {
          const ended = await finishedRunAnswer(backend, view, tool.mcp.name, FIRST_PAGE_ROWS, signal, fields);
          return { structured: { ...started, ...ended.structured, status: view.status }, links: ended.links };
        }
      }
      const nextStep = `Call check_run_status with runId ${runId} and waitSecs up to ${MAX_WAIT_SECS} until it ends.`;
      return { structured: { ...started, nextStep } };
    },
  };
}

/** An endpoint's answer as an output schema: an object at the top, as the specification requires. */
function outputSchemaOf(endpoint: EndpointDefinition): JsonSchema {
  const schema = endpoint.response && jsonSchemaOf(endpoint.response, 'output');
  return schema?.type === 'object' ? schema : { type: 'object' };
}

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
    description: mcpMessage(
      [
        ...mcp.description,
        ...(price || limits ? [[price, limits ? `Limits: ${limits}.` : undefined].filter(Boolean).join(' ')] : []),
        ...(mcp.notes ?? []),
      ].join('\n'),
    ),
    inputSchema: wordedSchema(jsonSchemaOf(args ?? request ?? NO_FIELDS, 'input')),
    outputSchema: wordedSchema(outputSchemaOf(endpoint)),
    toolset: mcp.toolset,
    ...(endpoint.plan ? { plan: endpoint.plan } : {}),
    ...(endpoint.permission ? { permission: endpoint.permission } : {}),
    annotations: mcp.annotations,
    call: async ({ backend }, raw) => {
      // The unknown-field rule of every face, from the declaration; the service validates the rest.
      if (args) parseArgs(args, raw);
      else if (request) assertKnownFields(request, raw);
      return { structured: await backend.call(endpoint, raw) };
    },
  };
}

/**
 * Every MCP tool, in a fixed order: the registry's tools, the run tools, then the declared endpoints
 * that have one (database, account, enrichment).
 */
export const MCP_TOOLS: readonly McpTool[] = [
  ...TOOLS.filter((t) => !t.linkedOnly).map(registryTool),
  ...RUN_TOOLS,
  ...(ENDPOINTS as readonly EndpointDefinition[]).flatMap((e) => (e.mcp ? [endpointTool(e, e.mcp)] : [])),
].map((tool) => ({
  ...tool,
  inputSchema: leanSchema(withoutFormHints(tool.inputSchema)),
  outputSchema: leanSchema(tool.outputSchema),
}));

/**
 * A schema without the bounds every whole number gets from its JSON Schema conversion (JavaScript's
 * safe-integer range): they say nothing to an agent and cost the tool list bytes. Real bounds stay.
 */
function leanSchema<T>(schema: T): T {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(
          ([key, v]) =>
            !(key === 'minimum' && v === Number.MIN_SAFE_INTEGER) &&
            !(key === 'maximum' && v === Number.MAX_SAFE_INTEGER),
        )
        .map(([key, v]) => [key, walk(v)]),
    );
  };
  return walk(schema) as T;
}

/** How an agent uses the tools, sent at initialisation. */
export const MCP_INSTRUCTIONS = [
  'leadgate finds and enriches lead data. Scrapers and finders run asynchronously and are billed per ' +
    'result from the account wallet (each tool states its price; the quote tool prices a start for free).',
  `1. Call the tool with waitSecs (up to ${MAX_WAIT_SECS}) and the fields you need: a run that ends in ` +
    'time comes back with its first rows and a CSV link to hand the user. 2. Otherwise call ' +
    'check_run_status with the runId and waitSecs until the run ends. 3. Read rows with download_results ' +
    '(fields chooses columns; at most ' +
    `${MAX_PAGE_ROWS} rows or ${MAX_PAGE_BYTES / 1024} KB a call), or give the user the CSV link.`,
  'Retrying a start? Send the same idempotencyKey, and no second run starts. maxCostUsd caps what a start may ' +
    'hold. query_lead_database, enrich_leads and enrich_local_businesses answer at once. Errors name the tool ' +
    'to call next (nextTool); an argument a tool does not declare is refused, naming the closest one it does.',
].join('\n');
