import { and, asc, eq, gt, inArray, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import { accountTable } from '../../db/tables/accounts.ts';
import { invitationTable, type Invitation, type Role } from '../../db/tables/identity.ts';
import { byCaller, recordAudit } from '../audit/audit.ts';
import { AppError, notFound, ValidationError } from '../shared/errors.ts';
import { assertStorable } from '../shared/params.ts';
import { invitationMail } from './mails.ts';
import { addMembership, membershipOf } from './members.ts';
import type { Principal } from './principal.ts';
import { mayAssign, requireRole, requireUser, roleRequired } from './roles.ts';
import type { SessionClient } from './sessions.ts';
import { startSession, type IdentityDeps, type SignedIn } from './sign-in.ts';
import { hashToken, newInvitationId, newToken, TOKEN_PATTERN } from './tokens.ts';
import {
  createUser,
  emailSchema,
  findUserByEmail,
  getUser,
  hashPassword,
  invalidCredentials,
  normalizeEmail,
  setPasswordHash,
  verifyPassword,
} from './users.ts';

/** An invitation link works once, for a week. */
export const INVITATION_MS = 7 * 24 * 3600_000;

/** The console page an invitation link opens (the console reads the token and calls /auth/invitations/…). */
export const invitationUrl = (publicUrl: string, token: string) => `${publicUrl}/invitations/${token}`;

const pending = (now: Date) =>
  and(isNull(invitationTable.acceptedAt), isNull(invitationTable.revokedAt), gt(invitationTable.expiresAt, now));

/**
 * Invites `email` to the caller's account with `role` and mails the link. Owners and admins invite;
 * only owners invite owners. 409 `already_member` when the address is a member already. A pending
 * invitation of the same address is replaced (its link stops working). Audited (`member.invited`).
 * Answers the link too, for the inviter to share another way: it is known only now (the token is kept
 * as its hash), so a link is copied when it is made, and copying it later means inviting again.
 */
export async function inviteMember(
  core: IdentityDeps,
  principal: Principal,
  input: { email: string; role: Role },
): Promise<{ invitation: Invitation; link: string }> {
  requireRole(principal, 'members');
  const actor = requireUser(principal);
  if (!mayAssign(actor.role, input.role)) throw roleRequired('Only owners invite owners.');
  const parsed = emailSchema.safeParse(input.email);
  if (!parsed.success) throw new ValidationError([{ path: 'email', message: 'must be an email address' }]);
  assertStorable(parsed.data, 'email');
  const email = normalizeEmail(parsed.data);
  const now = core.clock();
  const existing = await findUserByEmail(core.db, email);
  if (existing && (await membershipOf(core.db, principal.accountId, existing.id)))
    throw new AppError(409, 'already_member', `${email} is a member of this account already`);
  const { token, hash } = newToken();
  const invitation = await core.db.transaction(async (tx) => {
    await tx
      .update(invitationTable)
      .set({ revokedAt: now })
      .where(and(eq(invitationTable.accountId, principal.accountId), eq(invitationTable.email, email), pending(now)));
    const created = await tx
      .insert(invitationTable)
      .values({
        id: newInvitationId(),
        accountId: principal.accountId,
        email,
        role: input.role,
        tokenHash: hash,
        invitedBy: actor.userId,
        createdAt: now,
        expiresAt: new Date(now.getTime() + INVITATION_MS),
      })
      .returning();
    const invited = oneRow(created, 'insert into invitation');
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'member.invited',
      target: { type: 'invitation', id: invited.id, label: email },
      details: { email, role: input.role },
    });
    return invited;
  });
  const link = invitationUrl(core.config.publicUrl, token);
  const [account, inviter] = await Promise.all([
    core.db.select({ name: accountTable.name }).from(accountTable).where(eq(accountTable.id, principal.accountId)),
    getUser(core.db, actor.userId),
  ]);
  await core.mailer.send(
    invitationMail({
      to: email,
      accountName: oneRow(account, 'the inviting account').name,
      role: input.role,
      inviter: inviter?.name || inviter?.email || null,
      url: link,
      expiresAt: invitation.expiresAt,
    }),
  );
  return { invitation, link };
}

/** The account's pending invitations, oldest first (owners and admins only). */
export async function listInvitations(db: Executor, principal: Principal, now: Date): Promise<Invitation[]> {
  requireRole(principal, 'members');
  return db
    .select()
    .from(invitationTable)
    .where(and(eq(invitationTable.accountId, principal.accountId), pending(now)))
    .orderBy(asc(invitationTable.createdAt), asc(invitationTable.id));
}

/** Pending invitations of the caller's account by id, in order; null for others (owners and admins only). */
export async function loadInvitations(
  db: Executor,
  principal: Principal,
  ids: readonly string[],
  now: Date,
): Promise<(Invitation | null)[]> {
  requireRole(principal, 'members');
  const rows = ids.length
    ? await db
        .select()
        .from(invitationTable)
        .where(
          and(eq(invitationTable.accountId, principal.accountId), inArray(invitationTable.id, [...ids]), pending(now)),
        )
    : [];
  return ids.map((id) => rows.find((r) => r.id === id) ?? null);
}

/** Withdraws a pending invitation of the caller's account: its link stops working. 404 for none. Audited. */
export async function revokeInvitation(db: Executor, principal: Principal, id: string, now: Date): Promise<Invitation> {
  requireRole(principal, 'members');
  return db.transaction(async (tx) => {
    const [revoked] = await tx
      .update(invitationTable)
      .set({ revokedAt: now })
      .where(and(eq(invitationTable.id, id), eq(invitationTable.accountId, principal.accountId), pending(now)))
      .returning();
    if (!revoked) throw notFound('Invitation');
    await recordAudit(tx, {
      ...byCaller(principal),
      action: 'invitation.revoked',
      target: { type: 'invitation', id: revoked.id, label: revoked.email },
      details: { email: revoked.email, role: revoked.role },
    });
    return revoked;
  });
}

/** What the invitation page shows before the invitee accepts. */
export interface InvitationPreview {
  email: string;
  accountName: string;
  role: Role;
  expiresAt: Date;
  /** The address has a user already: accepting asks for that user's password, not a new one. */
  userExists: boolean;
}

async function pendingByToken(db: Executor, token: string, now: Date, lock = false) {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  const query = db
    .select({ invitation: invitationTable, accountName: accountTable.name })
    .from(invitationTable)
    .innerJoin(accountTable, eq(accountTable.id, invitationTable.accountId))
    .where(and(eq(invitationTable.tokenHash, hashToken(token)), pending(now)));
  const [row] = lock ? await query.for('update', { of: invitationTable }) : await query;
  return row;
}

/** The pending invitation of a link's token; 404 `not_found` for an unknown, used, withdrawn or expired one. */
export async function previewInvitation(core: IdentityDeps, token: string): Promise<InvitationPreview> {
  const row = await pendingByToken(core.db, token, core.clock());
  if (!row) throw notFound('Invitation');
  const user = await findUserByEmail(core.db, row.invitation.email);
  return {
    email: row.invitation.email,
    accountName: row.accountName,
    role: row.invitation.role,
    expiresAt: row.invitation.expiresAt,
    userExists: Boolean(user?.passwordHash),
  };
}

/**
 * Accepts an invitation and signs the invitee in on the inviting account. A new user is created when
 * the address has none (with `password`); an existing user proves it is them with their own password
 * (401 `invalid_credentials` otherwise). 404 `not_found` for a link that no longer works. Audited
 * (`member.joined`, then the session's `session.signed_in`).
 */
export async function acceptInvitation(
  core: IdentityDeps,
  input: { token: string; password: string; name?: string | null },
  client: SessionClient,
): Promise<SignedIn> {
  const now = core.clock();
  const preview = await pendingByToken(core.db, input.token, now);
  if (!preview) throw notFound('Invitation');
  const existing = await findUserByEmail(core.db, preview.invitation.email);
  // The slow part (argon2) before the transaction, which holds the invitation's row lock.
  if (existing?.passwordHash) {
    if (!(await verifyPassword(existing.passwordHash, input.password, core.config.passwordCost)))
      throw invalidCredentials();
  }
  const passwordHash = existing?.passwordHash || (await hashPassword(input.password, core.config.passwordCost));
  const { user, membership } = await core.db.transaction(async (tx) => {
    const row = await pendingByToken(tx, input.token, now, true);
    if (!row) throw notFound('Invitation');
    // The invitation's link was mailed to the address: following it shows the mailbox is the invitee's.
    let user =
      existing ??
      (await createUser(tx, {
        email: row.invitation.email,
        name: input.name,
        passwordHash,
        emailVerifiedAt: now,
      }));
    // A user made without a password (an account's owner seeded by the operator) sets it here.
    if (existing && !existing.passwordHash) {
      await setPasswordHash(tx, existing.id, passwordHash);
      user = { ...existing, passwordHash };
    }
    await tx.update(invitationTable).set({ acceptedAt: now }).where(eq(invitationTable.id, row.invitation.id));
    const membership = await addMembership(tx, row.invitation.accountId, user.id, row.invitation.role);
    await recordAudit(tx, {
      accountId: membership.accountId,
      actor: { type: 'user', id: user.id },
      client,
      action: 'member.joined',
      target: { type: 'membership', id: membership.id, label: user.email },
      details: { role: membership.role },
    });
    return { user, membership };
  });
  return startSession(core, user, membership.accountId, membership.role, client, 'invitation');
}
