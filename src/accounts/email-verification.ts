import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { appUserTable, type AppUser } from '../../db/tables/accounts.ts';
import { emailVerificationTable, trialClaimTable } from '../../db/tables/identity.ts';
import type { Core } from '../core.ts';
import { formatDollars, usdToMicros } from '../billing/money.ts';
import { grantPlanCredits } from '../billing/wallet.ts';
import { AppError } from '../shared/errors.ts';
import { isThrowawayMailbox, mailboxHash } from './mailbox.ts';
import { emailVerificationMail } from './mails.ts';
import { RateLimitedError, type RateLimiter } from './rate-limit.ts';
import { hashToken, newToken, TOKEN_PATTERN } from './tokens.ts';
import { getUser } from './users.ts';

/**
 * Email verification and the sign-up trial: a sign-up mails a link; following it verifies the user's
 * email and grants the account their sign-up opened its trial credits (SIGNUP_CREDITS), once per
 * mailbox (mailbox.ts), never for a throwaway-mail address. Until then the account has no credits to spend.
 */

/** What verification needs of the core (sign-in.ts's IdentityDeps; not imported from there, which imports this). */
type IdentityDeps = Pick<Core, 'db' | 'config' | 'mailer' | 'clock'>;

/** A verification link works for a week, as often as it is followed: verifying again changes nothing. */
export const EMAIL_VERIFICATION_MS = 7 * 24 * 3600_000;
/** Links sent again per user and hour (the sign-up's own mail aside): a signed-in user cannot flood an inbox. */
export const VERIFICATION_MAILS_PER_HOUR = 5;

/** The console page a verification link opens (the console reads the token and calls POST /auth/verify-email). */
export const emailVerificationUrl = (publicUrl: string, token: string) => `${publicUrl}/verify-email?token=${token}`;

/** A verification token of the user, valid `ttlMs`. */
export async function createEmailVerification(db: Executor, userId: string, now: Date, ttlMs = EMAIL_VERIFICATION_MS) {
  const { token, hash } = newToken();
  const expiresAt = new Date(now.getTime() + ttlMs);
  await db.insert(emailVerificationTable).values({ tokenHash: hash, userId, createdAt: now, expiresAt });
  return { token, expiresAt };
}

/** The trial credits verifying `user`'s email would grant, in USD ("5.00"), or null when none await them. */
export function pendingTrialCredits(
  config: Pick<Core['config'], 'signupTrial'>,
  user: Pick<AppUser, 'emailVerifiedAt' | 'signupAccountId'>,
): string | null {
  const micros = usdToMicros(config.signupTrial.creditsUsd);
  return !user.emailVerifiedAt && user.signupAccountId && micros > 0n ? formatDollars(micros) : null;
}

/** Mails `user` a new verification link. */
export async function sendEmailVerification(core: IdentityDeps, user: AppUser): Promise<void> {
  const { token, expiresAt } = await createEmailVerification(core.db, user.id, core.clock());
  const url = emailVerificationUrl(core.config.publicUrl, token);
  await core.mailer.send(
    emailVerificationMail({ to: user.email, url, expiresAt, trialCreditsUsd: pendingTrialCredits(core.config, user) }),
  );
}

/** What a resend answers. */
export interface VerificationResent {
  sent: boolean;
  message: string;
}

/**
 * Sends the signed-in user's verification link again: at most VERIFICATION_MAILS_PER_HOUR an hour
 * (429 `rate_limited` past it). A verified user is told so and sent nothing.
 */
export async function resendEmailVerification(
  core: IdentityDeps,
  limiter: RateLimiter,
  userId: string,
): Promise<VerificationResent> {
  const user = await getUser(core.db, userId);
  if (!user) throw new AppError(404, 'not_found', 'Your user no longer exists');
  if (user.emailVerifiedAt) return { sent: false, message: 'Your email is verified already.' };
  try {
    await limiter.consume(`verify-mail:${user.id}`);
  } catch (err) {
    if (!(err instanceof RateLimitedError)) throw err;
    const minutes = Math.ceil(err.state.resetSecs / 60);
    throw new RateLimitedError(
      err.state,
      `${err.state.limit} verification links were sent in the last hour: ` +
        `check your inbox and spam folder, or ask again in ${minutes} min.`,
    );
  }
  await sendEmailVerification(core, user);
  return { sent: true, message: `A new link is on its way to ${user.email}.` };
}

/**
 * What following a verification link did to the trial: `granted` the credits; `claimed` none, the
 * mailbox had its trial on another account; `throwaway` none, the address is at a throwaway-mail
 * service; `none` when no trial awaited (SIGNUP_CREDITS=0, a user who did not sign up, verified before).
 */
export type TrialOutcome = 'granted' | 'claimed' | 'throwaway' | 'none';

export interface EmailVerified {
  email: string;
  /** The email was verified before this link was followed. */
  alreadyVerified: boolean;
  trial: TrialOutcome;
  /** The trial credits granted, micro-dollars (0 unless `granted`). */
  trialCreditsMicros: bigint;
  /** What happened, in words for the person who followed the link. */
  message: string;
}

export const invalidVerificationLink = () =>
  new AppError(
    400,
    'invalid_token',
    'This verification link is unknown or expired: ' +
      'sign in and send a new one from the banner at the top of the console',
  );

/**
 * Verifies the email of a link's user (400 `invalid_token` for an unknown or expired link) and, the
 * first time, grants the trial of the account their sign-up opened, once per mailbox.
 */
export async function verifyEmail(core: IdentityDeps, token: string): Promise<EmailVerified> {
  if (!TOKEN_PATTERN.test(token)) throw invalidVerificationLink();
  const now = core.clock();
  return core.db.transaction(async (tx) => {
    const [link] = await tx
      .select({ userId: emailVerificationTable.userId })
      .from(emailVerificationTable)
      .where(and(eq(emailVerificationTable.tokenHash, hashToken(token)), gt(emailVerificationTable.expiresAt, now)));
    if (!link) throw invalidVerificationLink();
    // Only the first verification of a user goes on: two links followed at once grant nothing twice.
    const [user] = await tx
      .update(appUserTable)
      .set({ emailVerifiedAt: now })
      .where(and(eq(appUserTable.id, link.userId), isNull(appUserTable.emailVerifiedAt)))
      .returning();
    if (!user) {
      const verified = await getUser(tx, link.userId);
      if (!verified) throw new Error(`the user ${link.userId} of a verification link is gone`);
      return {
        email: verified.email,
        alreadyVerified: true,
        trial: 'none',
        trialCreditsMicros: 0n,
        message: 'Your email was verified already.',
      };
    }
    const { trial, micros } = await claimTrial(tx, core.config, user, now);
    return {
      email: user.email,
      alreadyVerified: false,
      trial,
      trialCreditsMicros: micros,
      message: verifiedMessage(trial, micros),
    };
  });
}

/** Grants the sign-up trial of a user whose email was just verified, unless their mailbox had one. */
async function claimTrial(
  tx: Executor,
  config: IdentityDeps['config'],
  user: AppUser,
  now: Date,
): Promise<{ trial: TrialOutcome; micros: bigint }> {
  const micros = usdToMicros(config.signupTrial.creditsUsd);
  if (micros <= 0n || !user.signupAccountId) return { trial: 'none', micros: 0n };
  if (isThrowawayMailbox(user.email)) return { trial: 'throwaway', micros: 0n };
  const [claim] = await tx
    .insert(trialClaimTable)
    .values({
      mailboxHash: mailboxHash(user.email),
      accountId: user.signupAccountId,
      userId: user.id,
      creditsMicros: micros,
      claimedAt: now,
    })
    .onConflictDoNothing()
    .returning({ mailboxHash: trialClaimTable.mailboxHash });
  if (!claim) return { trial: 'claimed', micros: 0n };
  await grantPlanCredits(tx, user.signupAccountId, micros, 'trial credits: email verified');
  return { trial: 'granted', micros };
}

function verifiedMessage(trial: TrialOutcome, micros: bigint): string {
  switch (trial) {
    case 'granted':
      return `Your email is verified: ${formatDollars(micros)} USD of trial credits are in your account's wallet.`;
    case 'claimed':
      return (
        'Your email is verified, but this mailbox has received trial credits before, ' +
        'with another account, so this account gets none: there is one trial per mailbox.'
      );
    case 'throwaway':
      return (
        'Your email is verified, but it is at a throwaway-mail service, ' +
        'which gets no trial credits: sign up with a lasting address to receive them.'
      );
    case 'none':
      return 'Your email is verified.';
  }
}
