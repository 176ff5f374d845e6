import type { ConsoleSession, Invitation, Membership } from '../../db/tables/identity.ts';
import { listInvitations } from '../../src/accounts/invitations.ts';
import { listKeys, type ListedKey } from '../../src/accounts/keys.ts';
import { listMembers } from '../../src/accounts/members.ts';
import { requireUser } from '../../src/accounts/roles.ts';
import { listUserSessions } from '../../src/accounts/sessions.ts';
import { AccountRef } from '../account.ts';
import { builder } from '../builder.ts';
import {
  AFTER_DESCRIPTION,
  connectionOf,
  connectionType,
  FIRST_DESCRIPTION,
  notACursor,
  pageSize,
} from '../connection.ts';
import { ApiKeyRef } from './keys.ts';
import { InvitationRef, MembershipRef } from './members.ts';
import { ConsoleSessionRef } from './sessions.ts';

/**
 * The lists of the console's identity types, each a short list held whole and paged here: the account's
 * members, invitations and API keys (owners and admins; ROLE_REQUIRED otherwise), and the signed-in
 * user's sessions. Registered after every type of the folder, as the printed schema orders them.
 */

export const MAX_PAGE = 100;

/** A page of a short list held whole, with the item's id as cursor. */
export function pageOf<T extends { id: string }>(
  all: readonly T[],
  args: { first?: number | null; after?: string | null },
) {
  const first = pageSize(args.first, { max: MAX_PAGE, byDefault: 20 });
  const start = args.after ? all.findIndex((item) => item.id === args.after) + 1 : 0;
  if (start === 0 && args.after) throw notACursor();
  return connectionOf(all.slice(start, start + first), {
    cursorOf: (item) => item.id,
    hasNextPage: start + first < all.length,
    totalCount: all.length,
  });
}

export const pageComplexity = (args: { first?: number | null }) => ({
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

builder.queryField('sessions', (t) =>
  t.field({
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
);

builder.objectFields(AccountRef, (t) => ({
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
