import type { FastifyReply, FastifyRequest } from 'fastify';
import type { YogaServerInstance } from 'graphql-yoga';
import type { GraphQLContext } from '../context.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import type { LiveAccess } from '../../src/http/access.ts';

/** The types the GraphQL transport's files share: yoga's server context, a request's parameters, the server. */

export interface ServerContext {
  req?: FastifyRequest;
  reply?: FastifyReply;
  /** The caller, when the request pipeline admitted it already (graphql-ws operations, keyed HTTP requests). */
  principal?: Principal;
  /** A graphql-ws operation's lasting access (its socket's), which its subscription's events are checked against. */
  access?: LiveAccess;
}

export interface RequestParams {
  query?: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  extensions?: Record<string, unknown> | null;
}

export type Yoga = YogaServerInstance<ServerContext, GraphQLContext>;

export interface GraphQLServer {
  yoga: Yoga;
  /**
   * The request's parameters after the persisted-operation plugins
   * (what yoga's `onParams` does over HTTP), for graphql-ws.
   */
  resolveParams(params: RequestParams): Promise<RequestParams>;
  /**
   * Answers an admitted POST of a query or mutation in JSON directly (`answerDirectly`, direct-path.ts); false when
   * the request is of another kind, for yoga to answer.
   */
  answer(req: FastifyRequest, reply: FastifyReply, principal: Principal): Promise<boolean>;
}
