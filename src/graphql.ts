import type { FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError } from 'graphql';
import { createYoga, maskError as defaultMaskError, type YogaServerInstance } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import type { WebSocketServer } from 'ws';
import { createLoaders, type GraphQLContext } from '../schema/context.ts';
import { schema } from '../schema/index.ts';
import type { Core } from './core.ts';
import type { Principal } from './services/accounts.ts';
import { AppError } from './services/errors.ts';

interface ServerContext {
  req?: FastifyRequest;
  reply?: FastifyReply;
  /** Set for graphql-ws operations, authenticated once when the socket connected. */
  principal?: Principal;
}

interface LocatedError {
  originalError?: unknown;
  nodes?: GraphQLError['nodes'];
  path?: GraphQLError['path'];
}

/** Expected errors keep their code and message; anything else is masked (and logged by yoga). */
function maskError(error: unknown, message: string, isDev?: boolean): Error {
  // Duck-typed: graphql's CJS and ESM builds can both be loaded, so instanceof GraphQLError is unreliable.
  const located = (typeof error === 'object' && error !== null ? error : {}) as LocatedError;
  const original = located.originalError ?? error;
  if (original instanceof AppError) {
    return new GraphQLError(original.message, {
      nodes: located.nodes,
      path: located.path,
      extensions: {
        code: original.code,
        ...(original.details === undefined ? {} : { details: original.details }),
        ...(original.status === 401 ? { http: { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } } } : {}),
      },
    });
  }
  return defaultMaskError(error, message, isDev);
}

export type Yoga = YogaServerInstance<ServerContext, GraphQLContext>;

export function createGraphQL(core: Core): Yoga {
  const log = core.logger.child({ component: 'graphql' });
  return createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    maskedErrors: { maskError },
    logging: {
      debug: (...args) => log.debug(args.map(String).join(' ')),
      info: (...args) => log.info(args.map(String).join(' ')),
      warn: (...args) => log.warn(args.map(String).join(' ')),
      error: (...args) => log.error({ err: args.find((a) => a instanceof Error) }, args.map(String).join(' ')),
    },
    graphiql: {
      title: 'leadgate GraphQL',
      headers: JSON.stringify({ Authorization: 'Bearer <API_KEY>' }),
      subscriptionsProtocol: 'WS',
    },
    context: async (initial) => {
      const principal = initial.principal ?? (await core.auth.authenticate(initial.request.headers.get('authorization')));
      return { core, principal, loaders: createLoaders(core, principal) };
    },
  });
}

/** graphql-ws on the same path: key in connectionParams.authorization; operations go through yoga's envelop. */
export function attachGraphQLWebSocket(core: Core, yoga: Yoga, wss: WebSocketServer) {
  return useServer<Record<string, unknown>, { principal?: Principal }>(
    {
      execute: (args) => (args.rootValue as { execute: typeof import('graphql').execute }).execute(args),
      subscribe: (args) => (args.rootValue as { subscribe: typeof import('graphql').subscribe }).subscribe(args),
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const header = (params.authorization ?? params.Authorization) as string | undefined;
        try {
          ctx.extra.principal = await core.auth.authenticate(header);
          return true;
        } catch {
          return false;
        }
      },
      onSubscribe: async (ctx, _id, payload) => {
        const { schema: envelopedSchema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          principal: ctx.extra.principal,
          params: payload,
        } as never);
        const document = parse(payload.query);
        const errors = validate(envelopedSchema, document);
        if (errors.length > 0) return errors;
        return {
          schema: envelopedSchema,
          operationName: payload.operationName,
          document,
          variableValues: payload.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
      },
    },
    wss,
  );
}
