import type { Account, AppUser } from '../../db/schema/accounts.ts';
import type { ConsoleSession, Role } from '../../db/schema/identity.ts';
import type { Core } from '../core.ts';
import { usdToMicros } from '../billing/money.ts';
import { AppError, unauthenticated } from '../shared/errors.ts';
import { getAccount, openAccount } from './accounts.ts';
import { addMembership, firstMembership } from './members.ts';
import { createRateLimiter, RateLimitedError, type RateLimiter } from './rate-limit.ts';
import { createSession, findActiveSession, type ActiveSession, type SessionClient } from './sessions.ts';
import { hashToken, TOKEN_PATTERN } from './tokens.ts';
import { createUser, emailTaken, findUserByEmail, getUser, hashPassword, invalidCredentials, normalizeEmail, verifyPassword } from './users.ts';

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

/** Opens a session of the user on the account, with the role they hold there. */
export async function startSession(core: IdentityDeps, user: AppUser, accountId: string, role: Role, client: SessionClient): Promise<SignedIn> {
  const { session, token } = await createSession(core.db, user.id, accountId, client, core.clock());
  return { user, account: await getAccount(core.db, accountId), role, session, token };
}

/**
 * Opens a user and a new account they own, on the trial the operator configures (SIGNUP_PLAN,
 * SIGNUP_STATUS, SIGNUP_CREDITS), and signs them in. 403 `signup_closed` with SIGNUP=invite; 409
 * `email_taken`. The account has no API key yet: its owner creates named ones in the console.
 */
export async function signUp(
  core: IdentityDeps,
  input: { email: string; password: string; name?: string | null; accountName?: string | null },
  client: SessionClient,
): Promise<SignedIn> {
  if (core.config.signup !== 'open') throw new AppError(403, 'signup_closed', 'Sign-up is by invitation only on this server: ask an account owner to invite you');
  if (await findUserByEmail(core.db, input.email)) throw emailTaken();
  const passwordHash = await hashPassword(input.password, core.config.passwordCost);
  const trial = core.config.signupTrial;
  const { user, account } = await core.db.transaction(async (tx) => {
    const user = await createUser(tx, { email: input.email, name: input.name, passwordHash });
    const account = await openAccount(tx, {
      name: input.accountName || `${input.name || normalizeEmail(input.email).split('@')[0]}'s team`,
      plan: trial.plan,
      subscriptionStatus: trial.status,
      creditsMicros: usdToMicros(trial.creditsUsd),
    });
    await addMembership(tx, account.id, user.id, 'owner');
    return { user, account };
  });
  return startSession(core, user, account.id, 'owner', client);
}

/**
 * Failed sign-ins are counted per email (LOGIN_FAILURES_PER_MINUTE) and per client address (with the
 * failed API-key authentications, AUTH_FAILURES_PER_MINUTE); past either budget the sign-in is refused
 * 429 `rate_limited` before the password is checked, until the window ends.
 */
export interface LoginThrottle {
  byEmail: RateLimiter;
}

export function createLoginThrottle(core: Pick<Core, 'sql' | 'config'>): LoginThrottle {
  return { byEmail: createRateLimiter(core.sql, Math.max(1, core.config.loginFailuresPerMinute)) };
}

/** The limiter's key of an email: hashed, so the shared counter table holds no addresses (and any length fits). */
export const emailThrottleKey = (purpose: 'login' | 'reset', email: string) => `${purpose}:${hashToken(normalizeEmail(email))}`;

const tooManySignIns = (err: RateLimitedError) =>
  new RateLimitedError(err.state, `Too many failed sign-ins: the limit is ${err.state.limit} per minute. Retry in ${err.state.resetSecs} s, or reset the password.`);

/**
 * Signs a user in by email and password, on their first account. 401 `invalid_credentials` alike for
 * an unknown email and a wrong password (the same work is done for both).
 */
export async function signIn(
  core: IdentityDeps & Pick<Core, 'authFailureLimiter'>,
  throttle: LoginThrottle,
  input: { email: string; password: string },
  client: SessionClient & { address: string },
): Promise<SignedIn> {
  const emailBucket = emailThrottleKey('login', input.email);
  const addressBucket = `auth:${client.address}`;
  const throttled = core.config.loginFailuresPerMinute > 0;
  const addressLimited = core.config.authFailuresPerMinute > 0;
  const blocked = (throttled && throttle.byEmail.exhausted(emailBucket)) || (addressLimited && core.authFailureLimiter.exhausted(addressBucket));
  if (blocked) throw tooManySignIns(new RateLimitedError(blocked));
  const user = await findUserByEmail(core.db, input.email);
  const ok = await verifyPassword(user?.passwordHash, input.password, core.config.passwordCost);
  const membership = ok && user ? await firstMembership(core.db, user.id) : undefined;
  if (!user || !ok) {
    try {
      if (throttled) await throttle.byEmail.consume(emailBucket);
      if (addressLimited) await core.authFailureLimiter.consume(addressBucket);
    } catch (over) {
      if (over instanceof RateLimitedError) throw tooManySignIns(over);
      // Counting is bookkeeping: with the database out of reach the answer is still the 401.
    }
    throw invalidCredentials();
  }
  if (!membership) throw unauthenticated('You are a member of no account any more: ask an account owner for an invitation');
  return startSession(core, user, membership.accountId, membership.role, client);
}
