import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../../src/shared/ids.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import type { Answer } from '../../helpers/documents.ts';
import { writesOf } from '../../helpers/fuzz.ts';
import { graphql } from '../../helpers/gql/index.ts';

/*
 * Numbers, cursors and dates past what Postgres holds (integer, bigint, timestamptz) are refused at
 * the boundary with 400 `validation_failed` on every face; just inside the range they still work.
 */

let t: TestApp;
let key: string;
let accountId: string;
let runId: string;
let webhookId: string;

const b64 = (text: string) => Buffer.from(text).toString('base64url');

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key, accountId } = await t.account());
  runId = newRunId();
  const sql = t.app.core.sql;
  await sql`insert into run (id, account_id, tool, status, status_message, input, requested, handled, item_count, started_at, finished_at, expires_at)
    values (${runId}, ${accountId}, 'maps', 'SUCCEEDED', 'Done', '{}'::jsonb, 2, 2, 2, now(), now(), now() + interval '2 days')`;
  for (const seq of [0, 1])
    await sql`insert into run_item (run_id, seq, data) values (${runId}, ${seq}, ${JSON.stringify({ name: `Place ${seq}` })}::jsonb)`;
  const created = await t.request('POST', '/api/v1/webhooks', { key, body: { url: 'https://example.com/hooks' } });
  webhookId = created.body.webhook.id;
});
afterAll(() => t?.stop());

const DeliveriesAfter = graphql(
  `query NumberRangesDeliveriesAfter($a: String) { webhooks { nodes { deliveries(after: $a) { totalCount } } } }`,
);
const RunsAfter = graphql(`query NumberRangesRunsAfter($a: String) { runs(after: $a) { totalCount } }`);
const FirstRun = graphql(
  `query NumberRangesFirstRun { runs(first: 1) { nodes { id } pageInfo { endCursor hasNextPage } } }`,
);
const NextRun = graphql(`query NumberRangesNextRun($a: String) { runs(first: 1, after: $a) { nodes { id } } }`);
const LedgerAfter = graphql(
  `query NumberRangesLedgerAfter($a: String) { viewer { ledger(after: $a) { totalCount } } }`,
);

/** A 400 validation_failed naming `path`, with the account's writes unchanged. */
async function expectRefused(path: string, detail: string) {
  const before = await writesOf(t, accountId);
  const res = await t.request('GET', path, { key });
  expect(res.status, res.text).toBe(400);
  expect(res.body.error).toMatchObject({
    code: 'validation_failed',
    details: [expect.objectContaining({ path: detail })],
  });
  expect(await writesOf(t, accountId)).toBe(before);
}

describe('the lead database cursor', () => {
  it('refuses after=99999999999999999999999 and one past the largest bigint', async () => {
    await expectRefused('/api/v1/database/leads?after=99999999999999999999999', 'after');
    await expectRefused('/api/v1/database/leads?after=9223372036854775808', 'after');
  });

  it('takes the largest bigint: a page past every lead', async () => {
    const res = await t.request('GET', '/api/v1/database/leads?after=9223372036854775807', { key });
    expect(res.status, res.text).toBe(200);
    expect(res.body.leads).toEqual([]);
    expect(res.body.pagination.has_more).toBe(false);
  });

  it('refuses it over MCP too', async () => {
    const result = await mcpCall('query_lead_database', { after: '99999999999999999999999' });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({
      code: 'validation_failed',
      details: [expect.objectContaining({ path: 'after' })],
    });
  });
});

describe('download offsets and limits', () => {
  it.each(['csv', 'json', 'ndjson'])('refuses offset=4294967296 as %s with the error body', async (format) => {
    await expectRefused(`/api/downloads/${runId}?format=${format}&offset=4294967296`, 'offset');
  });

  it('refuses a limit past 2^31 − 1 and an offset of 1e400', async () => {
    await expectRefused(`/api/downloads/${runId}?limit=4294967296`, 'limit');
    await expectRefused(`/api/downloads/${runId}?offset=1e400`, 'offset');
  });

  it('answers an empty file from offset 2^31 − 1, and the rows from 0', async () => {
    const json = await t.request('GET', `/api/downloads/${runId}?format=json&offset=2147483647`, { key });
    expect([json.status, json.text]).toEqual([200, '[]\n']);
    const csv = await t.request('GET', `/api/downloads/${runId}?format=csv&offset=2147483647`, { key });
    expect(csv.status).toBe(200);
    expect(csv.text.split('\n').filter(Boolean)).toHaveLength(1);
    const all = await t.request('GET', `/api/downloads/${runId}?format=json`, { key });
    expect(all.body).toEqual([{ name: 'Place 0' }, { name: 'Place 1' }]);
  });

  it('refuses download_results offset 4294967296 over MCP, and takes 2^31 − 1', async () => {
    const refused = await mcpCall('download_results', { runId, offset: 4294967296 });
    expect(refused.isError).toBe(true);
    expect(errorOf(refused)).toMatchObject({
      code: 'validation_failed',
      details: [{ path: 'offset', message: 'must be at most 2147483647' }],
    });
    const last = await mcpCall('download_results', { runId, offset: 2147483647 });
    expect(last.isError).toBeUndefined();
    expect(last.structuredContent).toMatchObject({ runId, count: 0, rows: [], nextOffset: null });
  });
});

describe('delivery log cursors', () => {
  it.each([
    ['year −271821', '-271821-04-20T00:00:00.000Z|msg_x'],
    ['year +275760', '+275760-09-13T00:00:00.000Z|msg_x'],
    ['a NUL id', '2024-01-01T00:00:00.000Z|\u0000'],
    ['a date not written by this API', '2024-01-01|msg_x'],
  ])('refuses a cursor with %s', async (_, cursor) => {
    await expectRefused(`/api/v1/webhooks/${webhookId}/deliveries?after=${b64(cursor)}`, 'after');
  });

  it('takes a well-formed cursor (no delivery after it)', async () => {
    const res = await t.request(
      'GET',
      `/api/v1/webhooks/${webhookId}/deliveries?after=${b64('2024-01-01T00:00:00.000Z|msg_x')}`,
      { key },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ deliveries: [], nextAfter: null });
  });

  it('refuses it on GraphQL too', async () => {
    const res = await t.graphql(key, DeliveriesAfter, { a: b64('-271821-04-20T00:00:00.000Z|msg_x') });
    expect(res.body.errors?.map((e) => e.extensions?.code)).toEqual(['VALIDATION_FAILED']);
  });
});

describe('GraphQL runs and ledger cursors', () => {
  const codes = (res: { body: Answer<unknown> }) => (res.body.errors ?? []).map((e) => e.extensions?.code);

  it.each([
    ['a run cursor dated year +275760', b64(JSON.stringify({ createdAt: '+275760-09-13T00:00:00.000Z', id: 'x' }))],
    ['a run cursor with a NUL id', b64(JSON.stringify({ createdAt: '2024-01-01T00:00:00.000Z', id: '\u0000' }))],
    ['a run cursor that is not JSON', b64('99999999999999999999999')],
  ])('runs refuses %s', async (_, after) => {
    const res = await t.graphql(key, RunsAfter, { a: after });
    expect(codes(res)).toEqual(['VALIDATION_FAILED']);
  });

  it('runs still pages with its own cursors', async () => {
    const first = await t.graphql(key, FirstRun);
    expect(first.body.data!.runs.nodes).toEqual([{ id: runId }]);
    const next = await t.graphql(key, NextRun, { a: first.body.data!.runs.pageInfo.endCursor });
    expect(next.body).toEqual({ data: { runs: { nodes: [] } } });
  });

  it.each(['99999999999999999999999', '9223372036854775808', '-1', '1e3'])('ledger refuses after=%s', async (after) => {
    const res = await t.graphql(key, LedgerAfter, { a: after });
    expect(codes(res)).toEqual(['VALIDATION_FAILED']);
  });

  it('ledger takes the largest bigint', async () => {
    const res = await t.graphql(key, LedgerAfter, { a: '9223372036854775807' });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data!.viewer.ledger.totalCount).toEqual(expect.any(Number));
  });
});

describe('fractions a column cannot hold', () => {
  it('reads a rating of 4e-323 as 0 instead of failing the query', async () => {
    const tiny = await t.request('GET', '/api/v1/database/local-businesses?minRating=4e-323&limit=1', { key });
    const zero = await t.request('GET', '/api/v1/database/local-businesses?minRating=0&limit=1', { key });
    expect(tiny.status, tiny.text).toBe(200);
    expect(tiny.body.pagination.total).toBe(zero.body.pagination.total);
  });
});

async function mcpCall(name: string, args: unknown): Promise<McpResult> {
  const res = await fetch(`${t.url}/mcp?tools=all`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return ((await res.json()) as { result: McpResult }).result;
}

type McpResult = { isError?: boolean; structuredContent: Record<string, unknown>; content: { text: string }[] };

/** A tool error's body: its text (an error carries no structured content). */
const errorOf = (result: McpResult) => (JSON.parse(result.content[0]!.text) as { error: unknown }).error;
