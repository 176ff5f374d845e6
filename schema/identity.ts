import DataLoader from 'dataloader';
import { KEY_REVOKED_REASONS, type AppUser, type KeyRevokedReason } from '../db/tables/accounts.ts';
import { ROLES, type ConsoleSession, type Invitation, type Membership, type Role } from '../db/tables/identity.ts';
import { inviteMember, listInvitations, loadInvitations, revokeInvitation } from '../src/accounts/invitations.ts';
import { createNamedKey, listKeys, loadKeys, revokeKey, type ListedKey } from '../src/accounts/keys.ts';
import { changeMemberRole, listMembers, loadMemberships, loadUsers, removeMember } from '../src/accounts/members.ts';
import { may, requireUser } from '../src/accounts/roles.ts';
import { listUserSessions, revokeSession, revokeUserSessions } from '../src/accounts/sessions.ts';
import { getUser } from '../src/accounts/users.ts';
import { notFound } from '../src/shared/errors.ts';
import { AccountRef } from './account.ts';
import { builder } from './builder.ts';
import {
  AFTER_DESCRIPTION,
  connectionOf,
  connectionType,
  FIRST_DESCRIPTION,
  notACursor,
  pageSize,
} from './connection.ts';
import type { GraphQLContext } from './context.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { NodeRef, registerNode } from './node.ts';

/**
 * Who uses the console and how: users, their roles in the account, invitations, API keys and console
 * sessions (src/accounts: roles.ts says who may do what). Keys and members are managed by signed-in
 * owners and admins; an API key asking is refused ROLE_REQUIRED (a user error on mutations, a field
 * error on queries).
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
const users = (ctx: GraphQLContext) => {
  let loader = userLoaders.get(ctx);
  if (!loader) userLoaders.set(ctx, (loader = new DataLoader((ids) => loadUsers(ctx.core.db, ids))));
  return loader;
};

const idOf = (prefix: string) => new RegExp(`^${prefix}_[A-Za-z0-9]{1,64}$`);

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
  localId: idOf('usr'),
  // The caller, and for owners and admins the account's members.
  load: async (ids, ctx) => {
    const members = may(ctx.principal, 'members') ? await listMembers(ctx.core.db, ctx.principal) : [];
    const visible = new Set([ctx.principal.userId, ...members.map((m) => m.userId)]);
    return Promise.all(ids.map((id) => (visible.has(id) ? users(ctx).load(id) : null)));
  },
});

const MembershipRef = builder.objectRef<Membership>('Membership').implement({
  description: 'A user’s membership of the account, with their role.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', {
      description: 'The membership’s global id (`mem_…`): what changeMemberRole and removeMember take.',
    }),
    user: t.field({
      type: UserRef,
      description: 'The member.',
      resolve: async (m, _, ctx) => (await users(ctx).load(m.userId))!,
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
  localId: idOf('mem'),
  load: (ids, ctx) =>
    may(ctx.principal, 'members')
      ? loadMemberships(ctx.core.db, ctx.principal, ids)
      : Promise.resolve(ids.map(() => null)),
});

const InvitationRef = builder.objectRef<Invitation>('Invitation').implement({
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
  localId: idOf('inv'),
  load: (ids, ctx) =>
    may(ctx.principal, 'members')
      ? loadInvitations(ctx.core.db, ctx.principal, ids, ctx.core.clock())
      : Promise.resolve(ids.map(() => null)),
});

const REVOKED_REASON_TEXT: Record<KeyRevokedReason, string> = {
  revoked: 'Revoked by an owner or admin (revokeApiKey) or by the operator.',
  creator_removed: 'Its creator left the account or was removed from it: a key ends with its creator’s membership.',
};

const ApiKeyRevokedReasonEnum = builder.enumType('ApiKeyRevokedReason', {
  description: 'Why an API key was revoked.',
  values: Object.fromEntries(
    KEY_REVOKED_REASONS.map((reason) => [
      reason.toUpperCase(),
      { value: reason, description: REVOKED_REASON_TEXT[reason] },
    ]),
  ) as Record<Uppercase<KeyRevokedReason>, { value: KeyRevokedReason; description: string }>,
});

const ApiKeyRef = builder.objectRef<ListedKey>('ApiKey').implement({
  description:
    'An API key of the account (`lg_live_…`). Only its prefix is kept readable; the whole key is shown once, by createApiKey. A key created in the console acts with at most its creator’s current role (`actsAs`) and is revoked when its creator leaves the account; keys the operator made (CLI, demo) have no creator and keep every key right. No key manages keys or members.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The key’s global id (`key_…`): what revokeApiKey takes.' }),
    name: t.exposeString('name', { description: 'What the account calls the key.' }),
    prefix: t.exposeString('prefix', {
      description: 'The key’s first characters (`lg_live_` and 6 more), to recognise it.',
    }),
    createdBy: t.field({
      type: UserRef,
      nullable: true,
      description:
        'Who created it in the console, whose current role bounds its rights; null for the operator’s keys (CLI, demo, an account’s first key).',
      resolve: (k, _, ctx) => (k.createdBy ? users(ctx).load(k.createdBy) : null),
    }),
    actsAs: t.field({
      type: RoleEnum,
      nullable: true,
      description:
        'The role whose rights the key has: its creator’s current role in the account, so it narrows when they are demoted (an ADMIN key manages webhooks but cannot read the ledger or buy credits). Null for an operator key (no creator: every key right, billing and webhooks included) and for a revoked key.',
      resolve: (k) => (k.revokedAt || !k.createdBy ? null : k.creatorRole),
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was created.', resolve: (k) => k.createdAt }),
    lastUsedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it last authenticated a request, at most a minute stale; null when never.',
      resolve: (k) => k.lastUsedAt,
    }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it stops working; null when never.',
      resolve: (k) => k.expiresAt,
    }),
    revokedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it was revoked; null while it works.',
      resolve: (k) => k.revokedAt,
    }),
    revokedReason: t.field({
      type: ApiKeyRevokedReasonEnum,
      nullable: true,
      description: 'Why it was revoked; null while it works.',
      resolve: (k) => (k.revokedAt ? (k.revokedReason ?? 'revoked') : null),
    }),
  }),
});

registerNode('key', 'ApiKey', {
  keepsPrefix: true,
  localId: idOf('key'),
  load: (ids, ctx) =>
    may(ctx.principal, 'keys') ? loadKeys(ctx.core.db, ctx.principal, ids) : Promise.resolve(ids.map(() => null)),
});

const ConsoleSessionRef = builder.objectRef<ConsoleSession>('ConsoleSession').implement({
  description: 'A browser signed in to the console as the user.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The session’s global id (`ses_…`): what revokeSession takes.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When the user signed in.', resolve: (s) => s.createdAt }),
    lastSeenAt: t.field({
      type: 'DateTime',
      description: 'When it was last used, at most a minute stale.',
      resolve: (s) => s.lastSeenAt,
    }),
    expiresAt: t.field({
      type: 'DateTime',
      description: 'When it ends unless used again (30 days after its last use, 90 after sign-in at most).',
      resolve: (s) => s.expiresAt,
    }),
    userAgent: t.exposeString('userAgent', { nullable: true, description: 'The browser’s User-Agent at sign-in.' }),
    ipAddress: t.string({
      nullable: true,
      description: 'The client address at sign-in (an IPv6 address as its /64).',
      resolve: (s) => s.ip,
    }),
    current: t.boolean({
      description: 'This is the session asking.',
      resolve: (s, _, ctx) => s.id === ctx.principal.sessionId,
    }),
  }),
});

registerNode('ses', 'ConsoleSession', {
  keepsPrefix: true,
  localId: idOf('ses'),
  load: async (ids, ctx) => {
    if (!ctx.principal.userId) return ids.map(() => null);
    const own = await listUserSessions(ctx.core.db, ctx.principal.userId, ctx.core.clock());
    return ids.map((id) => own.find((s) => s.id === id) ?? null);
  },
});

const MAX_PAGE = 100;

/** A page of a short list held whole (an account's members, keys, invitations; a user's sessions), with the item's id as cursor. */
function pageOf<T extends { id: string }>(all: readonly T[], args: { first?: number | null; after?: string | null }) {
  const first = pageSize(args.first, { max: MAX_PAGE, byDefault: 20 });
  const start = args.after ? all.findIndex((item) => item.id === args.after) + 1 : 0;
  if (start === 0 && args.after) throw notACursor();
  return connectionOf(all.slice(start, start + first), {
    cursorOf: (item) => item.id,
    hasNextPage: start + first < all.length,
    totalCount: all.length,
  });
}

const pageComplexity = (args: { first?: number | null }) => ({
  field: 1,
  multiplier: Math.min(args.first ?? 20, MAX_PAGE),
});

const MembershipConnectionRef = connectionType<Membership>('Membership', MembershipRef, {
  description: 'A page of the account’s members, oldest first.',
  totalCount: 'How many members the account has.',
});
const InvitationConnectionRef = connectionType<Invitation>('Invitation', InvitationRef, {
  description: 'A page of the account’s pending invitations, oldest first.',
  totalCount: 'How many invitations are pending.',
});
const ApiKeyConnectionRef = connectionType<ListedKey>('ApiKey', ApiKeyRef, {
  description: 'A page of the account’s API keys, newest first.',
  totalCount: 'How many keys the list holds.',
});
const ConsoleSessionConnectionRef = connectionType<ConsoleSession>('ConsoleSession', ConsoleSessionRef, {
  description: 'A page of the user’s live console sessions, newest first.',
  totalCount: 'How many live sessions the user has.',
});

builder.queryFields((t) => ({
  currentUser: t.field({
    type: UserRef,
    nullable: true,
    description: 'The signed-in user; null when the caller uses an API key.',
    resolve: (_, __, ctx) =>
      ctx.principal.userId ? getUser(ctx.core.db, ctx.principal.userId).then((u) => u ?? null) : null,
  }),
  sessions: t.field({
    type: ConsoleSessionConnectionRef,
    description: 'The signed-in user’s live sessions, newest first (console only: ROLE_REQUIRED for an API key).',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_PAGE, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) =>
      pageOf(await listUserSessions(ctx.core.db, requireUser(ctx.principal).userId, ctx.core.clock()), args),
  }),
}));

builder.objectFields(AccountRef, (t) => ({
  viewerRole: t.field({
    type: RoleEnum,
    nullable: true,
    description: 'The caller’s role in this account; null for an API key.',
    resolve: (_, __, ctx) => ctx.principal.role ?? null,
  }),
  members: t.field({
    type: MembershipConnectionRef,
    description: 'The account’s members, oldest first (owners and admins; ROLE_REQUIRED otherwise).',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_PAGE, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) => pageOf(await listMembers(ctx.core.db, ctx.principal), args),
  }),
  invitations: t.field({
    type: InvitationConnectionRef,
    description: 'The account’s pending invitations, oldest first (owners and admins; ROLE_REQUIRED otherwise).',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_PAGE, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) => pageOf(await listInvitations(ctx.core.db, ctx.principal, ctx.core.clock()), args),
  }),
  apiKeys: t.field({
    type: ApiKeyConnectionRef,
    description:
      'The account’s API keys, newest first (owners and admins signed in to the console; ROLE_REQUIRED otherwise).',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_PAGE, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
      includeRevoked: t.arg.boolean({ description: 'Also list revoked keys; default false.' }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) =>
      pageOf(await listKeys(ctx.core.db, ctx.principal, args.includeRevoked ?? false), args),
  }),
}));

// ---------------------------------------------------------------------------------------------
// Mutations

/** A mutation's payload type: `fields` (each null when refused), then `userErrors`. */
function payloadType<T extends object>(
  name: string,
  description: string,
  fields: (t: PayloadFieldBuilder<T>) => Record<string, unknown>,
) {
  return builder.objectRef<Payload<T>>(name).implement({
    description,
    fields: (t) => ({
      ...(fields(t as unknown as PayloadFieldBuilder<T>) as object),
      userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
    }),
  });
}
type Payload<T> = Partial<T> & { userErrors: UserError[] };
type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;
type PayloadFieldBuilder<T> = PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, Payload<T>>;

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  description: 'A key to create.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'What to call it, 1 to 100 characters.' }),
    expiresAt: t.field({ type: 'DateTime', description: 'When it stops working (in the future); default never.' }),
  }),
});

const CreateApiKeyPayloadRef = payloadType<{ apiKey: ListedKey; secret: string }>(
  'CreateApiKeyPayload',
  'What `createApiKey` answers: the key and its secret, or `userErrors`.',
  (t) => ({
    apiKey: t.field({
      type: ApiKeyRef,
      nullable: true,
      description: 'The key created; null when refused.',
      resolve: (p) => p.apiKey ?? null,
    }),
    secret: t.string({
      nullable: true,
      description: 'The whole key (`lg_live_…`), shown only in this answer: store it now. Null when refused.',
      resolve: (p) => p.secret ?? null,
    }),
  }),
);

const RevokeApiKeyPayloadRef = payloadType<{ apiKey: ListedKey }>(
  'RevokeApiKeyPayload',
  'What `revokeApiKey` answers.',
  (t) => ({
    apiKey: t.field({
      type: ApiKeyRef,
      nullable: true,
      description: 'The key, revoked; null when refused.',
      resolve: (p) => p.apiKey ?? null,
    }),
  }),
);

const InviteMemberInput = builder.inputType('InviteMemberInput', {
  description: 'Someone to invite to the account.',
  fields: (t) => ({
    email: t.string({ required: true, description: 'Where the invitation link is mailed.' }),
    role: t.field({
      type: RoleEnum,
      required: true,
      description: 'The role they get on accepting (only owners invite owners).',
    }),
  }),
});

const InviteMemberPayloadRef = payloadType<{ invitation: Invitation }>(
  'InviteMemberPayload',
  'What `inviteMember` answers.',
  (t) => ({
    invitation: t.field({
      type: InvitationRef,
      nullable: true,
      description: 'The invitation sent; null when refused.',
      resolve: (p) => p.invitation ?? null,
    }),
  }),
);

const RevokeInvitationPayloadRef = payloadType<{ revokedInvitationId: string }>(
  'RevokeInvitationPayload',
  'What `revokeInvitation` answers.',
  (t) => ({
    revokedInvitationId: t.id({
      nullable: true,
      description: 'The id of the invitation withdrawn (its link no longer works); null when refused.',
      resolve: (p) => p.revokedInvitationId ?? null,
    }),
  }),
);

const ChangeMemberRoleInput = builder.inputType('ChangeMemberRoleInput', {
  description: 'A member’s new role.',
  fields: (t) => ({
    membershipId: t.id({ required: true, description: 'The membership (`Membership.id`).' }),
    role: t.field({ type: RoleEnum, required: true, description: 'The new role.' }),
  }),
});

const ChangeMemberRolePayloadRef = payloadType<{ membership: Membership }>(
  'ChangeMemberRolePayload',
  'What `changeMemberRole` answers.',
  (t) => ({
    membership: t.field({
      type: MembershipRef,
      nullable: true,
      description: 'The membership with its new role; null when refused.',
      resolve: (p) => p.membership ?? null,
    }),
  }),
);

const RemoveMemberPayloadRef = payloadType<{ removedMembershipId: string; revokedKeyCount: number }>(
  'RemoveMemberPayload',
  'What `removeMember` answers.',
  (t) => ({
    removedMembershipId: t.id({
      nullable: true,
      description: 'The id of the membership removed; null when refused.',
      resolve: (p) => p.removedMembershipId ?? null,
    }),
    revokedKeyCount: t.int({
      nullable: true,
      description:
        'How many API keys the member had created in the account, revoked with the removal (`ApiKey.revokedReason` CREATOR_REMOVED); null when refused.',
      resolve: (p) => p.revokedKeyCount ?? null,
    }),
  }),
);

const RevokeSessionPayloadRef = payloadType<{ revokedSessionId: string }>(
  'RevokeSessionPayload',
  'What `revokeSession` answers.',
  (t) => ({
    revokedSessionId: t.id({
      nullable: true,
      description: 'The id of the session ended; null when refused.',
      resolve: (p) => p.revokedSessionId ?? null,
    }),
  }),
);

const SignOutEverywherePayloadRef = payloadType<{ revokedSessionCount: number }>(
  'SignOutEverywherePayload',
  'What `signOutEverywhere` answers.',
  (t) => ({
    revokedSessionCount: t.int({
      nullable: true,
      description: 'How many sessions ended, this one included; null when refused.',
      resolve: (p) => p.revokedSessionCount ?? null,
    }),
  }),
);

/** After a revocation or a role change: this process forgets the keys and sessions it cached, so they stop (or change) at once here. */
const forget = (ctx: GraphQLContext) => ctx.core.auth.clear();

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreateApiKeyPayloadRef,
    description:
      'Creates an API key of the account, named and optionally expiring; its secret is in this answer only. Owners and admins signed in to the console.',
    args: { input: t.arg({ type: CreateApiKeyInput, required: true, description: 'The key.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(async () => {
        const created = await createNamedKey(
          ctx.core.db,
          ctx.principal,
          { name: input.name, expiresAt: input.expiresAt ?? null },
          ctx.core.clock(),
        );
        return { apiKey: created.key, secret: created.apiKey };
      }, ['input']),
  }),
  revokeApiKey: t.field({
    type: RevokeApiKeyPayloadRef,
    description:
      'Revokes an API key of the account: it stops working on every face, open sockets included (within the key cache time in other processes). User error NOT_FOUND for no live key of that id.',
    args: { id: t.arg.id({ required: true, description: 'The key’s id (`ApiKey.id`).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const apiKey = await revokeKey(ctx.core.db, ctx.principal, String(args.id), ctx.core.clock());
        forget(ctx);
        return { apiKey };
      }, ['id']),
  }),
  inviteMember: t.field({
    type: InviteMemberPayloadRef,
    description:
      'Invites someone to the account by email: the link (valid a week, once) is mailed to them. Owners and admins; only owners invite owners. User error ALREADY_MEMBER for a member’s address.',
    args: { input: t.arg({ type: InviteMemberInput, required: true, description: 'Whom to invite.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(
        async () => ({
          invitation: await inviteMember(ctx.core, ctx.principal, { email: input.email, role: input.role }),
        }),
        ['input'],
      ),
  }),
  revokeInvitation: t.field({
    type: RevokeInvitationPayloadRef,
    description: 'Withdraws a pending invitation: its link stops working. Owners and admins.',
    args: { id: t.arg.id({ required: true, description: 'The invitation’s id (`Invitation.id`).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(
        async () => ({
          revokedInvitationId: (await revokeInvitation(ctx.core.db, ctx.principal, String(args.id), ctx.core.clock()))
            .id,
        }),
        ['id'],
      ),
  }),
  changeMemberRole: t.field({
    type: ChangeMemberRolePayloadRef,
    description:
      'Gives a member another role; the API keys they created act with the new role (`ApiKey.actsAs`). Owners and admins; only owners grant or take the owner role. User error LAST_OWNER when it would leave the account without an owner.',
    args: { input: t.arg({ type: ChangeMemberRoleInput, required: true, description: 'The member and the role.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(async () => {
        const membership = await ctx.core.db.transaction((tx) =>
          changeMemberRole(tx, ctx.principal, String(input.membershipId), input.role),
        );
        forget(ctx);
        return { membership };
      }, ['input']),
  }),
  removeMember: t.field({
    type: RemoveMemberPayloadRef,
    description:
      'Removes a member from the account (removing oneself is leaving it), ends their sessions on it and revokes the API keys they created in it (CREATOR_REMOVED). Owners and admins; only owners remove owners. User error LAST_OWNER for the last owner.',
    args: { id: t.arg.id({ required: true, description: 'The membership’s id (`Membership.id`).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const removed = await ctx.core.db.transaction((tx) =>
          removeMember(tx, ctx.principal, String(args.id), ctx.core.clock()),
        );
        forget(ctx);
        return { removedMembershipId: removed.membership.id, revokedKeyCount: removed.revokedKeyCount };
      }, ['id']),
  }),
  revokeSession: t.field({
    type: RevokeSessionPayloadRef,
    description:
      'Ends one of the signed-in user’s sessions (this one included): its requests and open sockets stop. User error NOT_FOUND for no live session of that id.',
    args: { id: t.arg.id({ required: true, description: 'The session’s id (`ConsoleSession.id`).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const { userId } = requireUser(ctx.principal);
        if (!(await revokeSession(ctx.core.db, userId, String(args.id), ctx.core.clock()))) throw notFound('Session');
        forget(ctx);
        return { revokedSessionId: String(args.id) };
      }, ['id']),
  }),
  signOutEverywhere: t.field({
    type: SignOutEverywherePayloadRef,
    description: 'Ends every session of the signed-in user, this one included.',
    resolve: (_, __, ctx) =>
      mutationPayload(async () => {
        const revokedSessionCount = await revokeUserSessions(
          ctx.core.db,
          requireUser(ctx.principal).userId,
          ctx.core.clock(),
        );
        forget(ctx);
        return { revokedSessionCount };
      }),
  }),
}));
