import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { CloseCode, MessageType, stringifyMessage, type ExecutionResult } from 'graphql-ws';
import { useServer as serveGraphQLWs } from 'graphql-ws/use/ws';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Core } from '../../src/core.ts';
import { AppError, coerceError, DatabaseUnavailableError } from '../../src/shared/errors.ts';
import { graphQLErrorOf } from '../../src/http/errors.ts';
import { observeGraphQLWs } from '../../src/http/metrics.ts';
import { admit, clientAddress, socketSession } from '../../src/http/pipeline.ts';
import { LiveAccess } from '../../src/http/access.ts';
import { directSend } from './direct-send.ts';
import { graphQLRefusal } from './errors.ts';
import { keepAlive } from './keep-alive.ts';
import { shareKey } from './share-key.ts';
import { SharedSubscriptions, type DirectSend } from './shared-subscriptions.ts';
import { closeReason, socketAccess } from './socket-access.ts';
import type { GraphQLServer } from './types.ts';

const authorizationOf = (params: Record<string, unknown> | undefined) =>
  (params?.authorization ?? params?.Authorization) as string | undefined;

/** An error as a graphql-ws message shows it: without yoga's internal extensions (`http`, `unexpected`). */
function formatted(error: GraphQLError): GraphQLFormattedError {
  const json = error.toJSON();
  if (!json.extensions) return json;
  const { http: _http, unexpected: _unexpected, ...extensions } = json.extensions;
  return { ...json, extensions };
}

const asGraphQLError = (err: unknown) =>
  err instanceof GraphQLError
    ? err
    : new GraphQLError((err as Error)?.message ?? String(err), {
        originalError: err instanceof Error ? err : undefined,
      });

/**
 * The close code of a connection refused for a limit: its address past its budget of failed
 * authentications (AUTH_FAILURES_PER_MINUTE), its key past its requests a minute (opening a socket is
 * one), or its key or address holding the most open sockets allowed (WS_MAX_SOCKETS_PER_KEY,
 * WS_MAX_SOCKETS_PER_ADDRESS). graphql-ws's 4429, which its clients take as final like 4401, so they do
 * not hammer the limit; the close reason says when to retry or what to close.
 */
export const TOO_MANY_REQUESTS = 4429;

/** The close code of a socket opened while the database is out of reach (RFC 6455 "Try Again Later"). */
export const TRY_AGAIN_LATER = 1013;

/**
 * graphql-ws on the same path, through the request pipeline: the key (connectionParams.authorization)
 * is authenticated when the socket connects, and every `subscribe` message is admitted again (counted
 * against the key's per-minute budget like an HTTP request; the key checked again, so a revoked key
 * stops working within the key cache time). A missing, unknown or revoked key closes the socket with
 * 4401, which graphql-ws clients do not retry (4403 they retry forever), and counts against the
 * address's failed authentications (past them: 4429, before the key is looked at); a rate-limited operation is
 * a GraphQL error with `retryAfter`. Each operation then takes the HTTP path's steps: persisted
 * operations, the token limit, validation and the complexity limits, yoga's envelop.
 */
export function attachGraphQLWebSocket(core: Core, graphql: GraphQLServer, wss: WebSocketServer) {
  const { yoga } = graphql;
  const log = core.logger.child({ component: 'graphql-ws' });
  const shared = new SharedSubscriptions();
  type Root = {
    execute: typeof import('graphql').execute;
    subscribe: typeof import('graphql').subscribe;
    shareKey?: string;
    access?: LiveAccess;
    direct?: DirectSend;
  };

  /** Refuses the operation with `errors`, then closes the socket with 4401 (the error message goes first). */
  const unauthorized = (socket: WebSocket, id: string, error: GraphQLError) => {
    socket.send(stringifyMessage({ id, type: MessageType.Error, payload: [formatted(error)] }));
    socket.close(CloseCode.Unauthorized, closeReason('Unauthorized', error.message));
  };

  const heartbeat = keepAlive(wss);
  const guard = socketAccess(core, log);
  const server = serveGraphQLWs<Record<string, unknown>, { access?: LiveAccess }>(
    observeGraphQLWs({
      execute: (args) => (args.rootValue as Root).execute(args),
      subscribe: async (args) => {
        const root = args.rootValue as Root;
        if (!root.shareKey) return root.subscribe(args);
        // The execution is shared; access is each member's: every result it takes is checked against it.
        const joined = await shared.join(root.shareKey, () => root.subscribe(args) as never, root.direct, root.access);
        // A member of a shared execution needs nothing more of its operation (graphql-ws keeps these
        // arguments for the subscription's life, but only passes them to hooks that do not read them):
        // its context, envelop and key go, so an idle subscriber costs little more than its socket.
        Object.assign(args, { contextValue: undefined, rootValue: undefined });
        return joined as never;
      },
      onConnect: async (ctx) => {
        const { request, socket } = ctx.extra;
        try {
          const address = clientAddress(core.config, request);
          // Without a key, the console's session: the upgrade's cookie,
          // from the gateway's own origin, with connectionParams.csrfToken.
          const credential = {
            authorization: authorizationOf(ctx.connectionParams),
            session: socketSession(core.config, request, ctx.connectionParams),
          };
          // Opening a socket is a request of the key's budget; its address's failed authentications are counted.
          const principal = await admit(core, credential.authorization, undefined, address, credential.session, {
            userAgent: request.headers['user-agent'],
          });
          ctx.extra.access = guard.open(socket, new LiveAccess(core, credential, principal), address);
          delete (ctx.extra as { request?: unknown }).request;
          return true;
        } catch (raised) {
          const err = coerceError(raised);
          // The database out of reach: 1013 (try again later), which graphql-ws clients retry.
          if (err instanceof DatabaseUnavailableError) {
            socket.close(TRY_AGAIN_LATER, closeReason('Try again later', err.message));
            return false;
          }
          // A session's wrong CSRF token (403 csrf_failed) is an unauthorized socket too: 4401.
          if (!(err instanceof AppError) || (err.status !== 401 && err.status !== 403 && err.status !== 429))
            throw raised;
          // graphql-ws would close with 4403 on `false`; the socket is closing already, so that is a no-op.
          if (err.status === 429) socket.close(TOO_MANY_REQUESTS, closeReason('Too many requests', err.message));
          else socket.close(CloseCode.Unauthorized, closeReason('Unauthorized', err.message));
          return false;
        }
      },
      onSubscribe: async (ctx, id, payload) => {
        const { access } = ctx.extra;
        if (!access) throw new Error('a subscription on a socket that was never admitted');
        try {
          // Each operation is a request: the credential checked again and counted against its budget.
          const principal = await admit(
            core,
            access.credential.authorization,
            undefined,
            undefined,
            access.credential.session,
          );
          // Access ended meanwhile (the socket is closing): a cached answer does not bring it back.
          if (access.endedBy) throw access.endedBy;
          access.accept(principal);
        } catch (raised) {
          const err = coerceError(raised);
          if (!(err instanceof AppError)) throw raised;
          const { message, extensions } = graphQLRefusal(err);
          const error = new GraphQLError(message, { extensions });
          if (err.status === 401 || err.status === 403) {
            unauthorized(ctx.extra.socket, id, error);
            access.end(err);
          }
          return [error];
        }
        try {
          // The protocol requires a `query` string: an empty one beside a persisted-query hash asks by hash alone.
          const hashOnly = payload.query === '' && payload.extensions?.persistedQuery !== undefined;
          const params = await graphql.resolveParams(hashOnly ? { ...payload, query: undefined } : payload);
          const {
            schema: envelopedSchema,
            execute,
            subscribe,
            contextFactory,
            parse,
            validate,
          } = yoga.getEnveloped({ ...ctx, params } as never);
          const document = parse(params.query ?? '');
          const errors = validate(envelopedSchema, document);
          if (errors.length > 0) return errors;
          const share = shareKey(document, params.operationName, params.variables, access.principal);
          return {
            schema: envelopedSchema,
            operationName: params.operationName,
            document,
            variableValues: params.variables,
            // A shared execution resolves alike for every member, with the
            // caller as it is now; each member's access is checked on its own.
            contextValue: await contextFactory(share ? { principal: { ...access.principal } } : { access }),
            rootValue: { execute, subscribe, shareKey: share, access, direct: directSend(ctx.extra.socket, id) },
          };
        } catch (err) {
          if (err instanceof AppError) {
            const { message, extensions } = graphQLRefusal(err);
            return [new GraphQLError(message, { extensions })];
          }
          if (err instanceof GraphQLError || (err as Error)?.name === 'GraphQLError') return [asGraphQLError(err)];
          // Never a 4500 close for one operation's failure: the socket and its other operations go on.
          log.error({ err }, 'graphql-ws operation failed before it started');
          const { message, extensions } = graphQLErrorOf(err);
          return [new GraphQLError(message, { extensions })];
        }
      },
      onError: (_ctx, _id, _payload, errors) => errors.map(formatted),
      onNext: (_ctx, _id, _payload, _args, result) => {
        const { errors } = result as ExecutionResult<unknown, unknown>;
        if (!errors?.length) return undefined;
        return {
          ...result,
          errors: (errors as GraphQLError[]).map((e) => (e instanceof GraphQLError ? formatted(e) : e)),
        } as never;
      },
    }),
    wss,
    // No timers per socket: `keepAlive` pings them all from one.
    0,
  );
  return {
    async dispose() {
      heartbeat.stop();
      guard.stop();
      await server.dispose();
    },
  };
}
