import type { FastifyReply, FastifyRequest } from 'fastify';
import { getOperationAST, GraphQLError, Kind, print, type DocumentNode } from 'graphql';
import { createYoga, maskError as defaultMaskError, type YogaServerInstance } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import type { WebSocketServer } from 'ws';
import { createLoaders, type GraphQLContext } from './context.ts';
import { schema } from './index.ts';
import type { Core } from '../src/core.ts';
import type { Principal } from '../src/accounts/accounts.ts';
import { AppError } from '../src/shared/errors.ts';
import { graphQLErrorOf } from '../src/http/errors.ts';
import { admit, authenticate } from '../src/http/pipeline.ts';
import { SharedSubscriptions } from './shared-subscriptions.ts';

interface ServerContext {
  req?: FastifyRequest;
  reply?: FastifyReply;
  /** The caller, when the request pipeline admitted it already (graphql-ws operations, keyed HTTP requests). */
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
    const { message, extensions } = graphQLErrorOf(original);
    return new GraphQLError(message, { nodes: located.nodes, path: located.path, extensions });
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
      const principal = initial.principal ?? (await authenticate(core, initial.request.headers.get('authorization')));
      return { core, principal, loaders: createLoaders(core, principal) };
    },
  });
}

/** Subscriptions whose executions many clients can share: their result depends only on the run and the account. */
const SHAREABLE = new Set(['runProgress']);

/** The key under which identical subscriptions of one account share an execution, or undefined. */
function shareKey(document: DocumentNode, operationName: string | null | undefined, variables: unknown, principal: Principal | undefined): string | undefined {
  const operation = getOperationAST(document, operationName);
  if (!principal || operation?.operation !== 'subscription') return undefined;
  const fields = operation.selectionSet.selections;
  if (fields.length !== 1 || fields[0]!.kind !== Kind.FIELD || !SHAREABLE.has(fields[0]!.name.value)) return undefined;
  return JSON.stringify([principal.accountId, print(document), operationName ?? null, variables ?? null]);
}

const authorizationOf = (params: Record<string, unknown> | undefined) => (params?.authorization ?? params?.Authorization) as string | undefined;

/**
 * graphql-ws on the same path, through the request pipeline: the key (connectionParams.authorization)
 * is authenticated when the socket connects (refused: closed 4403), and every `subscribe` message is
 * authenticated again and counted against the key's per-minute budget like an HTTP request (refused:
 * a GraphQL error with the REST code). Operations then go through yoga's envelop, as over HTTP.
 */
export function attachGraphQLWebSocket(core: Core, yoga: Yoga, wss: WebSocketServer) {
  const shared = new SharedSubscriptions();
  type Root = { execute: typeof import('graphql').execute; subscribe: typeof import('graphql').subscribe; shareKey?: string };
  return useServer<Record<string, unknown>, { principal?: Principal }>(
    {
      execute: (args) => (args.rootValue as Root).execute(args),
      subscribe: (args) => {
        const root = args.rootValue as Root;
        if (!root.shareKey) return root.subscribe(args);
        return shared.join(root.shareKey, () => root.subscribe(args) as never) as never;
      },
      onConnect: async (ctx) => {
        try {
          ctx.extra.principal = await authenticate(core, authorizationOf(ctx.connectionParams));
          return true;
        } catch {
          return false;
        }
      },
      onSubscribe: async (ctx, _id, payload) => {
        try {
          ctx.extra.principal = await admit(core, authorizationOf(ctx.connectionParams));
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          const { message, extensions } = graphQLErrorOf(err);
          return [new GraphQLError(message, { extensions })];
        }
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
          rootValue: { execute, subscribe, shareKey: shareKey(document, payload.operationName, payload.variables, ctx.extra.principal) },
        };
      },
    },
    wss,
  );
}
