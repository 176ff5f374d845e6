import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import packageJson from '../../package.json' with { type: 'json' };
import type { Logger } from '../logger.ts';
import type { McpBackend } from './backend.ts';
import { toolError } from './errors.ts';
import { MCP_INSTRUCTIONS } from './tools.ts';
import type { McpTool, ToolAnswer } from './types.ts';

/** A tools/call request as far as routing it goes; the SDK's tools/call wrapper validates the rest. */
const TOOLS_CALL = z.looseObject({ method: z.literal('tools/call') });

/** How often, at most, a waiting call tells the client how the run goes. */
const PROGRESS_EVERY_MS = 1000;

export interface McpServerOptions {
  backend: McpBackend;
  /** The tools this caller sees and may call (toolsets, read-only, plan, role, grant). */
  tools: readonly McpTool[];
  logger: Pick<Logger, 'error'>;
  /** Aborts a call the client cancelled (set by the transport, with the call's JSON-RPC id). */
  cancellation?: (requestId: string | number) => AbortSignal | undefined;
}

/** The answer of a tool: its data (checked against its output schema by clients), as text too, and its links. */
function resultOf(answer: ToolAnswer): CallToolResult {
  return {
    content: [
      { type: 'text', text: JSON.stringify(answer.structured) },
      ...(answer.links ?? []).map((link) => ({
        type: 'resource_link' as const,
        ...link,
        annotations: { audience: ['user' as const, 'assistant' as const] },
      })),
    ],
    structuredContent: answer.structured,
  };
}

/**
 * The MCP server for one caller. It is built on the SDK's low-level Server rather than McpServer:
 * McpServer validates arguments with zod itself and answers its own messages, while every argument
 * here must reach the service that owns it, so refusals carry the service's codes.
 */
export function createMcpServer({ backend, tools, logger, cancellation }: McpServerOptions): Server {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listing = tools.map(({ name, title, description, inputSchema, outputSchema, annotations }) => ({
    name,
    title,
    description,
    inputSchema,
    outputSchema,
    annotations,
  }));
  const server = new Server(
    { name: 'leadgate', title: 'leadgate', version: packageJson.version },
    { capabilities: { tools: {} }, instructions: MCP_INSTRUCTIONS },
  );
  // The list is small enough to send whole (toolsets keep it so); a cursor has nothing to continue.
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    if (request.params?.cursor !== undefined)
      throw new McpError(ErrorCode.InvalidParams, 'The tool list has one page: call tools/list without a cursor.');
    return { tools: listing };
  });
  // Registered with a schema that only names the method: the SDK's own wrapper of tools/call then checks
  // the params and refuses malformed ones as Invalid params (-32602). Registered with the full schema,
  // the base class parses first and answers a client's malformed params as an Internal error (-32603).
  server.setRequestHandler(TOOLS_CALL, async (message, extra): Promise<CallToolResult> => {
    const request = message as unknown as CallToolRequest;
    const tool = byName.get(request.params.name);
    if (!tool)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool ${request.params.name}: tools/list names the tools this connection offers.`,
      );
    const cancelled = cancellation?.(extra.requestId);
    const signal = cancelled ? AbortSignal.any([extra.signal, cancelled]) : extra.signal;
    const token = request.params._meta?.progressToken;
    let answered = false;
    let sent = 0;
    let last = 0;
    let lastMessage = '';
    const progress = (view: Record<string, unknown>) => {
      // None after the answer, as the specification asks.
      if (token === undefined || answered || signal.aborted) return;
      const message = `${String(view.status)}: ${String(view.statusMessage ?? '')}`;
      const now = Date.now();
      if (message === lastMessage || now - last < PROGRESS_EVERY_MS) return;
      last = now;
      lastMessage = message;
      const handled = typeof view.handled === 'number' ? view.handled : 0;
      // Progress must grow with each notification, even when the run's count does not.
      sent = Math.max(sent + 0.001, handled);
      const total = typeof view.requested === 'number' && view.requested >= sent ? view.requested : undefined;
      void extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: sent, ...(total ? { total } : {}), message },
        })
        .catch(() => {});
    };
    try {
      return resultOf(await tool.call({ backend, signal, progress }, request.params.arguments ?? {}));
    } catch (err) {
      // A cancelled call gets no answer the client reads; end it with the error.
      if (signal.aborted) throw new McpError(ErrorCode.RequestTimeout, 'The call was cancelled.');
      return toolError(err, logger);
    } finally {
      answered = true;
    }
  });
  return server;
}
