import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../src/accounts/accounts.ts';
import { destinations } from '../../src/config/destinations.ts';
import { startFakeHubspot } from '../helpers/fakes/hubspot.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';
import { waitFor } from '../helpers/wait.ts';
import { closeCode, collect, disposeClients, wsClient } from '../helpers/ws.ts';

/**
 * Destinations on GraphQL against the local HubSpot fake: a connection made with a private-app token
 * (a token HubSpot refuses is a user error at its field), the kinds with their default mappings, a
 * destination with a mapping of its own (a field the kind does not take is refused at its entry), a
 * maps run started with `destinations` whose delivery is followed over graphql-ws to its end, counts
 * rising. A key acting for a member lists connections but neither connects nor disconnects. Another
 * account reads none of it; a subscriber whose key is revoked mid-stream gets nothing more and its socket
 * is closed 4401, while the delivery goes on.
 */

const PRIVATE_TOKEN = 'pat-na1-11111111-2222-3333-4444-555555555555';
const MAPS = { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 40 };

let fake: Awaited<ReturnType<typeof startFakeHubspot>>;
let t: TestApp;
let key: string;
let accountId: string;
let otherKey: string;

beforeAll(async () => {
  fake = await startFakeHubspot({
    privateApps: [
      { token: PRIVATE_TOKEN, appId: 8, scopes: ['crm.objects.contacts.write', 'crm.objects.contacts.read'] },
    ],
    rateLimit: { intervalMs: 300 },
  });
  t = await startTestApp({
    config: {
      destinations: destinations({
        SECRETS_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        HUBSPOT_BASE_URL: fake.url,
      }),
    },
  });
  ({ apiKey: key, accountId } = await t.account({ creditsMicros: 20_000_000n }));
  ({ apiKey: otherKey } = await t.account());
});
afterEach(() => disposeClients());
afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

const ConnectWithToken = graphql(`
  mutation DestinationsGraphQLConnect($input: ConnectProviderWithTokenInput!) {
    connectProviderWithToken(input: $input) {
      connection { id provider method status name }
      userErrors { code field message }
    }
  }
`);
const Kinds = graphql(`
  query DestinationsGraphQLKinds {
    providers { provider name signIn token }
    destinationKinds {
      kind title provider mappingFields fields
      settings { name required }
      defaultMapping(tool: MAPS) { column field }
    }
  }
`);
const CreateDestination = graphql(`
  mutation DestinationsGraphQLCreate($input: CreateDestinationInput!) {
    createDestination(input: $input) {
      destination {
        id name kind paused
        connection { id }
        mapping { tool column field }
        effectiveMapping(tool: MAPS) { column field }
      }
      userErrors { code field message }
    }
  }
`);
const StartMaps = graphql(`
  mutation DestinationsGraphQLStart($input: StartMapsScrapeInput!, $destinations: [ID!]) {
    startMapsScrape(input: $input, destinations: $destinations) { run { id } userErrors { code field message } }
  }
`);
const RunDeliveries = graphql(`
  query DestinationsGraphQLRunDeliveries($runId: ID!) {
    deliveries(runId: $runId) { nodes { id status } }
    run(id: $runId) { deliveries { totalCount } }
  }
`);
const Follow = graphql(`
  subscription DestinationsGraphQLFollow($id: ID!) {
    delivery(id: $id) { id status message total sent created skipped ended problems(first: 20) { row } }
  }
`);
const ReadAll = graphql(`
  query DestinationsGraphQLRead($delivery: ID!, $destination: ID!, $connection: ID!) {
    delivery(id: $delivery) {
      id status sent skipped
      problems(first: 5) { row outcome reason }
      destination { id }
      run { id status }
    }
    destination(id: $destination) { id deliveries { totalCount } }
    connectedProvider(id: $connection) { id }
    node(id: $delivery) { id }
    destinations { totalCount }
    connectedProviders { totalCount }
  }
`);
const Disconnect = graphql(`
  mutation DestinationsGraphQLDisconnect($id: ID!) {
    disconnectProvider(id: $id) { disconnectedConnectionId userErrors { code field message } }
  }
`);
const Listed = graphql(`query DestinationsGraphQLListed { connectedProviders { nodes { id } } }`);
const DeleteDestination = graphql(`
  mutation DestinationsGraphQLDelete($id: ID!) {
    deleteDestination(id: $id) { deletedDestinationId userErrors { code field message } }
  }
`);

type Followed = { status: string; sent: number; total: number; skipped: number; ended: boolean; problems: unknown[] };

let connectionId: string;
let destinationId: string;
let deliveryId: string;

/** Starts a maps run delivering to the destination, and answers its delivery's id once it is queued. */
async function deliveredRun(): Promise<{ runId: string; deliveryId: string }> {
  const started = await t.graphql(key, StartMaps, { input: MAPS, destinations: [destinationId] });
  expect(started.body.data?.startMapsScrape.userErrors).toEqual([]);
  const runId = started.body.data!.startMapsScrape.run!.id;
  const queued = await waitFor(
    async () => (await t.graphql(key, RunDeliveries, { runId })).body.data?.deliveries.nodes[0],
    Boolean,
    { what: 'the delivery to be queued' },
  );
  return { runId, deliveryId: queued!.id };
}

describe('connections and destinations on GraphQL', () => {
  it('connects with a token, refusing one HubSpot does not take at its field in GraphQL’s words', async () => {
    const bad = await t.graphql(key, ConnectWithToken, {
      input: { provider: 'HUBSPOT', name: 'Wrong', token: 'pat-na1-00000000-0000-0000-0000-000000000000' },
    });
    const refused = bad.body.data!.connectProviderWithToken;
    expect(refused.connection).toBeNull();
    expect(refused.userErrors).toEqual([
      expect.objectContaining({ code: 'VALIDATION_FAILED', field: ['input', 'token'] }),
    ]);
    expect(refused.userErrors[0]!.message).not.toMatch(/\/api\/|HTTP|\b400\b/);
    const good = await t.graphql(key, ConnectWithToken, {
      input: { provider: 'HUBSPOT', name: 'Private app', token: PRIVATE_TOKEN },
    });
    expect(good.body.data!.connectProviderWithToken.userErrors).toEqual([]);
    expect(good.body.data!.connectProviderWithToken.connection).toMatchObject({
      provider: 'HUBSPOT',
      method: 'TOKEN',
      status: 'ACTIVE',
    });
    connectionId = good.body.data!.connectProviderWithToken.connection!.id;
  });

  it('lists the providers and the kinds, each with its default mapping of a tool’s columns', async () => {
    const { data } = (await t.graphql(key, Kinds)).body;
    // No app registered at HubSpot on this server: a token connects, signing in does not.
    expect(data!.providers).toContainEqual({ provider: 'HUBSPOT', name: 'HubSpot', signIn: false, token: true });
    const contacts = data!.destinationKinds.find((k) => k.kind === 'HUBSPOT_CONTACTS');
    expect(contacts).toMatchObject({ provider: 'HUBSPOT', mappingFields: 'LIST' });
    expect(contacts!.fields).toContain('mobilephone');
    expect(contacts!.defaultMapping).toContainEqual({ column: 'name', field: 'company' });
    expect(contacts!.defaultMapping.filter((m) => m.field === null).length).toBeGreaterThan(0);
    const slack = data!.destinationKinds.find((k) => k.kind === 'SLACK_SUMMARY');
    expect(slack!.settings).toContainEqual({ name: 'channel', required: true });
  });

  it('makes a destination with a mapping of its own, refusing a field the kind does not take at its entry', async () => {
    const input = {
      name: 'Dentists to HubSpot',
      kind: 'HUBSPOT_CONTACTS' as const,
      connection: connectionId,
      mapping: [
        { tool: 'MAPS' as const, column: 'website', field: null },
        { tool: 'MAPS' as const, column: 'phone', field: 'fax' },
      ],
    };
    const bad = (await t.graphql(key, CreateDestination, { input })).body.data!.createDestination;
    expect(bad.destination).toBeNull();
    expect(bad.userErrors).toEqual([
      expect.objectContaining({ code: 'VALIDATION_FAILED', field: ['input', 'mapping', '1', 'field'] }),
    ]);
    const made = (
      await t.graphql(key, CreateDestination, {
        input: { ...input, mapping: [input.mapping[0]!, { tool: 'MAPS', column: 'phone', field: 'mobilephone' }] },
      })
    ).body.data!.createDestination;
    expect(made.userErrors).toEqual([]);
    expect(made.destination).toMatchObject({
      kind: 'HUBSPOT_CONTACTS',
      paused: false,
      connection: { id: connectionId },
    });
    expect(made.destination!.effectiveMapping).toContainEqual({ column: 'phone', field: 'mobilephone' });
    expect(made.destination!.effectiveMapping).toContainEqual({ column: 'website', field: null });
    destinationId = made.destination!.id;
  });

  it('follows a run’s delivery over graphql-ws to its end: its counts rise, it ends SUCCEEDED', async () => {
    // HubSpot is down for two tries (the delivery waits 1 s, then 4 s): the subscription is in place before it sends.
    fake.failNext(2);
    const run = await deliveredRun();
    deliveryId = run.deliveryId;
    const followed = collect(wsClient(t.url, key), Follow, { id: deliveryId }, 'delivery');
    const events = (await followed.done) as Followed[];
    expect(events.length).toBeGreaterThan(1);
    expect(events[0]!.sent).toBe(0);
    const last = events.at(-1)!;
    expect(last).toMatchObject({ status: 'SUCCEEDED', ended: true });
    expect(last.sent).toBeGreaterThan(0);
    expect(last.skipped).toBeGreaterThan(0);
    expect(last.problems).toHaveLength(Math.min(20, last.skipped));
    expect(events.slice(0, -1).every((e) => !e.ended)).toBe(true);
    for (let i = 1; i < events.length; i++) expect(events[i]!.sent).toBeGreaterThanOrEqual(events[i - 1]!.sent);
    // The last event is what the delivery holds, and what the run shows.
    const read = (
      await t.graphql(key, ReadAll, { delivery: deliveryId, destination: destinationId, connection: connectionId })
    ).body.data!;
    expect(read.delivery).toMatchObject({
      id: deliveryId,
      status: 'SUCCEEDED',
      sent: last.sent,
      run: { id: run.runId },
    });
    expect(read.delivery!.problems.length).toBe(Math.min(5, read.delivery!.skipped));
    expect(read.destination!.deliveries.totalCount).toBe(1);
    expect((await t.graphql(key, RunDeliveries, { runId: run.runId })).body.data!.run!.deliveries.totalCount).toBe(1);
  });

  it('a member’s key lists connections, and may neither connect nor disconnect (ROLE_REQUIRED)', async () => {
    await t.app.core.sql`insert into app_user (id, email) values ('usr_member1', 'member@destinations.test')`;
    await t.app.core.sql`insert into membership (id, account_id, user_id, role)
      values ('mem_member1', ${accountId}, 'usr_member1', 'member')`;
    const { apiKey: memberKey } = await createApiKey(t.app.core.db, accountId, { createdBy: 'usr_member1' });
    const listed = (await t.graphql(memberKey, Listed)).body.data!.connectedProviders.nodes;
    expect(listed.map((c) => c.id)).toContain(connectionId);
    const connected = (
      await t.graphql(memberKey, ConnectWithToken, {
        input: { provider: 'HUBSPOT', name: 'Mine', token: PRIVATE_TOKEN },
      })
    ).body.data!.connectProviderWithToken;
    expect(connected).toMatchObject({ connection: null, userErrors: [{ code: 'ROLE_REQUIRED', field: null }] });
    expect(connected.userErrors[0]!.message).toMatch(/owners and admins/);
    const gone = (await t.graphql(memberKey, Disconnect, { id: connectionId })).body.data!.disconnectProvider;
    expect(gone).toMatchObject({ disconnectedConnectionId: null, userErrors: [{ code: 'ROLE_REQUIRED' }] });
  });

  it('another account reads none of it, follows none of it and deletes none of it', async () => {
    const read = await t.graphql(otherKey, ReadAll, {
      delivery: deliveryId,
      destination: destinationId,
      connection: connectionId,
    });
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data).toMatchObject({
      delivery: null,
      destination: null,
      connectedProvider: null,
      node: null,
      destinations: { totalCount: 0 },
      connectedProviders: { totalCount: 0 },
    });
    const followed = collect(wsClient(t.url, otherKey), Follow, { id: deliveryId }, 'delivery');
    await expect(followed.done).rejects.toThrow(/DELIVERY_NOT_FOUND/);
    const deleted = (await t.graphql(otherKey, DeleteDestination, { id: destinationId })).body.data!.deleteDestination;
    expect(deleted).toMatchObject({ deletedDestinationId: null, userErrors: [{ code: 'DESTINATION_NOT_FOUND' }] });
  });

  it('a subscriber whose key is revoked mid-stream gets nothing more, its socket closed 4401; the delivery goes on', async () => {
    const second = await createApiKey(t.app.core.db, accountId, { name: 'dashboard' });
    fake.failNext(2);
    const run = await deliveredRun();
    const client = wsClient(t.url, second.apiKey);
    const closed = closeCode(client);
    const followed = collect(client, Follow, { id: run.deliveryId }, 'delivery');
    // It ends with the socket's close, not with the delivery.
    followed.done.catch(() => {});
    const first = (await followed.first) as Followed;
    expect(first.ended).toBe(false);
    await revokeApiKey(t.app.core.db, second.prefix);
    const seen = followed.items.length;
    expect(await closed).toBe(4401);
    expect(followed.items.length).toBe(seen);
    // The delivery did go on to its end (there were events to withhold).
    const ended = collect(wsClient(t.url, key), Follow, { id: run.deliveryId }, 'delivery');
    expect(((await ended.done) as Followed[]).at(-1)).toMatchObject({ status: 'SUCCEEDED' });
  });
});
