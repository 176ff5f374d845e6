import { Client, fetchExchange, type OperationResult } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { pipe, subscribe, take, toPromise } from 'wonka';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../../src/accounts/accounts.ts';
import { executeRun } from '../../../src/runs/engine/index.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { gatedSources } from '../../helpers/sources.ts';
import { disposeFrontendClients, frontendClient } from '../../helpers/urql.ts';
import { graphql } from '../../helpers/gql/index.ts';

/*
 * A frontend team's view of the GraphQL API: urql over HTTP and graphql-ws, with documents typed by
 * graphql-codegen's client preset from schema/schema.graphql (test/helpers/codegen.ts). A document that
 * no longer fits the schema fails the type check `npm test` runs before the suites.
 */

const StartMaps = graphql(`
  mutation StartMaps($input: StartMapsScrapeInput!) {
    startMapsScrape(input: $input) {
      run {
        id
        status
        tool
      }
      estimatedCost
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const FollowRun = graphql(`
  subscription FollowRun($id: ID!) {
    runProgress(id: $id) {
      id
      status
      handled
      itemCount
    }
  }
`);

const RunResults = graphql(`
  query RunResults($id: ID!, $first: Int, $after: String) {
    run(id: $id) {
      id
      status
      results(first: $first, after: $after) {
        totalCount
        pageInfo {
          hasNextPage
          endCursor
        }
        nodes {
          __typename
          ... on MapsResult {
            name
            placeId
            phone
          }
        }
      }
    }
  }
`);

const CancelRun = graphql(`
  mutation CancelRun($id: ID!) {
    cancelRun(id: $id) {
      run {
        id
        status
      }
      userErrors {
        code
        message
      }
    }
  }
`);

const BuyCredits = graphql(`
  mutation BuyCredits($amount: Money!) {
    buyCredits(amount: $amount) {
      purchase {
        amount
        bonus
      }
      wallet {
        totalBalance
      }
      userErrors {
        code
        field
        message
      }
    }
  }
`);

const ViewerAndLeads = graphql(`
  query ViewerAndLeads {
    viewer {
      id
      plan
    }
    leads(first: 1) {
      totalCount
    }
  }
`);

const Viewer = graphql(`
  query Viewer {
    viewer {
      id
    }
  }
`);

let t: TestApp;

beforeAll(async () => {
  // No worker: the tests run each run's engine themselves, with sources they can hold.
  t = await startTestApp({ worker: false, config: { corsOrigins: ['https://app.example.com'] } });
});
afterEach(() => disposeFrontendClients());
afterAll(() => t?.stop());

const INPUT = { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 120 };

/** Every result of a subscription until it completes (or `until` holds), in order. */
function follow<T>(
  source: ReturnType<Client['subscription']>,
  pick: (r: OperationResult) => T,
  until: (items: T[]) => boolean,
): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const items: T[] = [];
    const { unsubscribe } = pipe(
      source,
      subscribe((result: OperationResult) => {
        if (result.error) {
          unsubscribe();
          reject(result.error);
          return;
        }
        items.push(pick(result));
        if (until(items)) {
          unsubscribe();
          resolve(items);
        }
      }),
    );
  });
}

describe('a frontend app on urql and graphql-ws', () => {
  it('starts a run, follows its progress to SUCCEEDED and pages its typed results', async () => {
    const { apiKey } = await t.account();
    const { urql } = frontendClient(t.url, apiKey);

    const started = await urql.mutation(StartMaps, { input: INPUT }).toPromise();
    expect(started.error).toBeUndefined();
    const payload = started.data!.startMapsScrape;
    expect(payload.userErrors).toEqual([]);
    expect(payload.run).toMatchObject({ status: 'RUNNING', tool: 'MAPS' });
    expect(payload.estimatedCost).toBe('1.188');
    const runId = payload.run!.id;

    const gate = gatedSources(t.app.core.sources);
    const progress = follow(
      urql.subscription(FollowRun, { id: runId }),
      (r) => r.data!.runProgress,
      (items) => items.at(-1)!.status === 'SUCCEEDED',
    );
    // The subscription yields the run as it is first: once that arrives, every later change reaches it.
    await follow(
      urql.subscription(FollowRun, { id: runId }),
      (r) => r.data!.runProgress,
      (items) => items.length === 1,
    );
    gate.releaseAll();
    await executeRun({ ...t.app.core, sources: gate.sources }, runId);
    const events = await progress;
    expect(events.at(-1)).toMatchObject({ id: runId, status: 'SUCCEEDED' });
    const handled = events.map((e) => e.handled);
    expect(handled).toEqual([...handled].sort((a, b) => a - b));

    const rest = await t.request('GET', `/api/downloads/${runId}?format=json`, { key: apiKey });
    const restRows = rest.body as { name: string; place_id: string }[];
    expect(restRows.length).toBeGreaterThan(10);

    const seen: { name: string | null; placeId: string | null }[] = [];
    let after: string | null | undefined;
    for (;;) {
      const page = await urql.query(RunResults, { id: runId, first: 5, after }).toPromise();
      expect(page.error).toBeUndefined();
      const results = page.data!.run!.results!;
      expect(results.totalCount).toBe(restRows.length);
      for (const node of results.nodes) {
        expect(node.__typename).toBe('MapsResult');
        if (node.__typename === 'MapsResult') seen.push({ name: node.name ?? null, placeId: node.placeId ?? null });
      }
      if (!results.pageInfo.hasNextPage) break;
      after = results.pageInfo.endCursor;
    }
    expect(seen).toEqual(restRows.map((r) => ({ name: r.name, placeId: r.place_id })));
  });

  it('cancels a running run and sees it end ABORTED; a second cancel is a user error', async () => {
    const { apiKey } = await t.account();
    const { urql } = frontendClient(t.url, apiKey);
    const runId = (await urql.mutation(StartMaps, { input: INPUT }).toPromise()).data!.startMapsScrape.run!.id;

    const gate = gatedSources(t.app.core.sources);
    gate.release(0);
    const execution = executeRun({ ...t.app.core, sources: gate.sources }, runId);
    await gate.reachedPage(1);
    const ending = follow(
      urql.subscription(FollowRun, { id: runId }),
      (r) => r.data!.runProgress.status,
      (statuses) => statuses.at(-1) === 'ABORTED',
    );

    const cancelled = await urql.mutation(CancelRun, { id: runId }).toPromise();
    expect(cancelled.data!.cancelRun.userErrors).toEqual([]);
    expect(cancelled.data!.cancelRun.run).toMatchObject({ id: runId, status: 'ABORTING' });
    gate.release(1);
    await execution;
    expect((await ending).at(-1)).toBe('ABORTED');

    const again = await urql.mutation(CancelRun, { id: runId }).toPromise();
    expect(again.error).toBeUndefined();
    expect(again.data!.cancelRun.userErrors.map((e) => e.code)).toEqual(['RUN_FINISHED']);
  });

  it('branches on user errors: a refused purchase names its field, a plan gate refuses one field and keeps the rest', async () => {
    const { apiKey } = await t.account({ plan: 'starter' });
    const { urql } = frontendClient(t.url, apiKey);

    const refused = await urql.mutation(BuyCredits, { amount: '5' }).toPromise();
    expect(refused.error).toBeUndefined();
    expect(refused.data!.buyCredits.purchase).toBeNull();
    expect(refused.data!.buyCredits.userErrors).toEqual([
      expect.objectContaining({ code: 'VALIDATION_FAILED', field: ['amount'] }),
    ]);

    const mixed = await urql.query(ViewerAndLeads, {}).toPromise();
    expect(mixed.data!.viewer).toMatchObject({ plan: 'STARTER' });
    expect(mixed.data!.leads).toBeNull();
    expect(mixed.error!.graphQLErrors.map((e) => [e.path, e.extensions.code])).toEqual([[['leads'], 'PLAN_REQUIRED']]);
  });

  it('refuses socket operations beyond the key’s budget, and ends the socket once the key is revoked', async () => {
    const limited = await startTestApp({ worker: false, config: { rateLimitPerMinute: 3 } });
    try {
      // One budget for the key: the start over HTTP, opening the socket, then subscribe messages over it.
      const { apiKey } = await limited.account();
      const { urql } = frontendClient(limited.url, apiKey);
      const runId = (await urql.mutation(StartMaps, { input: INPUT }).toPromise()).data!.startMapsScrape.run!.id;
      const outcomes: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const result = await pipe(urql.subscription(FollowRun, { id: runId }), take(1), toPromise);
        outcomes.push(result.error ? result.error.graphQLErrors[0]?.extensions.code : result.data!.runProgress.status);
      }
      expect(outcomes).toEqual(['RUNNING', 'RATE_LIMITED', 'RATE_LIMITED']);

      const other = await limited.account();
      const second = frontendClient(limited.url, other.apiKey);
      const otherRunId = (await second.urql.mutation(StartMaps, { input: INPUT }).toPromise()).data!.startMapsScrape
        .run!.id;
      const first = await follow(
        second.urql.subscription(FollowRun, { id: otherRunId }),
        (r) => r.data!.runProgress.status,
        (s) => s.length === 1,
      );
      expect(first).toEqual(['RUNNING']);
      const secondClosed = new Promise<number>((resolve) =>
        second.ws.on('closed', (e) => resolve((e as { code: number }).code)),
      );
      await revokeApiKey(limited.app.core.db, other.apiKey.slice(0, 14));
      // The open socket closes with 4401 (final for graphql-ws clients) without being asked anything.
      expect(await secondClosed).toBe(4401);
      const refused = await pipe(second.urql.subscription(FollowRun, { id: otherRunId }), take(1), toPromise);
      expect(refused.data).toBeUndefined();
      expect(refused.error).toBeDefined();
    } finally {
      await limited.stop();
    }
  });

  it('works from an allowed browser origin (CORS) and with automatic persisted queries', async () => {
    const { apiKey } = await t.account();
    const seen: { hash?: string; hadQuery: boolean; allowOrigin: string | null }[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
      const url = new URL(String(input));
      const extensions =
        body?.extensions ??
        (url.searchParams.get('extensions') ? JSON.parse(url.searchParams.get('extensions')!) : undefined);
      const response = await fetch(input, init);
      seen.push({
        hash: extensions?.persistedQuery?.sha256Hash,
        hadQuery: Boolean(body?.query ?? url.searchParams.get('query')),
        allowOrigin: response.headers.get('access-control-allow-origin'),
      });
      return response;
    };
    const urql = new Client({
      url: `${t.url}/graphql`,
      requestPolicy: 'network-only',
      fetch: recordingFetch,
      fetchOptions: { headers: { authorization: `Bearer ${apiKey}`, origin: 'https://app.example.com' } },
      exchanges: [persistedExchange({ preferGetForPersistedQueries: false }), fetchExchange],
    });

    const first = await urql.query(Viewer, {}).toPromise();
    expect(first.error).toBeUndefined();
    const second = await urql.query(Viewer, {}).toPromise();
    expect(second.data).toEqual(first.data);

    const hash = seen[0]!.hash!;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    // First a hash alone (unknown: PERSISTED_QUERY_NOT_FOUND), then hash with document, then the hash alone suffices.
    expect(seen.map((s) => [s.hash === hash, s.hadQuery])).toEqual([
      [true, false],
      [true, true],
      [true, false],
    ]);
    expect(seen.every((s) => s.allowOrigin === 'https://app.example.com')).toBe(true);
  });
});
