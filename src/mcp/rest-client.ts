import { AppError } from '../shared/errors.ts';
import type { Row } from '../tools/types.ts';
import type { McpBackend } from './backend.ts';

/** A REST error answer as the AppError it came from: same status, code, message, details and extra fields. */
async function errorOf(response: Response): Promise<AppError> {
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    const { error: _error, ...extra } = body as Record<string, unknown>;
    return new AppError(
      response.status,
      error.code,
      error.message,
      error.details,
      Object.keys(extra).length ? extra : undefined,
    );
  }
  return new AppError(
    502,
    'bad_gateway',
    `The leadgate server answered ${response.status} ${response.statusText} without an error body.`,
  );
}

/** Lines of a streamed body, as they arrive. */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffered = '';
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      buffered += decoder.decode(chunk.value, { stream: true });
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim()) yield line;
      }
    }
  } finally {
    // Stopping early (enough rows) hangs up on the rest of the file.
    await reader.cancel().catch(() => {});
  }
  buffered += decoder.decode();
  if (buffered.trim()) yield buffered;
}

/**
 * A leadgate server's REST API with an API key (the stdio MCP server): each method is one REST
 * route, and a REST error answer is thrown as the AppError it carries.
 */
export function restBackend(baseUrl: string, apiKey: string): McpBackend {
  const base = baseUrl.replace(/\/+$/, '');

  async function send(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    signal?: AbortSignal,
    extraHeaders: Record<string, string> = {},
  ): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...extraHeaders,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new AppError(
        502,
        'server_unreachable',
        `Cannot reach the leadgate server at ${base}: ` +
          `${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`,
      );
    }
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  const json = async (method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal) =>
    (await (await send(method, path, body, signal)).json()) as Record<string, unknown>;
  const run = (runId: string) => encodeURIComponent(runId);

  /** What the run view of REST leaves out: the rows stored and a signed link, from the GraphQL API. */
  async function graphqlRun(runId: string, format: 'CSV' | 'NDJSON' = 'CSV') {
    const response = await send('POST', '/graphql', {
      query: `query McpRun($id: ID!) { run(id: $id) { itemCount tool downloadUrl(format: ${format}) } }`,
      variables: { id: runId },
    });
    const { data } = (await response.json()) as {
      data?: { run: { itemCount: number; tool: string; downloadUrl: string | null } | null };
    };
    return data?.run ?? undefined;
  }

  return {
    async startRun(tool, args, { idempotencyKey, maxCostUsd }) {
      const headers: Record<string, string> = idempotencyKey ? { 'idempotency-key': idempotencyKey } : {};
      const query = maxCostUsd === undefined ? '' : `?maxCostUsd=${maxCostUsd}`;
      return (await (await send('POST', `${tool.rest.path}${query}`, args, undefined, headers)).json()) as Record<
        string,
        unknown
      >;
    },
    // The start route's dry run answers the quote.
    quote: (tool, args) => json('POST', `${tool.rest.path}?dryRun=true`, args),
    async runStatus(runId, waitSecs, signal) {
      const view = await json(
        'GET',
        `/api/v1/scrape/status/${run(runId)}${waitSecs > 0 ? `?waitForFinish=${waitSecs}` : ''}`,
        undefined,
        signal,
      );
      const more = await graphqlRun(runId).catch(() => undefined);
      // GraphQL spells the tool as its enum (MAPS, LEAD_SCRAPER): the registry's name in capitals.
      return more ? { ...view, itemCount: more.itemCount, tool: more.tool.toLowerCase().replaceAll('_', '-') } : view;
    },
    downloadLink: async (runId, format) =>
      (await graphqlRun(runId, format === 'csv' ? 'CSV' : 'NDJSON'))?.downloadUrl ?? null,
    // The download route streams NDJSON: read up to the rows wanted, then hang up.
    async runRows(runId, offset, limit, signal) {
      const controller = new AbortController();
      const abort = () => controller.abort();
      signal?.addEventListener('abort', abort, { once: true });
      try {
        const response = await send(
          'GET',
          `/api/downloads/${run(runId)}?format=ndjson&offset=${offset}&limit=${limit}`,
          undefined,
          controller.signal,
        );
        const rows: Row[] = [];
        if (response.body) for await (const line of lines(response.body)) rows.push(JSON.parse(line) as Row);
        return rows;
      } finally {
        controller.abort();
        signal?.removeEventListener('abort', abort);
      }
    },
    cancelRun: (runId) => json('POST', `/api/v1/scrape/cancel/${run(runId)}`),
    // A declared endpoint's REST route: its POST with the arguments as the body, or its GET.
    call: (endpoint, args) =>
      endpoint.rest.methods.includes('post') ? json('POST', endpoint.rest.path, args) : json('GET', endpoint.rest.path),
  };
}
