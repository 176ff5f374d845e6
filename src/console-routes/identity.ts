import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import { z } from 'zod';
import type { Core } from '../core.ts';
import { acceptInvitation, previewInvitation } from '../accounts/invitations.ts';
import { pendingTrialCredits, resendEmailVerification, verifyEmail } from '../accounts/email-verification.ts';
import { confirmPasswordReset, requestPasswordReset } from '../accounts/password-reset.ts';
import { SESSION_MAX_MS } from '../accounts/sessions.ts';
import { assignableRoles, permissionsOfRole, requireUser } from '../accounts/roles.ts';
import {
  createIdentityThrottles,
  currentSession,
  emailThrottleKey,
  signIn,
  signOut,
  signUp,
  type SessionState,
} from '../accounts/sign-in.ts';
import { formatDollars } from '../billing/money.ts';
import { emailSchema, nameSchema, passwordSchema } from '../accounts/users.ts';
import { clientAddress, SESSION_COOKIE } from '../http/pipeline.ts';
import { AppError, unauthenticated } from '../shared/errors.ts';
import { parseParams } from '../shared/params.ts';

/**
 * The console's sign-in routes, JSON over HTTP under /auth (the GraphQL endpoint refuses callers
 * without credentials before parsing, so the session's lifecycle lives here, as in hosted auth
 * services). The session token travels only in the `lg_session` cookie (HttpOnly, SameSite=Lax,
 * Secure behind https); requests it authenticates carry its CSRF token in X-CSRF-Token. The POSTs
 * that open a session accept JSON only and check Origin, so no cross-site form can sign anyone in.
 * docs/console.md describes the routes and their decisions.
 */

/**
 * What every route that signs in answers, and GET /auth/session. `permissions`: what the user's role
 * may do (billing, webhooks, keys, members). `assignableRoles`: the roles the user may give, fewest
 * rights first; they may change or remove the members holding one of them. `trialCredits`: the USD
 * verifying the email would add to the account's wallet ("5.00"), null when none await.
 */
function sessionView(state: SessionState, config: Core['config']) {
  return {
    user: {
      id: state.user.id,
      email: state.user.email,
      name: state.user.name,
      emailVerified: state.user.emailVerifiedAt !== null,
    },
    account: { id: state.account.id, name: state.account.name },
    role: state.role,
    // The console shows the pages of these, so which role sees what is said here only (roles.ts).
    permissions: permissionsOfRole(state.role),
    // The roles its members page offers, and whose members it lets the user change (roles.ts).
    assignableRoles: assignableRoles(state.role),
    csrfToken: state.session.csrfToken,
    expiresAt: state.session.expiresAt.toISOString(),
    trialCredits: pendingTrialCredits(config, state.user),
  };
}

/**
 * A body as every route reads one (shared/params.ts): text Postgres cannot hold is refused, and so is
 * a field the route does not take, named with the closest one it does.
 */
const parse = <T extends z.ZodType>(schema: T, body: unknown): z.infer<T> => parseParams(schema, body ?? {});

const token = z.string().min(1).max(200);
const optionalName = nameSchema.nullish();
const bodies = {
  signUp: z
    .object({ email: emailSchema, password: passwordSchema, name: optionalName, accountName: optionalName })
    .strict(),
  // Any password is checked (a wrong one answers 401), but none longer than a new one may be.
  signIn: z.object({ email: z.string().max(254), password: z.string().max(256) }).strict(),
  reset: z.object({ email: z.string().max(254) }).strict(),
  confirm: z.object({ token, password: passwordSchema }).strict(),
  verify: z.object({ token }).strict(),
  accept: z.object({ token, password: passwordSchema, name: optionalName }).strict(),
};

export async function authRoutes(app: FastifyInstance, { core }: { core: Core }) {
  await app.register(cookie);
  const { config } = core;
  const throttles = createIdentityThrottles(core);
  const publicOrigin = new URL(config.publicUrl).origin;
  const secure = new URL(config.publicUrl).protocol === 'https:';

  /**
   * Who signs in from where: the address is the one failed authentications
   * are counted by (clientAddress), also shown in the session list.
   */
  const client = (request: FastifyRequest) => {
    const address = clientAddress(config, request.raw);
    return { userAgent: request.headers['user-agent'] ?? null, ip: address, address };
  };

  const setSession = (reply: FastifyReply, value: string) =>
    reply.setCookie(SESSION_COOKIE, value, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure,
      maxAge: SESSION_MAX_MS / 1000,
    });
  const clearSession = (reply: FastifyReply) =>
    reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', path: '/', secure });

  /**
   * The POSTs that open a session: JSON only (a cross-site form can send text/plain, never JSON) and,
   * when the browser names an Origin, the gateway's own (PUBLIC_URL, or the host the request came to).
   */
  const preSession = async (request: FastifyRequest) => {
    const type = String(request.headers['content-type'] ?? '');
    if (!/^application\/json\s*(;|$)/i.test(type))
      throw new AppError(415, 'unsupported_media_type', 'Send JSON with "Content-Type: application/json"');
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== publicOrigin && !sameHost(origin, request.headers.host)) {
      throw new AppError(
        403,
        'csrf_failed',
        `Requests from ${origin.slice(0, 100)} may not sign in here: use the console at ${publicOrigin}`,
      );
    }
  };

  /** The caller of a route that acts on the signed-in user: the session cookie and its X-CSRF-Token. */
  const signedInCaller = async (request: FastifyRequest) => {
    const value = request.cookies[SESSION_COOKIE];
    if (!value) throw unauthenticated('Not signed in');
    const csrf = request.headers['x-csrf-token'];
    return core.auth.authenticateSession(value, Array.isArray(csrf) ? csrf[0] : csrf);
  };

  app.post('/auth/sign-up', { onRequest: preSession }, async (request, reply) => {
    const signedIn = await signUp(core, throttles, parse(bodies.signUp, request.body), client(request));
    setSession(reply, signedIn.token);
    return reply.status(201).send(sessionView(signedIn, config));
  });

  app.post('/auth/sign-in', { onRequest: preSession }, async (request, reply) => {
    const signedIn = await signIn(core, throttles, parse(bodies.signIn, request.body), client(request));
    setSession(reply, signedIn.token);
    return reply.send(sessionView(signedIn, config));
  });

  app.get('/auth/session', async (request, reply) => {
    const value = request.cookies[SESSION_COOKIE];
    const state = value ? await currentSession(core, value) : undefined;
    if (!state) throw unauthenticated('Not signed in: sign in at POST /auth/sign-in');
    return reply.header('Cache-Control', 'no-store').send(sessionView(state, config));
  });

  app.post('/auth/sign-out', async (request, reply) => {
    const { ip, userAgent } = client(request);
    await signOut(core, { ...(await signedInCaller(request)), client: { ip, userAgent } });
    clearSession(reply);
    return reply.status(204).send();
  });

  app.post('/auth/password-reset', { onRequest: preSession }, async (request, reply) => {
    const { email } = parse(bodies.reset, request.body);
    // At most LOGIN_FAILURES_PER_MINUTE mails per address and minute; the answer is 202 either way,
    // given before anything is looked up: a worker job finds the user and mails the link.
    const allowed = await throttles.byEmail.consume(emailThrottleKey('reset', email)).then(
      () => true,
      () => false,
    );
    if (allowed) await requestPasswordReset(core, email);
    return reply
      .status(202)
      .send({ message: 'If this email has an account, a link to set a new password is on its way.' });
  });

  app.post('/auth/password-reset/confirm', { onRequest: preSession }, async (request, reply) => {
    const { token: resetToken, password } = parse(bodies.confirm, request.body);
    const signedIn = await confirmPasswordReset(core, resetToken, password, client(request));
    core.auth.clear();
    setSession(reply, signedIn.token);
    return reply.send(sessionView(signedIn, config));
  });

  app.post('/auth/verify-email', { onRequest: preSession }, async (request, reply) => {
    const verified = await verifyEmail(core, parse(bodies.verify, request.body).token);
    return reply.send({
      email: verified.email,
      alreadyVerified: verified.alreadyVerified,
      trial: verified.trial,
      trialCredits: verified.trial === 'granted' ? formatDollars(verified.trialCreditsMicros) : null,
      message: verified.message,
    });
  });

  app.post('/auth/verify-email/resend', async (request, reply) => {
    const principal = await signedInCaller(request);
    const resent = await resendEmailVerification(core, throttles.verificationMails, requireUser(principal).userId);
    return reply.status(resent.sent ? 202 : 200).send({ message: resent.message });
  });

  app.get<{ Params: { token: string } }>('/auth/invitations/:token', async (request, reply) => {
    const preview = await previewInvitation(core, request.params.token);
    return reply.header('Cache-Control', 'no-store').send({ ...preview, expiresAt: preview.expiresAt.toISOString() });
  });

  app.post('/auth/invitations/accept', { onRequest: preSession }, async (request, reply) => {
    const signedIn = await acceptInvitation(core, parse(bodies.accept, request.body), client(request));
    setSession(reply, signedIn.token);
    return reply.send(sessionView(signedIn, config));
  });
}

function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}
