import { and, desc, eq, gt, isNull, ne, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import { accountTable, type Plan, type SubscriptionStatus } from '../../db/tables/accounts.ts';
import { consoleSessionTable, membershipTable, type ConsoleSession, type Role } from '../../db/tables/identity.ts';
import { newSessionId, newToken } from './tokens.ts';

/**
 * Console sessions: a signed-in browser on one account. The cookie carries a random token (only its
 * SHA-256 is stored); a session lasts SESSION_IDLE_MS from its last use, at most SESSION_MAX_MS from
 * its start, and ends at once when revoked (sign-out, sign-out everywhere, a password reset) or when
 * its user leaves the account.
 */

export const SESSION_IDLE_MS = 30 * 24 * 3600_000;
export const SESSION_MAX_MS = 90 * 24 * 3600_000;
/** lastSeenAt (and the idle expiry) moves at most this often: a busy console writes once a minute, not per request. */
export const SESSION_TOUCH_MS = 60_000;

export interface SessionClient {
  userAgent?: string | null;
  ip?: string | null;
}

const clip = (value: string | null | undefined) => (value ? value.slice(0, 512) : null);

/** A new session of `userId` on `accountId`: the row, and the token for the cookie (shown only here). */
export async function createSession(db: Executor, userId: string, accountId: string, client: SessionClient, now: Date) {
  const { token, hash } = newToken();
  const rows = await db
    .insert(consoleSessionTable)
    .values({
      id: newSessionId(),
      tokenHash: hash,
      userId,
      accountId,
      csrfToken: newToken().token,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + SESSION_IDLE_MS),
      userAgent: clip(client.userAgent),
      ip: clip(client.ip),
    })
    .returning();
  return { session: oneRow(rows, 'insert into console_session'), token };
}

/** A live session as the authenticator reads it: with the user's role and the account's plan. */
export interface ActiveSession {
  id: string;
  userId: string;
  accountId: string;
  csrfToken: string;
  lastSeenAt: Date;
  expiresAt: Date;
  role: Role;
  plan: Plan;
  subscriptionStatus: SubscriptionStatus;
}

/** The live session of a token hash: not revoked, not expired, its user still a member of its account. */
export async function findActiveSession(
  db: Executor,
  tokenHash: string,
  now: Date,
): Promise<ActiveSession | undefined> {
  const [row] = await db
    .select({
      id: consoleSessionTable.id,
      userId: consoleSessionTable.userId,
      accountId: consoleSessionTable.accountId,
      csrfToken: consoleSessionTable.csrfToken,
      lastSeenAt: consoleSessionTable.lastSeenAt,
      expiresAt: consoleSessionTable.expiresAt,
      role: membershipTable.role,
      plan: accountTable.plan,
      subscriptionStatus: accountTable.subscriptionStatus,
    })
    .from(consoleSessionTable)
    .innerJoin(
      membershipTable,
      and(
        eq(membershipTable.accountId, consoleSessionTable.accountId),
        eq(membershipTable.userId, consoleSessionTable.userId),
      ),
    )
    .innerJoin(accountTable, eq(accountTable.id, consoleSessionTable.accountId))
    .where(
      and(
        eq(consoleSessionTable.tokenHash, tokenHash),
        isNull(consoleSessionTable.revokedAt),
        gt(consoleSessionTable.expiresAt, now),
      ),
    );
  return row;
}

/**
 * Marks the session used now: its idle expiry moves forward, never past its longest life. A value in a
 * raw `sql` template reaches postgres.js unconverted, which takes no Date there: it goes as ISO text.
 */
export async function touchSession(db: Executor, id: string, now: Date): Promise<void> {
  const idleEnd = new Date(now.getTime() + SESSION_IDLE_MS).toISOString();
  await db
    .update(consoleSessionTable)
    .set({
      lastSeenAt: now,
      expiresAt: sql`least(${idleEnd}::timestamptz,
        ${consoleSessionTable.createdAt} + ${`${SESSION_MAX_MS} milliseconds`}::interval)`,
    })
    .where(and(eq(consoleSessionTable.id, id), isNull(consoleSessionTable.revokedAt)));
}

/** Ends one session of the user; false when there is no live one with that id. */
export async function revokeSession(db: Executor, userId: string, id: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(consoleSessionTable)
    .set({ revokedAt: now })
    .where(
      and(
        eq(consoleSessionTable.id, id),
        eq(consoleSessionTable.userId, userId),
        isNull(consoleSessionTable.revokedAt),
        gt(consoleSessionTable.expiresAt, now),
      ),
    )
    .returning({ id: consoleSessionTable.id });
  return rows.length > 0;
}

/** Ends every live session of the user (on `accountId` only, when given), but `except`; how many. */
export async function revokeUserSessions(
  db: Executor,
  userId: string,
  now: Date,
  options: { except?: string; accountId?: string } = {},
): Promise<number> {
  const rows = await db
    .update(consoleSessionTable)
    .set({ revokedAt: now })
    .where(
      and(
        eq(consoleSessionTable.userId, userId),
        isNull(consoleSessionTable.revokedAt),
        gt(consoleSessionTable.expiresAt, now),
        options.except ? ne(consoleSessionTable.id, options.except) : undefined,
        options.accountId ? eq(consoleSessionTable.accountId, options.accountId) : undefined,
      ),
    )
    .returning({ id: consoleSessionTable.id });
  return rows.length;
}

/** The user's live sessions, newest first. */
export async function listUserSessions(db: Executor, userId: string, now: Date): Promise<ConsoleSession[]> {
  return db
    .select()
    .from(consoleSessionTable)
    .where(
      and(
        eq(consoleSessionTable.userId, userId),
        isNull(consoleSessionTable.revokedAt),
        gt(consoleSessionTable.expiresAt, now),
      ),
    )
    .orderBy(desc(consoleSessionTable.createdAt), desc(consoleSessionTable.id));
}
