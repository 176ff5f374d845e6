import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { graphql as execute, print, type ExecutionResult } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import * as tables from '../../../db/tables/index.ts';
import { schema } from '../../../schema/index.ts';
import { createLoaders } from '../../../schema/context.ts';
import type { Core } from '../../../src/core.ts';
import type { Principal } from '../../../src/accounts/accounts.ts';
import { openDirectDb, type DirectDb } from '../../helpers/direct-db.ts';
import { graphql } from '../../helpers/gql/index.ts';
import { createCatalogReader } from '../../../src/catalog/reader.ts';
import { createLogger } from '../../../src/logger.ts';

/**
 * No N+1: a list with a nested list per item (`runs { results }`, `webhooks { deliveries }`) costs
 * the same number of SQL statements whatever the page size, because the nested lists go through
 * the request's DataLoaders. Statements are counted with postgres.js's `debug` hook on a connection
 * of the test's own, which the GraphQL context's core uses.
 */

let d: DirectDb;
let client: postgres.Sql;
let statements: string[] = [];
let core: Core;
let principal: Principal;

const RUNS = 20;
const WEBHOOKS = 10;

beforeAll(async () => {
  d = await openDirectDb();
  const accountId = await d.account();
  principal = { accountId, keyId: 'key_test', keyPrefix: 'lg_live_test', plan: 'scale', subscriptionStatus: 'ACTIVE' };
  const expiresAt = new Date(Date.now() + 86_400_000);
  for (let i = 0; i < RUNS; i++) {
    const run = await d.insertRun({
      accountId,
      status: 'SUCCEEDED',
      itemCount: 8,
      handled: 8,
      finishedAt: new Date(),
      expiresAt,
    });
    await d.sql`insert into run_item (run_id, seq, data)
      select ${run.id}, s, json_build_object('name', 'Place ' || s, 'place_id', ${`p${i}-`} || s) from generate_series(0, 7) s`;
    if (i < WEBHOOKS) {
      const hook = `wh_dataloader${String(i).padStart(4, '0')}`;
      await d.sql`insert into webhook (id, account_id, url, events, secret) values (${hook}, ${accountId}, ${`https://example.com/${i}`}, ${['run.succeeded']}, 'whsec_x')`;
      for (let n = 0; n < 4; n++) {
        await d.sql`insert into webhook_delivery (id, account_id, webhook_id, run_id, event, url, payload, status)
          values (${`msg_dl${i}x${n}`}, ${accountId}, ${hook}, ${run.id}, 'run.succeeded', ${`https://example.com/${i}`}, '{}'::jsonb, 'succeeded')`;
      }
    }
  }
  // One connection, warmed up: postgres.js reads the array types once per connection, which is not the request's cost.
  client = postgres(d.database.url, {
    max: 1,
    onnotice: () => {},
    debug: (_connection, query) => void statements.push(query),
  });
  const db = drizzle(client, { schema: tables });
  // No read replica: the catalog reader reads on this one connection too.
  const catalogReader = createCatalogReader(client, { url: undefined, maxLagMs: 0, logger: createLogger('silent') });
  core = {
    sql: client,
    db,
    catalogReader,
    clock: () => new Date(),
    config: { publicUrl: 'http://localhost' },
  } as unknown as Core;
  await client`select ${[1]}::int[] as warm`;
});

afterAll(async () => {
  await client?.end();
  await d?.close();
});

/** Runs a document in-process (parsed, validated, executed) with a fresh request context. */
async function run<TData, TVariables>(
  document: TypedDocumentNode<TData, TVariables>,
  variables: NoInfer<TVariables>,
): Promise<ExecutionResult<TData>> {
  const variableValues = variables as Record<string, unknown>;
  return (await execute({
    schema,
    source: print(document),
    variableValues,
    contextValue: { core, principal, loaders: createLoaders(core, principal) },
  })) as ExecutionResult<TData>;
}

/** Runs a document and answers the statements it sent. */
async function statementsOf<TVariables>(
  document: TypedDocumentNode<unknown, TVariables>,
  variables: NoInfer<TVariables>,
): Promise<string[]> {
  statements = [];
  const result = await run(document, variables);
  expect(result.errors).toBeUndefined();
  return [...statements];
}

const RunsWithResults = graphql(`
  query LoadersRunsWithResults($first: Int) {
    runs(first: $first) {
      totalCount
      nodes { id tool input cost results(first: 5) { totalCount pageInfo { hasNextPage } nodes { ... on MapsResult { name placeId } } } }
    }
  }
`);
const WebhooksWithDeliveries = graphql(`
  query LoadersWebhooksWithDeliveries($first: Int) {
    webhooks(first: $first) { totalCount nodes { id deliveries(first: 3) { totalCount nodes { id status run { id status } } } } }
  }
`);
const NestedLists = graphql(`
  query LoadersNestedLists($runs: Int) {
    runs(first: $runs) { nodes { results(first: 5) { totalCount nodes { ... on MapsResult { placeId } } } } }
    webhooks { nodes { deliveries(first: 3) { totalCount nodes { id } pageInfo { hasNextPage } } } }
  }
`);

describe('statements per request', () => {
  it('runs(first: n) { results(first: 5) } costs the same for 2 runs and for 20', async () => {
    const small = await statementsOf(RunsWithResults, { first: 2 });
    const large = await statementsOf(RunsWithResults, { first: RUNS });
    expect(large.length).toBe(small.length);
    // The page, its count, the inputs and every run's rows: one statement each.
    expect(large.length).toBeLessThanOrEqual(4);
  });

  it('webhooks { deliveries { run } } costs the same for 1 webhook and for 10', async () => {
    const small = await statementsOf(WebhooksWithDeliveries, { first: 1 });
    const large = await statementsOf(WebhooksWithDeliveries, { first: WEBHOOKS });
    expect(large.length).toBe(small.length);
    // The webhooks, every webhook's page of deliveries, their counts and the runs they name.
    expect(large.length).toBeLessThanOrEqual(4);
  });

  it('answers what the nested lists hold', async () => {
    const result = await run(NestedLists, { runs: RUNS });
    expect(result.errors).toBeUndefined();
    const data = result.data!;
    for (const run of data.runs.nodes) {
      expect(run.results!.totalCount).toBe(8);
      expect(run.results!.nodes.map((n) => n.placeId!.replace(/^p\d+-/, ''))).toEqual(['0', '1', '2', '3', '4']);
    }
    expect(data.webhooks.nodes).toHaveLength(WEBHOOKS);
    for (const hook of data.webhooks.nodes)
      expect(hook.deliveries).toMatchObject({ totalCount: 4, pageInfo: { hasNextPage: true } });
  });
});
