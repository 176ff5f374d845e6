import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Headers on every answer of the HTTP server (REST, /graphql, /mcp, /health, /ready, /metrics, errors
 * and 404s alike), docs/operations.md:
 * - the security headers of @fastify/helmet: `X-Content-Type-Options: nosniff`, `Referrer-Policy:
 *   no-referrer`, `X-Frame-Options: DENY`, and a Content-Security-Policy that allows nothing
 *   (`default-src 'none'; frame-ancestors 'none'`): the API answers JSON, CSV and text, never pages.
 *   The one HTML page, GraphiQL, and the files it loads (its scripts start web workers, whose policy
 *   is their own response's) carry GraphiQL's own policy instead. HSTS only when the public URL is https.
 * - `X-Request-Id`: the caller's, when it sent a sane one, else a new UUID; the same id is in every
 *   log line of the request (`reqId`).
 */

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A request id a caller may choose: 1 to 128 letters, digits and `-_.:/+=` (no spaces, quotes or control characters).
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/;

/** Fastify's `genReqId`: the caller's X-Request-Id when sane, else a new UUID. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * The policy of everything the gateway answers but its HTML pages:
 * nothing may load, nothing may frame it (as helmet writes it).
 */
export const API_CSP = "default-src 'none';frame-ancestors 'none'";

export interface HeaderOptions {
  /** The gateway's public URL: HSTS is sent only when it is https. */
  publicUrl: string;
  /** Paths (prefixes) of HTML pages and their files, each with its own Content-Security-Policy. */
  pages: { prefix: string; csp: string }[];
}

/** The headers @fastify/helmet sends with `options`: computed once, on a probe server, since they never change. */
async function helmetHeaders(options: FastifyHelmetOptions): Promise<Record<string, string>> {
  const probe = Fastify();
  await probe.register(helmet, options);
  probe.get('/', async () => '');
  const res = await probe.inject('/');
  await probe.close();
  const own = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive']);
  return Object.fromEntries(
    Object.entries(res.headers).filter(([name, value]) => !own.has(name) && typeof value === 'string'),
  ) as Record<string, string>;
}

/**
 * Registers the security headers and the request id header on every answer, in the first hook of
 * every request (so that even a CORS preflight or an early refusal carries them); call before any
 * other plugin. @fastify/helmet builds its middleware on every request (about 20 µs, measurable on
 * status polling); its headers are the same for every answer, so they are taken from it once and set
 * as they are.
 */
export async function installHeaders(app: FastifyInstance, options: HeaderOptions) {
  const https = new URL(options.publicUrl).protocol === 'https:';
  const security = await helmetHeaders({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    // Browsers ignore HSTS over plain http; behind TLS it keeps them on https (not the operator's other subdomains).
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: false } : false,
  });
  (app as FastifyInstance & { [INSTALLED]?: Installed })[INSTALLED] = { security, pages: options.pages };
  app.addHook('onRequest', (request, reply, done) => {
    setAnswerHeaders(request, reply);
    done();
  });
}

const INSTALLED = Symbol('leadgate.headers');
interface Installed {
  security: Record<string, string>;
  pages: HeaderOptions['pages'];
}

/**
 * Sets the headers of every answer on `reply`: what the `onRequest` hook does, for the answers Fastify
 * makes before any hook runs (its `frameworkErrors`: a path that does not decode).
 */
export function setAnswerHeaders(request: FastifyRequest, reply: FastifyReply) {
  // Plugins' instances inherit from the root's, where installHeaders put the headers.
  const installed = (reply.server as FastifyInstance & { [INSTALLED]?: Installed })[INSTALLED];
  if (!installed) return;
  reply.headers(installed.security);
  reply.header('X-Request-Id', request.id);
  const page = installed.pages.length > 0 ? installed.pages.find((p) => request.url.startsWith(p.prefix)) : undefined;
  if (page) reply.header('Content-Security-Policy', page.csp);
}
