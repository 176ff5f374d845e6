import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  getNamedType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from 'graphql';
import { schema } from '../../../schema/index.ts';
import { TOOLS } from '../../../src/tools/index.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { graphql } from '../../helpers/gql/index.ts';

/**
 * Typed results: every tool's example run, read through `Run.results`, answers every column of the
 * tool's result type without an error, with the values of the JSON download (money as Money's
 * decimal strings, nested objects field by field). A column declared with the wrong type fails here.
 */

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key } = await t.account({ creditsMicros: 10_000_000_000n }));
});
afterAll(() => t?.stop());

const ResultsPage = graphql(`
  query ResultsPage($id: ID!, $after: String) {
    run(id: $id) {
      results(first: 2, after: $after) {
        edges { cursor node { ... on MapsResult { placeId } } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`);
const ForgedCursor = graphql(
  `query ResultsForgedCursor($id: ID!) { run(id: $id) { results(after: "nope") { totalCount } } }`,
);

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The selection of every field of an object type, nested objects included. */
function selection(type: GraphQLObjectType): string {
  return Object.values(type.getFields())
    .map((field) => {
      const named = getNamedType(field.type);
      return isObjectType(named) ? `${field.name} { ${selection(named)} }` : field.name;
    })
    .join(' ');
}

/** A download's value as the GraphQL type answers it. */
function expected(value: unknown, type: GraphQLOutputType): unknown {
  if (value === null || value === undefined) return null;
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return (value as unknown[]).map((v) => expected(v, inner.ofType));
  const named = getNamedType(inner);
  if (isObjectType(named)) {
    return Object.fromEntries(
      Object.values(named.getFields()).map((f) => {
        const record = value as Record<string, unknown>;
        return [f.name, expected(record[f.name] ?? record[snake(f.name)], f.type)];
      }),
    );
  }
  if (named.name === 'Money') return expect.toSatisfy((v: string) => typeof v === 'string' && Number(v) === value);
  if (named.name === 'Decimal') return String(value);
  return value;
}

/** Inputs that find rows where a tool's example finds none in the seed catalog (nested columns included). */
const FINDING: Record<string, () => Promise<unknown>> = {
  'property-lookup': async () => {
    const [p] = await t.app.core.sql`select street, city, state, zip from property order by id limit 1`;
    return { addresses: [`${p!.street}, ${p!.city}, ${p!.state} ${p!.zip}`] };
  },
  'home-services': async () => ({ keyword: 'Garage Doors', zipCodes: [], maxItems: 2 }),
};

describe('Run.results', () => {
  for (const tool of TOOLS.filter((x) => x.example)) {
    it(`answers every column of ${tool.name} typed, as the download has it`, async () => {
      const input = FINDING[tool.name] ? await FINDING[tool.name]!() : tool.example;
      const { start, rows } = await t.runTool(key, tool.rest.path, input, 30_000);
      if (FINDING[tool.name]) expect(rows.length).toBeGreaterThan(0);
      if (tool.name === 'property-lookup')
        expect(rows[0]).toMatchObject({
          status: 'found',
          price_history: expect.any(Array),
          schools: expect.any(Array),
        });
      const typeName = `${tool.name.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase())}Result`;
      const type = schema.getType(typeName) as GraphQLObjectType;
      // A string: the selection is built from the schema for each tool.
      const res = await t.graphql(
        key,
        `query($id: ID!) { run(id: $id) { results(first: 100) { totalCount nodes { __typename ... on ${typeName} { ${selection(type)} } } } } }`,
        { id: start.runId },
      );
      expect(res.body.errors).toBeUndefined();
      const { totalCount, nodes } = res.body.data.run.results;
      expect(totalCount).toBe(rows.length);
      expect(nodes).toHaveLength(Math.min(rows.length, 100));
      nodes.forEach((node: Record<string, unknown>, i: number) => {
        const row = rows[i] as Record<string, unknown>;
        expect(node).toEqual({
          __typename: typeName,
          ...Object.fromEntries(
            tool.columns.map((c) => [camel(c.key), expected(row[c.key], type.getFields()[camel(c.key)]!.type)]),
          ),
        });
      });
    });
  }

  it('pages with first and after, the cursors standing for row positions', async () => {
    const maps = TOOLS.find((x) => x.name === 'maps')!;
    const { start, rows } = await t.runTool(key, maps.rest.path, maps.example);
    expect(rows.length).toBeGreaterThan(3);
    const page = async (after: string | null) =>
      (await t.graphql(key, ResultsPage, { id: start.runId, after })).body.data!.run!.results!;
    const first = await page(null);
    const second = await page(first.pageInfo.endCursor);
    expect([...first.edges, ...second.edges].map((e) => e.node.placeId)).toEqual(
      rows.slice(0, 4).map((r) => r.place_id),
    );
    expect(first.pageInfo).toMatchObject({
      hasNextPage: true,
      hasPreviousPage: false,
      startCursor: first.edges[0]!.cursor,
      endCursor: first.edges[1]!.cursor,
    });
    const bad = await t.graphql(key, ForgedCursor, { id: start.runId });
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ path: 'after', message: 'not a cursor returned by this API' }],
    });
  });
});
