import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { print, type GraphQLFormattedError } from 'graphql';
import type { TypedDocumentNode, VariablesOf } from '@graphql-typed-document-node/core';
import { revokeApiKey } from '../../../src/accounts/accounts.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';
import type { Answer } from '../../helpers/documents.ts';
import { collect, disposeClients, wsClient } from '../../helpers/ws.ts';
import { graphql } from '../../helpers/gql/index.ts';

/**
 * graphql-ws operations take the same request pipeline as HTTP: each `subscribe` message is counted
 * against the key's per-minute budget (shared with REST), and the key is checked again for each one,
 * so a key revoked while its socket is open starts nothing more on it.
 */

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ config: { rateLimitPerMinute: 5 } });
});
afterEach(() => disposeClients());
afterAll(() => t?.stop());

const ViewerId = graphql(`query PipelineViewerId { viewer { id } }`);
const StartMaps = graphql(
  `mutation PipelineStartMaps($input: StartMapsScrapeInput!) { startMapsScrape(input: $input) { run { id } } }`,
);
const Progress = graphql(`subscription PipelineProgress($id: ID!) { runProgress(id: $id) { status } }`);

/** One operation over the socket: its data, or the errors it was refused with. */
function once<TData>(
  client: ReturnType<typeof wsClient>,
  document: TypedDocumentNode<TData, Record<string, never>>,
): Promise<Answer<TData>> {
  return new Promise((resolve, reject) => {
    let result: Answer<TData> = {};
    client.subscribe<TData>(
      { query: print(document) },
      {
        next: (r) => (result = r),
        error: (e) => (Array.isArray(e) ? resolve({ errors: e }) : reject(e)),
        complete: () => resolve(result),
      },
    );
  });
}

describe('graphql-ws under the HTTP limits', () => {
  it('counts each subscribe message against the key, together with REST, and refuses the one over with rate_limited', async () => {
    const { apiKey } = await t.account();
    // Not lazy: one socket for every operation, opened once.
    const client = wsClient(t.url, apiKey, { lazy: false, onNonLazyError: () => {} });
    // Two over REST, the socket's opening and two operations over it: the budget of five is spent.
    for (let i = 0; i < 2; i++) expect((await t.request('GET', '/api/v1/wallet', { key: apiKey })).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await once(client, ViewerId);
      expect(res.errors).toBeUndefined();
      expect(res.data!.viewer.id).toEqual(expect.any(String));
    }
    const refused = await once(client, ViewerId);
    expect(refused.data).toBeUndefined();
    expect(refused.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    // …and the socket's spending shows on REST too.
    const rest = await t.request('GET', '/api/v1/wallet', { key: apiKey });
    expect(rest.status).toBe(429);
    expect(rest.body.error.code).toBe('rate_limited');
  });

  it('a key revoked while its socket is open starts no further operation on it', async () => {
    const { apiKey } = await t.account();
    // Not lazy: the socket stays open between operations, as a dashboard's does.
    let reconnected = 0;
    const client = wsClient(t.url, apiKey, {
      lazy: false,
      onNonLazyError: () => {},
      on: { connected: () => void reconnected++ },
    });
    expect((await once(client, ViewerId)).errors).toBeUndefined();
    await revokeApiKey(t.app.core.db, apiKey.slice(0, 14));

    const refused = await new Promise<readonly GraphQLFormattedError[]>((resolve, reject) => {
      client.subscribe(
        { query: print(StartMaps), variables: { input: DENVER_DENTISTS } satisfies VariablesOf<typeof StartMaps> },
        {
          next: (r) =>
            r.errors ? resolve(r.errors) : reject(new Error(`a revoked key started a run: ${JSON.stringify(r.data)}`)),
          error: (e) => (Array.isArray(e) ? resolve(e) : reject(e)),
          complete: () => {},
        },
      );
    });
    expect(refused[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(reconnected, 'refused on the socket it was opened with').toBe(1);
    const [runs] = await t.app.core
      .sql`select count(*)::int as n from run r join api_key k on k.account_id = r.account_id where k.prefix = ${apiKey.slice(0, 14)}`;
    expect(runs!.n).toBe(0);
  });

  it('a subscription counts once when it starts, not per event', async () => {
    const { apiKey } = await t.account();
    const client = wsClient(t.url, apiKey);
    const { runId } = (
      await t.request('POST', '/api/v1/scrape/maps', {
        key: apiKey,
        body: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 30 },
      })
    ).body;
    const events = await collect(client, Progress, { id: runId }, 'runProgress').done;
    expect(events.at(-1)!.status).toBe('SUCCEEDED');
    // One POST, the socket's opening and one subscribe: with this GET, one of the five left, whatever the number of events.
    const res = await t.request('GET', '/api/v1/wallet', { key: apiKey });
    expect(res.headers.get('ratelimit')).toMatch(/remaining=1\b/);
  });
});
