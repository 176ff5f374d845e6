import { z } from 'zod';
import { AppError, coerceError } from '../shared/errors.ts';
import { rowOffset } from '../shared/params.ts';
import { getTool, TOOLS } from '../tools/index.ts';
import type { Row } from '../tools/types.ts';
import type { McpBackend } from './backend.ts';
import { MAX_PAGE_BYTES, MAX_PAGE_ROWS, MAX_WAIT_SECS } from './limits.ts';
import { jsonSchemaOf, mcpRun, parseArgs, quoteAnswer, rowsPage, waitSecsArg } from './schemas.ts';
import type { McpTool, ResourceLink, ToolAnswer } from './types.ts';
import { isEnded, mcpRunOf } from './views.ts';

/** The tools that follow runs the other tools start: status, rows, cancellation, and a start's quote. */

const runIdArg = z.string().trim().min(1, 'runId is required').max(100).describe('The runId a tool returned.');
/** Column names a caller picks (`fields`, `omit`). */
export const columnList = z.array(z.string().min(1).max(100)).min(1).max(100);

const checkRunStatusInput = z
  .object({
    runId: runIdArg,
    waitSecs: waitSecsArg(`Seconds to wait for the run to end, at most ${MAX_WAIT_SECS}; 0 (default) answers at once.`),
  })
  .strict();

const downloadResultsInput = z
  .object({
    runId: runIdArg,
    offset: rowOffset().default(0).describe('First row to return (0-based): 0, then nextOffset.'),
    limit: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(MAX_PAGE_ROWS, `must be at most ${MAX_PAGE_ROWS}`)
      .default(MAX_PAGE_ROWS)
      .describe(`Rows to return, at most ${MAX_PAGE_ROWS}; fewer when they would pass ${MAX_PAGE_BYTES / 1024} KB.`),
    fields: columnList.optional().describe('Only these columns (names as in the rows).'),
    omit: columnList.optional().describe('Every column but these.'),
  })
  .strict();

const cancelRunInput = z.object({ runId: runIdArg }).strict();

/** The columns of `row` the caller asked for. */
function project(row: Row, fields?: readonly string[], omit?: readonly string[]): Row {
  if (!fields && !omit) return row;
  const keep = (name: string) => (!fields || fields.includes(name)) && !omit?.includes(name);
  return Object.fromEntries(Object.entries(row).filter(([name]) => keep(name)));
}

type PageArgs = z.output<typeof downloadResultsInput>;

/** Rows from `offset` that fit in one answer, and where the next answer starts (null after the last row). */
async function pageOfRows(backend: McpBackend, args: PageArgs, total: number, signal: AbortSignal) {
  const { runId, offset, limit, fields, omit } = args;
  // One row more than asked tells whether any follow.
  const rows = await backend.runRows(runId, offset, limit + 1, signal);
  const page: Row[] = [];
  let bytes = 200; // the envelope around the rows
  for (const row of rows.slice(0, limit)) {
    const shown = project(row, fields, omit);
    const size = Buffer.byteLength(JSON.stringify(shown)) + 1;
    if (bytes + size > MAX_PAGE_BYTES) break;
    page.push(shown);
    bytes += size;
  }
  const more = page.length < rows.length;
  if (page.length === 0 && more) {
    // A single row over the byte limit: skip it rather than flood the caller or stall.
    return {
      runId,
      offset,
      count: 0,
      total,
      rows: [],
      nextOffset: offset + 1,
      note:
        `Row ${offset} alone is over ${MAX_PAGE_BYTES / 1024} KB: ask for fewer columns (fields), ` +
        'or use the CSV link of check_run_status.',
    };
  }
  return { runId, offset, count: page.length, total, rows: page, nextOffset: more ? offset + page.length : null };
}

/** The run's file as a link to hand the user (signed: it works without the key for a few minutes). */
async function fileLink(backend: McpBackend, runId: string, tool: string): Promise<ResourceLink[]> {
  let uri: string | null;
  try {
    uri = await backend.downloadLink(runId, 'csv');
  } catch (err) {
    // A run whose rows have expired has no file to link.
    if (coerceError(err) instanceof AppError && (err as AppError).code === 'results_expired') return [];
    throw err;
  }
  if (!uri) return [];
  return [
    {
      uri,
      name: `${tool}-${runId}.csv`,
      mimeType: 'text/csv',
      description: 'Every row of the run as CSV; the link works without a key for 5 minutes.',
    },
  ];
}

/**
 * The answer about an ended run: its state, its first `rows` rows when it has any, and its file as a
 * resource link (a run whose rows expired has neither).
 */
export async function finishedRunAnswer(
  backend: McpBackend,
  view: Record<string, unknown>,
  tool: string,
  rows: number,
  signal: AbortSignal,
  fields?: readonly string[],
): Promise<ToolAnswer> {
  const run = mcpRunOf(view);
  const total = run.rows ?? 0;
  try {
    const links = await fileLink(backend, run.runId, tool);
    const results =
      rows > 0 && total > 0
        ? await pageOfRows(
            backend,
            { runId: run.runId, offset: 0, limit: rows, fields: fields && [...fields] },
            total,
            signal,
          )
        : undefined;
    return { structured: { run, ...(results ? { results } : {}), nextStep: run.nextStep }, links };
  } catch (err) {
    if (coerceError(err) instanceof AppError && (err as AppError).code === 'results_expired')
      return { structured: { run, nextStep: 'Its rows have expired; start the tool again for fresh ones.' } };
    throw err;
  }
}

const toolNameOf = (view: Record<string, unknown>) => {
  const tool = typeof view.tool === 'string' ? TOOLS.find((t) => t.name === view.tool) : undefined;
  return tool?.mcp.name ?? 'run';
};

const quoteInput = z
  .object({
    tool: z
      .enum(TOOLS.filter((t) => !t.linkedOnly).map((t) => t.mcp.name) as [string, ...string[]])
      .describe('The tool to quote.'),
    arguments: z.record(z.string(), z.unknown()).describe('Its arguments, as the tool takes them.'),
  })
  .strict();

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const RUN_TOOLS: McpTool[] = [
  {
    name: 'check_run_status',
    title: 'Check run status',
    description:
      `Where a run is. With waitSecs (up to ${MAX_WAIT_SECS}) it first waits for the run to end, so poll with ` +
      `waitSecs 30–${MAX_WAIT_SECS} rather than often. An ended run says whether it completed ` +
      '(complete, stoppedReason), what it cost, and comes with a CSV link. Free.',
    inputSchema: jsonSchemaOf(checkRunStatusInput, 'input'),
    outputSchema: jsonSchemaOf(mcpRun, 'output'),
    toolset: 'runs',
    annotations: READ_ONLY,
    async call({ backend, signal, progress }, args) {
      const { runId, waitSecs } = parseArgs(checkRunStatusInput, args);
      const view = await backend.runStatus(runId, waitSecs, signal, progress);
      const run = mcpRunOf(view);
      return { structured: run, links: isEnded(run) ? await fileLink(backend, runId, toolNameOf(view)) : [] };
    },
  },
  {
    name: 'download_results',
    title: 'Download results',
    description:
      `Rows of an ended run as JSON, at most ${MAX_PAGE_ROWS} rows or ${MAX_PAGE_BYTES / 1024} KB a call; ` +
      'fields or omit choose the columns, total says how many rows there are. Call again from nextOffset ' +
      'until it is null. Rows are kept 48 hours. Free: the run billed them.',
    inputSchema: jsonSchemaOf(downloadResultsInput, 'input'),
    outputSchema: jsonSchemaOf(rowsPage, 'output'),
    toolset: 'runs',
    annotations: READ_ONLY,
    async call({ backend, signal }, args) {
      const parsed = parseArgs(downloadResultsInput, args);
      const run = mcpRunOf(await backend.runStatus(parsed.runId, 0, signal));
      return { structured: await pageOfRows(backend, parsed, run.rows ?? 0, signal) };
    },
  },
  {
    name: 'cancel_run',
    title: 'Cancel a run',
    description:
      'Stops a run: a waiting one ends ABORTED at once; a running one ends ABORTED soon after, keeping (and ' +
      'billing) the rows stored so far. A run that has already ended is answered as it is.',
    inputSchema: jsonSchemaOf(cancelRunInput, 'input'),
    outputSchema: jsonSchemaOf(mcpRun, 'output'),
    toolset: 'runs',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async call({ backend }, args) {
      const { runId } = parseArgs(cancelRunInput, args);
      try {
        return { structured: mcpRunOf(await backend.cancelRun(runId)) };
      } catch (err) {
        // Cancelling is idempotent: a run that has ended is answered as it ended.
        if (coerceError(err) instanceof AppError && (err as AppError).code === 'run_finished')
          return { structured: mcpRunOf(await backend.runStatus(runId, 0)) };
        throw err;
      }
    },
  },
  {
    name: 'quote',
    title: 'Quote a start',
    description:
      'What starting a tool with these arguments would hold from the wallet (the most it can cost), and ' +
      'whether the wallet covers it. Checks the arguments like the start does; starts nothing. Free.',
    inputSchema: jsonSchemaOf(quoteInput, 'input'),
    outputSchema: jsonSchemaOf(quoteAnswer, 'output'),
    toolset: 'runs',
    annotations: READ_ONLY,
    async call({ backend }, args) {
      const { tool, arguments: body } = parseArgs(quoteInput, args);
      const definition = getTool(TOOLS.find((t) => t.mcp.name === tool)?.name ?? tool);
      return { structured: { tool, ...(await backend.quote(definition, body)) } };
    },
  },
];
