import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, DENVER_DENTISTS, type TestApp } from '../../helpers/app.ts';
import { graphql } from '../../helpers/gql/index.ts';

/**
 * Global object identification: ids unique across types, `node(id:)` and `nodes(ids:)` refetching
 * every Node type within the caller's account (another account's id answers null, like an unknown
 * one), and a run's id staying the runId REST returns.
 */

let t: TestApp;
let a: { accountId: string; apiKey: string };
let b: { accountId: string; apiKey: string };
let runId: string;

beforeAll(async () => {
  t = await startTestApp();
  a = await t.account();
  b = await t.account();
  runId = (await t.runTool(a.apiKey, '/api/v1/scrape/maps', { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 3 })).start
    .runId;
});
afterAll(() => t?.stop());

const Nodes = graphql(`query NodesRefetch($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`);
const nodesOf = async (key: string, ids: string[]) => {
  const res = await t.graphql(key, Nodes, { ids });
  expect(res.body.errors).toBeUndefined();
  return res.body.data!.nodes;
};

const FirstRecords = graphql(`
  query NodesFirstRecords {
    leads(first: 1) { nodes { id databaseId company { id databaseId } } }
    localBusinesses(first: 1) { nodes { id databaseId } }
    stores(first: 1) { nodes { id databaseId } }
  }
`);
const RunAndNode = graphql(
  `query NodesRunAndNode($id: ID!) { run(id: $id) { id tool } node(id: $id) { id ... on Run { tool status } } }`,
);
const CreateWebhook = graphql(
  `mutation NodesCreateWebhook { createWebhook(input: { url: "https://example.com/hooks/nodes" }) { webhook { id } } }`,
);
const Seen = graphql(
  `query NodesSeen { viewer { id ledger(first: 1) { nodes { id } } } leads(first: 1) { nodes { id company { id } } } }`,
);
const LeadNode = graphql(`query NodesLead($id: ID!) { node(id: $id) { ... on Lead { fullName company { name } } } }`);
const Mine = graphql(`
  query NodesMine {
    viewer { id ledger(first: 1) { nodes { id } } }
    webhooks { nodes { id } }
    leads(first: 1, filter: { title: "engineer" }) { nodes { id company { id } } }
  }
`);
const NodeId = graphql(`query NodesNodeId($id: ID!) { node(id: $id) { id } }`);
const Engineer = graphql(`query NodesEngineer { leads(first: 1, filter: { title: "engineer" }) { nodes { id } } }`);

describe('ids', () => {
  it('are unique across types: the first lead, company, local business and store no longer share "1"', async () => {
    const res = await t.graphql(a.apiKey, FirstRecords);
    expect(res.body.errors).toBeUndefined();
    const { leads, localBusinesses, stores } = res.body.data!;
    const records = [leads!.nodes[0]!, leads!.nodes[0]!.company!, localBusinesses!.nodes[0]!, stores!.nodes[0]!];
    expect(records.map((r) => r.databaseId)).toEqual(['1', '1', '1', '1']);
    expect(new Set(records.map((r) => r.id)).size).toBe(4);
  });

  it('a run’s id is the runId REST returns, and run(id:) and node(id:) both take it', async () => {
    const res = await t.graphql(a.apiKey, RunAndNode, { id: runId });
    expect(res.body.data).toEqual({
      run: { id: runId, tool: 'MAPS' },
      node: { id: runId, tool: 'MAPS', status: 'SUCCEEDED' },
    });
    expect((await t.request('GET', `/api/v1/scrape/status/${runId}`, { key: a.apiKey })).body.runId).toBe(runId);
  });
});

describe('node(id:) and nodes(ids:)', () => {
  it('refetch every Node type of the caller, in the order asked, with null for ids of nothing', async () => {
    const created = await t.graphql(a.apiKey, CreateWebhook);
    const webhookId = created.body.data!.createWebhook.webhook!.id;
    const seen = await t.graphql(a.apiKey, Seen);
    const { viewer } = seen.body.data!;
    const lead = seen.body.data!.leads!.nodes[0]!;
    const entry = viewer.ledger.nodes[0]!;
    const ids = [
      runId,
      viewer.id,
      entry.id,
      webhookId,
      lead.id,
      lead.company!.id,
      'nope',
      'lead_999999999',
      'lead_x',
      '',
      `${runId}x`,
    ];
    expect(await nodesOf(a.apiKey, ids)).toEqual([
      { __typename: 'Run', id: runId },
      { __typename: 'Account', id: viewer.id },
      { __typename: 'LedgerEntry', id: entry.id },
      { __typename: 'Webhook', id: webhookId },
      { __typename: 'Lead', id: lead.id },
      { __typename: 'Company', id: lead.company!.id },
      null,
      null,
      null,
      null,
      null,
    ]);
    const one = await t.graphql(a.apiKey, LeadNode, { id: lead.id });
    expect(one.body.data!.node).toMatchObject({ fullName: expect.any(String), company: { name: expect.any(String) } });
  });

  it('check the caller’s account like every other lookup: another account’s ids answer null', async () => {
    const mine = await t.graphql(a.apiKey, Mine);
    const { viewer, webhooks } = mine.body.data!;
    const lead = mine.body.data!.leads!.nodes[0]!;
    const ids = [runId, viewer.id, viewer.ledger.nodes[0]!.id, webhooks.nodes[0]!.id, lead.id, lead.company!.id];
    expect((await nodesOf(a.apiKey, ids)).every((n) => n !== null)).toBe(true);
    // B has received none of A's leads, so neither the lead nor its company is B's to refetch.
    expect(await nodesOf(b.apiKey, ids)).toEqual(ids.map(() => null));
    const single = await t.graphql(b.apiKey, NodeId, { id: runId });
    expect(single.body).toEqual({ data: { node: null } });
    // Once B receives the lead from the database, it is B's too.
    await t.graphql(b.apiKey, Engineer);
    expect((await nodesOf(b.apiKey, [lead.id]))[0]).toEqual({ __typename: 'Lead', id: lead.id });
  });

  it('takes at most 100 ids', async () => {
    const res = await t.graphql(a.apiKey, Nodes, { ids: Array.from({ length: 101 }, (_, i) => `lead_${i + 1}`) });
    expect(res.body.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ path: 'ids', message: 'at most 100 ids' }],
    });
  });
});
