import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../shared/ids.ts';

/**
 * The secrets of the console: session cookies, invitation and password-reset links. Each is 32 random
 * bytes (base64url); only its SHA-256 is stored, so reading the tables signs no one in.
 */

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export function newToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

/** Whether `given` equals `expected`, in time that does not depend on where they differ. */
export function sameSecret(given: string | undefined | null, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** A token as it may arrive in a link or cookie: base64url, 43 characters. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const newUserId = () => `usr_${randomBase62(16)}`;
export const newMembershipId = () => `mem_${randomBase62(16)}`;
export const newSessionId = () => `ses_${randomBase62(16)}`;
export const newInvitationId = () => `inv_${randomBase62(16)}`;
