import DataLoader from 'dataloader';
import type { AppUser } from '../../db/tables/accounts.ts';
import { ROLES, type Role } from '../../db/tables/identity.ts';
import { listMembers, loadUsers } from '../../src/accounts/members.ts';
import { may } from '../../src/accounts/roles.ts';
import { getUser } from '../../src/accounts/users.ts';
import { AccountRef } from '../account.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { NodeRef, registerNode } from '../node.ts';

/**
 * Users and their roles: the `User` type, the `Role` enum, `currentUser` and `Account.viewerRole`.
 * Who uses the console and how (members, invitations, API keys, console sessions) is in the other files
 * of this folder; src/accounts/roles.ts says who may do what.
 */

const ROLE_TEXT: Record<Role, string> = {
  owner: 'Everything: billing (credits, ledger, plan), keys, webhooks, members (owners included).',
  admin: 'Keys, webhooks and members, but never the owner role (granting, changing or removing an owner).',
  member: 'Tools, runs, data and the wallet balance.',
};

export const RoleEnum = builder.enumType('Role', {
  description: 'A user’s role in an account.',
  values: Object.fromEntries(
    ROLES.map((role) => [role.toUpperCase(), { value: role, description: ROLE_TEXT[role] }]),
  ) as Record<Uppercase<Role>, { value: Role; description: string }>,
});

/** Users by id within one operation (creators of keys, inviters, members). */
const userLoaders = new WeakMap<GraphQLContext, DataLoader<string, AppUser | null>>();
export const users = (ctx: GraphQLContext) => {
  let loader = userLoaders.get(ctx);
  if (!loader) {
    loader = new DataLoader((ids) => loadUsers(ctx.core.db, ids));
    userLoaders.set(ctx, loader);
  }
  return loader;
};

export const UserRef = builder.objectRef<AppUser>('User').implement({
  description: 'A person who signs in to the console, a member of one or more accounts.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The user’s global id (`usr_…`).' }),
    email: t.exposeString('email', { description: 'The email address the user signs in with (lower case).' }),
    name: t.exposeString('name', { nullable: true, description: 'The name the user gave; null when none.' }),
    createdAt: t.field({
      type: 'DateTime',
      description: 'When the user signed up or accepted their first invitation.',
      resolve: (u) => u.createdAt,
    }),
  }),
});

registerNode('usr', 'User', {
  keepsPrefix: true,
  localId: /^usr_[A-Za-z0-9]{1,64}$/,
  // The caller, and for owners and admins the account's members.
  load: async (ids, ctx) => {
    const members = may(ctx.principal, 'members') ? await listMembers(ctx.core.db, ctx.principal) : [];
    const visible = new Set([ctx.principal.userId, ...members.map((m) => m.userId)]);
    return Promise.all(ids.map((id) => (visible.has(id) ? users(ctx).load(id) : null)));
  },
});

builder.queryField('currentUser', (t) =>
  t.field({
    type: UserRef,
    nullable: true,
    description: 'The signed-in user; null when the caller uses an API key.',
    resolve: (_, __, ctx) =>
      ctx.principal.userId ? getUser(ctx.core.db, ctx.principal.userId).then((u) => u ?? null) : null,
  }),
);

builder.objectField(AccountRef, 'viewerRole', (t) =>
  t.field({
    type: RoleEnum,
    nullable: true,
    description: 'The caller’s role in this account; null for an API key.',
    resolve: (_, __, ctx) => ctx.principal.role ?? null,
  }),
);
