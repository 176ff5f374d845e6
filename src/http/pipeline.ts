import type { IncomingMessage } from 'node:http';
import proxyaddr from '@fastify/proxy-addr';
import ipaddr from 'ipaddr.js';
import type { Config } from '../config.ts';
import type { Core } from '../core.ts';
import type { AuthenticateOptions, Principal } from '../accounts/accounts.ts';
import { idempotentWrite, type IdempotentCall } from '../accounts/idempotency.ts';
import { RateLimitedError, rateLimitHeaders, type RateLimiter, type RateLimitState } from '../accounts/rate-limit.ts';
import { requireRole } from '../accounts/roles.ts';
import { assertPlan } from '../billing/plans.ts';
import type { EndpointDefinition } from '../endpoints/define.ts';
import type { Deprecation } from '../shared/deprecation.ts';
import { AppError, unauthenticated } from '../shared/errors.ts';
import { assertStorable } from '../shared/params.ts';

/**
 * The request pipeline every face takes: REST routes, GraphQL over HTTP, each graphql-ws `subscribe`
 * message, and the MCP server at /mcp. Authenticate the key (before any body is read; failures
 * counted per client address), count the request against the key's per-minute budget (with the
 * RateLimit headers), then run the handler, once per Idempotency-Key for the writes that honour one.
 * Refusals are AppErrors; each face renders them (errors.ts).
 */

/** Headers a face sends with its answer (the RateLimit headers). */
export type PipelineHeaders = Record<string, string>;

/**
 * Where a request comes from, as the limit on failed authentications tells callers apart: the
 * connection's peer, or with `trustProxy` the address the trusted proxies report in X-Forwarded-For.
 * An IPv6 address stands for its /64 (one subscriber's network), an IPv4-mapped one for its IPv4.
 */
export function clientAddress(config: Pick<Config, 'trustProxy'>, request: IncomingMessage): string {
  const trust = config.trustProxy;
  const peer =
    trust === undefined
      ? (request.socket.remoteAddress ?? '')
      : proxyaddr(request, typeof trust === 'number' ? (_address, hop) => hop < trust : trustedProxies(trust));
  if (!ipaddr.isValid(peer)) return peer;
  const ip = ipaddr.process(peer);
  if (ip.kind() === 'ipv4') return ip.toString();
  const parts = (ip as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}

const compiledProxies = new WeakMap<string[], ReturnType<typeof proxyaddr.compile>>();
function trustedProxies(list: string[]) {
  let trust = compiledProxies.get(list);
  if (!trust) {
    trust = proxyaddr.compile(list);
    compiledProxies.set(list, trust);
  }
  return trust;
}

/**
 * The headers of every answer of a deprecated route (its declaration's `deprecated`, docs/versioning.md):
 * `Deprecation` as an RFC 9745 structured date (`@` and Unix seconds), `Sunset` as an RFC 8594
 * HTTP-date, and a `Link` to the notice with the `deprecation` relation. Refusals carry them too.
 */
export function deprecationHeaders(deprecated: Deprecation): PipelineHeaders {
  return {
    Deprecation: `@${Math.floor(Date.parse(deprecated.since) / 1000)}`,
    Sunset: new Date(deprecated.sunset).toUTCString(),
    Link: `<${deprecated.link}>; rel="deprecation"`,
  };
}

type AuthDeps = Pick<Core, 'auth' | 'config' | 'authFailureLimiter'>;

/** The name of the console session cookie. */
export const SESSION_COOKIE = 'lg_session';

/** A console session's credentials: the cookie's token and the CSRF token sent beside it (GraphQL only). */
export interface SessionCredentials {
  token: string | undefined;
  csrfToken: string | undefined;
}

/** The value of the session cookie in a Cookie header, or undefined. */
export function sessionCookie(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === SESSION_COOKIE) return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * Whether a browser page at `origin` may use the API: the gateway's own origin (PUBLIC_URL, or the
 * Host the request came to; without `host`, PUBLIC_URL only) or one of CORS_ORIGINS. A request without
 * Origin is not a browser's cross-origin request and is left alone.
 */
export function originAllowed(config: Config, origin: string | undefined, host: string | undefined): boolean {
  if (!origin) return true;
  if (config.corsOrigins.includes(origin) || origin === new URL(config.publicUrl).origin) return true;
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** Whether `origin` is the gateway's own: PUBLIC_URL's origin, or that of the host the request came to. */
export function ownOrigin(config: Pick<Config, 'publicUrl'>, origin: string, host: string | undefined): boolean {
  if (origin === new URL(config.publicUrl).origin) return true;
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/**
 * The console session of a graphql-ws connection without a key: the upgrade request's cookie and
 * `connectionParams.csrfToken`, or the header's name `X-CSRF-Token` in any case (as GraphiQL passes
 * it). The socket must come from the gateway's own origin (CORS_ORIGINS admit
 * keyed sockets only), else 401 `unauthenticated` (close 4401).
 */
export function socketSession(
  config: Pick<Config, 'publicUrl'>,
  request: IncomingMessage,
  params: Record<string, unknown> | undefined,
): SessionCredentials | undefined {
  const token = sessionCookie(request.headers.cookie);
  if (!token || params?.authorization || params?.Authorization) return undefined;
  const origin = request.headers.origin;
  if (!origin || !ownOrigin(config, origin, request.headers.host))
    throw unauthenticated(
      'A console session opens sockets from the console’s own origin only; other clients send an API key',
    );
  const csrfToken =
    params?.csrfToken ?? Object.entries(params ?? {}).find(([name]) => name.toLowerCase() === 'x-csrf-token')?.[1];
  return { token, csrfToken: typeof csrfToken === 'string' ? csrfToken : undefined };
}

/** What a caller presented: a Bearer API key, or a console session's cookie token and CSRF token. */
export interface Credential {
  authorization?: string | null;
  session?: SessionCredentials;
}

/** One string per credential: what lookups of the same key or session in flight share. */
export const credentialKey = (credential: Credential) =>
  credential.authorization
    ? `k:${credential.authorization}`
    : `s:${credential.session?.token ?? ''}:${credential.session?.csrfToken ?? ''}`;

/** The session credentials of an HTTP request: the cookie, and the X-CSRF-Token header. */
export function sessionCredentials(headers: IncomingMessage['headers']): SessionCredentials | undefined {
  const token = sessionCookie(headers.cookie);
  if (!token) return undefined;
  const csrf = headers['x-csrf-token'];
  return { token, csrfToken: Array.isArray(csrf) ? csrf[0] : csrf };
}

/** The refusal of an address past its budget of failed authentications. */
function tooManyFailures(state: RateLimitState): RateLimitedError {
  return new RateLimitedError(
    state,
    `Too many failed authentications from your address: the limit is ${state.limit} per minute. ` +
      `Retry in ${state.resetSecs} s with a valid API key.`,
  );
}

/**
 * The caller of `authorization` (a Bearer API key), or without one of `session` (a console session
 * cookie and its CSRF token; GraphQL only: REST and MCP pass none, so a cookie there is ignored). 401
 * `unauthenticated` for a missing, malformed, unknown, expired or revoked key or session; 403
 * `csrf_failed` for a session without its CSRF token. A key takes precedence over a cookie (keys are
 * not ambient credentials, so they need no CSRF token).
 *
 * With the client's `address` (clientAddress), failed authentications are limited per address
 * (AUTH_FAILURES_PER_MINUTE): each key or session this process does not hold in its cache is counted
 * before it is looked up, and gives its unit back when it turns out valid, so requests that arrive
 * together cannot try more keys than the budget, however many there are. Past the budget the address
 * is refused 429 `rate_limited` before any key it sends is looked at, until the window ends. A key
 * or session answered from the cache is no guess and costs nothing; lookups of one credential from
 * one address that overlap share one lookup and one unit, so a burst of requests with a valid key
 * never drains the address. Without an address (an operation on a socket whose key was checked when
 * it connected) nothing is counted.
 */
export async function authenticate(
  core: AuthDeps,
  authorization: string | undefined | null,
  address?: string,
  session?: SessionCredentials,
  options?: AuthenticateOptions,
): Promise<Principal> {
  // A session's token counts only without an Authorization header.
  const sessionToken = !authorization && session?.token ? session.token : undefined;
  const resolve = () =>
    sessionToken === undefined
      ? core.auth.authenticate(authorization, options)
      : core.auth.authenticateSession(sessionToken, session?.csrfToken, options);
  const limited = address !== undefined && core.config.enforceLimits && core.config.authFailuresPerMinute > 0;
  if (!limited) return resolve();
  const bucket = `auth:${address}`;
  const blocked = core.authFailureLimiter.exhausted(bucket);
  if (blocked) throw tooManyFailures(blocked);
  if (core.auth.isCached(authorization, sessionToken, options?.resource)) return resolve();
  const lookups = lookupsOf(core.authFailureLimiter);
  const credential = `${bucket}\n${credentialKey({ authorization, session })}`;
  let lookup = lookups.get(credential);
  if (!lookup) {
    lookup = countedLookup(core, bucket, resolve).finally(() => lookups.delete(credential));
    lookups.set(credential, lookup);
  }
  return lookup;
}

/** The lookups in flight, by address and credential, of each failed-authentication limiter (one per core). */
const inflightLookups = new WeakMap<RateLimiter, Map<string, Promise<Principal>>>();
function lookupsOf(limiter: RateLimiter): Map<string, Promise<Principal>> {
  let lookups = inflightLookups.get(limiter);
  if (!lookups) {
    lookups = new Map();
    inflightLookups.set(limiter, lookups);
  }
  return lookups;
}

/** One lookup, counted against the address before it runs; the unit goes back unless it ends in a 401. */
async function countedLookup(core: AuthDeps, bucket: string, resolve: () => Promise<Principal>): Promise<Principal> {
  let unit: RateLimitState;
  try {
    unit = await core.authFailureLimiter.consume(bucket);
  } catch (over) {
    throw over instanceof RateLimitedError ? tooManyFailures(over.state) : over;
  }
  try {
    const principal = await resolve();
    core.authFailureLimiter.refund(bucket, unit);
    return principal;
  } catch (err) {
    // Only a credential refused as unknown is a failed guess; a missing CSRF token or an outage is not.
    if (!(err instanceof AppError) || err.status !== 401) core.authFailureLimiter.refund(bucket, unit);
    throw err;
  }
}

/**
 * Counts one request of the caller's key (or console session: a session has a key's budget);
 * `setHeaders` receives the RateLimit headers, also when it
 * throws 429 `rate_limited` (then with Retry-After).
 */
export async function rateLimit(
  core: Pick<Core, 'config' | 'rateLimiter'>,
  principal: Principal,
  setHeaders: (headers: PipelineHeaders) => void = () => {},
): Promise<void> {
  if (!core.config.enforceLimits) return;
  try {
    setHeaders(rateLimitHeaders(await core.rateLimiter.consume(principal.keyId), false));
  } catch (err) {
    if (err instanceof RateLimitedError) setHeaders(rateLimitHeaders(err.state, true));
    throw err;
  }
}

/**
 * Authenticates and rate-limits one request: the caller, or the AppError that refuses it. `address`
 * (clientAddress) counts failed authentications per client; every face passes it for each request
 * or connection, before the body is read. `session`: GraphQL's console session (see authenticate).
 * `resource`: the canonical URI of the MCP server, whose face takes OAuth access tokens issued for it too.
 * With an `address`, the caller answered carries it and `userAgent` as its `client` (the audit log's).
 */
export async function admit(
  core: AuthDeps & Pick<Core, 'rateLimiter'>,
  authorization: string | undefined | null,
  setHeaders: (headers: PipelineHeaders) => void = () => {},
  address?: string,
  session?: SessionCredentials,
  options?: { resource?: string; userAgent?: string | string[] },
): Promise<Principal> {
  let principal: Principal;
  try {
    principal = await authenticate(core, authorization, address, session, options);
  } catch (err) {
    if (err instanceof RateLimitedError) setHeaders(rateLimitHeaders(err.state, true));
    throw err;
  }
  await rateLimit(core, principal, setHeaders);
  if (address === undefined) return principal;
  // A copy: the cached principal is shared by every request of its key or session.
  const userAgent = Array.isArray(options?.userAgent) ? options.userAgent[0] : options?.userAgent;
  return { ...principal, client: { ip: address, userAgent: userAgent ?? null } };
}

/**
 * Counts `count` more requests of an admitted caller (the further messages of an MCP JSON-RPC batch,
 * whose first one its admission paid for): how many of them the key's budget takes, in order, and
 * the refusal of the rest. `setHeaders` receives the RateLimit headers as they stand after them.
 */
export async function rateLimitMore(
  core: Pick<Core, 'config' | 'rateLimiter'>,
  principal: Principal,
  count: number,
  setHeaders: (headers: PipelineHeaders) => void = () => {},
): Promise<{ admitted: number; refusal?: RateLimitedError }> {
  for (let admitted = 0; admitted < count; admitted++) {
    try {
      await rateLimit(core, principal, setHeaders);
    } catch (err) {
      if (err instanceof RateLimitedError) return { admitted, refusal: err };
      throw err;
    }
  }
  return { admitted: count };
}

export interface CallOptions<R, S> {
  signal?: AbortSignal;
  /**
   * For endpoints with `prepare`: the caller's idempotency key, the operation's scope and the request hashed with it.
   */
  idempotency?: Omit<IdempotentCall, 'principal'>;
  /** The face's answer of the result; for idempotent writes, what a replay answers. */
  shape: (result: R) => S;
}

/**
 * Runs a declared endpoint for the caller: its plan gate, then its handler, or for an idempotent
 * write its prepared write once per key. Answers the face's shape of the result.
 */
export async function callEndpoint<I, R, S>(
  core: Core,
  principal: Principal,
  endpoint: EndpointDefinition<I, R>,
  input: I,
  options: CallOptions<R, S>,
): Promise<{ body: S; replayed: boolean }> {
  // The caller's role may limit the endpoint (billing, webhooks): a session's, or a console key's creator's.
  if (endpoint.permission) requireRole(principal, endpoint.permission);
  assertPlan(principal, endpoint.plan, endpoint.planSubject ?? endpoint.title);
  // Text Postgres cannot hold (NUL, unpaired surrogates) is refused before any handler reads it.
  assertStorable(input);
  const ctx = { core, principal, signal: options.signal, idempotencyKey: options.idempotency?.key ?? undefined };
  const { prepare } = endpoint;
  if (prepare) {
    const call = options.idempotency ?? { scope: endpoint.name };
    const stored = await idempotentWrite(core, { principal, ...call }, () => prepare(ctx, input), options.shape);
    return { body: stored.body, replayed: stored.replayed };
  }
  return { body: options.shape(await endpoint.handler(ctx, input)), replayed: false };
}
