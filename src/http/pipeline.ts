import type { Transaction } from '../../db/client.ts';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import { withIdempotency, type StoredResponse } from '../accounts/idempotency.ts';
import { RateLimitedError, rateLimitHeaders } from '../accounts/rate-limit.ts';
import { assertPlan } from '../billing/plans.ts';
import type { EndpointDefinition } from '../endpoints/define.ts';

/**
 * The request pipeline every face takes: REST routes, GraphQL over HTTP, each graphql-ws `subscribe`
 * message, and the MCP server at /mcp. Authenticate the key, count the request against the key's
 * per-minute budget (with the RateLimit headers), then run the handler, once per Idempotency-Key for
 * the writes that honour one. Refusals are AppErrors; each face renders them (errors.ts).
 */

/** Headers a face sends with its answer (the RateLimit headers). */
export type PipelineHeaders = Record<string, string>;

/** The caller of `authorization` (a Bearer API key); 401 `unauthenticated` for a missing, unknown or revoked key. */
export function authenticate(core: Pick<Core, 'auth'>, authorization: string | undefined | null): Promise<Principal> {
  return core.auth.authenticate(authorization);
}

/**
 * Counts one request of the caller's key; `setHeaders` receives the RateLimit headers, also when it
 * throws 429 `rate_limited` (then with Retry-After).
 */
export async function rateLimit(core: Pick<Core, 'config' | 'rateLimiter'>, principal: Principal, setHeaders: (headers: PipelineHeaders) => void = () => {}): Promise<void> {
  if (!core.config.enforceLimits) return;
  try {
    setHeaders(rateLimitHeaders(await core.rateLimiter.consume(principal.keyId), false));
  } catch (err) {
    if (err instanceof RateLimitedError) setHeaders(rateLimitHeaders(err.state, true));
    throw err;
  }
}

/** Authenticates and rate-limits one request: the caller, or the AppError that refuses it. */
export async function admit(core: Pick<Core, 'auth' | 'config' | 'rateLimiter'>, authorization: string | undefined | null, setHeaders?: (headers: PipelineHeaders) => void): Promise<Principal> {
  const principal = await authenticate(core, authorization);
  await rateLimit(core, principal, setHeaders);
  return principal;
}

/**
 * A write that honours an idempotency key (REST `Idempotency-Key`, GraphQL `idempotencyKey`): `prepare`
 * checks the request and returns the write, whose result is the answer stored for replays. `scope`
 * names the operation, so one key sent to two operations is two requests.
 */
export async function idempotent<T>(
  core: Pick<Core, 'accountWrites'>,
  principal: Principal,
  key: string | undefined | null,
  scope: string,
  request: unknown,
  prepare: () => (tx: Transaction) => Promise<T>,
): Promise<StoredResponse & { body: T; replayed: boolean }> {
  const result = await withIdempotency(core.accountWrites, principal.accountId, key, scope, request, () => {
    const write = prepare();
    return async (tx) => ({ status: 200, body: await write(tx) });
  });
  return result as StoredResponse & { body: T; replayed: boolean };
}

export interface CallOptions<R, S> {
  signal?: AbortSignal;
  /** For endpoints with `prepare`: the caller's idempotency key, the operation's scope and the request hashed with it. */
  idempotency?: { key: string | undefined | null; scope: string; request: unknown };
  /** The face's answer of the result; for idempotent writes, what a replay answers. */
  shape: (result: R) => S;
}

/**
 * Runs a declared endpoint for the caller: its plan gate, then its handler, or for an idempotent
 * write its prepared write once per key. Answers the face's shape of the result.
 */
export async function callEndpoint<I, R, S>(core: Core, principal: Principal, endpoint: EndpointDefinition<I, R>, input: I, options: CallOptions<R, S>): Promise<{ body: S; replayed: boolean }> {
  assertPlan(principal, endpoint.plan, endpoint.planSubject ?? endpoint.title);
  const ctx = { core, principal, signal: options.signal };
  const { prepare } = endpoint;
  if (prepare) {
    const { key, scope, request } = options.idempotency ?? { key: undefined, scope: endpoint.name, request: null };
    const stored = await idempotent(core, principal, key, scope, request, () => {
      const write = prepare(ctx, input);
      return async (tx) => options.shape(await write(tx));
    });
    return { body: stored.body, replayed: stored.replayed };
  }
  return { body: options.shape(await endpoint.handler(ctx, input)), replayed: false };
}
