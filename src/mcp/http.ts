import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core.ts';
import { admit } from '../http/pipeline.ts';
import type { Principal } from '../accounts/accounts.ts';
import { AppError } from '../shared/errors.ts';
import { inProcessBackend } from './in-process.ts';
import { createMcpServer } from './server.ts';

export const MCP_PATH = '/mcp';

/**
 * The remote MCP server: Streamable HTTP at /mcp, with the REST API key and rate limit.
 *
 * Stateless: every POST gets its own server and transport, bound to the caller's account, and the
 * answer is plain JSON. No session lives in a process, so any gateway process can serve any request
 * (no session affinity behind a load balancer); the state that matters (runs, rows) is in Postgres,
 * and long runs are followed with check_run_status rather than server-sent notifications. GET and
 * DELETE (an SSE stream, ending a session) have nothing to serve: 405.
 */
export async function mcpRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<Principal> => {
    try {
      return await admit(core, request.headers.authorization, (headers) => reply.headers(headers));
    } catch (err) {
      if (err instanceof AppError && err.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="leadgate"');
      throw err;
    }
  };

  app.post(MCP_PATH, async (request, reply) => {
    const principal = await authenticate(request, reply);
    const server = createMcpServer(inProcessBackend(core, principal), core.logger);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the answer itself; the headers set so far (rate limit) go with it.
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.raw.once('close', () => void server.close().catch(() => {}));
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      core.logger.error({ err, reqId: request.id }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      }
    }
  });

  const notAllowed = async (request: FastifyRequest, reply: FastifyReply) => {
    await authenticate(request, reply);
    reply.header('Allow', 'POST');
    throw new AppError(405, 'method_not_allowed', 'This MCP server is stateless: send every JSON-RPC message with POST.');
  };
  app.get(MCP_PATH, notAllowed);
  app.delete(MCP_PATH, notAllowed);
}
