/**
 * `graphql-results`: a page of 100 result rows of a finished run over GraphQL HTTP against the same
 * 100 rows from the REST download (`GET /api/downloads/{runId}?format=json&offset=0&limit=100`),
 * through the same gateway, side by side. The run is a finished 150-row maps run, so the page is the
 * first of two. Both answers are checked to hold the same rows first (the typed GraphQL fields are the
 * download's columns camelCased), and every answer under load is checked byte for byte against the first.
 */
import { gatewayTarget, type LoadOptions, type Suite } from './harness.ts';
import {
  checkedTargets,
  finishedMapsRun,
  formatVersus,
  graphqlTarget,
  graphqlVersusRest,
  type GraphQLVersusRest,
} from './graphql-http.ts';

const OPTIONS: LoadOptions = { connections: 20, durationSecs: 8, warmupSecs: 2, rounds: 3 };
const QUICK: LoadOptions = { connections: 20, durationSecs: 2, warmupSecs: 1, rounds: 1 };
const GOAL_RATIO = 0.5;
const RUN_ROWS = 150;
const PAGE = 100;

/** Every field of `MapsResult`, the maps tool's member of the `RunResult` union: the download's columns, camelCased. */
export const MAPS_RESULT_FIELDS = [
  'name',
  'category',
  'address',
  'street',
  'city',
  'state',
  'postalCode',
  'countryCode',
  'phone',
  'website',
  'emails',
  'rating',
  'reviewCount',
  'hours',
  'latitude',
  'longitude',
  'placeId',
  'url',
  'searchTerm',
] as const;

/**
 * The first page of the run's typed rows, `Run.results(first, after)`, a connection of the `RunResult`
 * union (schema/schema.graphql), with what a client needs to ask for the next page.
 */
export const RESULTS_QUERY =
  `query RunResults($id: ID!) { run(id: $id) { results(first: ${PAGE}) { ` +
  `nodes { ... on MapsResult { ${MAPS_RESULT_FIELDS.join(' ')} } } pageInfo { hasNextPage endCursor } } } }`;

type Row = Record<string, unknown>;

function fromGraphql(json: unknown): Row[] {
  const run = (
    json as { data: { run: { results: { nodes: Row[]; pageInfo: { hasNextPage: boolean } } | null } | null } }
  ).data.run;
  if (!run?.results) throw new Error(`GraphQL: no results: ${JSON.stringify(json).slice(0, 300)}`);
  if (!run.results.pageInfo.hasNextPage)
    throw new Error(`GraphQL: the first ${PAGE} of ${RUN_ROWS} rows say there is no next page`);
  return run.results.nodes;
}

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The download's rows with their columns camelCased, as the GraphQL fields are named. */
function fromRest(json: unknown): Row[] {
  if (!Array.isArray(json)) throw new Error(`REST download: not an array: ${JSON.stringify(json).slice(0, 200)}`);
  return (json as Row[]).map((row) =>
    Object.fromEntries(Object.entries(row).map(([key, value]) => [camel(key), value])),
  );
}

export interface GraphQLResultsResult extends GraphQLVersusRest {
  rows: number;
  schemaNote: string;
}

const SCHEMA_NOTE =
  "rows as Run.results(first: 100): RunResultConnection, nodes of the RunResult union (MapsResult, all 19 fields); checked equal to the download's rows, columns camelCased";

export const graphqlResults: Suite<GraphQLResultsResult> = {
  name: 'graphql-results',
  key: 'graphqlResults',
  quick: true,
  async run(context) {
    const gw = await context.gateway();
    const runId = await finishedMapsRun(gw, RUN_ROWS);
    const route = `/api/downloads/${runId}?format=json&offset=0&limit=${PAGE}`;
    const { graphql, rest, bytes } = await checkedTargets(
      graphqlTarget(gw, { query: RESULTS_QUERY, variables: { id: runId } }),
      gatewayTarget(gw, 'GET', route),
      {
        graphql: fromGraphql,
        rest: (json) => {
          const rows = fromRest(json);
          if (rows.length !== PAGE) throw new Error(`REST download: ${rows.length} rows, expected ${PAGE}`);
          return rows;
        },
      },
    );
    const result = await graphqlVersusRest(
      runId,
      { graphql, rest },
      bytes,
      {
        graphql: [`GraphQL POST /graphql, ${PAGE} rows`, `POST /graphql ${RESULTS_QUERY}`],
        rest: [`REST GET /api/downloads/:runId, ${PAGE} rows`, `GET ${route}`],
      },
      context.quick ? QUICK : OPTIONS,
      GOAL_RATIO,
    );
    return { ...result, rows: PAGE, schemaNote: SCHEMA_NOTE };
  },
  format: (r) =>
    formatVersus(
      `10. A page of ${r.rows} result rows over GraphQL HTTP vs the REST download (finished ${RUN_ROWS}-row maps run)`,
      r,
      [r.schemaNote],
    ),
  goals: (r) => ({ ratio: r.goalRatio, met: r.ratio >= r.goalRatio }),
};
