import type { AddressInfo } from 'node:net';
import cors from '@fastify/cors';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { WebSocketServer } from 'ws';
import { startWorker, type WorkerHandle } from '../workers/index.ts';
import type { Config } from './config.ts';
import type { Core } from './core.ts';
import { createCore } from './create-core.ts';
import { createGraphQL } from '../schema/server/create-graphql.ts';
import { graphQLRefusal } from '../schema/server/errors.ts';
import { GRAPHIQL_ASSETS, GRAPHIQL_CSP, graphiqlRoutes, isGraphiQLRequest } from '../schema/server/graphiql.ts';
import { attachGraphQLWebSocket } from '../schema/server/graphql-ws.ts';
import { RequestLogger, type Logger } from './logger.ts';
import { restRoutes } from './rest/index.ts';
import { operatorRoutes } from './rest/operator.ts';
import { stripeHookRoute } from './rest/stripe-hook.ts';
import { openApiRoute } from './rest/openapi.ts';
import { mcpRoutes } from './mcp/http.ts';
import { CONSOLE_ASSETS, CONSOLE_CSP, consoleRoutes } from './console-routes/files.ts';
import { admit, clientAddress, originAllowed, sessionCredentials } from './http/pipeline.ts';
import { authRoutes } from './console-routes/identity.ts';
import { oauthRoutes } from './console-routes/oauth.ts';
import { connectionRoutes } from './console-routes/connections.ts';
import { optOutRoutes } from './console-routes/opt-out.ts';
import { protectedResourceRoutes } from './mcp/protected-resource.ts';
import { AppError, coerceError, DatabaseUnavailableError } from './shared/errors.ts';
import type { Principal } from './accounts/accounts.ts';
import { clientError, errorHeaders, frameworkError, installErrorHandling } from './http/errors.ts';
import { installHeaders, requestId } from './http/headers.ts';
import { countRefusal, installMetrics } from './http/metrics.ts';
import { installReadiness } from './http/readiness.ts';

/** The largest request body, and the largest graphql-ws message. */
export const BODY_LIMIT = 1024 * 1024;

/** Response headers a cross-origin browser app may read. */
export const CORS_EXPOSED_HEADERS = [
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Idempotent-Replayed',
  'Content-Disposition',
  'WWW-Authenticate',
  'X-Request-Id',
];

/**
 * A refusal of the request pipeline in GraphQL's shape (401 with WWW-Authenticate,
 * 429 with Retry-After), in the media type asked for.
 */
function sendGraphQLRefusal(request: FastifyRequest, reply: FastifyReply, err: AppError) {
  const { message, extensions } = graphQLRefusal(err);
  countRefusal('graphql', err.status, err.code);
  if (err.status === 401) reply.header('WWW-Authenticate', 'Bearer');
  if (err instanceof DatabaseUnavailableError) reply.headers(errorHeaders(err));
  const accept = String(request.headers.accept ?? '');
  const type =
    accept.includes('application/graphql-response+json') && !accept.includes('application/json')
      ? 'application/graphql-response+json'
      : 'application/json';
  return reply
    .status(err.status)
    .type(`${type}; charset=utf-8`)
    .send(JSON.stringify({ errors: [{ message, extensions }] }));
}

export interface App {
  core: Core;
  http: FastifyInstance;
  /** Listens on `port` (0 picks a free one); returns the base URL. */
  start(port?: number, host?: string): Promise<string>;
  stop(): Promise<void>;
}

export interface AppOptions {
  config: Config;
  databaseUrl: string;
  logger: Logger;
  /** Run a graphile-worker in this process (default: config.inlineWorker). */
  worker?: boolean;
  workerPollInterval?: number;
}

/** Builds the gateway: REST, GraphQL over HTTP and graphql-ws on one server, plus an optional inline worker. */
export async function buildApp(options: AppOptions): Promise<App> {
  const { config, logger } = options;
  const core = await createCore(config, options.databaseUrl, logger);
  const http = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Each request logs with its id (reqId), the X-Request-Id it answers (src/http/headers.ts); the
    // child logger is made only when the request logs (a child per request is a measurable cost on status polling).
    genReqId: requestId,
    requestIdHeader: false,
    childLoggerFactory: (parent, bindings) =>
      new RequestLogger(parent as Logger, bindings) as unknown as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    // Room for query strings past the 16 KB limit, so callers get 414 and a hint rather than 431.
    http: { maxHeaderSize: 64 * 1024 },
    return503OnClosing: true,
    // Refusals before routing (undecodable paths, oversized headers) answer the error body too.
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
  });
  // Security headers and X-Request-Id on every answer; every answer measured (GET /metrics).
  await installHeaders(http, {
    publicUrl: config.publicUrl,
    pages: [
      { prefix: GRAPHIQL_ASSETS, csp: GRAPHIQL_CSP },
      { prefix: CONSOLE_ASSETS, csp: CONSOLE_CSP },
    ],
  });
  installMetrics(http, { token: config.metricsToken, sql: core.sql });
  installErrorHandling(http);
  // CORS for browser apps on every route (REST, /graphql, /mcp, errors and 404 included): the origins of
  // CORS_ORIGINS, never with credentials (keys go in Authorization); preflights are answered here,
  // before any route authenticates.
  await http.register(cors, {
    origin: config.corsOrigins,
    credentials: false,
    methods: ['GET', 'HEAD', 'POST', 'DELETE'],
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  });

  const graphql = createGraphQL(core);
  const { yoga } = graphql;
  const admitted = new WeakMap<FastifyRequest, Principal>();
  http.route({
    url: yoga.graphqlEndpoint,
    method: ['GET', 'POST'],
    // Admitted before the body is even read: a request without a valid key, or over its budget, is
    // answered before its document is parsed or validated. The GraphiQL page needs no key and is not counted.
    onRequest: async (req, reply) => {
      if (isGraphiQLRequest(req)) return;
      try {
        // An API key, or the console's session cookie with its X-CSRF-Token (the key wins when both come).
        admitted.set(
          req,
          await admit(
            core,
            req.headers.authorization,
            (headers) => reply.headers(headers),
            clientAddress(config, req.raw),
            req.headers.authorization ? undefined : sessionCredentials(req.headers),
            { userAgent: req.headers['user-agent'] },
          ),
        );
      } catch (raised) {
        const err = coerceError(raised);
        if (!(err instanceof AppError)) throw raised;
        return sendGraphQLRefusal(req, reply, err);
      }
    },
    handler: async (req, reply) => {
      if (isGraphiQLRequest(req)) reply.header('Content-Security-Policy', GRAPHIQL_CSP);
      // The common request (a POST of a query or mutation in JSON) is answered directly; yoga answers the rest.
      const principal = admitted.get(req);
      if (principal && (await graphql.answer(req, reply, principal))) return reply;
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply, principal });
      response.headers.forEach((value, key) => void reply.header(key, value));
      reply.status(response.status);
      // A whole answer goes out in one write; only event streams (subscriptions over SSE) are piped.
      const streamed =
        response.headers.get('content-type')?.startsWith('text/event-stream') ||
        response.headers.get('content-type')?.startsWith('multipart/mixed');
      reply.send(streamed ? response.body : await response.text());
      return reply;
    },
  });
  await http.register(restRoutes, { core });
  // The operator API (/operator/v1): OPERATOR_TOKEN, not an API key; 404 while it is unset.
  await http.register(operatorRoutes, { core });
  // Stripe's signed events: no API key, the raw body verified (billing/payments/events.ts).
  await http.register(stripeHookRoute, { core });
  await http.register(openApiRoute, { core });
  await http.register(mcpRoutes, { core });
  // OAuth for hosted agents connecting to /mcp (docs/api.md, "Connecting hosted agents (OAuth)"): the MCP
  // server's protected-resource metadata, and the authorization server under /oauth with the consent routes.
  await http.register(protectedResourceRoutes, { core });
  await http.register(oauthRoutes, { core });
  await http.register(connectionRoutes, { core });
  // The console's sign-in routes (/auth): sessions, invitations, password resets.
  await http.register(authRoutes, { core });
  // The public opt-out page (/opt-out): no sign-in, server-rendered forms (docs/privacy.md).
  await http.register(optOutRoutes, { core });
  await http.register(graphiqlRoutes);
  // The console's pages and files; the API routes above keep their paths.
  await http.register(consoleRoutes);
  http.get('/health', async () => ({ status: 'ok' }));
  installReadiness(http, { sql: core.sql, livenessSecs: config.workerLivenessSecs, worker: () => worker });

  // Messages are capped like HTTP bodies (ws closes the socket with 1009 past it); browsers may open
  // sockets from the origins CORS admits only.
  const wss = new WebSocketServer({
    server: http.server,
    path: yoga.graphqlEndpoint,
    maxPayload: BODY_LIMIT,
    verifyClient: ({ origin, req }, done) =>
      originAllowed(config, origin, req.headers.host) ? done(true) : done(false, 403, 'Origin not allowed'),
  });
  const ws = attachGraphQLWebSocket(core, graphql, wss);

  let worker: WorkerHandle | undefined;
  const runWorker = options.worker ?? config.inlineWorker;

  return {
    core,
    http,
    async start(port = config.port, host = config.host) {
      if (runWorker) worker = await startWorker(core, { pollInterval: options.workerPollInterval });
      await http.listen({ port, host });
      const { port: bound } = http.server.address() as AddressInfo;
      const url = `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host}:${bound}`;
      // On port 0 the public URL derived from the port is only known now.
      if (new URL(config.publicUrl).port === '0') config.publicUrl = url;
      return url;
    },
    async stop() {
      await ws.dispose();
      wss.close();
      await http.close();
      if (worker) await worker.stop();
      await core.close();
    },
  };
}
