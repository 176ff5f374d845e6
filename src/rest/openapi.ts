import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import packageJson from '../../package.json' with { type: 'json' };
import type { Core } from '../core.ts';
import { downloadParams } from '../runs/exports.ts';
import { DOWNLOAD_LINK_SECS } from '../runs/download-links.ts';
import { formatDollars } from '../billing/money.ts';
import { PLAN_PRICE_USD } from '../billing/plans.ts';
import { webhookUrl } from '../runs/webhooks.ts';
import { loadConfig, type Config } from '../config.ts';
import type { EndpointDefinition } from '../endpoints/define.ts';
import { ENDPOINTS } from '../endpoints/index.ts';
import { TOOLS } from '../tools/index.ts';
import { mapsTool, overviewMapsRequest } from '../tools/maps.ts';
import type { ToolDefinition } from '../tools/types.ts';
import type { Deprecation } from '../shared/deprecation.ts';
import { statusParams } from './index.ts';
import * as s from './schemas.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';

type JsonSchema = Record<string, unknown>;
type Status = 400 | 401 | 402 | 403 | 404 | 405 | 409 | 410 | 413 | 414 | 415 | 422 | 429 | 500 | 503;

/** A schema by value (zod) or a reference to `components.schemas`. */
type SchemaRef = z.ZodType | { $ref: string };

/** One documented route; `path` is written the Fastify way (`/api/v1/runs/:runId`). */
export interface RouteDoc {
  method: 'get' | 'post' | 'delete';
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** Served without an API key. */
  public?: boolean;
  /** The ways in other than the document's default (an API key), each one alternative. */
  security?: Record<string, string[]>[];
  query?: z.ZodType;
  body?: { schema: SchemaRef; example?: unknown };
  /** Honours `Idempotency-Key` (the POSTs that start runs or buy credits). */
  idempotent?: boolean;
  /** The success answer; absent for routes that only refuse. */
  ok?: {
    status?: 200 | 201 | 204;
    description: string;
    content?: Record<string, SchemaRef>;
    headers?: Record<string, unknown>;
  };
  /** Error codes the route can answer, by status; authentication, rate limit and server errors are added. */
  errors: Partial<Record<Status, readonly string[]>>;
  extensions?: Record<string, unknown>;
  /** On its way out: marked `deprecated` (its answers carry the Deprecation, Sunset and Link headers). */
  deprecated?: Deprecation;
}

/** JSON Schema 2020-12 (the dialect of OpenAPI 3.1) of a zod schema. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io,
    target: 'draft-2020-12',
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The query parameters a signed download link's `signature` (the `downloadLink` scheme) signs with the run and format. */
const signedLinkParams = {
  account: z.string().optional().describe('Signed link (with `signature`): the account the link was made for.'),
  expires: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Signed link (with `signature`): when it stops working, in Unix seconds.'),
};
const toolSchemaName = (tool: ToolDefinition) => tool.graphql.inputType;
const planText = (plan: keyof typeof PLAN_PRICE_USD) =>
  `the ${plan} plan (${PLAN_PRICE_USD[plan]} USD/month) or higher`;

/** Error codes of several sources, merged status by status. */
function errorsOf(...sources: RouteDoc['errors'][]): RouteDoc['errors'] {
  const merged: RouteDoc['errors'] = {};
  for (const source of sources) {
    for (const [status, codes] of Object.entries(source) as [string, readonly string[]][]) {
      const key = Number(status) as Status;
      merged[key] = [...new Set([...(merged[key] ?? []), ...codes])];
    }
  }
  return merged;
}

const JSON_BODY: RouteDoc['errors'] = {
  400: ['validation_failed', 'invalid_json'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
};
const IDEMPOTENT: RouteDoc['errors'] = { 400: ['validation_failed'], 422: ['idempotency_key_reused'] };
const RUN_LOOKUP: RouteDoc['errors'] = { 404: ['not_found'] };
const DOWNLOADABLE: RouteDoc['errors'] = { 404: ['not_found'], 409: ['run_not_finished'], 410: ['results_expired'] };

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

// The tools of the registry: one start route each (plus the spec's aliases), priced in the description.

function toolDescription(tool: ToolDefinition): string {
  return [
    tool.description,
    '',
    `**Price:** ${tool.price.text}.${tool.plan ? ` Needs ${planText(tool.plan)}.` : ''}`,
    '',
    `**Cancellable:** ${tool.cancellable ? 'yes (POST /api/v1/scrape/cancel/{runId}); rows stored so far are kept and billed' : 'no'}.`,
    '',
    ...(tool.notes?.length ? [...tool.notes.map((n) => `- ${n}`), ''] : []),
    'The run starts at once: poll GET /api/v1/scrape/status/{runId} until it ends, then download GET /api/downloads/{runId}. ' +
      'Send webhookUrl to be told when it ends instead.',
  ].join('\n');
}

function toolRoutes(): RouteDoc[] {
  return TOOLS.filter((t) => !t.linkedOnly).flatMap((tool) =>
    [{ path: tool.rest.path, deprecated: undefined }, ...(tool.rest.aliases ?? [])].map(
      ({ path, deprecated }, i): RouteDoc => ({
        method: 'post',
        path,
        operationId: i === 0 ? tool.graphql.mutation : `${tool.graphql.mutation}Alias${i}`,
        tag: 'Tools',
        summary: i === 0 ? tool.title : `${tool.title} (alias of ${tool.rest.path})`,
        description: deprecated
          ? `${deprecationNotice(deprecated, tool.rest.path)}\n\n${toolDescription(tool)}`
          : toolDescription(tool),
        ...(deprecated ? { deprecated } : {}),
        body: { schema: ref(toolSchemaName(tool)), example: tool.example },
        idempotent: true,
        ok: { description: 'The run started.', content: { 'application/json': ref('RunStart') } },
        errors: errorsOf(
          JSON_BODY,
          tool.price.unitMicros > 0n ? { 402: ['insufficient_funds'] } : {},
          tool.plan ? { 403: ['plan_required'] } : {},
        ),
        extensions: {
          'x-price': {
            text: tool.price.text,
            unit: tool.price.unit,
            usdPerUnit: formatDollars(tool.price.unitMicros),
            plan: tool.plan ?? null,
          },
        },
      }),
    ),
  );
}

/** What a deprecated route's description says first: since when, until when, and what replaces it. */
const deprecationNotice = (d: Deprecation, replacement: string) =>
  `**Deprecated** since ${d.since}: served until at least ${d.sunset} (the Sunset header), with Deprecation, Sunset and Link headers on every answer. Use ${replacement}.`;

/** A tool's start body: its registry input plus `webhookUrl`, which every start accepts. */
function toolInputSchema(tool: ToolDefinition): JsonSchema {
  const schema = jsonSchemaOf(tool.input, 'input');
  const properties = {
    ...(schema.properties as Record<string, unknown>),
    webhookUrl: jsonSchemaOf(webhookUrl, 'input'),
  };
  return { ...schema, title: tool.title, properties };
}

// Every other REST route (src/rest/index.ts), in the order it registers them.

const runId = 'runId';

function runRoutes(limits: DocumentedLimits): RouteDoc[] {
  return [
    {
      method: 'get',
      path: `/api/v1/scrape/status/:${runId}`,
      operationId: 'getRunStatus',
      tag: 'Runs',
      summary: 'Status of a run',
      description:
        "The spec's Run object. With waitForFinish the request is held until the run ends or that many seconds pass (at most 60).",
      query: statusParams,
      ok: { description: 'The run.', content: { 'application/json': ref('RunView') } },
      errors: errorsOf({ 400: ['validation_failed'] }, RUN_LOOKUP),
    },
    {
      method: 'post',
      path: `/api/v1/scrape/cancel/:${runId}`,
      operationId: 'cancelRun',
      tag: 'Runs',
      summary: 'Cancel a run',
      description:
        'A waiting (READY) run ends ABORTED at once; a RUNNING one becomes ABORTING and ends ABORTED after the batch in hand, keeping and billing the rows stored so far. Cancelling twice is harmless.',
      ok: { description: 'The run after the request.', content: { 'application/json': ref('RunView') } },
      errors: errorsOf(RUN_LOOKUP, { 409: ['not_cancellable', 'run_finished'] }),
    },
    {
      method: 'get',
      path: `/api/downloads/:${runId}`,
      operationId: 'downloadResults',
      tag: 'Runs',
      summary: 'Download the results of a run',
      description:
        `The rows of a finished run (partial rows of ABORTED, FAILED and TIMED-OUT runs too), as a file: CSV with a header row of the tool's columns (default), a JSON array, or NDJSON; \`offset\` and \`limit\` take a page of rows. Results are kept ${limits.resultRetentionHours} hours after the run ends.\n\n` +
        `Without a key, a signed link opens the file: \`account\`, \`expires\` and \`signature\` as GraphQL's \`Run.downloadUrl\` gives them (for the console's session), valid ${DOWNLOAD_LINK_SECS / 60} minutes for that run and format; an altered or expired link answers 401.`,
      query: downloadParams.extend(signedLinkParams),
      security: [{ bearerAuth: [] }, { downloadLink: [] }],
      ok: {
        description: 'The file (Content-Disposition: attachment).',
        content: {
          'text/csv': z.string(),
          'application/json': s.resultRows,
          'application/x-ndjson': z.string().describe('One JSON row per line.'),
        },
        headers: {
          'Content-Disposition': {
            schema: { type: 'string' },
            description: 'attachment; filename="<fileName or tool-runId>.<format>"',
          },
        },
      },
      errors: errorsOf({ 400: ['validation_failed'] }, DOWNLOADABLE),
    },
    {
      method: 'post',
      path: '/api/v1/maps/run',
      operationId: 'startMapsRun',
      tag: 'Runs',
      summary: 'Start a map-listing scrape (overview route)',
      description: `The overview's short form of POST ${mapsTool.rest.path}: "dentists in Denver, CO" searches dentists in Denver.\n\n**Price:** ${mapsTool.price.text}.`,
      body: { schema: overviewMapsRequest, example: { query: 'dentists in Denver, CO', limit: 50 } },
      idempotent: true,
      ok: { description: 'The run started.', content: { 'application/json': s.overviewRunStart } },
      errors: errorsOf(JSON_BODY, { 402: ['insufficient_funds'] }),
    },
    {
      method: 'get',
      path: `/api/v1/runs/:${runId}`,
      operationId: 'getRun',
      tag: 'Runs',
      summary: 'Status of a run (overview route)',
      ok: { description: 'Status and items handled.', content: { 'application/json': s.overviewRun } },
      errors: RUN_LOOKUP,
    },
    {
      method: 'get',
      path: `/api/v1/runs/:${runId}/results`,
      operationId: 'getRunResults',
      tag: 'Runs',
      summary: 'Results of a run as JSON (overview route)',
      ok: { description: 'The rows.', content: { 'application/json': s.resultRows } },
      errors: DOWNLOADABLE,
    },
  ];
}

/** The daily allowances the OpenAPI texts state (the configured ones). */
export type Allowances = Pick<Config, 'dailyDatabaseRecords' | 'dailyEnrichmentMatches'>;

/** Every configured limit the OpenAPI texts state: the daily allowances, the rate limit, the run queue and result retention. */
export type DocumentedLimits = Allowances &
  Pick<Config, 'rateLimitPerMinute' | 'maxRunningRuns' | 'resultRetentionHours'>;

const dailyOf = (endpoint: EndpointDefinition, allowances: Allowances) =>
  (endpoint.allowance === 'enrichment'
    ? allowances.dailyEnrichmentMatches
    : allowances.dailyDatabaseRecords
  ).toLocaleString('en-US');

/** An endpoint's description: its own text, then the price (its plan gate) and limits (its daily allowance) by family. */
function endpointDescription(endpoint: EndpointDefinition, allowances: Allowances): string | undefined {
  const price = endpoint.plan ? `**Price:** included with ${planText(endpoint.plan)}.` : undefined;
  if (endpoint.tag === 'Database') {
    return [
      endpoint.description,
      '',
      `${price} At most 100 records per request (limit, default 50) and ${dailyOf(endpoint, allowances)} per UTC day.`,
      '',
      'Page with page (from 1) or with after (0 first, then pagination.next_after until it is null). List parameters may be repeated, sent with "[]", or comma-separated.',
    ].join('\n');
  }
  if (endpoint.tag === 'Enrichment') {
    return `${endpoint.description}\n\n${price} Up to 1,000 rows per request and ${dailyOf(endpoint, allowances)} matches per UTC day; previews do not count.`;
  }
  return endpoint.description;
}

/** The routes of the declared endpoints (src/endpoints), in their order. */
function endpointRoutes(allowances: Allowances): RouteDoc[] {
  return (ENDPOINTS as readonly EndpointDefinition[]).flatMap((endpoint): RouteDoc[] => {
    const { rest } = endpoint;
    const gates = errorsOf(
      endpoint.errors,
      endpoint.plan ? { 403: ['plan_required'] } : {},
      // A key created in the console acts with its creator's role (src/accounts/roles.ts).
      endpoint.permission ? { 403: ['role_required'] } : {},
      endpoint.allowance ? { 429: ['daily_limit_reached'] } : {},
    );
    const description = endpointDescription(endpoint, allowances);
    const both = rest.methods.includes('get') && rest.methods.includes('post');
    return rest.methods.map((method): RouteDoc => {
      const withBody = method === 'post' || (method === 'get' && rest.bodyOnGet === true);
      // A GET that takes the POST's body is the second form; a GET of query parameters is the first.
      const second = both && (rest.bodyOnGet ? method === 'get' : method === 'post');
      return {
        method,
        path: rest.path,
        operationId: second ? `${endpoint.name}${rest.bodyOnGet ? 'WithGet' : 'WithBody'}` : endpoint.name,
        tag: endpoint.tag,
        summary: second
          ? `${endpoint.title} (${rest.bodyOnGet ? 'GET with the same JSON body' : 'parameters as a JSON body'})`
          : endpoint.title,
        ...(description ? { description } : {}),
        ...(rest.deprecated ? { deprecated: rest.deprecated } : {}),
        ...(method === 'get' && !withBody && endpoint.request ? { query: endpoint.request } : {}),
        ...(withBody && endpoint.request
          ? { body: { schema: endpoint.request, ...(rest.example !== undefined ? { example: rest.example } : {}) } }
          : {}),
        ...(rest.idempotent ? { idempotent: true } : {}),
        ok: {
          ...(rest.status && rest.status !== 200 ? { status: rest.status } : {}),
          description: rest.ok,
          ...(endpoint.response ? { content: { 'application/json': endpoint.response } } : {}),
        },
        errors: withBody
          ? errorsOf(JSON_BODY, gates)
          : both
            ? errorsOf(gates, { 414: ['query_string_too_long'] })
            : gates,
      };
    });
  });
}

function metaRoutes(): RouteDoc[] {
  return [
    {
      method: 'get',
      path: OPENAPI_PATH,
      operationId: 'getOpenApiDocument',
      tag: 'Meta',
      summary: 'This document',
      description: 'Public: no API key needed.',
      public: true,
      ok: { description: 'OpenAPI 3.1 document.', content: { 'application/json': z.record(z.string(), z.unknown()) } },
      errors: {},
    },
  ];
}

/** Every REST route, documented; test/faces/rest/openapi.test.ts compares it with the routes the server registers. */
export function restRouteDocs(limits: DocumentedLimits = loadConfig({})): RouteDoc[] {
  return [...toolRoutes(), ...runRoutes(limits), ...endpointRoutes(limits), ...metaRoutes()];
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
              ...(codes.size === 1 ? { example: errorExample(status, [...codes][0]!, limits) } : {}),
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
  insufficient_funds: `The wallet cannot pay for one ${mapsTool.price.unit} (${formatDollars(mapsTool.price.unitMicros)} USD). Buy credits with POST /api/v1/buy-credits.`,
  query_timeout: 'The search took longer than 10 s. Narrow it and retry.',
  database_unavailable: 'The database is unavailable for a moment (a restart or a failover). Retry in 5 s.',
  daily_limit_reached: `The daily allowance of ${limits.dailyDatabaseRecords.toLocaleString('en-US')} database records is used up; it resets at midnight UTC, in 3600 s.`,
});

const errorExample = (status: Status, code: string, limits: DocumentedLimits) => ({
  error: { code, message: errorMessages(limits)[code] ?? STATUS_TEXT[status] },
});

function operation(route: RouteDoc, limits: DocumentedLimits) {
  const pathParams = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({
    name: m[1]!,
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

const description = (limits: DocumentedLimits) => `Lead data extraction and enrichment over REST.

Send every request with \`Authorization: Bearer <API_KEY>\` (the same key works for GraphQL at /graphql and for the MCP server at /mcp).
Tools start runs: POST a tool's route, poll GET /api/v1/scrape/status/{runId} until \`status\` is SUCCEEDED, then download GET /api/downloads/{runId}.

Every 4xx/5xx answers \`{"error": {"code", "message", "details"?}}\` (components.schemas.Error); \`code\` is stable and \`details\` is an array of \`{path, message}\`.
A field a route does not declare, in its body or query string, is refused with 400 \`validation_failed\` naming the closest known field; nothing runs.
A deprecated operation (\`deprecated: true\`) answers Deprecation, Sunset and Link headers until its sunset (docs/versioning.md).
Limits: ${limits.rateLimitPerMinute} requests per minute per API key (RateLimit headers; 429 \`rate_limited\` with Retry-After), ${limits.maxRunningRuns} running runs per account (more wait as READY), results kept ${limits.resultRetentionHours} hours.
POSTs that start runs or buy credits accept an \`Idempotency-Key\` header (kept 24 hours): a replay returns the first answer.`;

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
    const item = (paths[openApiPath(route.path)] ??= {});
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
        downloadLink: {
          type: 'apiKey',
          in: 'query',
          name: 'signature',
          description:
            "A signed link to one run's file (GET /api/downloads/{runId} only): `signature` with the `account` and `expires` it signs, as `Run.downloadUrl` gives them.",
        },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Any 1 to 255 visible ASCII characters, kept 24 hours per account: a replay returns the first answer; the same key with another body answers 422.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
      schemas: {
        Error: jsonSchemaOf(s.errorBody, 'output'),
        RunView: jsonSchemaOf(s.runView, 'output'),
        RunStart: jsonSchemaOf(s.runStart, 'output'),
        ...Object.fromEntries(routed.map((tool) => [toolSchemaName(tool), toolInputSchema(tool)])),
      },
    },
  };
}

/** GET /api/v1/openapi.json, public like any API contract; built once per process, stating its core's configured limits. */
export async function openApiRoute(app: FastifyInstance, { core }: { core: Core }) {
  let document: OpenApiDocument | undefined;
  app.get(OPENAPI_PATH, async (_, reply) => {
    document ??= buildOpenApiDocument({ serverUrl: core.config.publicUrl, limits: core.config });
    return reply.header('cache-control', 'public, max-age=300').send(document);
  });
}
