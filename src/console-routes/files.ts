import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/**
 * The console (console/, a React app built into console/dist by the install step) served by the
 * gateway: its page at each of its routes (the app routes in the browser; a reload or a mailed link
 * lands on the same page), its hashed files under /assets/ cached for a year. The API routes are
 * untouched: the console's paths are listed, not caught by a fallback.
 */

/** Where the built console is (console/dist, from the repository root). */
export const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist/', import.meta.url));

/** Where the console's hashed scripts and styles are served. */
export const CONSOLE_ASSETS = '/assets/';

/** The console's routes (react-router's, in console/src/routes.tsx): each answers the page. */
export const CONSOLE_ROUTES = [
  '/',
  '/sign-in',
  '/sign-up',
  '/forgot-password',
  '/reset-password',
  '/verify-email',
  '/invitations/:token',
  '/tools',
  '/tools/:tool',
  '/runs',
  '/runs/:runId',
  '/keys',
  '/members',
  '/leads',
  '/webhooks',
  '/datasets',
  '/schedules',
  '/pipelines',
  '/pipelines/:id',
  '/connections',
  '/destinations',
  '/destinations/:id',
  '/billing',
  '/enrichment',
  '/do-not-contact',
  '/sessions',
  '/audit-log',
  '/oauth/interaction/:uid',
] as const;

/**
 * The console's Content-Security-Policy: scripts, connections (HTTP and graphql-ws to the gateway
 * itself) and everything else from the gateway only; no inline or evaluated script. Inline styles are
 * allowed because the component library (Mantine) writes its theme's CSS variables in a style element
 * at run time; fonts are the system's.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export async function consoleRoutes(app: FastifyInstance, options: { dist?: string } = {}) {
  const dist = options.dist ?? CONSOLE_DIST;
  const indexFile = `${dist}index.html`;
  // Read once: the page is a few hundred bytes naming the hashed files of this build.
  const page = existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : undefined;
  if (page === undefined)
    app.log.warn({ dist }, 'the console is not built (npm run build:console); its pages answer 503');

  if (existsSync(`${dist}assets`)) {
    await app.register(fastifyStatic, {
      root: `${dist}assets`,
      prefix: CONSOLE_ASSETS,
      // Every file name carries its content hash: a new build is new names.
      immutable: true,
      maxAge: '365d',
      index: false,
      decorateReply: false,
    });
  }

  for (const url of CONSOLE_ROUTES) {
    app.get(url, async (_request, reply) => {
      reply.header('Content-Security-Policy', CONSOLE_CSP).header('Cache-Control', 'no-cache');
      if (page === undefined)
        return reply
          .status(503)
          .type('text/plain; charset=utf-8')
          .send('The console is not built: run npm run build:console.\n');
      return reply.type('text/html; charset=utf-8').send(page);
    });
  }
}
