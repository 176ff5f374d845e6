import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertStorable, unstorable, unstorableDetails } from '../../../src/shared/params.ts';
import { ValidationError } from '../../../src/shared/errors.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { writesOf } from '../../helpers/fuzz.ts';
import { graphql } from '../../helpers/gql/index.ts';

/*
 * Text Postgres cannot hold (a NUL character, an unpaired UTF-16 surrogate) anywhere in a request is a
 * 400 `validation_failed` naming where it is, on every face, and nothing is written: it is refused at
 * the boundary (src/shared/params.ts), not by the database with a 500.
 */

let t: TestApp;
let key: string;
let accountId: string;
let webhookId: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key, accountId } = await t.account());
  const created = await t.request('POST', '/api/v1/webhooks', { key, body: { url: 'https://example.com/hooks' } });
  webhookId = created.body.webhook.id;
});
afterAll(() => t?.stop());

const StartEmailValidator = graphql(`
  mutation UnstorableStartEmailValidator($input: StartEmailValidatorInput!) { startEmailValidator(input: $input) { run { id } userErrors { code field message } } }
`);
const LocalBusinessCount = graphql(
  `query UnstorableLocalBusinessCount($f: LocalBusinessFilter) { localBusinesses(filter: $f) { totalCount } }`,
);
const CancelRun = graphql(
  `mutation UnstorableCancelRun($id: ID!) { cancelRun(id: $id) { run { id } userErrors { code } } }`,
);
const RunById = graphql(`query UnstorableRunById($id: ID!) { run(id: $id) { id } }`);

/** Expects the REST error body of validation_failed naming `path`, and that the account wrote nothing. */
async function refusedRest(method: string, path: string, body: unknown, detailPath: string, message = /NUL/) {
  const before = await writesOf(t, accountId);
  const res = await t.request(method, path, { key, ...(body === undefined ? {} : { body }) });
  expect(res.status, res.text).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  expect(res.body.error.details).toEqual(
    expect.arrayContaining([{ path: detailPath, message: expect.stringMatching(message) }]),
  );
  expect(await writesOf(t, accountId)).toBe(before);
}

describe('REST: 400 validation_failed, nothing written', () => {
  it('an email-validator start with a NUL in an address', async () => {
    await refusedRest(
      'POST',
      '/api/v1/scrape/email-validator',
      { emails: ['ok@example.com', 'a\u0000@example.com'] },
      'emails.1',
    );
  });

  it('an email-validator start with an unpaired surrogate, and with a NUL in webhookUrl', async () => {
    await refusedRest(
      'POST',
      '/api/v1/scrape/email-validator',
      { emails: ['a\ud800@example.com'] },
      'emails.0',
      /unpaired surrogate/,
    );
    await refusedRest(
      'POST',
      '/api/v1/scrape/email-validator',
      { emails: ['a@example.com'], webhookUrl: 'https://example.com/\u0000' },
      'webhookUrl',
    );
  });

  it('the lead database with title=%00, as a query and as a body', async () => {
    await refusedRest('GET', '/api/v1/database/leads?title=%00', undefined, 'title');
    await refusedRest('POST', '/api/v1/database/leads', { title: 'ceo\u0000' }, 'title');
  });

  it('the local-business search, in a filter, a list and an unknown parameter', async () => {
    await refusedRest('GET', '/api/v1/database/local-businesses?keyword=dent%00ist', undefined, 'keyword');
    await refusedRest('GET', '/api/v1/database/local-businesses?city=Denver&city=Boul%00der', undefined, 'city.1');
    await refusedRest('POST', '/api/v1/database/local-businesses', { city: ['Denver', 'Bo\u0000ulder'] }, 'city.1');
  });

  it('a download, a status and the delivery log of an id with a NUL', async () => {
    await refusedRest('GET', '/api/downloads/%00', undefined, 'runId');
    await refusedRest('GET', '/api/v1/scrape/status/abc%00', undefined, 'runId');
    await refusedRest('POST', '/api/v1/scrape/cancel/%00', undefined, 'runId');
    await refusedRest('GET', '/api/v1/webhooks/%00/deliveries', undefined, 'id');
    await refusedRest('DELETE', '/api/v1/webhooks/wh_%00', undefined, '');
  });

  it('a field name with a NUL in an enrichment row', async () => {
    await refusedRest(
      'POST',
      '/api/v1/enrich',
      { rows: [{ email: 'a@b.com', 'x\u0000y': 1 }] },
      'rows.0.x\\u0000y',
      /name of this field/,
    );
  });

  it('the webhook itself is still there, and a storable request still works', async () => {
    const list = await t.request('GET', '/api/v1/webhooks', { key });
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).toContain(webhookId);
    const res = await t.request('GET', '/api/v1/database/local-businesses?keyword=dentist&limit=1', { key });
    expect(res.status).toBe(200);
  });
});

describe('GraphQL: VALIDATION_FAILED, nothing written', () => {
  it('startEmailValidator answers a userError naming the address', async () => {
    const before = await writesOf(t, accountId);
    const res = await t.graphql(key, StartEmailValidator, { input: { emails: ['a\u0000@example.com'] } });
    expect(res.status).toBe(200);
    const { run, userErrors } = res.body.data!.startEmailValidator;
    expect(run).toBeNull();
    expect(userErrors).toEqual([
      expect.objectContaining({ code: 'VALIDATION_FAILED', field: expect.arrayContaining(['emails', '0']) }),
    ]);
    expect(await writesOf(t, accountId)).toBe(before);
  });

  it('the local-business search and a run lookup are errors with code VALIDATION_FAILED', async () => {
    const search = await t.graphql(key, LocalBusinessCount, { f: { keyword: 'x\u0000' } });
    expect(search.body.errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'VALIDATION_FAILED' }) }),
    ]);
    const cancel = await t.graphql(key, CancelRun, { id: '\u0000' });
    expect(cancel.body.data!.cancelRun.userErrors).toEqual([{ code: 'VALIDATION_FAILED' }]);
    // No such run, or a refusal of the id: never an internal error.
    const run = await t.graphql(key, RunById, { id: '\u0000' });
    if (run.body.errors) expect(run.body.errors.map((e) => e.extensions?.code)).toEqual(['VALIDATION_FAILED']);
    else expect(run.body).toEqual({ data: { run: null } });
  });
});

describe('MCP: the tool error validation_failed, nothing written', () => {
  const call = async (name: string, args: unknown) => {
    const res = await fetch(`${t.url}/mcp?tools=all`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    return (
      (await res.json()) as {
        result: { isError?: boolean; content: { text: string }[] };
      }
    ).result;
  };

  it('validate_emails, query_lead_database and download_results', async () => {
    const before = await writesOf(t, accountId);
    for (const [name, args, path] of [
      ['validate_emails', { emails: ['a\u0000@example.com'] }, 'emails.0'],
      ['query_lead_database', { title: '\ud800' }, 'title'],
      ['download_results', { runId: 'abc\u0000' }, 'runId'],
    ] as const) {
      const result = await call(name, args);
      expect(result.isError, name).toBe(true);
      const { error } = JSON.parse(result.content[0]!.text) as { error: { code: string; details: unknown } };
      expect(error.code).toBe('validation_failed');
      expect(error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    }
    expect(await writesOf(t, accountId)).toBe(before);
  });
});

describe('the check itself', () => {
  it('tells NUL and unpaired surrogates from text that is fine', () => {
    expect(unstorable('plain, é, 🙂, \uffff')).toBeUndefined();
    expect(unstorable('a\u0000')).toMatch(/NUL/);
    expect(unstorable('\ud83d')).toMatch(/surrogate/);
    expect(unstorable('\ude00x')).toMatch(/surrogate/);
    expect(unstorable('\ud83d\ude00')).toBeUndefined();
  });

  it('names every place, keys included, and walks any depth without recursion', () => {
    expect(unstorableDetails({ a: ['ok', 'b\u0000'], 'k\u0000': 1, n: { m: '\udc00' } })).toEqual([
      { path: 'a.1', message: expect.stringMatching(/NUL/) },
      { path: 'k\\u0000', message: expect.stringMatching(/name of this field/) },
      { path: 'n.m', message: expect.stringMatching(/surrogate/) },
    ]);
    let deep: unknown = '\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(unstorableDetails(deep)).toHaveLength(1);
    expect(() => assertStorable({ ok: 'fine' })).not.toThrow();
    expect(() => assertStorable('\u0000', 'runId')).toThrow(ValidationError);
  });
});
