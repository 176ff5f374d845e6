import type { Account, AppUser } from '../../db/tables/accounts.ts';
import type { ConsoleSession, Role } from '../../db/tables/identity.ts';
import type { Core } from '../core.ts';
import type { AuditDetails } from '../audit/actions.ts';
import { byCaller, recordAudit } from '../audit/audit.ts';
import { AppError, notFound, unauthenticated } from '../shared/errors.ts';
import { getAccount, openAccount } from './accounts.ts';
import { addMembership, firstMembership } from './members.ts';
import { sendEmailVerification, VERIFICATION_MAILS_PER_HOUR } from './email-verification.ts';
import { createRateLimiter, RateLimitedError, type RateLimiter, type RateLimitState } from './rate-limit.ts';
import type { Principal } from './principal.ts';
import { requireUser } from './roles.ts';
import {
  createSession,
  findActiveSession,
  revokeSession,
  revokeUserSessions,
  type ActiveSession,
  type SessionClient,
} from './sessions.ts';
import { hashToken, TOKEN_PATTERN } from './tokens.ts';
import {
  createUser,
  emailTaken,
  findUserByEmail,
  getUser,
  hashPassword,
  invalidCredentials,
  normalizeEmail,
  verifyPassword,
} from './users.ts';

/** What the identity flows need of the core. */
export type IdentityDeps = Pick<Core, 'db' | 'config' | 'mailer' | 'clock'>;

/** A user's session on one account, with the role they hold there. */
export interface SessionState {
  user: AppUser;
  account: Account;
  role: Role;
  session: ConsoleSession | ActiveSession;
}

/** A user just signed in: the session and its token (for the cookie, shown only here). */
export interface SignedIn extends SessionState {
  session: ConsoleSession;
  token: string;
}

/** The live session of a cookie's token, or undefined (unknown, expired, revoked, or its user no longer a member). */
export async function currentSession(core: IdentityDeps, token: string): Promise<SessionState | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  const session = await findActiveSession(core.db, hashToken(token), core.clock());
  if (!session) return undefined;
  const user = await getUser(core.db, session.userId);
  return user && { user, account: await getAccount(core.db, session.accountId), role: session.role, session };
}

/** Opens a session of the user on the account, with the role they hold there; audited (`session.signed_in`). */
export async function startSession(
  core: IdentityDeps,
  user: AppUser,
  accountId: string,
  role: Role,
  client: SessionClient,
  method: AuditDetails['session.signed_in']['method'],
): Promise<SignedIn> {
  const { session, token } = await core.db.transaction(async (tx) => {
    const created = await createSession(tx, user.id, accountId, client, core.clock());
    await recordAudit(tx, {
      accountId,
      actor: { type: 'user', id: user.id, label: user.email },
      client,
      action: 'session.signed_in',
      target: { type: 'session', id: created.session.id },
      details: { method },
    });
    return created;
  });
  return { user, account: await getAccount(core.db, accountId), role, session, token };
}

/**
 * The limits of the sign-in routes, each counted in the Postgres store every gateway process shares
 * (rate-limit.ts). Counted before the work they guard, so requests that arrive together cannot pass
 * a limit before any of them is counted.
 */
export interface IdentityThrottles {
  /**
   * Sign-in attempts per email (LOGIN_FAILURES_PER_MINUTE; the right password
   * gives its unit back), and password-reset mails per email.
   */
  byEmail: RateLimiter;
  /** Sign-ups per client address and hour (SIGNUPS_PER_HOUR). */
  signUps: RateLimiter;
  /** Verification links sent again per user and hour (VERIFICATION_MAILS_PER_HOUR). */
  verificationMails: RateLimiter;
}

const HOUR_MS = 3600_000;

export function createIdentityThrottles(core: Pick<Core, 'sql' | 'config'>): IdentityThrottles {
  return {
    byEmail: createRateLimiter(core.sql, Math.max(1, core.config.loginFailuresPerMinute)),
    signUps: createRateLimiter(core.sql, Math.max(1, core.config.signupsPerHour), Date.now, HOUR_MS),
    verificationMails: createRateLimiter(core.sql, VERIFICATION_MAILS_PER_HOUR, Date.now, HOUR_MS),
  };
}

/** The limiter's key of an email: hashed, so the shared counter table holds no addresses (and any length fits). */
export const emailThrottleKey = (purpose: 'login' | 'reset', email: string) =>
  `${purpose}:${hashToken(normalizeEmail(email))}`;

const tooManySignUps = (err: RateLimitedError) =>
  new RateLimitedError(
    err.state,
    `Too many sign-ups from your address: the limit is ${err.state.limit} an hour. ` +
      `Retry in ${Math.ceil(err.state.resetSecs / 60)} min, or sign in if you have an account.`,
  );

/**
 * Opens a user and a new account they own, on the plan the operator configures (SIGNUP_PLAN,
 * SIGNUP_STATUS), signs them in and mails them a link to verify their email; the account's trial
 * credits (SIGNUP_CREDITS) come when they follow it (email-verification.ts). At most SIGNUPS_PER_HOUR
 * a client address (429 `rate_limited`), counted before anything else; 403 `signup_closed` with
 * SIGNUP=invite; 409 `email_taken`. The account has no API key yet: its owner creates named ones in
 * the console.
 */
export async function signUp(
  core: IdentityDeps & Pick<Core, 'logger'>,
  throttles: IdentityThrottles,
  input: { email: string; password: string; name?: string | null; accountName?: string | null },
  client: SessionClient & { address: string },
): Promise<SignedIn> {
  if (core.config.signup !== 'open')
    throw new AppError(
      403,
      'signup_closed',
      'Sign-up is by invitation only on this server: ask an account owner to invite you',
    );
  if (core.config.signupsPerHour > 0) {
    try {
      await throttles.signUps.consume(`signup:${client.address}`);
    } catch (err) {
      throw err instanceof RateLimitedError ? tooManySignUps(err) : err;
    }
  }
  if (await findUserByEmail(core.db, input.email)) throw emailTaken();
  const passwordHash = await hashPassword(input.password, core.config.passwordCost);
  const trial = core.config.signupTrial;
  const { user, account } = await core.db.transaction(async (tx) => {
    const account = await openAccount(tx, {
      name: input.accountName || `${input.name || normalizeEmail(input.email).split('@')[0]}'s team`,
      plan: trial.plan,
      subscriptionStatus: trial.status,
    });
    const user = await createUser(tx, {
      email: input.email,
      name: input.name,
      passwordHash,
      signupAccountId: account.id,
    });
    await addMembership(tx, account.id, user.id, 'owner');
    return { user, account };
  });
  const signedIn = await startSession(core, user, account.id, 'owner', client, 'sign_up');
  // The account and session stand without the mail: the console offers to send the link again.
  await sendEmailVerification(core, user).catch((err: unknown) =>
    core.logger.warn({ err, userId: user.id }, 'could not mail the email verification link of a sign-up'),
  );
  return signedIn;
}

const tooManySignIns = (err: RateLimitedError) =>
  new RateLimitedError(
    err.state,
    `Too many failed sign-ins: the limit is ${err.state.limit} per minute. ` +
      `Retry in ${err.state.resetSecs} s, or reset the password.`,
  );

/**
 * Signs a user in by email and password, on their first account. 401 `invalid_credentials` alike for
 * an unknown email and a wrong password (the same work is done for both). Each attempt is counted
 * before its password is checked, per email (LOGIN_FAILURES_PER_MINUTE) and per client address (with
 * the failed API-key authentications, AUTH_FAILURES_PER_MINUTE); past either budget it is refused 429
 * `rate_limited` unchecked, the right password included, until the window ends. So at most that many
 * passwords are ever checked per email and window, however many attempts arrive at once. The right
 * password gives its units back: a user who signs in costs neither budget anything.
 */
export async function signIn(
  core: IdentityDeps & Pick<Core, 'authFailureLimiter'>,
  throttles: IdentityThrottles,
  input: { email: string; password: string },
  client: SessionClient & { address: string },
): Promise<SignedIn> {
  const budgets: [RateLimiter, string][] = [];
  if (core.config.loginFailuresPerMinute > 0) budgets.push([throttles.byEmail, emailThrottleKey('login', input.email)]);
  if (core.config.authFailuresPerMinute > 0) budgets.push([core.authFailureLimiter, `auth:${client.address}`]);
  const counted: [RateLimiter, string, RateLimitState][] = [];
  const refund = () => {
    for (const [limiter, key, unit] of counted) limiter.refund(key, unit);
  };
  try {
    for (const [limiter, key] of budgets) counted.push([limiter, key, await limiter.consume(key)]);
  } catch (err) {
    // Refused by one budget: the attempt checks nothing, so the other does not keep it.
    refund();
    throw err instanceof RateLimitedError ? tooManySignIns(err) : err;
  }
  const user = await findUserByEmail(core.db, input.email);
  const ok = await verifyPassword(user?.passwordHash, input.password, core.config.passwordCost);
  if (!user || !ok) throw invalidCredentials();
  refund();
  const membership = await firstMembership(core.db, user.id);
  if (!membership)
    throw unauthenticated('You are a member of no account any more: ask an account owner for an invitation');
  return startSession(core, user, membership.accountId, membership.role, client, 'password');
}

/**
 * What ending sessions needs: the database, the clock, and this process's cache of keys and sessions,
 * which it clears so the sessions ended stop here at once (in other processes within the cache time).
 */
type SessionDeps = Pick<Core, 'db' | 'auth' | 'clock'>;

/** Signs the caller's own console session out (POST /auth/sign-out); audited (`session.signed_out`). */
export async function signOut(core: SessionDeps, principal: Principal): Promise<void> {
  const { userId, sessionId } = requireUser(principal);
  await core.db.transaction(async (tx) => {
    if (!(await revokeSession(tx, userId, sessionId, core.clock()))) return;
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'session.signed_out',
      target: { type: 'session', id: sessionId },
      details: {},
    });
  });
  core.auth.clear();
}

/**
 * Ends one live session of the signed-in user, the caller's own included; 404 `not_found` for none of
 * that id. Audited (`session.revoked`).
 */
export async function endSession(core: SessionDeps, principal: Principal, sessionId: string): Promise<void> {
  const { userId } = requireUser(principal);
  await core.db.transaction(async (tx) => {
    if (!(await revokeSession(tx, userId, sessionId, core.clock()))) throw notFound('Session');
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'session.revoked',
      target: { type: 'session', id: sessionId },
      details: {},
    });
  });
  core.auth.clear();
}

/** Ends every live session of the signed-in user, the caller's own included; how many. Audited. */
export async function signOutEverywhere(core: SessionDeps, principal: Principal): Promise<number> {
  const count = await core.db.transaction(async (tx) => {
    const ended = await revokeUserSessions(tx, requireUser(principal).userId, core.clock());
    await recordAudit(tx, { ...byCaller(principal), action: 'session.revoked_all', details: { sessions: ended } });
    return ended;
  });
  core.auth.clear();
  return count;
}
