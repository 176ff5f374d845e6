import type { Invitation, Membership } from '../../db/tables/identity.ts';
import { loadInvitations } from '../../src/accounts/invitations.ts';
import { loadMemberships } from '../../src/accounts/members.ts';
import { may } from '../../src/accounts/roles.ts';
import { builder } from '../builder.ts';
import { NodeRef, registerNode } from '../node.ts';
import { RoleEnum, UserRef, users } from './users.ts';

/**
 * An account's members and the invitations to join it: the `Membership` and `Invitation` types. Owners
 * and admins list and manage them (lists.ts, mutations.ts); anyone else refetches none.
 */

export const MembershipRef = builder.objectRef<Membership>('Membership').implement({
  description: 'A user’s membership of the account, with their role.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', {
      description: 'The membership’s global id (`mem_…`): what changeMemberRole and removeMember take.',
    }),
    user: t.field({
      type: UserRef,
      description: 'The member.',
      resolve: async (m, _, ctx) => {
        const user = await users(ctx).load(m.userId);
        if (!user) throw new Error(`membership ${m.id}: its user ${m.userId} is missing`);
        return user;
      },
    }),
    role: t.field({ type: RoleEnum, description: 'What the member may do in the account.', resolve: (m) => m.role }),
    createdAt: t.field({
      type: 'DateTime',
      description: 'When the user joined the account.',
      resolve: (m) => m.createdAt,
    }),
  }),
});

registerNode('mem', 'Membership', {
  keepsPrefix: true,
  localId: /^mem_[A-Za-z0-9]{1,64}$/,
  load: (ids, ctx) =>
    may(ctx.principal, 'members')
      ? loadMemberships(ctx.core.db, ctx.principal, ids)
      : Promise.resolve(ids.map(() => null)),
});

export const InvitationRef = builder.objectRef<Invitation>('Invitation').implement({
  description: 'A pending invitation to join the account: its link was mailed to `email`.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The invitation’s global id (`inv_…`).' }),
    email: t.exposeString('email', { description: 'Who was invited (lower case).' }),
    role: t.field({ type: RoleEnum, description: 'The role the invitee gets on accepting.', resolve: (i) => i.role }),
    invitedBy: t.field({
      type: UserRef,
      nullable: true,
      description: 'Who invited them; null when that user is gone.',
      resolve: (i, _, ctx) => (i.invitedBy ? users(ctx).load(i.invitedBy) : null),
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was sent.', resolve: (i) => i.createdAt }),
    expiresAt: t.field({
      type: 'DateTime',
      description: 'When its link stops working (a week after it was sent).',
      resolve: (i) => i.expiresAt,
    }),
  }),
});

registerNode('inv', 'Invitation', {
  keepsPrefix: true,
  localId: /^inv_[A-Za-z0-9]{1,64}$/,
  load: (ids, ctx) =>
    may(ctx.principal, 'members')
      ? loadInvitations(ctx.core.db, ctx.principal, ids, ctx.core.clock())
      : Promise.resolve(ids.map(() => null)),
});
