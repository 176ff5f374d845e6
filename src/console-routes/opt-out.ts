import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core.ts';
import {
  confirmOptOut,
  createOptOutThrottles,
  OPT_OUT_LINK_MS,
  optOutEmail,
  readOptOutLink,
  requestOptOut,
} from '../privacy/opt-out.ts';
import { clientAddress } from '../http/pipeline.ts';
import { AppError, coerceError, DatabaseUnavailableError } from '../shared/errors.ts';
import {
  OPT_OUT_CSP,
  optOutConfirmForm,
  optOutCrossSite,
  optOutDone,
  optOutFailed,
  optOutForm,
  optOutLimited,
  optOutLinkRefused,
  optOutSent,
  optOutUnreadable,
} from './opt-out-page.ts';

/**
 * The public opt-out page (docs/privacy.md#the-opt-out-page), no sign-in: GET /opt-out shows the form,
 * POST /opt-out asks for a link (the same answer for every well-formed address), GET
 * /opt-out/confirm?token= shows what the link would do and a button, POST /opt-out/confirm erases.
 * Plain HTML forms (application/x-www-form-urlencoded), so the page works without JavaScript. The POSTs
 * are refused when the browser says they come from another site (Sec-Fetch-Site, Origin).
 */

/** The largest form body: an address or a token, with room to spare. */
const FORM_LIMIT = 4096;
const LINK_HOURS = OPT_OUT_LINK_MS / 3600_000;

/** Headers of every answer of the page: its own policy, never cached (an address may be on it). */
function pageHeaders(reply: FastifyReply, status: number) {
  return (
    reply
      .status(status)
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', OPT_OUT_CSP)
      .header('Cache-Control', 'no-store')
      // The forms post to the gateway with their Origin (under `no-referrer` browsers send `Origin: null`);
      // the pages load nothing, so the link's token goes nowhere else.
      .header('Referrer-Policy', 'same-origin')
  );
}

const field = (body: unknown, name: string): string =>
  body !== null && typeof body === 'object' && typeof (body as Record<string, unknown>)[name] === 'string'
    ? ((body as Record<string, string>)[name] ?? '')
    : '';

export async function optOutRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const { config } = core;
  const throttles = createOptOutThrottles(core);
  const publicOrigin = new URL(config.publicUrl).origin;

  // Forms, in this plugin's routes (the POSTs refuse every other type before reading it).
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  app.setErrorHandler((err: Error & { statusCode?: number }, request, reply) => {
    const coerced = coerceError(err);
    // What Fastify refuses before the handler (a body too large, unreadable), or a refusal of the service.
    const given = coerced instanceof AppError ? coerced.status : err.statusCode;
    const status = given && given < 500 ? given : undefined;
    if (status) return pageHeaders(reply, status).send(optOutUnreadable());
    const unavailable = coerced instanceof DatabaseUnavailableError;
    if (unavailable) request.log.warn({ code: 'database_unavailable' }, 'opt-out page: database unavailable');
    else request.log.error({ method: request.method, url: request.url.split('?')[0], err }, 'unhandled error');
    return pageHeaders(reply, unavailable ? 503 : 500).send(optOutFailed(unavailable));
  });

  /** Whether the browser says this POST comes from another site (no header at all: not a browser's form). */
  const fromAnotherSite = (request: FastifyRequest) => {
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
    const origin = request.headers.origin;
    return origin !== undefined && origin !== publicOrigin && !sameHost(origin, request.headers.host);
  };
  /** The POSTs, before their body is read: from this site, and a form. */
  const formOnly = {
    onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
      if (fromAnotherSite(request)) return pageHeaders(reply, 403).send(optOutCrossSite());
      if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(String(request.headers['content-type'] ?? '')))
        return pageHeaders(reply, 415).send(optOutUnreadable());
    },
  };

  app.get('/opt-out', async (_request, reply) => pageHeaders(reply, 200).send(optOutForm()));

  app.post('/opt-out', formOnly, async (request, reply) => {
    const typed = field(request.body, 'email');
    const email = optOutEmail.safeParse(typed);
    if (!email.success)
      return pageHeaders(reply, 400).send(
        optOutForm({ error: 'Enter an email address, such as name@example.com.', value: typed.slice(0, 254) }),
      );
    const asked = await requestOptOut(core, throttles, email.data, clientAddress(config, request.raw));
    if (!asked.asked)
      return pageHeaders(reply, 429)
        .header('Retry-After', String(asked.retryAfterSecs))
        .send(optOutLimited(asked.retryAfterSecs));
    return pageHeaders(reply, 200).send(optOutSent(LINK_HOURS, config.optOut.mailsPerAddress));
  });

  app.get<{ Querystring: { token?: string } }>('/opt-out/confirm', async (request, reply) => {
    const token = typeof request.query.token === 'string' ? request.query.token : '';
    const link = await readOptOutLink(core, token);
    if (link.state === 'open') return pageHeaders(reply, 200).send(optOutConfirmForm(token, link.value));
    return pageHeaders(reply, link.state === 'unknown' ? 400 : 410).send(optOutLinkRefused(link, LINK_HOURS));
  });

  app.post('/opt-out/confirm', formOnly, async (request, reply) => {
    const confirmed = await confirmOptOut(core, field(request.body, 'token'));
    if (confirmed.state === 'done')
      return pageHeaders(reply, 200).send(optOutDone(confirmed.value, confirmed.receipt.id));
    return pageHeaders(reply, confirmed.state === 'unknown' ? 400 : 410).send(optOutLinkRefused(confirmed, LINK_HOURS));
  });
}

function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}
