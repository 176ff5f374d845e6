import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import packageJson from '../../package.json' with { type: 'json' };
import type { Core } from '../core.ts';
import { formatDollars } from '../billing/money.ts';
import { webhookUrl } from '../webhooks/subscriptions.ts';
import { datasetStartFields } from '../datasets/index.ts';
import { loadConfig } from '../config.ts';
import { TOOLS } from '../tools/index.ts';
import { mapsTool } from '../tools/maps.ts';
import { startQuote } from '../runs/quote.ts';
import type { ToolDefinition } from '../tools/types.ts';
import {
  IDEMPOTENT,
  jsonSchemaOf,
  OPENAPI_PATH,
  ref,
  restRouteDocs,
  toolSchemaName,
  type DocumentedLimits,
  type JsonSchema,
  type RouteDoc,
  type SchemaRef,
  type Status,
} from './openapi-routes.ts';
import * as s from './schemas.ts';

export { OPENAPI_PATH, restRouteDocs } from './openapi-routes.ts';

// The OpenAPI 3.1 document of the REST routes (openapi-routes.ts declares them), and the route that serves it.

const STATUS_TEXT: Record<Status, string> = {
  400: 'Bad request',
  401: 'Missing, malformed, unknown or revoked API key',
  402: 'The wallet cannot pay for one billable unit',
  403: 'Refused for this account',
  404: 'Unknown id, or an id of another account',
  405: 'Method not allowed',
  409: 'Conflict with the current state',
  410: 'Gone',
  413: 'Request body over 1 MB',
  414: 'Query string over 16 KB: send the same parameters as a JSON body with POST',
  415: 'Send JSON with Content-Type: application/json',
  422: 'Idempotency-Key reused with a different request',
  429: 'Too many requests',
  500: 'Unexpected error (logged; the message says nothing more)',
  503: 'Not answered for now: retry',
};

/** A tool's start body: its registry input plus `webhookUrl`, `datasetName` and `onlyNew`, which every start takes. */
function toolInputSchema(tool: ToolDefinition): JsonSchema {
  const schema = jsonSchemaOf(tool.input, 'input');
  const properties = {
    ...(schema.properties as Record<string, unknown>),
    webhookUrl: jsonSchemaOf(webhookUrl, 'input'),
    ...(jsonSchemaOf(datasetStartFields, 'input').properties as Record<string, unknown>),
  };
  return { ...schema, title: tool.title, properties };
}

// Rendering.

const schemaOf = (schema: SchemaRef, io: 'input' | 'output') =>
  schema instanceof z.ZodType ? jsonSchemaOf(schema, io) : schema;
const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function queryParameters(schema: z.ZodType) {
  const json = jsonSchemaOf(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return {
      name,
      in: 'query',
      required: json.required?.includes(name) ?? false,
      ...(description ? { description } : {}),
      schema: rest,
      ...(prop.type === 'array' ? { style: 'form', explode: true } : {}),
    };
  });
}

function errorResponses(route: RouteDoc, limits: DocumentedLimits) {
  const byStatus = new Map<Status, Set<string>>();
  const add = (status: Status, codes: readonly string[]) => {
    const set = byStatus.get(status) ?? new Set<string>();
    for (const code of codes) set.add(code);
    byStatus.set(status, set);
  };
  if (route.idempotent) for (const [status, codes] of Object.entries(IDEMPOTENT)) add(Number(status) as Status, codes);
  for (const [status, codes] of Object.entries(route.errors)) add(Number(status) as Status, codes);
  if (!route.public) {
    add(401, ['unauthenticated']);
    add(429, ['rate_limited']);
  }
  add(500, ['internal_error']);
  // Any route that reads the database, while it restarts or is out of reach.
  add(503, ['database_unavailable']);
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, codes]) => [
        String(status),
        {
          description: `${STATUS_TEXT[status]}: ${[...codes].map((c) => `\`${c}\``).join(', ')}.`,
          ...(status === 429 ? { headers: rateLimitHeaders(limits) } : {}),
          ...(status === 503 ? { headers: { 'Retry-After': RETRY_AFTER_HEADER } } : {}),
          ...(status === 401 ? { headers: { 'WWW-Authenticate': { schema: { type: 'string' } } } } : {}),
          content: {
            'application/json': {
              schema: ref('Error'),
              ...soleExample(status, codes, limits),
            },
          },
        },
      ]),
  );
}

const REPLAYED_HEADER = {
  schema: { type: 'string', enum: ['true'] },
  description: 'Present when the answer replays an earlier request with the same Idempotency-Key.',
};

const RETRY_AFTER_HEADER = { schema: { type: 'integer' }, description: 'Seconds until a request may succeed.' };

const rateLimitHeaders = (limits: DocumentedLimits) => ({
  'Retry-After': RETRY_AFTER_HEADER,
  'RateLimit-Policy': { schema: { type: 'string' }, description: `e.g. ${limits.rateLimitPerMinute};w=60` },
  RateLimit: {
    schema: { type: 'string' },
    description: `e.g. limit=${limits.rateLimitPerMinute}, remaining=0, reset=12`,
  },
});

/** The example messages of the error codes, stating the configured limits and the maps tool's price rule. */
const errorMessages = (limits: DocumentedLimits): Record<string, string> => ({
  unauthenticated: 'Send your API key as "Authorization: Bearer <API_KEY>"',
  rate_limited: `Too many requests: the limit is ${limits.rateLimitPerMinute} per minute per API key. Retry in 12 s.`,
  internal_error: 'Something went wrong on our side; the error was logged.',
  not_found: 'Run not found',
  insufficient_funds:
    `The wallet cannot pay for one ${mapsTool.price.unit} (${formatDollars(mapsTool.price.unitMicros)} USD). Buy ` +
    `credits with POST /api/v1/buy-credits.`,
  query_timeout: 'The search took longer than 10 s. Narrow it and retry.',
  database_unavailable: 'The database is unavailable for a moment (a restart or a failover). Retry in 5 s.',
  daily_limit_reached:
    `The daily allowance of ${limits.dailyDatabaseRecords.toLocaleString('en-US')} database records is used up; it ` +
    `resets at midnight UTC, in 3600 s.`,
});

const errorExample = (status: Status, code: string, limits: DocumentedLimits) => ({
  error: { code, message: errorMessages(limits)[code] ?? STATUS_TEXT[status] },
});

/** The example of a response with one error code; none for a response with several. */
function soleExample(status: Status, codes: ReadonlySet<string>, limits: DocumentedLimits) {
  const [code, ...others] = codes;
  return code !== undefined && others.length === 0 ? { example: errorExample(status, code, limits) } : {};
}

function operation(route: RouteDoc, limits: DocumentedLimits) {
  const pathParams = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({
    name: m[1] ?? '',
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const parameters = [
    ...pathParams,
    ...(route.query ? queryParameters(route.query) : []),
    ...(route.idempotent ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
  ];
  const ok = route.ok;
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.public ? { security: [] } : route.security ? { security: route.security } : {}),
    ...(route.deprecated ? { deprecated: true } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: schemaOf(route.body.schema, 'input'),
                ...(route.body.example !== undefined ? { example: route.body.example } : {}),
              },
            },
          },
        }
      : {}),
    responses: {
      ...(ok
        ? {
            [String(ok.status ?? 200)]: {
              description: ok.description,
              ...(route.idempotent || ok.headers
                ? {
                    headers: { ...(route.idempotent ? { 'Idempotent-Replayed': REPLAYED_HEADER } : {}), ...ok.headers },
                  }
                : {}),
              ...(ok.content
                ? {
                    content: Object.fromEntries(
                      Object.entries(ok.content).map(([type, schema]) => [
                        type,
                        { schema: schemaOf(schema, 'output') },
                      ]),
                    ),
                  }
                : {}),
            },
          }
        : {}),
      ...errorResponses(route, limits),
    },
    ...route.extensions,
  };
}

const description = (limits: DocumentedLimits) =>
  [
    'Lead data extraction and enrichment over REST.',
    '',
    'Send every request with `Authorization: Bearer <API_KEY>` (the same key works for GraphQL at /graphql ' +
      'and for the MCP server at /mcp).',
    "Tools start runs: POST a tool's route, poll GET /api/v1/scrape/status/{runId} until `status` is SUCCEEDED, " +
      'then download GET /api/downloads/{runId}.',
    '',
    'Every 4xx/5xx answers `{"error": {"code", "message", "details"?}}` (components.schemas.Error); ' +
      '`code` is stable and `details` is an array of `{path, message}`.',
    'A field a route does not declare, in its body or query string, is refused with 400 `validation_failed` ' +
      'naming the closest known field; nothing runs.',
    'A deprecated operation (`deprecated: true`) answers Deprecation, Sunset and Link headers until its sunset ' +
      '(docs/versioning.md).',
    `Limits: ${limits.rateLimitPerMinute} requests per minute per API key ` +
      `(RateLimit headers; 429 \`rate_limited\` with Retry-After), ` +
      `${limits.maxRunningRuns} running runs per account (more wait as READY), ` +
      `results kept ${limits.resultRetentionHours} hours.`,
    'POSTs that start runs or buy credits accept an `Idempotency-Key` header (kept 24 hours): ' +
      'a replay returns the first answer.',
  ].join('\n');

export interface OpenApiDocument {
  openapi: '3.1.0';
  paths: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

/** The OpenAPI 3.1 document of every REST route, from the tool registry and the zod schemas of the services. */
export function buildOpenApiDocument(options: { serverUrl: string; limits?: DocumentedLimits }): OpenApiDocument {
  const limits = options.limits ?? loadConfig({});
  const paths: OpenApiDocument['paths'] = {};
  for (const route of restRouteDocs(limits)) {
    const item = paths[openApiPath(route.path)] ?? {};
    paths[openApiPath(route.path)] = item;
    if (item[route.method]) throw new Error(`${route.method.toUpperCase()} ${route.path} is documented twice`);
    item[route.method] = operation(route, limits);
  }
  const routed = TOOLS.filter((t) => !t.linkedOnly);
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: { title: 'leadgate', version: packageJson.version, description: description(limits) },
    servers: [{ url: options.serverUrl }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'Tools', description: 'Start a run of a tool. Each route states its price.' },
      { name: 'Runs', description: 'Status, cancellation and results of runs.' },
      { name: 'Account', description: 'Wallet and credits.' },
      { name: 'Database', description: 'Lead, local business and store database APIs.' },
      { name: 'Enrichment', description: 'Match rows against the databases.' },
      { name: 'Webhooks', description: 'Be told when runs end.' },
      { name: 'Datasets', description: 'Rows kept across runs, one a result; only new rows delivered.' },
      { name: 'Workflows', description: 'Saved tasks, the schedules that fire them, and pipelines.' },
      {
        name: 'Destinations',
        description: 'Provider connections, destinations that receive a run’s rows, and delivery logs.',
      },
      { name: 'Privacy', description: 'The account’s do-not-contact list: people no row may carry.' },
      { name: 'Audit', description: 'The account’s audit log: who did what, read and exported by owners and admins.' },
      {
        name: 'Operator',
        description:
          'The deployment operator’s API (`/operator/v1`): requests of people about their data, with receipts. ' +
          'Its token is OPERATOR_TOKEN, not an API key; while it is unset the routes answer 404.',
      },
      { name: 'Meta', description: 'This document.' },
    ],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'lg_live_<32 characters>',
          description: 'An API key of the account, created with `leadgate keys create`.',
        },
        operatorToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'OPERATOR_TOKEN, the operator API’s token (the operator API only; never an API key).',
        },
        downloadLink: {
          type: 'apiKey',
          in: 'query',
          name: 'signature',
          description:
            "A signed link to one run's file (GET /api/downloads/{runId} only): `signature` with the `account` and " +
            '`expires` it signs, as `Run.downloadUrl` gives them.',
        },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Any 1 to 255 visible ASCII characters, kept 24 hours per account: a replay returns the first answer; ' +
            'the same key with another body answers 422.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
      schemas: {
        Error: jsonSchemaOf(s.errorBody, 'output'),
        RunView: jsonSchemaOf(s.runView, 'output'),
        RunStart: jsonSchemaOf(s.runStart, 'output'),
        StartQuote: jsonSchemaOf(startQuote, 'output'),
        ...Object.fromEntries(routed.map((tool) => [toolSchemaName(tool), toolInputSchema(tool)])),
      },
    },
  };
}

/**
 * GET /api/v1/openapi.json, public like any API contract; built once per process, stating its core's configured
 * limits.
 */
export async function openApiRoute(app: FastifyInstance, { core }: { core: Core }) {
  let document: OpenApiDocument | undefined;
  app.get(OPENAPI_PATH, async (_, reply) => {
    document ??= buildOpenApiDocument({ serverUrl: core.config.publicUrl, limits: core.config });
    return reply.header('cache-control', 'public, max-age=300').send(document);
  });
}
