import { and, desc, eq, inArray, isNull } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../db/client.ts';
import { apiKeyTable, type ApiKey } from '../../db/schema/accounts.ts';
import { fromZodError, notFound, ValidationError } from '../shared/errors.ts';
import { assertStorable } from '../shared/params.ts';
import { createApiKey } from './accounts.ts';
import type { Principal } from './principal.ts';
import { requireRole, requireUser } from './roles.ts';

/** The console's management of an account's API keys: owners and admins, signed in (roles.ts). */

const keyInput = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  expiresAt: z.date().nullish(),
});

/** A key of the caller's account, named, optionally expiring; its secret is in the answer only. */
export async function createNamedKey(db: Executor, principal: Principal, input: { name: string; expiresAt?: Date | null }, now: Date) {
  requireRole(principal, 'keys');
  const { userId } = requireUser(principal);
  const parsed = keyInput.safeParse(input);
  if (!parsed.success) throw fromZodError(parsed.error);
  assertStorable(parsed.data.name, 'name');
  const expiresAt = parsed.data.expiresAt ?? null;
  if (expiresAt && (Number.isNaN(expiresAt.getTime()) || expiresAt <= now)) throw new ValidationError([{ path: 'expiresAt', message: 'must be in the future' }]);
  return createApiKey(db, principal.accountId, { name: parsed.data.name, expiresAt, createdBy: userId });
}

/** The account's keys, newest first; revoked ones only when asked for. */
export async function listKeys(db: Executor, principal: Principal, includeRevoked: boolean): Promise<ApiKey[]> {
  requireRole(principal, 'keys');
  return db
    .select()
    .from(apiKeyTable)
    .where(and(eq(apiKeyTable.accountId, principal.accountId), includeRevoked ? undefined : isNull(apiKeyTable.revokedAt)))
    .orderBy(desc(apiKeyTable.createdAt), desc(apiKeyTable.id));
}

/** Keys of the caller's account by id, in order; null for another account's or none. */
export async function loadKeys(db: Executor, principal: Principal, ids: readonly string[]): Promise<(ApiKey | null)[]> {
  requireRole(principal, 'keys');
  const rows = ids.length ? await db.select().from(apiKeyTable).where(and(eq(apiKeyTable.accountId, principal.accountId), inArray(apiKeyTable.id, [...ids]))) : [];
  return ids.map((id) => rows.find((r) => r.id === id) ?? null);
}

/** Revokes a key of the caller's account by id: it stops working on every face. 404 for none (or revoked already). */
export async function revokeKey(db: Executor, principal: Principal, id: string, now: Date): Promise<ApiKey> {
  requireRole(principal, 'keys');
  const [revoked] = await db
    .update(apiKeyTable)
    .set({ revokedAt: now })
    .where(and(eq(apiKeyTable.id, id), eq(apiKeyTable.accountId, principal.accountId), isNull(apiKeyTable.revokedAt)))
    .returning();
  if (!revoked) throw notFound('API key');
  return revoked;
}
