/**
 * `graphql-run`: a run's status over GraphQL HTTP (`POST /graphql`, `run(id)` selecting what the REST
 * status answer holds) against the REST status poll `GET /api/v1/scrape/status/{runId}` of the same
 * finished run, through the same gateway, side by side. Both answers are checked equal first, and
 * every answer under load is checked byte for byte against the first.
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
const GOAL_RATIO = 0.7;

/** The REST status answer's fields (runId → id). */
export const STATUS_QUERY =
  'query RunStatus($id: ID!) { run(id: $id) { id status statusMessage handled requested runTimeSecs outputUrl expiresAt cost billedUnits priceRule { text unit unitPrice } } }';

interface StatusView {
  runId: string;
  status: string;
  statusMessage: string;
  handled: number;
  requested: number;
  runTimeSecs: number | null;
  outputUrl: string | null;
  expiresAt: string | null;
  cost: number;
  billed_units: number;
  price_rule: { text: string; unit: string; unit_price: number };
}

interface GraphQLRun extends Omit<StatusView, 'runId' | 'cost' | 'billed_units' | 'price_rule'> {
  id: string;
  cost: string;
  billedUnits: number;
  priceRule: { text: string; unit: string; unitPrice: string };
}

/** The GraphQL answer in the REST shape: `id` is the runId, the enum's TIMED_OUT is TIMED-OUT, Money strings are numbers, names snake_cased. */
function fromGraphql(json: unknown): StatusView {
  const run = (json as { data: { run: GraphQLRun | null } }).data.run;
  if (!run) throw new Error('GraphQL: run(id) is null');
  const { id, cost, billedUnits, priceRule, ...rest } = run;
  const { unitPrice, ...rule } = priceRule;
  return {
    runId: id,
    ...rest,
    status: rest.status.replace('_', '-'),
    cost: Number(cost),
    billed_units: billedUnits,
    price_rule: { ...rule, unit_price: Number(unitPrice) },
  };
}

export const graphqlRun: Suite<GraphQLVersusRest> = {
  name: 'graphql-run',
  key: 'graphqlRun',
  quick: true,
  async run(context) {
    const gw = await context.gateway();
    const runId = await finishedMapsRun(gw, 20);
    const { graphql, rest, bytes } = await checkedTargets(
      graphqlTarget(gw, { query: STATUS_QUERY, variables: { id: runId } }),
      gatewayTarget(gw, 'GET', `/api/v1/scrape/status/${runId}`),
      { graphql: fromGraphql, rest: (json) => json as StatusView },
    );
    return graphqlVersusRest(
      runId,
      { graphql, rest },
      bytes,
      {
        graphql: ['GraphQL POST /graphql run(id)', `POST /graphql ${STATUS_QUERY}`],
        rest: ['REST GET /api/v1/scrape/status/:runId', `GET /api/v1/scrape/status/${runId}`],
      },
      context.quick ? QUICK : OPTIONS,
      GOAL_RATIO,
    );
  },
  format: (r) =>
    formatVersus("9. A run's status over GraphQL HTTP vs the REST status poll (finished 20-row maps run)", r),
  goals: (r) => ({ ratio: r.goalRatio, met: r.ratio >= r.goalRatio }),
};
