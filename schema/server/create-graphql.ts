import type { FastifyReply, FastifyRequest } from 'fastify';
import { createYoga, type OnParamsEventPayload } from 'graphql-yoga';
import { createLoaders, type GraphQLContext } from '../context.ts';
import { complexityAtStartPlugin } from '../complexity.ts';
import { schema } from '../index.ts';
import type { Core } from '../../src/core.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import { operationRoutesPlugin } from '../../src/http/metrics.ts';
import { authenticate, sessionCredentials } from '../../src/http/pipeline.ts';
import { compiledQueriesPlugin } from './compiled-queries.ts';
import { answerDirectly } from './direct-path.ts';
import { parserAndValidationCache } from './document-cache.ts';
import { isCallerError, maskError, errorCodesPlugin } from './errors.ts';
import { graphiqlPage } from './graphiql.ts';
import { persistedOperationPlugins } from './persisted-operations.ts';
import { responseSizeLimitPlugin } from './response-size.ts';
import { tokenLimitPlugin } from './token-limit.ts';
import type { GraphQLServer, RequestParams, ServerContext, Yoga } from './types.ts';

/**
 * The GraphQL face's transport: yoga over HTTP, graphql-ws on the same path, and the limits both
 * share. Every rule below holds for an HTTP request and for each graphql-ws `subscribe` message alike:
 * - the key is admitted (authenticated and counted against its per-minute budget) before the document
 *   is looked at; a bad key is 401 over HTTP and closes the socket with 4401;
 * - a document is parsed with a token limit (MAX_TOKENS), so no document can nest deep enough to
 *   exhaust the stack, and its depth, breadth and complexity (the Pothos complexity plugin's limits in
 *   schema/builder.ts), introspection included, are checked when the operation starts, subscriptions
 *   included;
 * - each result, and each event of a subscription, is at most GRAPHQL_MAX_RESPONSE_BYTES of JSON;
 * - automatic persisted queries (Apollo's protocol), or with GRAPHQL_PERSISTED_ONLY only the operations
 *   of the GRAPHQL_PERSISTED_OPERATIONS file.
 * This file builds yoga; each concern it uses has its own file beside it, graphql-ws (graphql-ws.ts) too.
 */

export function createGraphQL(core: Core): GraphQLServer {
  const log = core.logger.child({ component: 'graphql' });
  const paramsPlugins = persistedOperationPlugins(
    core.config.graphqlPersistedOperations,
    core.config.graphqlPersistedOnly,
  );
  const yoga: Yoga = createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS is the HTTP server's (src/app.ts), for every route alike.
    cors: false,
    maskedErrors: { maskError },
    parserAndValidationCache: parserAndValidationCache(),
    plugins: [
      ...paramsPlugins,
      tokenLimitPlugin(),
      complexityAtStartPlugin(),
      errorCodesPlugin(),
      operationRoutesPlugin(),
      compiledQueriesPlugin(),
      responseSizeLimitPlugin(core.config.graphqlMaxResponseBytes),
    ],
    logging: {
      debug: (...args) => log.debug(args.map(String).join(' ')),
      info: (...args) => log.info(args.map(String).join(' ')),
      warn: (...args) => log.warn(args.map(String).join(' ')),
      // GraphQL's own refusals (a variable its type refuses, say) are the caller's mistake, answered to it.
      error: (...args) => {
        const err = args.find((a) => a instanceof Error);
        if (isCallerError(err)) log.debug({ code: 'BAD_USER_INPUT' }, args.map(String).join(' '));
        else log.error({ err }, args.map(String).join(' '));
      },
    },
    graphiql: {
      title: 'leadgate GraphQL',
      headers: JSON.stringify({ Authorization: 'Bearer <API_KEY>' }),
      subscriptionsProtocol: 'WS',
    },
    renderGraphiQL: graphiqlPage,
    context: async (initial) => {
      const principal =
        initial.access?.principal ??
        initial.principal ??
        (await authenticate(core, initial.request.headers.get('authorization')));
      // Over HTTP, what the request presented: a subscription over SSE checks it again before each event.
      const credential = initial.req && {
        authorization: initial.req.headers.authorization,
        session: initial.req.headers.authorization ? undefined : sessionCredentials(initial.req.headers),
      };
      return { core, principal, loaders: createLoaders(core, principal), access: initial.access, credential };
    },
  });

  async function resolveParams(params: RequestParams): Promise<RequestParams> {
    let current = params;
    for (const plugin of paramsPlugins) {
      const payload = {
        params: current,
        request: undefined,
        context: {},
        fetchAPI: yoga.fetchAPI,
        setParams: (next: RequestParams) => {
          current = next;
        },
        setResult: () => {},
      };
      await plugin.onParams?.(payload as unknown as OnParamsEventPayload<Record<string, unknown>>);
    }
    return current;
  }
  const answer = (req: FastifyRequest, reply: FastifyReply, principal: Principal) =>
    answerDirectly(yoga, resolveParams, log, req, reply, principal);
  return { yoga, resolveParams, answer };
}
