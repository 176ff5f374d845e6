import { z } from 'zod';
import { ROW_DELIVERY_STATUSES } from '../../../db/tables/destinations.ts';
import { KIND_NAMES, KINDS, settingsFields } from '../../destinations/targets.ts';
import {
  beginConnect,
  connectionView,
  connectWithToken,
  disconnect,
  listConnections,
  oauthConnectionInput,
  tokenConnectionInput,
} from '../../destinations/connections.ts';
import { deliveryProblems, deliveryView, findDelivery, listDeliveries } from '../../destinations/deliveries.ts';
import {
  createDestination,
  deleteDestination,
  destinationInput,
  destinationView,
  findDestination,
  listDestinations,
  resumeDestination,
} from '../../destinations/destinations.ts';
import { defineEndpoint, type RestRequest } from '../define.ts';

const CONNECTIONS = '/api/v1/connections';
const DESTINATIONS = '/api/v1/destinations';
const DELIVERIES = '/api/v1/deliveries';
const idOf = (request: RestRequest) => request.params.id ?? '';
const idIn = (input: string | Record<string, unknown>, field: string) =>
  typeof input === 'string' ? input : String(input[field] ?? '');

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
const REMOVE = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true };

const connectionView_ = z
  .object({
    id: z.string().describe('con_…'),
    provider: z.string(),
    method: z.enum(['oauth', 'token']),
    name: z.string(),
    externalId: z.string().nullable().describe('Who it is at the provider: the portal, the workspace…'),
    externalName: z.string().nullable(),
    scopes: z.string().nullable(),
    status: z.enum(['active', 'broken']),
    brokenReason: z.string().nullable().describe('Why the provider refused it; connect again.'),
    createdAt: z.string(),
    refreshedAt: z.string().nullable(),
  })
  .strict()
  .describe('A provider connection; its tokens are sealed and never shown.');

const destinationView_ = z
  .object({
    id: z.string().describe('dest_…'),
    name: z.string(),
    kind: z.string(),
    connectionId: z.string(),
    channel: z.string().nullable().describe('slack_summary: its channel (also in settings).'),
    settings: z
      .object(Object.fromEntries(Object.entries(settingsFields)))
      .strict()
      .describe('What it writes to: the channel, the unique property, the External ID field, the spreadsheet.'),
    mapping: z.record(z.string(), z.record(z.string(), z.string().nullable())),
    paused: z.boolean(),
    pausedReason: z.string().nullable(),
    createdAt: z.string(),
  })
  .strict();

const deliveryView_ = z
  .object({
    id: z.string().describe('dlv_…'),
    destinationId: z.string(),
    runId: z.string().nullable(),
    pipelineId: z.string().nullable(),
    status: z.enum(ROW_DELIVERY_STATUSES),
    message: z.string(),
    total: z.number(),
    sent: z.number(),
    created: z.number(),
    updated: z.number(),
    skipped: z.number(),
    failed: z.number(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .strict();

export const listProviderConnections = defineEndpoint({
  name: 'listConnections',
  title: "The account's provider connections",
  tag: 'Destinations',
  graphql: { field: 'connectedProviders' },
  rest: { path: CONNECTIONS, methods: ['get'], input: () => undefined, ok: 'Newest first; never a token.' },
  mcp: {
    tool: 'list_connections',
    toolset: 'destinations',
    title: 'List connections',
    description: ['The account’s connections to HubSpot, Slack…, with whether each works.'],
    annotations: READ,
  },
  response: z.object({ connections: z.array(connectionView_) }).strict(),
  errors: {},
  handler: ({ core, principal }) => listConnections(core.db, principal.accountId),
  respond: (connections) => ({ connections: connections.map(connectionView) }),
});

export const connectProviderToken = defineEndpoint({
  name: 'connectWithToken',
  title: 'Connect a provider with a token',
  tag: 'Destinations',
  graphql: { field: 'connectProviderWithToken' },
  description:
    'A token the provider issued (a HubSpot private-app token, a Slack bot token), checked at the provider, then ' +
    'sealed (AES-256-GCM) and never shown again. Owners and admins connect.',
  permission: 'connections',
  rest: {
    path: `${CONNECTIONS}/token`,
    methods: ['post'],
    status: 201,
    input: (request) => request.body,
    example: { provider: 'hubspot', name: 'Sales portal', token: 'pat-na1-00000000-0000-0000-0000-000000000000' },
    ok: 'The connection.',
  },
  request: tokenConnectionInput,
  response: z.object({ connection: connectionView_ }).strict(),
  errors: {
    400: ['validation_failed'],
    403: ['role_required'],
    503: ['provider_unavailable', 'secrets_not_configured'],
  },
  handler: ({ core, principal }, body: unknown) => connectWithToken(core, principal, body),
  respond: (connection) => ({ connection: connectionView(connection) }),
});

export const beginProviderConnect = defineEndpoint({
  name: 'beginConnect',
  title: 'Connect a provider by signing in',
  tag: 'Destinations',
  graphql: { field: 'beginProviderConnect' },
  description:
    'Starts the provider’s OAuth authorization-code flow: answers the URL to send the user to; the provider sends ' +
    'them back to /connections/callback, which keeps the connection and opens the console’s Connections page.',
  permission: 'connections',
  rest: {
    path: `${CONNECTIONS}/oauth`,
    methods: ['post'],
    input: (request) => request.body,
    example: { provider: 'hubspot', name: 'Sales portal' },
    ok: 'Where to send the user.',
  },
  request: oauthConnectionInput,
  response: z.object({ authorizeUrl: z.string() }).strict(),
  errors: {
    400: ['validation_failed'],
    403: ['role_required'],
    503: ['provider_not_configured', 'secrets_not_configured'],
  },
  handler: ({ core, principal }, body: unknown) => beginConnect(core, principal, body),
});

export const disconnectProvider = defineEndpoint({
  name: 'disconnect',
  title: 'Disconnect a provider',
  tag: 'Destinations',
  graphql: { field: 'disconnectProvider' },
  description: 'Revokes the grant at the provider (where it can be revoked); the connection and its destinations go.',
  permission: 'connections',
  rest: { path: `${CONNECTIONS}/:id`, methods: ['delete'], status: 204, input: idOf, ok: 'Disconnected.' },
  mcp: {
    tool: 'disconnect',
    toolset: 'destinations',
    title: 'Disconnect a provider',
    description: ['Revokes a connection at its provider and deletes it with its destinations.'],
    args: z.object({ connection: z.string().min(1).describe('Its id (con_…).') }).strict(),
    annotations: REMOVE,
  },
  errors: { 403: ['role_required'], 404: ['connection_not_found'], 503: ['provider_unavailable'] },
  handler: ({ core, principal }, input: string | Record<string, unknown>) =>
    disconnect(core, principal, idIn(input, 'connection')),
});

export const createRowDestination = defineEndpoint({
  name: 'createDestination',
  title: 'Create a destination',
  tag: 'Destinations',
  graphql: { field: 'createDestination' },
  description:
    `A connection and what to do with rows: ${KIND_NAMES.map((k) => `\`${k}\` (${KINDS[k].title})`).join('; ')}. ` +
    'Its settings are checked at the provider. Name it in `destinations` on any start, pipeline or saved task; ' +
    'the rows are delivered when it ends. `mapping` changes the default field of a tool’s column (or drops it).',
  rest: {
    path: DESTINATIONS,
    methods: ['post'],
    status: 201,
    input: (request) => request.body,
    example: { name: 'Dentists to HubSpot', kind: 'hubspot_contacts', connection: 'con_0000000000000000' },
    ok: 'The destination.',
  },
  mcp: {
    tool: 'create_destination',
    toolset: 'destinations',
    title: 'Create a destination',
    description: [
      'Where runs deliver rows: HubSpot contacts or companies, Salesforce leads or contacts, a Google Sheet, or a',
      'Slack summary; name it in a start’s destinations.',
    ],
    annotations: { ...WRITE, openWorldHint: false },
  },
  request: destinationInput,
  response: z.object({ destination: destinationView_ }).strict(),
  errors: { 400: ['validation_failed'] },
  handler: ({ core, principal }, body: unknown) => createDestination(core, principal, body),
  respond: (destination) => ({ destination: destinationView(destination) }),
});

export const listRowDestinations = defineEndpoint({
  name: 'listDestinations',
  title: "The account's destinations",
  tag: 'Destinations',
  graphql: { field: 'destinations' },
  rest: { path: DESTINATIONS, methods: ['get'], input: () => undefined, ok: 'Newest first.' },
  mcp: {
    tool: 'list_destinations',
    toolset: 'destinations',
    title: 'List destinations',
    description: ['The account’s destinations, paused ones with the reason.'],
    annotations: READ,
  },
  response: z.object({ destinations: z.array(destinationView_) }).strict(),
  errors: {},
  handler: ({ core, principal }) => listDestinations(core.db, principal.accountId),
  respond: (destinations) => ({ destinations: destinations.map(destinationView) }),
});

export const getRowDestination = defineEndpoint({
  name: 'getDestination',
  title: 'A destination',
  tag: 'Destinations',
  graphql: { field: 'destination' },
  rest: { path: `${DESTINATIONS}/:id`, methods: ['get'], input: idOf, ok: 'The destination.' },
  response: z.object({ destination: destinationView_ }).strict(),
  errors: { 404: ['destination_not_found'] },
  handler: ({ core, principal }, id: string) => findDestination(core.db, principal.accountId, id),
  respond: (destination) => ({ destination: destinationView(destination) }),
});

export const resumeRowDestination = defineEndpoint({
  name: 'resumeDestination',
  title: 'Resume a destination',
  tag: 'Destinations',
  graphql: { field: 'resumeDestination' },
  description: 'A destination paused by a broken connection takes deliveries again (connect the provider again first).',
  rest: { path: `${DESTINATIONS}/:id/resume`, methods: ['post'], input: idOf, ok: 'The destination.' },
  response: z.object({ destination: destinationView_ }).strict(),
  errors: { 404: ['destination_not_found'] },
  handler: ({ core, principal }, id: string) => resumeDestination(core.db, principal.accountId, id),
  respond: (destination) => ({ destination: destinationView(destination) }),
});

export const deleteRowDestination = defineEndpoint({
  name: 'deleteDestination',
  title: 'Delete a destination',
  tag: 'Destinations',
  graphql: { field: 'deleteDestination' },
  rest: { path: `${DESTINATIONS}/:id`, methods: ['delete'], status: 204, input: idOf, ok: 'Deleted.' },
  errors: { 404: ['destination_not_found'] },
  handler: ({ core, principal }, id: string) => deleteDestination(core.db, principal.accountId, id),
});

export const listRowDeliveries = defineEndpoint({
  name: 'listDeliveries',
  title: "The account's deliveries",
  tag: 'Destinations',
  graphql: { field: 'deliveries' },
  rest: {
    path: DELIVERIES,
    methods: ['get'],
    input: (request) => request.query,
    ok: 'The newest 100, newest first.',
  },
  mcp: {
    tool: 'list_deliveries',
    toolset: 'destinations',
    title: 'List deliveries',
    description: ['Deliveries of rows to destinations, with counts sent, created, updated, skipped and refused.'],
    annotations: READ,
  },
  request: z
    .object({
      runId: z.string().optional().describe('Only this run’s.'),
      destination: z.string().optional().describe('Only to this destination (dest_…).'),
    })
    .strict(),
  response: z.object({ deliveries: z.array(deliveryView_) }).strict(),
  errors: { 400: ['validation_failed'] },
  handler: ({ core, principal }, query: { runId?: string; destination?: string } | undefined) =>
    listDeliveries(core.db, principal.accountId, { runId: query?.runId, destinationId: query?.destination }),
  respond: (deliveries) => ({ deliveries: deliveries.map(deliveryView) }),
});

export const getRowDelivery = defineEndpoint({
  name: 'getDelivery',
  title: 'A delivery, with its log',
  tag: 'Destinations',
  graphql: { field: 'delivery' },
  rest: {
    path: `${DELIVERIES}/:id`,
    methods: ['get'],
    input: idOf,
    ok: 'The delivery and the rows it skipped or the provider refused, each with the reason (at most 100).',
  },
  mcp: {
    tool: 'get_delivery',
    toolset: 'destinations',
    title: 'Delivery log',
    description: ['A delivery’s counts and each row skipped or refused by the provider, with the reason.'],
    args: z.object({ delivery: z.string().min(1).describe('Its id (dlv_…).') }).strict(),
    annotations: READ,
  },
  response: z
    .object({
      delivery: deliveryView_,
      problems: z.array(
        z.object({ row: z.number(), outcome: z.enum(['skipped', 'failed']), reason: z.string() }).strict(),
      ),
    })
    .strict(),
  errors: { 404: ['delivery_not_found'] },
  handler: async ({ core, principal }, input: string | Record<string, unknown>) => {
    const delivery = await findDelivery(core.db, principal.accountId, idIn(input, 'delivery'));
    return { delivery, problems: await deliveryProblems(core.db, delivery.id) };
  },
  respond: ({ delivery, problems }) => ({
    delivery: deliveryView(delivery),
    problems: problems.map((p) => ({ row: p.row, outcome: p.outcome, reason: p.reason })),
  }),
});
