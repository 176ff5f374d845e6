import type { Invitation, Membership } from '../../db/tables/identity.ts';
import { inviteMember, revokeInvitation } from '../../src/accounts/invitations.ts';
import { createNamedKey, revokeKey, type ListedKey } from '../../src/accounts/keys.ts';
import { changeMemberRole, removeMember } from '../../src/accounts/members.ts';
import { endSession, signOutEverywhere } from '../../src/accounts/sign-in.ts';
import { builder } from '../builder.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from '../errors.ts';
import { ApiKeyRef } from './keys.ts';
import { InvitationRef, MembershipRef } from './members.ts';
import { RoleEnum } from './users.ts';

/**
 * The console's identity mutations, each a call of its service in src/accounts: API keys (create,
 * revoke), members (invite, withdraw an invitation, change a role, remove) and the user's sessions
 * (end one, end all). Keys and members are managed by signed-in owners and admins; an API key asking is
 * refused ROLE_REQUIRED as a user error.
 */

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

const InviteMemberPayloadRef = payloadType<{ invitation: Invitation; link: string }>(
  'InviteMemberPayload',
  'What `inviteMember` answers.',
  (t) => ({
    invitation: t.field({
      type: InvitationRef,
      nullable: true,
      description: 'The invitation sent; null when refused.',
      resolve: (p) => p.invitation ?? null,
    }),
    link: t.string({
      nullable: true,
      description:
        'The link mailed, to share another way; shown only here (it is kept as a hash): inviting the address again ' +
        'makes a new link and stops this one. Null when refused.',
      resolve: (p) => p.link ?? null,
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
        'How many API keys the member had created in the account, revoked with the removal (`ApiKey.revokedReason` ' +
        'CREATOR_REMOVED); null when refused.',
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

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreateApiKeyPayloadRef,
    description:
      'Creates an API key of the account, named and optionally expiring; its secret is in this answer only. Owners ' +
      'and admins signed in to the console.',
    args: { input: t.arg({ type: CreateApiKeyInput, required: true, description: 'The key.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(async () => {
        const created = await createNamedKey(ctx.core, ctx.principal, {
          name: input.name,
          expiresAt: input.expiresAt ?? null,
        });
        return { apiKey: created.key, secret: created.apiKey };
      }, ['input']),
  }),
  revokeApiKey: t.field({
    type: RevokeApiKeyPayloadRef,
    description:
      'Revokes an API key of the account: it stops working on every face, open sockets included (within the key ' +
      'cache time in other processes). User error NOT_FOUND for no live key of that id.',
    args: { id: t.arg.id({ required: true, description: 'The key’s id (`ApiKey.id`).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => ({ apiKey: await revokeKey(ctx.core, ctx.principal, String(args.id)) }), ['id']),
  }),
  inviteMember: t.field({
    type: InviteMemberPayloadRef,
    description:
      'Invites someone to the account by email: the link (valid a week, once) is mailed to them. Owners and admins; ' +
      'only owners invite owners. User error ALREADY_MEMBER for a member’s address.',
    args: { input: t.arg({ type: InviteMemberInput, required: true, description: 'Whom to invite.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(() => inviteMember(ctx.core, ctx.principal, { email: input.email, role: input.role }), ['input']),
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
      'Gives a member another role; the API keys they created act with the new role (`ApiKey.actsAs`). Owners and ' +
      'admins; only owners grant or take the owner role. User error LAST_OWNER when it would leave the account ' +
      'without an owner.',
    args: { input: t.arg({ type: ChangeMemberRoleInput, required: true, description: 'The member and the role.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(
        async () => ({
          membership: await changeMemberRole(ctx.core, ctx.principal, String(input.membershipId), input.role),
        }),
        ['input'],
      ),
  }),
  removeMember: t.field({
    type: RemoveMemberPayloadRef,
    description:
      'Removes a member from the account (removing oneself is leaving it), ends their sessions on it and revokes ' +
      'the API keys they created in it (CREATOR_REMOVED). Owners and admins; only owners remove owners. User error ' +
      'LAST_OWNER for the last owner.',
    args: { id: t.arg.id({ required: true, description: 'The membership’s id (`Membership.id`).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        const removed = await removeMember(ctx.core, ctx.principal, String(args.id));
        return { removedMembershipId: removed.membership.id, revokedKeyCount: removed.revokedKeyCount };
      }, ['id']),
  }),
  revokeSession: t.field({
    type: RevokeSessionPayloadRef,
    description:
      'Ends one of the signed-in user’s sessions (this one included): its requests and open sockets stop. User ' +
      'error NOT_FOUND for no live session of that id.',
    args: { id: t.arg.id({ required: true, description: 'The session’s id (`ConsoleSession.id`).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        await endSession(ctx.core, ctx.principal, String(args.id));
        return { revokedSessionId: String(args.id) };
      }, ['id']),
  }),
  signOutEverywhere: t.field({
    type: SignOutEverywherePayloadRef,
    description: 'Ends every session of the signed-in user, this one included.',
    resolve: (_, __, ctx) =>
      mutationPayload(async () => ({ revokedSessionCount: await signOutEverywhere(ctx.core, ctx.principal) })),
  }),
}));
