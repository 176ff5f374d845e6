import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getOperationAST, Kind, type DocumentNode } from 'graphql';
import type { ConnectionInitMessage, ServerOptions } from 'graphql-ws';
import type { Plugin } from 'graphql-yoga';
import type { Sql } from '../../db/client.ts';
import { oneRow } from '../../db/rows.ts';
import { JOBS } from '../workers/jobs.ts';
import { withDeadline } from './deadline.ts';
import { AppError } from '../shared/errors.ts';
import {
  collectProcessMetrics,
  databaseUp,
  graphqlWsConnections,
  jobsQueued,
  refusalsTotal,
  registry,
  requestDuration,
  requestsTotal,
  runsActive,
  runsWaiting,
  type Face,
} from '../shared/metrics.ts';

/**
 * How the faces are measured, one hook each (the metrics themselves are defined in
 * src/shared/metrics.ts):
 * - every HTTP answer (REST, GraphQL over HTTP, MCP, errors and 404s) in one Fastify `onResponse`
 *   hook, labelled by face and route pattern;
 * - GraphQL operations by a yoga plugin that names the route of a GraphQL request after its operation
 *   (`query runs`, `mutation startMapsScrape`), so the one /graphql path shows what it serves;
 * - graphql-ws by wrapping the server's hooks: each operation (subscribe message) is a request, from
 *   the message to its first answer; refused connections and operations are refusals.
 * `GET /metrics` renders the process's registry, with the queue figures read from the database then.
 */

// ---------------------------------------------------------------------------------------------
// Faces and routes

/** The face of a path: /api (REST), /graphql and GraphiQL's files, /mcp; anything else is `other`. */
export function faceOfPath(path: string): Face {
  if (path.startsWith('/api/')) return 'rest';
  if (path === '/graphql' || path.startsWith('/graphql?') || path.startsWith('/graphiql/')) return 'graphql';
  if (path === '/mcp' || path.startsWith('/mcp?')) return 'mcp';
  return 'other';
}

const faceOfRoute = new Map<string, Face>();

/** The face a request came in through: from its route pattern, or its path when no route matched. */
export function faceOf(request: FastifyRequest): Face {
  const route = request.routeOptions.url;
  if (route === undefined) return faceOfPath(request.url);
  let face = faceOfRoute.get(route);
  if (face === undefined) {
    face = faceOfPath(route);
    faceOfRoute.set(route, face);
  }
  return face;
}

/** The route label of a GraphQL request over HTTP, once its operation is known. */
const graphQLRoutes = new WeakMap<FastifyRequest, string>();

/** Route labels by document and operation name: documents are cached by yoga, so this is a lookup per request. */
const operationLabels = new WeakMap<DocumentNode, Map<string, string>>();

/**
 * An operation as a route label: its type and root field (`query runs`, `subscription runProgress`),
 * with `+…` when it selects more than one root field. Names come from the validated document, so the
 * labels are bounded by the schema.
 */
export function operationLabel(document: DocumentNode, operationName: string | null | undefined): string {
  let byName = operationLabels.get(document);
  if (!byName) {
    byName = new Map();
    operationLabels.set(document, byName);
  }
  const key = operationName ?? '';
  let label = byName.get(key);
  if (label === undefined) {
    const operation = getOperationAST(document, operationName);
    const first = operation?.selectionSet.selections[0];
    const field = first?.kind === Kind.FIELD ? first.name.value : '…';
    label = operation
      ? `${operation.operation} ${field}${operation.selectionSet.selections.length > 1 ? '+…' : ''}`
      : 'unknown';
    byName.set(key, label);
  }
  return label;
}

/** A yoga plugin: the route of a GraphQL request over HTTP is its operation (see `operationLabel`). */
export function operationRoutesPlugin(): Plugin {
  const name = ({
    args,
  }: {
    args: { contextValue: unknown; document: DocumentNode; operationName?: string | null };
  }) => {
    const req = (args.contextValue as { req?: FastifyRequest } | undefined)?.req;
    if (req) graphQLRoutes.set(req, operationLabel(args.document, args.operationName));
  };
  return { onExecute: name, onSubscribe: name };
}

/** Counts refusals by authentication (401) or a limit (429): a request's, or `count` messages of an MCP batch. */
export function countRefusal(face: Face, status: number, code: string, count = 1) {
  if ((status === 401 || status === 429) && count > 0) refusalsTotal.inc({ face, code }, count);
}

// ---------------------------------------------------------------------------------------------
// graphql-ws

/** The HTTP status the same refusal or failure has, by its GraphQL code. */
const STATUS_OF_CODE: Record<string, number> = {
  UNAUTHENTICATED: 401,
  RATE_LIMITED: 429,
  DAILY_LIMIT_REACHED: 429,
  NOT_FOUND: 404,
  PLAN_REQUIRED: 403,
  INTERNAL_ERROR: 500,
  INTERNAL_SERVER_ERROR: 500,
};

interface CodedError {
  extensions?: Record<string, unknown>;
}

const codeOf = (errors: readonly CodedError[]) => {
  const code = errors[0]?.extensions?.code;
  return typeof code === 'string' ? code : undefined;
};

/**
 * The graphql-ws server's hooks, measured: a connection refused on connect is a refusal; each
 * operation is a request of the `graphql-ws` face, timed from its subscribe message to its first
 * answer (the first result, an error, or completion), with the status its outcome has over HTTP
 * (200; 401, 429 and 400 for refusals and bad operations; 500 for an internal failure).
 */
export function observeGraphQLWs<P extends ConnectionInitMessage['payload'], E>(
  options: ServerOptions<P, E>,
): ServerOptions<P, E> {
  const pending = new WeakMap<object, Map<string, { start: number; route: string }>>();
  const acknowledged = new WeakSet<object>();

  const answered = (ctx: object, id: string, errors?: readonly CodedError[]) => {
    const operations = pending.get(ctx);
    const operation = operations?.get(id);
    if (!operations || !operation) return;
    operations.delete(id);
    const code = errors ? codeOf(errors) : undefined;
    const status = errors ? (STATUS_OF_CODE[code ?? ''] ?? (operation.route === 'unknown' ? 400 : 500)) : 200;
    if (code) countRefusal('graphql-ws', status, code.toLowerCase());
    const labels = { face: 'graphql-ws', route: operation.route, method: 'SUBSCRIBE', status: String(status) };
    requestsTotal.inc(labels);
    requestDuration.observe(labels, (performance.now() - operation.start) / 1000);
  };

  return {
    ...options,
    onConnect: async (ctx) => {
      const result = await options.onConnect?.(ctx);
      if (result !== false) {
        acknowledged.add(ctx);
        graphqlWsConnections.inc();
      }
      return result;
    },
    onClose: async (ctx, code, reason) => {
      if (acknowledged.delete(ctx)) graphqlWsConnections.dec();
      // A connection refused before it was acknowledged: a bad key (4401) or too many failed authentications (4429).
      else if (code === 4401) countRefusal('graphql-ws', 401, 'unauthenticated');
      else if (code === 4429) countRefusal('graphql-ws', 429, 'rate_limited');
      return options.onClose?.(ctx, code, reason);
    },
    onSubscribe: async (ctx, id, payload) => {
      const start = performance.now();
      const result = await options.onSubscribe?.(ctx, id, payload);
      const route =
        result && !Array.isArray(result)
          ? operationLabel(
              (result as { document: DocumentNode }).document,
              (result as { operationName?: string | null }).operationName,
            )
          : 'unknown';
      let operations = pending.get(ctx);
      if (!operations) {
        operations = new Map();
        pending.set(ctx, operations);
      }
      operations.set(id, { start, route });
      return result;
    },
    onNext: (ctx, id, payload, args, result) => {
      answered(ctx, id);
      return options.onNext?.(ctx, id, payload, args, result);
    },
    onError: (ctx, id, payload, errors) => {
      answered(ctx, id, errors as readonly CodedError[]);
      return options.onError?.(ctx, id, payload, errors);
    },
    onComplete: (ctx, id, payload) => {
      answered(ctx, id);
      return options.onComplete?.(ctx, id, payload);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The HTTP hook and GET /metrics

const JOB_STATES = ['waiting', 'scheduled', 'running', 'failed'] as const;
/** The longest a scrape waits for the queue figures. */
const QUEUE_QUERY_MS = 2000;

/**
 * The queue figures, read on scrape: runs holding a slot (the accounts' counters), runs READY (one
 * index probe per account with runs waiting or running), and jobs by task and state (graphile-worker's
 * public `jobs` view). Every known task is reported, at 0 when it has no job in a state.
 */
export async function collectQueueDepth(sql: Sql): Promise<void> {
  const query = sql<{ active: number; waiting: number; jobs: { task: string; state: string; n: number }[] }[]>`
    select
      (select coalesce(sum(active_runs), 0)::int from wallet) as active,
      (select count(*)::int from wallet w cross join lateral (
        select 1 from run r where r.account_id = w.account_id and r.status = 'READY') ready) as waiting,
      (select coalesce(json_agg(j), '[]'::json) from (
        select task_identifier as task,
          case when locked_at is not null then 'running'
               when attempts >= max_attempts then 'failed'
               when run_at > now() then 'scheduled'
               else 'waiting' end as state,
          count(*)::int as n
        from graphile_worker.jobs group by 1, 2) j) as jobs`;
  try {
    const row = oneRow(await withDeadline(query, QUEUE_QUERY_MS, 'timed out'), 'the queue gauges');
    runsActive.set(row.active);
    runsWaiting.set(row.waiting);
    jobsQueued.reset();
    for (const task of Object.values(JOBS)) for (const state of JOB_STATES) jobsQueued.set({ task, state }, 0);
    for (const { task, state, n } of row.jobs) jobsQueued.set({ task, state }, n);
    databaseUp.set(1);
  } catch {
    databaseUp.set(0);
    runsActive.set(Number.NaN);
    runsWaiting.set(Number.NaN);
    jobsQueued.reset();
  }
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Whether `authorization` is `Bearer <token>` (compared in constant time). */
function bearerMatches(authorization: string | undefined, token: string): boolean {
  const sent = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1];
  return sent !== undefined && timingSafeEqual(digest(sent.trim()), digest(token));
}

export interface MetricsOptions {
  /** When set, GET /metrics needs it as a Bearer token; otherwise it is open. */
  token: string | undefined;
  /** The database the queue figures are read from. */
  sql: Sql;
}

/**
 * Measures every HTTP answer (an `onResponse` hook on the root instance: every route, 404s and errors
 * included) and serves `GET /metrics` in Prometheus' text format.
 */
export function installMetrics(app: FastifyInstance, options: MetricsOptions) {
  collectProcessMetrics();
  app.addHook('onResponse', (request, reply, done) => {
    const face = faceOf(request);
    const route = (face === 'graphql' && graphQLRoutes.get(request)) || request.routeOptions.url || 'unmatched';
    const labels = { face, route, method: request.method, status: String(reply.statusCode) };
    requestsTotal.inc(labels);
    requestDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', async (request, reply) => {
    if (options.token !== undefined && !bearerMatches(request.headers.authorization, options.token)) {
      reply.header('WWW-Authenticate', 'Bearer realm="metrics"');
      throw new AppError(
        401,
        'unauthenticated',
        'GET /metrics needs the METRICS_TOKEN: send "Authorization: Bearer <METRICS_TOKEN>"',
      );
    }
    await collectQueueDepth(options.sql);
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
