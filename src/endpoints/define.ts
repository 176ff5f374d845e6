import type { Toolset } from '../tools/toolsets.ts';
import type { z } from 'zod';
import type { Transaction } from '../../db/client.ts';
import type { Plan } from '../../db/tables/accounts.ts';
import type { AllowanceKind } from '../../db/tables/limits.ts';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import type { Permission } from '../accounts/roles.ts';
import type { Deprecation } from '../shared/deprecation.ts';

/**
 * Glossary: an *endpoint* is one synchronous operation (a database search, an enrichment, the wallet,
 * a credit purchase, a webhook operation, the lead scraper's mode), declared once here like a tool;
 * REST routes, the OpenAPI document, GraphQL field names and plan gates, and MCP tools derive from it.
 * Its *handler* returns a domain result; `respond` shapes the answer REST and MCP send, which
 * `response` describes.
 */

export interface EndpointContext {
  core: Core;
  principal: Principal;
  signal?: AbortSignal;
  /** The caller's idempotency key of an idempotent write, when sent (a payment derives its own from it). */
  idempotencyKey?: string;
}

/** What a REST route received, for `rest.input`. */
export interface RestRequest {
  method: 'GET' | 'POST' | 'DELETE';
  params: Record<string, string>;
  query: unknown;
  body: unknown;
}

export type RestMethod = 'get' | 'post' | 'delete';
export type ErrorCodes = Partial<
  Record<400 | 402 | 403 | 404 | 405 | 409 | 410 | 413 | 414 | 415 | 422 | 429 | 503, readonly string[]>
>;

export interface EndpointDefinition<I = unknown, R = unknown> {
  /** The OpenAPI operationId of the first REST method (`searchLeads`). */
  name: string;
  title: string;
  /** What the request is about in OpenAPI, before the generated plan and limit text. */
  description?: string;
  /** The OpenAPI tag. */
  tag:
    | 'Database'
    | 'Enrichment'
    | 'Account'
    | 'Webhooks'
    | 'Datasets'
    | 'Workflows'
    | 'Destinations'
    | 'Privacy'
    | 'Audit';
  rest: {
    path: string;
    /** Served methods; a GET of a database API takes query parameters, its POST the same as a JSON body. */
    methods: readonly RestMethod[];
    /** Success status (default 200). */
    status?: 200 | 201 | 204;
    /** Honours Idempotency-Key (then `prepare` is the handler). */
    idempotent?: boolean;
    /** A GET carries the same JSON body as the POST (read by the REST face; Fastify reads bodies of POSTs only). */
    bodyOnGet?: boolean;
    /** The route is on its way out: Deprecation, Sunset and Link headers on every answer (docs/versioning.md). */
    deprecated?: Deprecation;
    /** The handler's input from the request (default: the query of a GET, the body of a POST or {}). */
    input?: (request: RestRequest) => I;
    /** OpenAPI example body. */
    example?: unknown;
    /** OpenAPI text of the success answer. */
    ok: string;
  };
  /** The GraphQL field (query, mutation or a field of Account) that serves the same operation. */
  graphql?: { field: string };
  /** The MCP tool that serves it; its answer is `respond`'s, like REST. */
  mcp?: {
    tool: string;
    /** The toolset clients choose the tool by (src/tools/toolsets.ts). */
    toolset: Toolset;
    title: string;
    /** What the tool does and how to use it; the price and limit lines are generated. */
    description: readonly string[];
    /** Further description lines after the generated ones. */
    notes?: readonly string[];
    /** Arguments checked before the call (400 `validation_failed`); otherwise the handler validates `request`. */
    args?: z.ZodType;
    /** Arguments that work, for an account with a dataset named `dentists` (the tests call each tool with them). */
    example?: Record<string, unknown>;
    /** The "Limits:" line: what one call may take, then (after the generated daily allowance) anything else. */
    limits?: { perCall: string; besides?: string };
    annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  };
  /** Plan gate: 403 `plan_required` below it; `planSubject` names the request in the refusal. */
  plan?: Plan;
  planSubject?: string;
  /**
   * What the caller's role must allow (src/accounts/roles.ts): a session's, or
   * a console key's creator's; the operator's keys keep every key right.
   */
  permission?: Permission;
  /** The daily allowance the endpoint counts against (its size is configured). */
  allowance?: AllowanceKind;
  /**
   * Query parameters or body (zod), as documented and as the handler validates
   * them; a field it does not declare is refused (shared/fields.ts).
   */
  request?: z.ZodType;
  /** The REST and MCP answer. */
  response?: z.ZodType;
  /** Error codes the operation can answer, by status (authentication, rate limit and server errors are added). */
  errors: ErrorCodes;
  handler(ctx: EndpointContext, input: I): Promise<R>;
  /** For idempotent writes: checks the request and returns its write. */
  prepare?(ctx: EndpointContext, input: I): (tx: Transaction) => Promise<R>;
  /** The REST and MCP answer of a result (default: the result itself). */
  respond?(result: R): unknown;
}

export function defineEndpoint<I, R>(endpoint: EndpointDefinition<I, R>): EndpointDefinition<I, R> {
  return endpoint;
}

/** The GraphQL field an endpoint declares; one without is a mistake in the schema, found as it is built. */
export function graphqlFieldOf(endpoint: { rest: { path: string }; graphql?: { field: string } }): string {
  if (!endpoint.graphql) throw new Error(`the endpoint ${endpoint.rest.path} declares no GraphQL field`);
  return endpoint.graphql.field;
}

/** The permission an endpoint declares; one without is a mistake where a face applies its rule. */
export function permissionOf(endpoint: { rest: { path: string }; permission?: Permission }): Permission {
  if (!endpoint.permission) throw new Error(`the endpoint ${endpoint.rest.path} declares no permission`);
  return endpoint.permission;
}

/** The answer REST and MCP send for `result`. */
export const respondOf = <I, R>(endpoint: EndpointDefinition<I, R>, result: R): unknown =>
  endpoint.respond ? endpoint.respond(result) : result;
