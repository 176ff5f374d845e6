import type { AddressInfo } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { WebSocketServer } from 'ws';
import { startWorker, type WorkerHandle } from '../workers/index.ts';
import type { Config } from './config.ts';
import type { Core } from './core.ts';
import { createCore } from './create-core.ts';
import { attachGraphQLWebSocket, createGraphQL } from '../schema/server.ts';
import type { Logger } from './logger.ts';
import { restRoutes } from './rest/index.ts';
import { openApiRoute } from './rest/openapi.ts';
import { mcpRoutes } from './mcp/http.ts';
import { authenticate, rateLimit } from './http/pipeline.ts';
import { AppError } from './shared/errors.ts';
import type { Principal } from './accounts/accounts.ts';
import { graphQLErrorOf, installErrorHandling } from './http/errors.ts';

export const BODY_LIMIT = 1024 * 1024;

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
    // No child logger per request (a measurable cost on status polling); errors log the request id.
    childLoggerFactory: (parent) => parent,
    bodyLimit: BODY_LIMIT,
    // Room for query strings past the 16 KB limit, so callers get 414 and a hint rather than 431.
    http: { maxHeaderSize: 64 * 1024 },
    return503OnClosing: true,
  });
  installErrorHandling(http);

  const yoga = createGraphQL(core);
  http.route({
    url: yoga.graphqlEndpoint,
    method: ['GET', 'POST', 'OPTIONS'],
    handler: async (req, reply) => {
      // Keyed requests go through the request pipeline like REST; bad keys are left to GraphQL's own
      // 401 (from the context), and GraphiQL pages (no key) are not counted.
      let principal: Principal | undefined;
      if (req.headers.authorization) {
        principal = await authenticate(core, req.headers.authorization).catch(() => undefined);
        if (principal) {
          try {
            await rateLimit(core, principal, (headers) => reply.headers(headers));
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            const { message, extensions } = graphQLErrorOf(err);
            return reply.status(err.status).send({ errors: [{ message, extensions }] });
          }
        }
      }
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply, principal });
      response.headers.forEach((value, key) => void reply.header(key, value));
      reply.status(response.status);
      reply.send(response.body);
      return reply;
    },
  });
  await http.register(restRoutes, { core });
  await http.register(openApiRoute, { core });
  await http.register(mcpRoutes, { core });
  http.get('/health', async () => ({ status: 'ok' }));

  const wss = new WebSocketServer({ server: http.server, path: yoga.graphqlEndpoint });
  const ws = attachGraphQLWebSocket(core, yoga, wss);

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
