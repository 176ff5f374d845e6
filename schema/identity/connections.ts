import type { OAuthGrant } from '../../db/tables/oauth.ts';
import { listConnections, loadConnections, revokeConnection } from '../../src/accounts/oauth/grants.ts';
import { may } from '../../src/accounts/roles.ts';
import { TOOLSET_NAMES, TOOLSETS, type Toolset } from '../../src/tools/toolsets.ts';
import { AccountRef } from '../account.ts';
import { builder } from '../builder.ts';
import { AFTER_DESCRIPTION, connectionType, FIRST_DESCRIPTION } from '../connection.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from '../errors.ts';
import { NodeRef, registerNode } from '../node.ts';
import { MAX_PAGE, pageComplexity, pageOf } from './lists.ts';
import { UserRef, users } from './users.ts';

/**
 * The account's connected apps: hosted agents a member connected to the MCP server through OAuth, at
 * the console's consent page (docs/api.md, "Connecting hosted agents (OAuth)"). Listed beside the API keys and
 * revoked like them, by owners and admins signed in to the console (src/accounts/oauth/grants.ts).
 */

const ToolsetEnum = builder.enumType('Toolset', {
  description: 'A group of MCP tools an MCP client chooses, and a connected app is limited to.',
  values: Object.fromEntries(
    TOOLSET_NAMES.map((name) => [name.toUpperCase(), { value: name, description: TOOLSETS[name] }]),
  ) as Record<Uppercase<Toolset>, { value: Toolset; description: string }>,
});

export const ConnectedAppRef = builder.objectRef<OAuthGrant>('ConnectedApp').implement({
  description:
    'An app (a hosted agent’s connector) a member connected to the account’s MCP server through OAuth: it acts ' +
    'with the current role of the member who allowed it, on the toolsets they chose, until it is revoked or they ' +
    'leave the account. Its tokens work at /mcp only.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The connection’s id (`oag_…`): what revokeConnection takes.' }),
    clientName: t.exposeString('clientName', {
      description: 'What the app calls itself (it registered itself, so the name is its own claim).',
    }),
    clientId: t.exposeString('clientId', { description: 'The app’s OAuth client id.' }),
    redirectHost: t.exposeString('redirectHost', {
      description: 'The host the authorization was sent back to when it was allowed.',
    }),
    toolsets: t.field({
      type: [ToolsetEnum],
      description: 'The toolsets it may use, chosen when it was allowed.',
      resolve: (c) => c.toolsets as Toolset[],
    }),
    readOnly: t.exposeBoolean('readOnly', { description: 'Whether it may only use tools that change nothing.' }),
    allowedBy: t.field({
      type: UserRef,
      nullable: true,
      description: 'The member who allowed it, whose current role bounds its rights.',
      resolve: (c, _, ctx) => users(ctx).load(c.userId),
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was allowed.', resolve: (c) => c.createdAt }),
    lastUsedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When one of its tokens last authenticated a request, at most a minute stale; null when never.',
      resolve: (c) => c.lastUsedAt,
    }),
    revokedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'When it was revoked (in the console, or by the app revoking its refresh token); null while it works.',
      resolve: (c) => c.revokedAt,
    }),
  }),
});

registerNode('oag', 'ConnectedApp', {
  keepsPrefix: true,
  localId: /^oag_[A-Za-z0-9]{1,64}$/,
  load: (ids, ctx) =>
    may(ctx.principal, 'keys')
      ? loadConnections(ctx.core.db, ctx.principal, ids)
      : Promise.resolve(ids.map(() => null)),
});

const ConnectedAppConnectionRef = connectionType<OAuthGrant>('ConnectedApp', ConnectedAppRef, {
  description: 'A page of the account’s connected apps, newest first.',
  totalCount: 'How many connected apps the list holds.',
});

builder.objectFields(AccountRef, (t) => ({
  connections: t.field({
    type: ConnectedAppConnectionRef,
    description:
      'The apps connected to the account’s MCP server through OAuth, newest first (owners and admins signed in to ' +
      'the console; ROLE_REQUIRED otherwise).',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_PAGE, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
      includeRevoked: t.arg.boolean({ description: 'Also list revoked connections; default false.' }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) =>
      pageOf(await listConnections(ctx.core.db, ctx.principal, args.includeRevoked ?? false), args),
  }),
}));

const RevokeConnectionPayloadRef = builder
  .objectRef<{ connection?: OAuthGrant; userErrors: UserError[] }>('RevokeConnectionPayload')
  .implement({
    description: 'What `revokeConnection` answers.',
    fields: (t) => ({
      connection: t.field({
        type: ConnectedAppRef,
        nullable: true,
        description: 'The connection, revoked; null when refused.',
        resolve: (p) => p.connection ?? null,
      }),
      userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
    }),
  });

builder.mutationField('revokeConnection', (t) =>
  t.field({
    type: RevokeConnectionPayloadRef,
    description:
      'Revokes a connected app: its access and refresh tokens stop working at once (within the key cache time in ' +
      'other processes), and it must be allowed again to reconnect. Owners and admins signed in to the console. ' +
      'User error NOT_FOUND for no live connection of that id.',
    args: { id: t.arg.id({ required: true, description: 'The connection’s id (`ConnectedApp.id`).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(
        async () => ({ connection: await revokeConnection(ctx.core, ctx.principal, String(args.id)) }),
        ['id'],
      ),
  }),
);
