import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { schema } from '../../schema/index.ts';
import { fuzzSuite } from '../helpers/fuzz-suite.ts';
import {
  assertHealthy,
  checkWrites,
  describeCase,
  FUZZ_CASES,
  fuzzParameters,
  graphqlCase,
  graphqlVerdict,
  routeTimeout,
  type GraphQLCase,
  type Lane,
} from '../helpers/fuzz.ts';

/*
 * Every query and mutation of the built schema, fuzzed (test/helpers/fuzz.ts): arguments as
 * variables of their types with hostile values, the wrong types, missing and stray arguments, nested
 * selections with their own arguments (cursors, pages). No answer is a 5xx or an INTERNAL_ERROR, every
 * error has `extensions.code`, a refused operation writes nothing, and /health answers after each field.
 */

const FIELDS = [
  ...Object.keys(schema.getQueryType()!.getFields()).map((field) => ({ operation: 'query' as const, field })),
  ...Object.keys(schema.getMutationType()!.getFields()).map((field) => ({ operation: 'mutation' as const, field })),
];
const ACCEPT = [
  'application/graphql-response+json',
  'application/json',
  'application/graphql-response+json, application/json;q=0.9',
  '*/*',
];

const suite = fuzzSuite('GraphQL', 'field');

/** Sends an operation with the lane's key: POST, or GET for some queries (short ones). */
async function send(lane: Lane, c: GraphQLCase, accept: string): Promise<{ status: number; text: string }> {
  const headers = { authorization: `Bearer ${lane.key}`, accept };
  const query = new URLSearchParams({ query: c.query, variables: JSON.stringify(c.variables) }).toString();
  const res =
    c.get && query.length < 8_000
      ? await fetch(`${suite.t.url}/graphql?${query}`, { headers })
      : await fetch(`${suite.t.url}/graphql`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ query: c.query, variables: c.variables }),
        });
  return { status: res.status, text: await res.text() };
}

it('fuzzes every query and mutation of the schema', () => {
  expect(FIELDS.filter((f) => f.operation === 'query').length).toBeGreaterThan(5);
  expect(FIELDS.filter((f) => f.operation === 'mutation').length).toBeGreaterThan(20);
});

describe.concurrent(`every GraphQL query and mutation, ${FUZZ_CASES} generated operations each`, () => {
  for (const { operation, field } of FIELDS) {
    it(
      `${operation} ${field}`,
      async () => {
        let cases = 0;
        await suite.pool.use(async (lane) => {
          const operations = fc.tuple(
            graphqlCase(schema, operation, field, { ids: lane.ids }),
            fc.constantFrom(...ACCEPT),
          );
          await fc.assert(
            fc.asyncProperty(operations, async ([c, accept]) => {
              cases++;
              const what = () => `${accept} ${describeCase(c)}`;
              let answer: Awaited<ReturnType<typeof send>>;
              try {
                answer = await send(lane, c, accept);
              } catch (err) {
                throw new Error(`the transfer broke (${(err as Error).message})\n${what()}`);
              }
              const verdict = graphqlVerdict(answer.status, answer.text, field, operation === 'mutation');
              suite.statuses.count(
                `${operation} ${field}`,
                verdict.refused ? `${answer.status} refused` : `${answer.status}`,
              );
              if (verdict.violation) throw new Error(`${verdict.violation}\n${what()}`);
              await checkWrites(suite.t, lane, verdict.refused, what);
            }),
            fuzzParameters(),
          );
        });
        expect(cases).toBeGreaterThanOrEqual(FUZZ_CASES);
        await assertHealthy(suite.t);
      },
      routeTimeout(),
    );
  }
});
