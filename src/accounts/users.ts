import { hash, verify } from '@node-rs/argon2';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../db/client.ts';
import { appUserTable, type AppUser } from '../../db/tables/accounts.ts';
import { AppError } from '../shared/errors.ts';
import { newUserId } from './tokens.ts';

/** Passwords: 10 to 256 characters, anything else free (NIST SP 800-63B: length, no composition rules). */
export const passwordSchema = z
  .string()
  .min(10, 'must be at least 10 characters')
  .max(256, 'must be at most 256 characters');
export const emailSchema = z
  .string()
  .trim()
  .max(254, 'must be at most 254 characters')
  .email('must be an email address');
export const nameSchema = z.string().trim().min(1).max(100);

/** Emails are compared and stored case-folded: one user per address, whatever the case typed. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * argon2id cost (Config.passwordCost): OWASP's recommended minimum (19 MiB, 2 passes, 1 lane) unless
 * tests lower it. A hash carries its own parameters, so changing them never breaks sign-in.
 */
export interface PasswordCost {
  memoryKib: number;
  passes: number;
}

/** @node-rs/argon2's Algorithm.Argon2id (a const enum, which isolated modules cannot read). */
const ARGON2ID = 2;

export const hashPassword = (password: string, cost: PasswordCost) =>
  hash(password, { algorithm: ARGON2ID, memoryCost: cost.memoryKib, timeCost: cost.passes, parallelism: 1 });

/** A hash made once, so checking an unknown email costs what checking a known one does. */
let decoy: Promise<string> | undefined;

/** Whether `password` is the user's; false for a user without a password, after the same work. */
export async function verifyPassword(
  passwordHash: string | null | undefined,
  password: string,
  cost: PasswordCost,
): Promise<boolean> {
  if (!passwordHash) {
    decoy ??= hashPassword('not a password of anyone', cost);
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

export const emailTaken = () =>
  new AppError(409, 'email_taken', 'A user with this email exists already: sign in, or reset the password');

export const invalidCredentials = () => new AppError(401, 'invalid_credentials', 'Wrong email or password');

export async function findUserByEmail(db: Executor, email: string): Promise<AppUser | undefined> {
  const [user] = await db
    .select()
    .from(appUserTable)
    .where(eq(appUserTable.email, normalizeEmail(email)));
  return user;
}

export async function getUser(db: Executor, id: string): Promise<AppUser | undefined> {
  const [user] = await db.select().from(appUserTable).where(eq(appUserTable.id, id));
  return user;
}

/**
 * A new user; 409 `email_taken` when the address has one already. `emailVerifiedAt`: when the user
 * showed the mailbox is theirs (default not yet); `signupAccountId`: the account their sign-up opened.
 */
export async function createUser(
  db: Executor,
  input: {
    email: string;
    name?: string | null;
    passwordHash: string | null;
    emailVerifiedAt?: Date | null;
    signupAccountId?: string | null;
  },
): Promise<AppUser> {
  const [user] = await db
    .insert(appUserTable)
    .values({
      id: newUserId(),
      email: normalizeEmail(input.email),
      name: input.name ?? null,
      passwordHash: input.passwordHash,
      emailVerifiedAt: input.emailVerifiedAt ?? null,
      signupAccountId: input.signupAccountId ?? null,
    })
    .onConflictDoNothing({ target: appUserTable.email })
    .returning();
  if (!user) throw emailTaken();
  return user;
}

export async function setPasswordHash(db: Executor, userId: string, passwordHash: string): Promise<void> {
  await db.update(appUserTable).set({ passwordHash }).where(eq(appUserTable.id, userId));
}
