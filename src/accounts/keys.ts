import { and, desc, eq, getTableColumns, inArray, isNull } from 'drizzle-orm';
import { z } from 'zod';
import type { Executor } from '../../db/client.ts';
import { apiKeyTable, type ApiKey } from '../../db/tables/accounts.ts';
import { membershipTable, type Role } from '../../db/tables/identity.ts';
import type { Core } from '../core.ts';
import { byCaller, recordAudit } from '../audit/audit.ts';
import { fromZodError, notFound, ValidationError } from '../shared/errors.ts';
import { assertStorable } from '../shared/params.ts';
import { createApiKey, keyLabel } from './accounts.ts';
import type { Principal } from './principal.ts';
import { requireRole, requireUser } from './roles.ts';

/**
 * The console's management of an account's API keys: owners and admins, signed in (roles.ts). A key
 * created here acts with at most its creator's current role and is revoked when its creator leaves
 * the account (`revokeCreatorKeys`).
 */

/**
 * A key with its creator's current role in the account: null for an operator key (no creator) or a creator who left.
 */
export type ListedKey = ApiKey & { creatorRole: Role | null };

const keyInput = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  expiresAt: z.date().nullish(),
});

/**
 * A key of the caller's account, named, optionally expiring, acting with
 * at most the caller's role; its secret is in the answer only. Audited (`api_key.created`).
 */
export async function createNamedKey(
  core: Pick<Core, 'db' | 'clock'>,
  principal: Principal,
  input: { name: string; expiresAt?: Date | null },
) {
  const now = core.clock();
  requireRole(principal, 'keys');
  const { userId, role } = requireUser(principal);
  const parsed = keyInput.safeParse(input);
  if (!parsed.success) throw fromZodError(parsed.error);
  assertStorable(parsed.data.name, 'name');
  const expiresAt = parsed.data.expiresAt ?? null;
  if (expiresAt && (Number.isNaN(expiresAt.getTime()) || expiresAt <= now))
    throw new ValidationError([{ path: 'expiresAt', message: 'must be in the future' }]);
  const created = await core.db.transaction(async (tx) => {
    const made = await createApiKey(tx, principal.accountId, { name: parsed.data.name, expiresAt, createdBy: userId });
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'api_key.created',
      target: { type: 'api_key', id: made.keyId, label: keyLabel(made.key) },
      details: { name: made.key.name, expiresAt: expiresAt?.toISOString() ?? null },
    });
    return made;
  });
  return { ...created, key: { ...created.key, creatorRole: role } satisfies ListedKey };
}

/** Keys with their creator's membership in the key's account. */
const selectKeys = (db: Executor) =>
  db
    .select({ ...getTableColumns(apiKeyTable), creatorRole: membershipTable.role })
    .from(apiKeyTable)
    .leftJoin(
      membershipTable,
      and(eq(membershipTable.accountId, apiKeyTable.accountId), eq(membershipTable.userId, apiKeyTable.createdBy)),
    );

/** The account's keys, newest first; revoked ones only when asked for. */
export async function listKeys(db: Executor, principal: Principal, includeRevoked: boolean): Promise<ListedKey[]> {
  requireRole(principal, 'keys');
  return selectKeys(db)
    .where(
      and(eq(apiKeyTable.accountId, principal.accountId), includeRevoked ? undefined : isNull(apiKeyTable.revokedAt)),
    )
    .orderBy(desc(apiKeyTable.createdAt), desc(apiKeyTable.id));
}

/** Keys of the caller's account by id, in order; null for another account's or none. */
export async function loadKeys(
  db: Executor,
  principal: Principal,
  ids: readonly string[],
): Promise<(ListedKey | null)[]> {
  requireRole(principal, 'keys');
  const rows = ids.length
    ? await selectKeys(db).where(and(eq(apiKeyTable.accountId, principal.accountId), inArray(apiKeyTable.id, [...ids])))
    : [];
  return ids.map((id) => rows.find((r) => r.id === id) ?? null);
}

/**
 * Revokes a key of the caller's account by id: it stops working on every face, at once in this process
 * (which forgets the keys it cached), in the others within the key cache time. 404 for none (or
 * revoked already). Audited (`api_key.revoked`).
 */
export async function revokeKey(
  core: Pick<Core, 'db' | 'auth' | 'clock'>,
  principal: Principal,
  id: string,
): Promise<ListedKey> {
  const { db } = core;
  requireRole(principal, 'keys');
  const revoked = await db.transaction(async (tx) => {
    const [key] = await tx
      .update(apiKeyTable)
      .set({ revokedAt: core.clock(), revokedReason: 'revoked' })
      .where(and(eq(apiKeyTable.id, id), eq(apiKeyTable.accountId, principal.accountId), isNull(apiKeyTable.revokedAt)))
      .returning({ id: apiKeyTable.id, name: apiKeyTable.name, prefix: apiKeyTable.prefix });
    if (!key) throw notFound('API key');
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'api_key.revoked',
      target: { type: 'api_key', id: key.id, label: keyLabel(key) },
      details: { name: key.name },
    });
    return key;
  });
  const [key] = await loadKeys(db, principal, [revoked.id]);
  if (!key) throw notFound('API key');
  core.auth.clear();
  return key;
}

/**
 * Revokes the live keys `userId` created in the account, as `creator_removed`: called in the
 * transaction that ends their membership, so their keys never outlive it. How many it revoked.
 */
export async function revokeCreatorKeys(tx: Executor, accountId: string, userId: string, now: Date): Promise<number> {
  const revoked = await tx
    .update(apiKeyTable)
    .set({ revokedAt: now, revokedReason: 'creator_removed' })
    .where(and(eq(apiKeyTable.accountId, accountId), eq(apiKeyTable.createdBy, userId), isNull(apiKeyTable.revokedAt)))
    .returning({ id: apiKeyTable.id });
  return revoked.length;
}
