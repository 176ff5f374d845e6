import type { IncomingMessage, ServerResponse } from 'node:http';
import middie from '@fastify/middie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core.ts';
import { allow, deny, pendingAuthorization } from '../accounts/oauth/consent.ts';
import { oauthProvider, type Provider } from '../accounts/oauth/provider.ts';
import { INTERACTION_PATH, OAUTH_PATH } from '../accounts/oauth/resource.ts';
import { createRateLimiter, RateLimitedError } from '../accounts/rate-limit.ts';
import { clientAddress, ownOrigin, sessionCookie } from '../http/pipeline.ts';
import { AppError, notFound, unauthenticated } from '../shared/errors.ts';

/**
 * The OAuth authorization server of the MCP server (docs/api.md, "Connecting hosted agents (OAuth)"):
 * oidc-provider (src/accounts/oauth/provider.ts) mounted under /oauth through @fastify/middie, so it
 * reads its own requests (form bodies included) before Fastify parses anything; its RFC 8414 metadata
 * also at `/.well-known/oauth-authorization-server/oauth`, the path-inserted form clients try first.
 * Dynamic client registrations are limited per client address (REGISTRATIONS_PER_HOUR).
 *
 * The user's side is the console's: its page at `/oauth/interaction/:uid` (files.ts) asks these routes,
 * under the same path (the interaction's cookie is scoped to it), what the app asks for (`/details`),
 * and allows it (`/confirm`: the account, the toolsets, read-only) or denies it (`/abort`), signed in
 * with the console session and its CSRF token, in JSON from the console's own origin.
 */

/** RFC 8414's address of the metadata of the issuer `${PUBLIC_URL}/oauth`. */
export const AUTHORIZATION_SERVER_METADATA_PATH = `/.well-known/oauth-authorization-server${OAUTH_PATH}`;

/** Client registrations per client address and hour. */
export const REGISTRATIONS_PER_HOUR = 20;
const HOUR_MS = 3600_000;

/**
 * Where the authorization server answers a request of the gateway's path `url`: the path it has under
 * the issuer (`/token`, `/.well-known/openid-configuration`, …) with the query, or undefined when it is
 * not its (the consent routes under /oauth/interaction are the console's).
 */
function providerUrl(url: string): string | undefined {
  const at = url.indexOf('?');
  const path = at < 0 ? url : url.slice(0, at);
  const query = at < 0 ? '' : url.slice(at);
  if (path === AUTHORIZATION_SERVER_METADATA_PATH) return `/.well-known/openid-configuration${query}`;
  if (path !== OAUTH_PATH && !path.startsWith(`${OAUTH_PATH}/`)) return undefined;
  if (path === INTERACTION_PATH || path.startsWith(`${INTERACTION_PATH}/`)) return undefined;
  return `${path.slice(OAUTH_PATH.length) || '/'}${query}`;
}

/**
 * Each authorization starts with a session of its own at the authorization server: the console's
 * session is the only sign-in, and one left from an earlier authorization (maybe another user's in
 * this browser) must not stand in for it.
 */
function withoutProviderSession(req: IncomingMessage) {
  const cookie = req.headers.cookie;
  if (!cookie) return;
  const kept = cookie.split(';').filter((part) => !part.trim().startsWith('_session'));
  req.headers.cookie = kept.join(';');
}

function tooManyRegistrations(res: ServerResponse, err: RateLimitedError) {
  res.statusCode = 429;
  res.setHeader('Retry-After', String(err.state.resetSecs));
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(
    JSON.stringify({
      error: 'temporarily_unavailable',
      error_description:
        `Too many client registrations from your address: the limit is ${err.state.limit} an hour. ` +
        `Retry in ${Math.ceil(err.state.resetSecs / 60)} min.`,
    }),
  );
}

export async function oauthRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const { config } = core;
  const registrations = createRateLimiter(core.sql, REGISTRATIONS_PER_HOUR, Date.now, HOUR_MS);
  const callbacks = new WeakMap<Provider, ReturnType<Provider['callback']>>();
  const callbackOf = (provider: Provider) => {
    let callback = callbacks.get(provider);
    if (!callback) {
      callback = provider.callback();
      callbacks.set(provider, callback);
    }
    return callback;
  };

  // The gateway's headers on every answer (security headers, X-Request-Id, CORS), which the
  // authorization server writes itself: set on the raw response before it does.
  app.addHook('onRequest', async (request, reply) => {
    if (providerUrl(request.url) === undefined) return;
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[]);
  });
  await app.register(middie);
  app.use((req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next: (err?: unknown) => void) => {
    const url = providerUrl(req.url ?? '/');
    if (url === undefined) return next();
    const path = url.split('?')[0];
    const answer = async () => {
      if (path === '/reg' && req.method === 'POST' && config.enforceLimits) {
        try {
          await registrations.consume(`oauth-registration:${clientAddress(config, req)}`);
        } catch (err) {
          if (err instanceof RateLimitedError) return tooManyRegistrations(res, err);
          throw err;
        }
      }
      if (path === '/auth') withoutProviderSession(req);
      const provider = await oauthProvider(core);
      // The issuer's path is the mount path: oidc-provider reads it from `originalUrl` against `url`.
      req.originalUrl = `${OAUTH_PATH}${url}`;
      req.url = url;
      await callbackOf(provider)(req, res);
    };
    answer().catch(next);
  });

  const theirs = async () => {
    throw notFound('Route');
  };
  app.route({ method: ['GET', 'POST', 'PUT', 'DELETE'], url: OAUTH_PATH, handler: theirs });
  app.route({ method: ['GET', 'POST', 'PUT', 'DELETE'], url: `${OAUTH_PATH}/*`, handler: theirs });
  app.get(AUTHORIZATION_SERVER_METADATA_PATH, theirs);

  const raw = (request: FastifyRequest, reply: FastifyReply) => ({ req: request.raw, res: reply.raw });

  /** The signed-in console user of a request: the session cookie and its X-CSRF-Token. */
  const signedIn = async (request: FastifyRequest) => {
    const token = sessionCookie(request.headers.cookie);
    if (!token) throw unauthenticated('Not signed in: sign in to the console first');
    const csrf = request.headers['x-csrf-token'];
    return core.auth.authenticateSession(token, Array.isArray(csrf) ? csrf[0] : csrf);
  };

  /** The consent's writes: JSON only, from the console's own origin, signed in. */
  const consentWrite = async (request: FastifyRequest) => {
    const type = String(request.headers['content-type'] ?? '');
    if (!/^application\/json\s*(;|$)/i.test(type))
      throw new AppError(415, 'unsupported_media_type', 'Send JSON with "Content-Type: application/json"');
    const origin = request.headers.origin;
    if (origin !== undefined && !ownOrigin(config, origin, request.headers.host))
      throw new AppError(
        403,
        'csrf_failed',
        `Apps are connected from the console at ${new URL(config.publicUrl).origin} only`,
      );
  };

  type Uid = { Params: { uid: string } };

  app.get<Uid>(`${INTERACTION_PATH}/:uid/details`, async (request, reply) => {
    const caller = sessionCookie(request.headers.cookie) ? await signedIn(request).catch(() => undefined) : undefined;
    const pending = await pendingAuthorization(core, raw(request, reply), request.params.uid, caller);
    return reply.header('Cache-Control', 'no-store').send(pending);
  });

  app.post<Uid>(`${INTERACTION_PATH}/:uid/confirm`, { onRequest: consentWrite }, async (request, reply) => {
    const caller = await signedIn(request);
    const { returnTo } = await allow(core, raw(request, reply), request.params.uid, caller, request.body ?? {});
    return reply.header('Cache-Control', 'no-store').send({ returnTo });
  });

  app.post<Uid>(`${INTERACTION_PATH}/:uid/abort`, { onRequest: consentWrite }, async (request, reply) => {
    const caller = await signedIn(request);
    const { returnTo } = await deny(core, raw(request, reply), request.params.uid, caller);
    return reply.header('Cache-Control', 'no-store').send({ returnTo });
  });
}
