import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import * as streamableHttp from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core.ts';
import { admit, clientAddress, originAllowed, rateLimitMore } from '../http/pipeline.ts';
import { countRefusal } from '../http/metrics.ts';
import type { Principal } from '../accounts/accounts.ts';
import type { RateLimitedError } from '../accounts/rate-limit.ts';
import { AppError } from '../shared/errors.ts';
import { inProcessBackend } from './in-process.ts';
import { createMcpServer } from './server.ts';
import { accessNeeded, accessOf, type Selection, selectionOf, visibleTools } from './selection.ts';
import { MCP_TOOLS } from './tools.ts';
import { Readable } from 'node:stream';
import { createHash, randomBytes } from 'node:crypto';
import { insufficientScopeChallenge, mcpChallenge } from './protected-resource.ts';
import { type Access, mcpResource } from '../accounts/oauth/resource.ts';
import { TOOLSETS } from '../tools/toolsets.ts';
import type { McpTool } from './types.ts';

export const MCP_PATH = '/mcp';

/**
 * The JSON-RPC error code of a message refused by the key's rate limit (in the range JSON-RPC leaves
 * to implementations); its `data` is the REST error body with `retryAfter` in seconds, as GraphQL's
 * `RATE_LIMITED` refusals carry it.
 */
export const RATE_LIMITED_RPC_CODE = -32004;

/**
 * The JSON-RPC error code of a call its OAuth connection does not cover, answered with the step-up
 * challenge (`insufficient_scope`); its `data.scope` is the scopes the call needs.
 */
export const INSUFFICIENT_SCOPE_RPC_CODE = -32003;

/** Request headers the transport reads (content negotiation, protocol version, session). */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

type RpcMessage = { jsonrpc?: unknown; id?: unknown; method?: unknown };

/** A message that expects an answer (a request: it has a method and an id); notifications get none. */
const expectsAnswer = (message: unknown): message is RpcMessage & { id: string | number } =>
  typeof message === 'object' &&
  message !== null &&
  typeof (message as RpcMessage).method === 'string' &&
  ['string', 'number'].includes(typeof (message as RpcMessage).id);

/** The JSON-RPC answer of a message over the key's budget: not run, refused like the other faces refuse. */
function rateLimitedAnswer(id: string | number, refusal: RateLimitedError) {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: RATE_LIMITED_RPC_CODE,
      message: refusal.message,
      data: { ...refusal.toBody(), retryAfter: refusal.state.resetSecs },
    },
  };
}

/** The protocol revision that removed JSON-RPC batches. */
const BATCHES_REMOVED_IN = '2025-06-18';

/**
 * The revision a request speaks: its MCP-Protocol-Version header, an initialize's own, or (neither
 * sent) 2025-03-26, as the transport specification says to assume.
 */
function protocolVersionOf(header: string | string[] | undefined, body: unknown): string {
  if (typeof header === 'string' && header) return header;
  const initialize = isInitialize(body) ? (body as { params?: { protocolVersion?: unknown } }).params : undefined;
  return typeof initialize?.protocolVersion === 'string' ? initialize.protocolVersion : '2025-03-26';
}

const isMethod = (body: unknown, method: string) =>
  typeof body === 'object' && body !== null && !Array.isArray(body) && (body as RpcMessage).method === method;
const isInitialize = (body: unknown) => isMethod(body, 'initialize');
const isCancellation = (body: unknown): body is { params: { requestId: string | number } } =>
  isMethod(body, 'notifications/cancelled') &&
  ['string', 'number'].includes(typeof (body as { params?: { requestId?: unknown } }).params?.requestId);
const wantsProgress = (body: unknown) =>
  isMethod(body, 'tools/call') &&
  (body as { params?: { _meta?: { progressToken?: unknown } } }).params?._meta?.progressToken !== undefined;

/** A tools/call that may wait for a run (a start or a status call with waitSecs). */
const waits = (body: unknown) => {
  const args = isMethod(body, 'tools/call') ? (body as { params?: { arguments?: { waitSecs?: unknown } } }) : undefined;
  const wait = args?.params?.arguments?.waitSecs;
  return typeof wait === 'number' && wait > 0;
};

/** The channel a session's cancellations reach other gateway processes on. */
const cancelChannel = (scope: string) =>
  `leadgate_mcp_${createHash('sha256').update(scope).digest('hex').slice(0, 40)}`;

/** A client's session id as sent (visible ASCII, bounded), or none. */
const sessionIdOf = (value: string | string[] | undefined) =>
  typeof value === 'string' && /^[\x21-\x7e]{1,128}$/.test(value) ? value : '';

/**
 * Calls in flight in this process, by key, session and JSON-RPC id: what a `notifications/cancelled`
 * (its own POST, from the same client with the same key) aborts.
 */
const inFlight = new Map<string, AbortController>();

/** The tool a single tools/call names, if it is one of the server's. */
function toolCalled(body: unknown): McpTool | undefined {
  if (!isMethod(body, 'tools/call')) return undefined;
  const name = (body as { params?: { name?: unknown } }).params?.name;
  return MCP_TOOLS.find((tool) => tool.name === name);
}

/** The selection of a request; the default one when it names a tool or toolset there is none of. */
function requestSelection(request: FastifyRequest): { selection: Selection; refusal?: unknown } {
  const query = request.query as Record<string, string | undefined>;
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(',') : value;
  };
  try {
    return { selection: selectionOf(query, header, MCP_TOOLS) };
  } catch (refusal) {
    return { selection: selectionOf({}, () => undefined, MCP_TOOLS), refusal };
  }
}

/**
 * The step-up of a call outside its connection's grant (the MCP specification's Authorization section,
 * "scope challenge"): 403 with an `insufficient_scope` challenge naming every scope the call needs, and
 * a JSON-RPC error an agent can read. A client that asks the user again for those scopes gets the
 * connection widened (the consent page offers them checked) and retries the call.
 */
function stepUp(reply: FastifyReply, config: Core['config'], id: unknown, tool: McpTool, needs: Access, held: Access) {
  // What the connection lacks, in words: the tool's toolset, writing, or both.
  const lacks = [
    ...(held.toolsets.includes(tool.toolset)
      ? []
      : [
          `the ${tool.toolset.charAt(0).toUpperCase()}${tool.toolset.slice(1)} toolset ` +
            `(${TOOLSETS[tool.toolset].replace(/\.$/, '').toLowerCase()})`,
        ]),
    ...(held.readOnly && !needs.readOnly ? ['tools that change something (the connection is read-only)'] : []),
  ];
  const message =
    `${tool.name} is outside what the user allowed this app: it needs ${lacks.join(', and ')}. ` +
    'Ask the user to allow it: the app can send them to the consent page again, which offers it checked.';
  return reply
    .status(403)
    .header('WWW-Authenticate', insufficientScopeChallenge(config, needs, message))
    .type('application/json')
    .send({
      jsonrpc: '2.0',
      id: typeof id === 'string' || typeof id === 'number' ? id : null,
      error: { code: INSUFFICIENT_SCOPE_RPC_CODE, message, data: { scope: needs } },
    });
}

/**
 * The answer to a browser page of another origin, before its key is looked at: 403 with the JSON-RPC
 * error the MCP SDK's transports answer an invalid Origin with (code -32000, id null).
 */
function foreignOrigin(reply: FastifyReply, origin: string) {
  const message =
    `Invalid Origin header: ${origin}. Browser pages may call this MCP server from ` +
    'the gateway’s own origin (PUBLIC_URL) or one its operator allows (CORS_ORIGINS).';
  return reply
    .status(403)
    .type('application/json')
    .send({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

/**
 * The remote MCP server: Streamable HTTP at /mcp, with the REST API key and rate limit, or an OAuth
 * access token issued for it.
 *
 * Stateless: every POST gets its own server and transport, bound to the caller's account and the tools
 * the request selects (selection.ts). No session state lives in a process, so any gateway process can
 * serve any request; the state that matters (runs, rows) is in Postgres. A call that asked for progress
 * is answered as an event stream (its notifications, then its answer), any other as plain JSON. The
 * `Mcp-Session-Id` given at initialize is only a name: a `notifications/cancelled` (its own POST, with
 * the same key and session id) aborts the call of that id, here or, through a NOTIFY on the session's
 * channel, in the gateway process that holds it. GET and DELETE
 * (a stream of server requests, ending a session) have nothing to serve: 405.
 *
 * `Origin` is validated on every request first, as the MCP transport specification asks against DNS
 * rebinding: no Origin (not a browser), PUBLIC_URL's origin or one of CORS_ORIGINS; any other is 403.
 * The Host the request came to vouches for nothing here (unlike for graphql-ws sockets): a page whose
 * name was rebound to the gateway's address sends that name as Host and as Origin alike.
 *
 * Every request is admitted before its body is read (a request without a valid key costs no parsing,
 * and its failure counts against the client's address). A JSON-RPC batch (revisions before 2025-06-18
 * only) costs one request per message: its admission pays for the first, each further message takes one
 * more from the key's budget, and the messages past it are answered with a `rate_limited` JSON-RPC error.
 */
export async function mcpRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const admitted = new WeakMap<FastifyRequest, Principal>();

  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    const { origin } = request.headers;
    if (origin && !originAllowed(core.config, origin, undefined)) return foreignOrigin(reply, origin);
    try {
      admitted.set(
        request,
        await admit(
          core,
          request.headers.authorization,
          (headers) => reply.headers(headers),
          clientAddress(core.config, request.raw),
          undefined,
          // OAuth access tokens issued for this server are taken here too (docs/api.md, hosted agents).
          { resource: mcpResource(core.config), userAgent: request.headers['user-agent'] },
        ),
      );
    } catch (err) {
      // The challenge points OAuth clients to the protected-resource metadata (protected-resource.ts),
      // asking for the scopes of the tools the request selects.
      if (err instanceof AppError && err.status === 401) {
        const needs = accessOf(requestSelection(request).selection, MCP_TOOLS);
        reply.header('WWW-Authenticate', mcpChallenge(core.config, Boolean(request.headers.authorization), needs));
      }
      throw err;
    }
  };

  app.post(MCP_PATH, { onRequest }, async (request, reply) => {
    const principal = admitted.get(request);
    if (!principal) throw new Error('an MCP request reached its handler without being admitted');
    const body = request.body;
    const version = protocolVersionOf(request.headers['mcp-protocol-version'], body);
    if (Array.isArray(body) && version >= BATCHES_REMOVED_IN)
      return reply
        .status(400)
        .type('application/json')
        .send({
          jsonrpc: '2.0',
          error: {
            code: -32600,
            message: `Batches were removed from MCP in ${BATCHES_REMOVED_IN}: send one JSON-RPC message per request.`,
          },
          id: null,
        });
    const scope = `${principal.keyId}:${sessionIdOf(request.headers['mcp-session-id'])}`;
    if (isCancellation(body)) {
      const local = inFlight.get(`${scope}:${String(body.params.requestId)}`);
      // Another process may hold the call: it listens on the session's channel while the call waits.
      if (local) local.abort();
      else await core.sql`select pg_notify(${cancelChannel(scope)}, ${String(body.params.requestId)})`;
      return reply.status(202).send();
    }
    let run = body;
    let refused: ReturnType<typeof rateLimitedAnswer>[] = [];
    if (Array.isArray(body) && body.length > 1 && body.length <= MAX_BATCH_SIZE) {
      const { admitted: further, refusal } = await rateLimitMore(core, principal, body.length - 1, (headers) =>
        reply.headers(headers),
      );
      if (refusal) {
        run = body.slice(0, 1 + further);
        refused = body
          .slice(1 + further)
          .filter(expectsAnswer)
          .map((message) => rateLimitedAnswer(message.id, refusal));
        countRefusal('mcp', 429, 'rate_limited', body.length - 1 - further);
      }
    }

    const { selection, refusal: selectionRefused } = requestSelection(request);
    if (selectionRefused) throw selectionRefused;
    const tools = visibleTools(MCP_TOOLS, selection, principal);
    const called = toolCalled(body);
    const needs = called && accessNeeded(MCP_TOOLS, called, selection, principal);
    if (called && needs && principal.oauth)
      return stepUp(reply, core.config, (body as RpcMessage).id, called, needs, principal.oauth);
    // The call of this request, cancellable by the client: in this process directly, from another one
    // through the session's channel, heard only while a call that may wait is in flight.
    const call = isMethod(body, 'tools/call') ? (body as { id?: unknown }) : undefined;
    const controller = new AbortController();
    const callKey = call ? `${scope}:${String(call.id)}` : undefined;
    if (callKey) inFlight.set(callKey, controller);
    const unhear = waits(body)
      ? await core.events
          .hear([cancelChannel(scope)], (_, payload) => {
            if (payload === String(call?.id)) controller.abort();
          })
          .catch(() => undefined)
      : undefined;
    const cancellation = (requestId: string | number) =>
      call && String(requestId) === String(call.id) ? controller.signal : undefined;
    const server = createMcpServer({
      backend: inProcessBackend(core, principal),
      tools,
      logger: core.logger,
      cancellation,
    });
    // A call that asked for progress is answered as a stream of events, its notifications first.
    const streamed = wantsProgress(body) && String(request.headers.accept ?? '').includes('text/event-stream');
    const transport = new streamableHttp.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !streamed,
    });
    reply.raw.once('close', () => {
      if (callKey) inFlight.delete(callKey);
      unhear?.();
    });
    // A client that goes away ends the server, which aborts the calls in flight (a status call waiting).
    const gone = new Promise<undefined>((resolve) => reply.raw.once('close', () => resolve(undefined)));
    reply.raw.once('close', () => void server.close().catch(() => {}));
    const headers = new Headers();
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name];
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    let response: Response | undefined;
    try {
      await server.connect(transport);
      response = await Promise.race([
        transport.handleRequest(new Request(new URL(request.url, core.config.publicUrl), { method: 'POST', headers }), {
          parsedBody: run,
        }),
        gone,
      ]);
    } catch (err) {
      core.logger.error({ err, reqId: request.id }, 'MCP request failed');
      return reply
        .status(500)
        .type('application/json')
        .send({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
    }
    if (!response) return reply.hijack();

    reply.status(response.status);
    response.headers.forEach((value, name) => void reply.header(name, value));
    // The client keeps the id and sends it back: what a cancellation names its calls by.
    if (isInitialize(body)) reply.header('mcp-session-id', `mcs_${randomBytes(16).toString('base64url')}`);
    if (streamed && response.body && response.headers.get('content-type')?.includes('text/event-stream'))
      return reply.send(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream));
    const text = await response.text();
    if (refused.length === 0) return reply.send(text === '' ? undefined : text);
    // The messages that ran answered (one answer alone is not in an array;
    // notifications alone answer 202 and nothing); the refused ones follow.
    const answered =
      response.status === 200 && text !== '' ? [JSON.parse(text)].flat() : response.status === 202 ? [] : undefined;
    if (!answered) return reply.send(text === '' ? undefined : text);
    return reply
      .status(200)
      .type('application/json')
      .send(JSON.stringify([...answered, ...refused]));
  });

  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Allow', 'POST');
    throw new AppError(
      405,
      'method_not_allowed',
      'This MCP server is stateless: send every JSON-RPC message with POST.',
    );
  };
  app.get(MCP_PATH, { onRequest }, notAllowed);
  app.delete(MCP_PATH, { onRequest }, notAllowed);
}
