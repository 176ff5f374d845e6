import { type Connection, connectionTable, PROVIDERS, type Provider } from '../db/tables/destinations.ts';
import {
  findConnection,
  oauthConnectionInput,
  providerName,
  tokenConnectionInput,
} from '../src/destinations/connections.ts';
import {
  beginProviderConnect,
  connectProviderToken,
  disconnectProvider,
  listProviderConnections,
} from '../src/endpoints/api/destinations.ts';
import { graphqlFieldOf } from '../src/endpoints/define.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { builder } from './builder.ts';
import { AFTER_DESCRIPTION, connectionType, FIRST_DESCRIPTION } from './connection.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { pageComplexity, pageOf } from './identity/lists.ts';
import { NodeRef, registerNode } from './node.ts';

/**
 * The account's connections to providers (src/destinations/connections.ts), as `ConnectedProvider`s (a
 * `…Connection` is a page of a list in this API): made by the provider's sign-in (`beginProviderConnect`,
 * then the provider sends the user back to the console) or with a token the provider issued
 * (`connectProviderWithToken`); owners and admins connect and disconnect, members see them.
 */

/** The GraphQL name of a value of a declared list: `hubspot_contacts` → `HUBSPOT_CONTACTS`. */
export const enumName = (value: string) => value.toUpperCase();

/** A description of the services in GraphQL's words: a provider's or a kind's name is its enum value. */
export const inGraphQLWords = (text: string, names: readonly string[] = PROVIDERS) =>
  names.reduce((words, name) => words.replace(new RegExp(`\\b${name}\\b`, 'g'), enumName(name)), text);

export const ProviderEnum = builder.enumType('Provider', {
  description: 'A service rows can be delivered to, once the account has a connection to it.',
  values: Object.fromEntries(PROVIDERS.map((p) => [enumName(p), { value: p, description: providerName(p) }])) as Record<
    string,
    { value: Provider; description: string }
  >,
});

/** The providers an input's `provider` field takes (its zod enum's options). */
const providersOf = (input: { shape: { provider: unknown } }): readonly string[] =>
  (input.shape.provider as { options?: readonly string[] }).options ?? [];

const ProviderInfoRef = builder.objectRef<Provider>('ProviderInfo').implement({
  description: 'A provider, and how the account can connect to it on this server.',
  fields: (t) => ({
    provider: t.field({ type: ProviderEnum, description: 'The provider.', resolve: (p) => p }),
    name: t.string({ description: 'Its name for people.', resolve: (p) => providerName(p) }),
    signIn: t.boolean({
      description:
        'Whether `beginProviderConnect` works: the provider is connectable by signing in and this server’s operator ' +
        'has registered an app with it.',
      resolve: (p, _, ctx) =>
        providersOf(oauthConnectionInput).includes(p) && Boolean(ctx.core.config.destinations[p]?.app),
    }),
    token: t.boolean({
      description: 'Whether `connectProviderWithToken` takes a token the provider issued.',
      resolve: (p) => providersOf(tokenConnectionInput).includes(p),
    }),
  }),
});

builder.queryField('providers', (t) =>
  t.field({
    type: [ProviderInfoRef],
    description: 'Every provider, with the ways to connect to it on this server (none yet for some).',
    resolve: () => [...PROVIDERS],
  }),
);

const ConnectionStatusEnum = builder.enumType('ConnectedProviderStatus', {
  description: 'Whether a connection works.',
  values: Object.fromEntries(
    connectionTable.status.enumValues.map((s) => [
      enumName(s),
      {
        value: s,
        description: {
          active: 'It works.',
          broken: 'The provider refused it (grant revoked or expired): connect again, then resume its destinations.',
        }[s],
      },
    ]),
  ) as Record<string, { value: Connection['status']; description: string }>,
});

const ConnectionMethodEnum = builder.enumType('ConnectedProviderMethod', {
  description: 'How a connection was made.',
  values: Object.fromEntries(
    connectionTable.method.enumValues.map((m) => [
      enumName(m),
      {
        value: m,
        description: { oauth: 'By signing in at the provider.', token: 'With a token the provider issued.' }[m],
      },
    ]),
  ) as Record<string, { value: Connection['method']; description: string }>,
});

export const ConnectedProviderRef = builder.objectRef<Connection>('ConnectedProvider').implement({
  description:
    'The account’s grant at a provider (a HubSpot portal, a Slack workspace…), which destinations use. ' +
    'Its tokens are sealed and never shown.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'con_…: its global id.' }),
    provider: t.field({ type: ProviderEnum, description: 'The provider.', resolve: (c) => c.provider }),
    method: t.field({ type: ConnectionMethodEnum, description: 'How it was made.', resolve: (c) => c.method }),
    name: t.exposeString('name', { description: 'What the account calls it.' }),
    externalId: t.exposeString('externalId', {
      nullable: true,
      description: 'Who it is at the provider: the portal, the workspace…',
    }),
    externalName: t.exposeString('externalName', { nullable: true, description: 'Its name at the provider.' }),
    scopes: t.exposeString('scopes', { nullable: true, description: 'What the provider granted, as it words it.' }),
    status: t.field({ type: ConnectionStatusEnum, description: 'Whether it works.', resolve: (c) => c.status }),
    brokenReason: t.exposeString('brokenReason', {
      nullable: true,
      description: 'Why the provider refused it; null while it works.',
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was made.', resolve: (c) => c.createdAt }),
    refreshedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When its access token was last refreshed; null when never.',
      resolve: (c) => c.refreshedAt,
    }),
  }),
});

registerNode('con', 'ConnectedProvider', {
  keepsPrefix: true,
  localId: /^con_[A-Za-z0-9]{1,64}$/,
  load: (ids, ctx) =>
    Promise.all(ids.map((id) => findConnection(ctx.core.db, ctx.principal.accountId, id).catch(() => null))),
});

const ConnectedConnectedProviderRef = connectionType<Connection>('ConnectedProvider', ConnectedProviderRef, {
  description: 'A page of the account’s provider connections, newest first.',
  totalCount: 'How many connections the account has.',
});

builder.queryField(graphqlFieldOf(listProviderConnections), (t) =>
  t.field({
    type: ConnectedConnectedProviderRef,
    description: 'The account’s provider connections, newest first, with whether each works.',
    args: {
      first: t.arg.int({ description: FIRST_DESCRIPTION(100, 20) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: pageComplexity,
    resolve: async (_, args, ctx) =>
      pageOf(
        (await callEndpoint(ctx.core, ctx.principal, listProviderConnections, undefined, { shape: (c) => c })).body,
        args,
      ),
  }),
);

builder.queryField('connectedProvider', (t) =>
  t.field({
    type: ConnectedProviderRef,
    nullable: true,
    description: 'A provider connection by id (con_…); null when the account has none.',
    args: { id: t.arg.id({ required: true, description: 'Its id.' }) },
    resolve: (_, args, ctx) => findConnection(ctx.core.db, ctx.principal.accountId, String(args.id)).catch(() => null),
  }),
);

type ConnectionPayload = { connection?: Connection; userErrors: UserError[] };
const ConnectPayloadRef = builder.objectRef<ConnectionPayload>('ConnectProviderWithTokenPayload').implement({
  description: 'What `connectProviderWithToken` answers.',
  fields: (t) => ({
    connection: t.field({
      type: ConnectedProviderRef,
      nullable: true,
      description: 'The connection made; null when refused.',
      resolve: (p) => p.connection ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

const ConnectWithTokenInputRef = builder.inputType('ConnectProviderWithTokenInput', {
  description: 'A connection made with a token the provider issued.',
  fields: (t) => ({
    provider: t.field({
      type: ProviderEnum,
      required: true,
      description: inGraphQLWords(tokenConnectionInput.shape.provider.description ?? 'The provider.'),
    }),
    name: t.string({ required: true, description: 'What the account calls it.' }),
    token: t.string({
      required: true,
      description: 'The token the provider issued; checked there, never shown again.',
    }),
  }),
});

builder.mutationField(graphqlFieldOf(connectProviderToken), (t) =>
  t.field({
    type: ConnectPayloadRef,
    description:
      'Connects a provider with a token it issued (a HubSpot private-app token, a Slack bot token…), checked at the ' +
      'provider, then sealed and never shown again. Owners and admins (user error ROLE_REQUIRED otherwise); ' +
      'VALIDATION_FAILED at `input.token` for a token the provider does not take.',
    args: { input: t.arg({ type: ConnectWithTokenInputRef, required: true, description: 'The connection.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(async () => {
        const called = await callEndpoint(ctx.core, ctx.principal, connectProviderToken, input, { shape: (c) => c });
        return { connection: called.body };
      }, ['input']),
  }),
);

const BeginConnectInputRef = builder.inputType('BeginProviderConnectInput', {
  description: 'A connection to make by signing in at the provider.',
  fields: (t) => ({
    provider: t.field({
      type: ProviderEnum,
      required: true,
      description: inGraphQLWords(oauthConnectionInput.shape.provider.description ?? 'The provider.'),
    }),
    name: t.string({ required: true, description: 'What the account calls it.' }),
  }),
});

type BeginPayload = { authorizeUrl?: string; userErrors: UserError[] };
const BeginPayloadRef = builder.objectRef<BeginPayload>('BeginProviderConnectPayload').implement({
  description: 'What `beginProviderConnect` answers.',
  fields: (t) => ({
    authorizeUrl: t.string({
      nullable: true,
      description:
        'Where to send the user: the provider’s consent page. The provider sends them back to this server, which ' +
        'keeps the connection and opens the console’s Connections page. Works once, within 10 minutes.',
      resolve: (p) => p.authorizeUrl ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(beginProviderConnect), (t) =>
  t.field({
    type: BeginPayloadRef,
    description:
      'Starts connecting a provider by signing in there (its OAuth authorization-code flow). Owners and admins ' +
      '(ROLE_REQUIRED otherwise); PROVIDER_NOT_CONFIGURED when this server has no app at the provider (connect with ' +
      'a token instead: `connectProviderWithToken`).',
    args: { input: t.arg({ type: BeginConnectInputRef, required: true, description: 'The connection.' }) },
    resolve: (_, { input }, ctx) =>
      mutationPayload(
        async () =>
          (await callEndpoint(ctx.core, ctx.principal, beginProviderConnect, input, { shape: (a) => a })).body,
        ['input'],
      ),
  }),
);

type DisconnectPayload = { disconnectedConnectionId?: string; userErrors: UserError[] };
const DisconnectPayloadRef = builder.objectRef<DisconnectPayload>('DisconnectProviderPayload').implement({
  description: 'What `disconnectProvider` answers.',
  fields: (t) => ({
    disconnectedConnectionId: t.id({
      nullable: true,
      description: 'The id of the connection removed, with its destinations; null when refused.',
      resolve: (p) => p.disconnectedConnectionId ?? null,
    }),
    userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
  }),
});

builder.mutationField(graphqlFieldOf(disconnectProvider), (t) =>
  t.field({
    type: DisconnectPayloadRef,
    description:
      'Revokes a connection’s grant at its provider (where it can be revoked) and deletes it with its destinations. ' +
      'Owners and admins (ROLE_REQUIRED otherwise); CONNECTION_NOT_FOUND for no such connection in the account.',
    args: { id: t.arg.id({ required: true, description: 'Its id (con_…).' }) },
    resolve: (_, args, ctx) =>
      mutationPayload(async () => {
        await callEndpoint(ctx.core, ctx.principal, disconnectProvider, String(args.id), { shape: () => undefined });
        return { disconnectedConnectionId: String(args.id) };
      }, ['id']),
  }),
);
