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
import { AppError, coerceError } from '../shared/errors.ts';
import { errorBody } from '../http/errors.ts';
import { MCP_INSTRUCTIONS, MCP_TOOLS, type McpBackend } from './tools.ts';

const byName = new Map(MCP_TOOLS.map((tool) => [tool.name, tool]));
const listing = MCP_TOOLS.map(({ name, title, description, inputSchema, annotations }) => ({
  name,
  title,
  description,
  inputSchema,
  annotations: { title, ...annotations },
}));

/** A tools/call request as far as routing it goes; the SDK's tools/call wrapper validates the rest. */
const TOOLS_CALL = z.looseObject({ method: z.literal('tools/call') });

/** A REST error body as an MCP tool error: the same code, message and details. */
function toolError(err: unknown, logger: Pick<Logger, 'error'>): CallToolResult {
  if (!(coerceError(err) instanceof AppError)) logger.error({ err }, 'MCP tool call failed');
  const body = errorBody(err);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

/**
 * The MCP server over `backend`. It is built on the SDK's low-level Server rather than McpServer:
 * McpServer validates arguments with zod itself and answers its own messages, while every argument
 * here must reach the service (or the REST route) that owns it, so refusals carry the REST codes.
 */
export function createMcpServer(backend: McpBackend, logger: Pick<Logger, 'error'>): Server {
  const server = new Server(
    { name: 'leadgate', title: 'leadgate', version: packageJson.version },
    { capabilities: { tools: {} }, instructions: MCP_INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
  // Registered with a schema that only names the method: the SDK's own wrapper of tools/call then checks
  // the params and refuses malformed ones as Invalid params (-32602). Registered with the full schema,
  // the base class parses first and answers a client's malformed params as an Internal error (-32603).
  server.setRequestHandler(TOOLS_CALL, async (message, extra): Promise<CallToolResult> => {
    const request = message as unknown as CallToolRequest;
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}`);
    try {
      const result = await tool.call(backend, request.params.arguments ?? {}, extra.signal);
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    } catch (err) {
      // A cancelled call gets no answer at all.
      if (extra.signal.aborted) throw err;
      return toolError(err, logger);
    }
  });
  return server;
}
