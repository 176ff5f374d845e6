import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';

/**
 * The complexity limits are measured once per document when its measure cannot depend on variables
 * (schema/complexity.ts): what is remembered is the measure of each operation, never a verdict, and a
 * document whose page sizes come from variables is measured on every request.
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
      expect(answer.body.errors[0].extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', details: { measure: 'complexity', limit: 5000 } });
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
    const query = 'query ($rows: Int) { runs(first: 100) { nodes { results(first: $rows) { nodes { __typename } } } } }';
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
