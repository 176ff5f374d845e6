import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildClientSchema, getIntrospectionQuery, type GraphQLFormattedError } from 'graphql';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';
import { disposeClients, wsClient } from '../../helpers/ws.ts';

/**
 * The complexity limits are measured once per document when its measure cannot depend on variables
 * (schema/complexity.ts): what is remembered is the measure of each operation, never a verdict, and a
 * document whose page sizes come from variables is measured on every request. Introspection counts
 * too, held to the standard introspection query's measure and one `__schema`; and no result larger
 * than GRAPHQL_MAX_RESPONSE_BYTES is sent (schema/server/response-size.ts).
 */

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account());
});
afterAll(() => t?.stop());

const post = (body: { query: string; operationName?: string; variables?: Record<string, unknown> }) =>
  t.request('POST', '/graphql', { key, body, headers: { accept: 'application/json' } });

/** 100 runs × 100 rows × (1 + 1) + … : over the 5,000 limit whatever the data. */
const LARGE = 'runs(first: 100) { nodes { results(first: 100) { nodes { __typename } } } }';

describe('complexity measured once per document', () => {
  it('refuses a document with literal page sizes on every request, with the same measure, though a variable feeds another field', async () => {
    const query = `query Large($id: ID!) { run(id: $id) { id } ${LARGE} }`;
    const answers = [];
    for (const id of ['a', 'b', 'c']) answers.push(await post({ query, variables: { id } }));
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.errors[0].extensions).toMatchObject({
        code: 'QUERY_TOO_COMPLEX',
        details: { measure: 'complexity', limit: 5000 },
      });
    }
    expect(new Set(answers.map((a) => a.body.errors[0].message)).size).toBe(1);
    // Within the limits the document's measure is remembered too; a variable that does not coerce is
    // still refused by the execution, in GraphQL's words.
    const small = 'query Small($id: ID!) { run(id: $id) { id } }';
    expect((await post({ query: small, variables: { id: 'a' } })).body).toEqual({ data: { run: null } });
    const uncoerced = await post({ query: small, variables: { id: { not: 'an id' } } });
    expect(uncoerced.body.errors[0].extensions.code, JSON.stringify(uncoerced.body)).toBe('BAD_USER_INPUT');
  });

  it('keeps one measure per operation of a document', async () => {
    const query = `query Small { viewer { id } } query Large { ${LARGE} }`;
    for (let i = 0; i < 2; i++) {
      const small = await post({ query, operationName: 'Small' });
      expect(small.status).toBe(200);
      expect(small.body.errors).toBeUndefined();
      expect(small.body.data.viewer.id).toEqual(expect.any(String));
      const large = await post({ query, operationName: 'Large' });
      expect(large.status).toBe(400);
      expect(large.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    }
  });

  it('measures again on every request when a nested page size is a variable', async () => {
    const query =
      'query ($rows: Int) { runs(first: 100) { nodes { results(first: $rows) { nodes { __typename } } } } }';
    for (const [rows, status] of [
      [1, 200],
      [100, 400],
      [1, 200],
      [100, 400],
    ] as const) {
      const answer = await post({ query, variables: { rows } });
      expect(answer.status, `rows ${rows}`).toBe(status);
    }
  });
});

/** One client of `app` over graphql-ws; the first result of an operation (`next`) or its refusal (`error`). */
function overSocket(
  app: TestApp,
  apiKey: string,
  query: string,
): Promise<{ via: 'next' | 'error'; data?: unknown; errors?: readonly GraphQLFormattedError[] }> {
  const client = wsClient(app.url, apiKey);
  return new Promise((resolve, reject) => {
    let first: { via: 'next'; data?: unknown; errors?: readonly GraphQLFormattedError[] } | undefined;
    client.subscribe(
      { query },
      {
        next: (r) => {
          first ??= { via: 'next', ...r };
        },
        error: (e) => (Array.isArray(e) ? resolve({ via: 'error', errors: e }) : reject(new Error('socket closed'))),
        complete: () => resolve(first ?? { via: 'next' }),
      },
    );
  });
}

/** 61 aliased `__schema` selections: about 11 MB of answer and seconds of CPU when introspection was free. */
const SCHEMA_61 = `{ ${Array.from({ length: 61 }, (_, i) => `s${i}: __schema { types { name fields { name } } }`).join(' ')} }`;

/** A type reference `levels` deep: `type { ofType { ofType { … name } } }` under the fields of Run. */
const ofTypeChain = (levels: number) =>
  `{ __type(name: "Run") { fields { type { ${'ofType { '.repeat(levels)}name${' }'.repeat(levels)} } } } }`;

describe('introspection within the limits', () => {
  afterEach(() => disposeClients());

  it('refuses 61 aliased __schema selections over POST, GET and graphql-ws, naming the limit of one', async () => {
    const expected = { code: 'QUERY_TOO_COMPLEX', details: { measure: 'schemaSelections', value: 61, limit: 1 } };
    const posted = await post({ query: SCHEMA_61 });
    expect(posted.status).toBe(400);
    expect(posted.body.errors[0].extensions).toEqual(expected);
    expect(posted.body.errors[0].message).toMatch(/__schema.*61 times.*once/);
    expect(posted.body.data).toBeUndefined();
    const got = await t.request('GET', `/graphql?query=${encodeURIComponent(SCHEMA_61)}`, {
      key,
      headers: { accept: 'application/json' },
    });
    expect(got.status).toBe(400);
    expect(got.body.errors[0].extensions).toEqual(expected);
    const socket = await overSocket(t, key, SCHEMA_61);
    expect(socket.via).toBe('error');
    expect(socket.errors![0]!.extensions).toEqual(expected);
    // Two are refused too; one is an ordinary introspection.
    const two = await post({ query: '{ a: __schema { queryType { name } } b: __schema { queryType { name } } }' });
    expect(two.status).toBe(400);
    expect((await post({ query: '{ __schema { queryType { name } } }' })).body).toEqual({
      data: { __schema: { queryType: { name: 'Query' } } },
    });
  });

  it('counts a chain of ofType toward depth: past the standard introspection query’s depth it is refused', async () => {
    const refused = await post({ query: ofTypeChain(30) });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].extensions).toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
      details: { measure: 'introspectionDepth', value: 34 },
    });
    const socket = await overSocket(t, key, ofTypeChain(30));
    expect(socket.errors![0]!.extensions).toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
      details: { measure: 'introspectionDepth' },
    });
    // As deep as the standard query's type references (nine levels of ofType) passes.
    const within = await post({ query: ofTypeChain(9) });
    expect(within.status).toBe(200);
    expect(within.body.errors).toBeUndefined();
  });

  it('counts introspection fields toward breadth: many __type selections past the standard query’s breadth are refused', async () => {
    const many = `{ ${Array.from({ length: 150 }, (_, i) => `t${i}: __type(name: "Run") { name kind }`).join(' ')} }`;
    const refused = await post({ query: many });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].extensions).toMatchObject({
      code: 'QUERY_TOO_COMPLEX',
      details: { measure: 'introspectionBreadth', value: 450 },
    });
  });

  it('answers the standard introspection query (GraphiQL, graphql-codegen), with every option, over POST, GET and graphql-ws', async () => {
    const queries = [
      getIntrospectionQuery(),
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
      }),
    ];
    for (const query of queries) {
      const posted = await post({ query });
      expect(posted.status).toBe(200);
      expect(posted.body.errors).toBeUndefined();
      expect(buildClientSchema(posted.body.data).getType('Run')).toBeTruthy();
    }
    const got = await t.request('GET', `/graphql?query=${encodeURIComponent(queries[0]!)}`, {
      key,
      headers: { accept: 'application/json' },
    });
    expect(got.status).toBe(200);
    expect(got.body.data.__schema.types.length).toBeGreaterThan(100);
    const socket = await overSocket(t, key, queries[1]!);
    expect(socket.errors).toBeUndefined();
    expect((socket.data as { __schema: unknown }).__schema).toBeTruthy();
  });
});

describe('the response size limit (GRAPHQL_MAX_RESPONSE_BYTES)', () => {
  const LIMIT = 2048;
  let small: TestApp;
  let smallKey: string;

  beforeAll(async () => {
    small = await startTestApp({ config: { graphqlMaxResponseBytes: LIMIT } });
    ({ apiKey: smallKey } = await small.account());
  });
  afterEach(() => disposeClients());
  afterAll(() => small?.stop());

  /** Run’s fields with their descriptions: over 3 KB of answer. */
  const WIDE = '{ __type(name: "Run") { fields { name description type { name kind } } } }';

  it('replaces a result over the limit with RESPONSE_TOO_LARGE, saying how to narrow it, over POST and GET; smaller results pass', async () => {
    const posted = await small.request('POST', '/graphql', {
      key: smallKey,
      body: { query: WIDE },
      headers: { accept: 'application/json' },
    });
    expect(posted.status).toBe(200);
    expect(posted.body.data).toBeNull();
    expect(posted.body.errors).toHaveLength(1);
    const [error] = posted.body.errors;
    expect(error.extensions).toEqual({
      code: 'RESPONSE_TOO_LARGE',
      details: { bytes: expect.any(Number), limit: LIMIT },
    });
    expect(error.extensions.details.bytes).toBeGreaterThan(LIMIT);
    expect(error.message).toMatch(/fewer fields/);
    expect(error.message).toMatch(/smaller `first`/);
    expect(posted.text.length).toBeLessThan(1000);
    const got = await small.request('GET', `/graphql?query=${encodeURIComponent(WIDE)}`, {
      key: smallKey,
      headers: { accept: 'application/graphql-response+json' },
    });
    expect(got.body.errors[0].extensions.code).toBe('RESPONSE_TOO_LARGE');
    const narrow = await small.request('POST', '/graphql', {
      key: smallKey,
      body: { query: '{ __type(name: "Run") { fields { name } } }' },
    });
    expect(narrow.status).toBe(200);
    expect(narrow.body.errors).toBeUndefined();
  });

  it('replaces a graphql-ws `next` message over the limit, for queries and for subscription events', async () => {
    const query = await overSocket(small, smallKey, WIDE);
    expect(query.via).toBe('next');
    expect(query.data).toBeNull();
    expect(query.errors![0]!.extensions).toMatchObject({ code: 'RESPONSE_TOO_LARGE', details: { limit: LIMIT } });
    // A run's rows in one batch: several KB of place rows.
    const started = await small.request('POST', '/api/v1/scrape/maps', { key: smallKey, body: DENVER_DENTISTS });
    expect(started.status).toBe(200);
    await small.waitForRun(smallKey, started.body.runId);
    const rows = await overSocket(
      small,
      smallKey,
      `subscription { runItems(id: "${started.body.runId}") { offset results { ... on MapsResult { name address phone website } } } }`,
    );
    expect(rows.via).toBe('next');
    expect(rows.errors![0]!.extensions).toMatchObject({ code: 'RESPONSE_TOO_LARGE', details: { limit: LIMIT } });
  });
});
