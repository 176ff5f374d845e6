import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import { appUserTable, type AppUser } from '../../db/tables/accounts.ts';
import { membershipTable, type Membership, type Role } from '../../db/tables/identity.ts';
import type { Core } from '../core.ts';
import { byCaller, recordAudit, userEmail } from '../audit/audit.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { revokeCreatorKeys } from './keys.ts';
import type { Principal } from './principal.ts';
import { mayAssign, requireRole, requireUser, roleRequired } from './roles.ts';
import { revokeUserSessions } from './sessions.ts';
import { newMembershipId } from './tokens.ts';

/** Members of accounts: who belongs to which account with which role (roles.ts says what each may do). */

/** What a change of a membership needs: the database, the clock, and this process's cache of keys and sessions. */
export type MemberDeps = Pick<Core, 'db' | 'auth' | 'clock'>;

/** Adds the user to the account; an existing membership is kept as it is. */
export async function addMembership(db: Executor, accountId: string, userId: string, role: Role): Promise<Membership> {
  await db.insert(membershipTable).values({ id: newMembershipId(), accountId, userId, role }).onConflictDoNothing();
  const rows = await db
    .select()
    .from(membershipTable)
    .where(and(eq(membershipTable.accountId, accountId), eq(membershipTable.userId, userId)));
  return oneRow(rows, 'the membership just added');
}

/** The account a user signs in to: their first membership. */
export async function firstMembership(db: Executor, userId: string): Promise<Membership | undefined> {
  const [membership] = await db
    .select()
    .from(membershipTable)
    .where(eq(membershipTable.userId, userId))
    .orderBy(asc(membershipTable.createdAt), asc(membershipTable.id))
    .limit(1);
  return membership;
}

export async function membershipOf(db: Executor, accountId: string, userId: string): Promise<Membership | undefined> {
  const [membership] = await db
    .select()
    .from(membershipTable)
    .where(and(eq(membershipTable.accountId, accountId), eq(membershipTable.userId, userId)));
  return membership;
}

/** The account's members, oldest first (owners and admins only). */
export async function listMembers(db: Executor, principal: Principal): Promise<Membership[]> {
  requireRole(principal, 'members');
  return db
    .select()
    .from(membershipTable)
    .where(eq(membershipTable.accountId, principal.accountId))
    .orderBy(asc(membershipTable.createdAt), asc(membershipTable.id));
}

/** Memberships of the caller's account by id, in order; null for another account's or none (owners and admins only). */
export async function loadMemberships(
  db: Executor,
  principal: Principal,
  ids: readonly string[],
): Promise<(Membership | null)[]> {
  requireRole(principal, 'members');
  const rows = ids.length
    ? await db
        .select()
        .from(membershipTable)
        .where(and(eq(membershipTable.accountId, principal.accountId), inArray(membershipTable.id, [...ids])))
    : [];
  return ids.map((id) => rows.find((r) => r.id === id) ?? null);
}

/** Users by id, in order; null for none. */
export async function loadUsers(db: Executor, ids: readonly string[]): Promise<(AppUser | null)[]> {
  const rows = ids.length
    ? await db
        .select()
        .from(appUserTable)
        .where(inArray(appUserTable.id, [...ids]))
    : [];
  return ids.map((id) => rows.find((r) => r.id === id) ?? null);
}

const lastOwner = () =>
  new AppError(409, 'last_owner', 'An account keeps at least one owner: make another member owner first');

/** The membership of the caller's account, locked for a change of it (404 for another account's). */
async function lockedMembership(tx: Executor, principal: Principal, id: string): Promise<Membership> {
  const [membership] = await tx
    .select()
    .from(membershipTable)
    .where(and(eq(membershipTable.id, id), eq(membershipTable.accountId, principal.accountId)))
    .for('update');
  if (!membership) throw notFound('Membership');
  return membership;
}

/** Owners left in the account, counted under a lock on them, so two concurrent demotions cannot both pass. */
async function ownerCount(tx: Executor, accountId: string): Promise<number> {
  const owners = await tx
    .select({ id: membershipTable.id })
    .from(membershipTable)
    .where(and(eq(membershipTable.accountId, accountId), eq(membershipTable.role, 'owner')))
    .for('update');
  return owners.length;
}

/**
 * Gives a member another role, in a transaction of its own. Admins cannot grant owner or change an
 * owner; the last owner cannot be demoted (409 `last_owner`). The keys the member created act with
 * the new role from their next authentication (roles.ts): this process forgets the keys and sessions
 * it cached, so here that is at once. Audited (`member.role_changed`).
 */
export async function changeMemberRole(
  core: MemberDeps,
  principal: Principal,
  membershipId: string,
  role: Role,
): Promise<Membership> {
  const changed = await core.db.transaction(async (tx) => {
    requireRole(principal, 'members');
    const actor = requireUser(principal);
    await ownerCount(tx, principal.accountId);
    const membership = await lockedMembership(tx, principal, membershipId);
    if (!mayAssign(actor.role, role, membership.role))
      throw roleRequired('Only owners grant, change or remove the owner role.');
    if (membership.role === 'owner' && role !== 'owner' && (await ownerCount(tx, principal.accountId)) <= 1)
      throw lastOwner();
    const rows = await tx.update(membershipTable).set({ role }).where(eq(membershipTable.id, membershipId)).returning();
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'member.role_changed',
      target: { type: 'membership', id: membershipId, label: userEmail(membership.userId) },
      details: { from: membership.role, to: role },
    });
    return oneRow(rows, 'update of a locked membership');
  });
  core.auth.clear();
  return changed;
}

/**
 * Removes a member from the account (a member leaving is the same removal), ends their sessions on it
 * and revokes the keys they created there (`creator_removed`): the membership and its keys end
 * together, in one transaction, and this process forgets the keys and sessions it cached. Admins
 * cannot remove an owner; the last owner cannot be removed (409 `last_owner`). Answers the membership
 * removed and how many keys it revoked. Audited (`member.removed`).
 */
export async function removeMember(
  core: MemberDeps,
  principal: Principal,
  membershipId: string,
): Promise<{ membership: Membership; revokedKeyCount: number }> {
  const now = core.clock();
  const removed = await core.db.transaction(async (tx) => {
    requireRole(principal, 'members');
    const actor = requireUser(principal);
    await ownerCount(tx, principal.accountId);
    const membership = await lockedMembership(tx, principal, membershipId);
    if (!mayAssign(actor.role, membership.role, membership.role))
      throw roleRequired('Only owners grant, change or remove the owner role.');
    if (membership.role === 'owner' && (await ownerCount(tx, principal.accountId)) <= 1) throw lastOwner();
    await tx.delete(membershipTable).where(eq(membershipTable.id, membershipId));
    await revokeUserSessions(tx, membership.userId, now, { accountId: principal.accountId });
    const revokedKeyCount = await revokeCreatorKeys(tx, principal.accountId, membership.userId, now);
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'member.removed',
      target: { type: 'membership', id: membership.id, label: userEmail(membership.userId) },
      details: { role: membership.role, revokedKeys: revokedKeyCount, left: membership.userId === actor.userId },
    });
    return { membership, revokedKeyCount };
  });
  core.auth.clear();
  return removed;
}
