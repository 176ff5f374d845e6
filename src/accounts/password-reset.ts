import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { passwordResetTable } from '../../db/tables/identity.ts';
import type { Core } from '../core.ts';
import { JOBS } from '../workers/jobs.ts';
import { AppError, unauthenticated } from '../shared/errors.ts';
import { firstMembership } from './members.ts';
import { passwordResetMail } from './mails.ts';
import { revokeUserSessions, type SessionClient } from './sessions.ts';
import { startSession, type IdentityDeps, type SignedIn } from './sign-in.ts';
import { hashToken, newToken, TOKEN_PATTERN } from './tokens.ts';
import { findUserByEmail, getUser, hashPassword, normalizeEmail, setPasswordHash } from './users.ts';

/** A reset link works once, for an hour. */
export const PASSWORD_RESET_MS = 3600_000;

/** The console page a reset link opens (the console reads the token and calls /auth/password-reset/confirm). */
export const passwordResetUrl = (publicUrl: string, token: string) => `${publicUrl}/reset-password?token=${token}`;

/** A one-time password-set token of the user, valid `ttlMs`. */
export async function createPasswordReset(db: Executor, userId: string, now: Date, ttlMs = PASSWORD_RESET_MS) {
  const { token, hash } = newToken();
  const expiresAt = new Date(now.getTime() + ttlMs);
  await db.insert(passwordResetTable).values({ tokenHash: hash, userId, createdAt: now, expiresAt });
  return { token, expiresAt };
}

/**
 * Attempts of the job that mails a reset link (a mail server out of reach is retried, with graphile-worker's backoff).
 */
const RESET_MAIL_ATTEMPTS = 5;

/**
 * Asks for a reset link for `email`: adds the job that mails it (`mailPasswordReset`), whether or not
 * the email has a user. The request does the same work for every address, one insert, and answers
 * before anything is looked up or sent, so neither its answer nor its time tells who has an account.
 * The job carries the address only: it makes the link itself, so no token waits in the job table.
 */
export async function requestPasswordReset(core: Pick<Core, 'sql'>, email: string): Promise<void> {
  await core.sql`select graphile_worker.add_job(${JOBS.sendPasswordReset}::text,
    json_build_object('email', ${normalizeEmail(email)}::text), max_attempts => ${RESET_MAIL_ATTEMPTS})`;
}

/** The job of `requestPasswordReset`: mails a new reset link to the user of `email`, if there is one. */
export async function mailPasswordReset(core: IdentityDeps, email: string): Promise<void> {
  const user = await findUserByEmail(core.db, email);
  if (!user) return;
  const { token, expiresAt } = await createPasswordReset(core.db, user.id, core.clock());
  await core.mailer.send(
    passwordResetMail({ to: user.email, url: passwordResetUrl(core.config.publicUrl, token), expiresAt }),
  );
}

export const invalidToken = () =>
  new AppError(400, 'invalid_token', 'This link is unknown, used or expired: ask for a new one');

/**
 * Sets the password of a reset token's user (the token works once, within its hour), ends every
 * other link and session of the user and signs them in on their first account. 400 `invalid_token`.
 */
export async function confirmPasswordReset(
  core: IdentityDeps,
  token: string,
  password: string,
  client: SessionClient,
): Promise<SignedIn> {
  if (!TOKEN_PATTERN.test(token)) throw invalidToken();
  const passwordHash = await hashPassword(password, core.config.passwordCost);
  const now = core.clock();
  const userId = await core.db.transaction(async (tx) => {
    const [reset] = await tx
      .update(passwordResetTable)
      .set({ usedAt: now })
      .where(
        and(
          eq(passwordResetTable.tokenHash, hashToken(token)),
          isNull(passwordResetTable.usedAt),
          gt(passwordResetTable.expiresAt, now),
        ),
      )
      .returning();
    if (!reset) throw invalidToken();
    // Every other link of the user, older or newer, stops working: one mailed link, once.
    await tx
      .delete(passwordResetTable)
      .where(and(eq(passwordResetTable.userId, reset.userId), isNull(passwordResetTable.usedAt)));
    await setPasswordHash(tx, reset.userId, passwordHash);
    await revokeUserSessions(tx, reset.userId, now);
    return reset.userId;
  });
  const user = await getUser(core.db, userId);
  if (!user) throw invalidToken();
  const membership = await firstMembership(core.db, userId);
  if (!membership)
    throw unauthenticated(
      'Your password is set, but you are a member of no account any more: ask an account owner for an invitation',
    );
  return startSession(core, user, membership.accountId, membership.role, client, 'password_reset');
}
