import { z } from 'zod';
import { examplesOverride } from '../shared/field-meta.ts';
import { CONTENT_TYPES, datasetExportParams, downloadParams } from '../runs/exports.ts';
import { DOWNLOAD_LINK_SECS } from '../runs/download-links.ts';
import { DOWNLOAD_AUDIT_ROWS } from '../audit/actions.ts';
import { auditExportParams } from '../audit/export.ts';
import { formatDollars } from '../billing/money.ts';
import { PLAN_PRICE_USD } from '../billing/plans.ts';
import { loadConfig, type Config } from '../config.ts';
import type { EndpointDefinition } from '../endpoints/define.ts';
import { ENDPOINTS } from '../endpoints/index.ts';
import { TOOLS } from '../tools/index.ts';
import { mapsTool, overviewMapsRequest } from '../tools/maps.ts';
import type { ToolDefinition } from '../tools/types.ts';
import type { Deprecation } from '../shared/deprecation.ts';
import { startParams, statusParams } from './index.ts';
import { OPERATOR_ROUTES } from './operator.ts';
import * as s from './schemas.ts';

/**
 * Every REST route as the OpenAPI document states it: what it takes, answers and refuses, and its
 * description, derived from the tool registry, the endpoint declarations and the configured limits.
 * openapi.ts renders them into the document.
 */

export const OPENAPI_PATH = '/api/v1/openapi.json';

export type JsonSchema = Record<string, unknown>;
export type Status = 400 | 401 | 402 | 403 | 404 | 405 | 409 | 410 | 413 | 414 | 415 | 422 | 429 | 500 | 503;

/** A schema by value (zod), a reference to `components.schemas`, or one of several references. */
export type SchemaRef = z.ZodType | { $ref: string } | { oneOf: { $ref: string }[] };

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
    override: examplesOverride,
  }) as JsonSchema;
  return rest;
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * The query parameters a signed download link's `signature` (the `downloadLink` scheme) signs with the run and format.
 */
const signedLinkParams = {
  account: z.string().optional().describe('Signed link (with `signature`): the account the link was made for.'),
  expires: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Signed link (with `signature`): when it stops working, in Unix seconds.'),
  by: z.string().optional().describe('Signed link (with `signature`): who asked for it (the audit log names them).'),
};
export const toolSchemaName = (tool: ToolDefinition) => tool.graphql.inputType;
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
export const IDEMPOTENT: RouteDoc['errors'] = { 400: ['validation_failed'], 422: ['idempotency_key_reused'] };
/** A download's answer: the rows as CSV, JSON, NDJSON or XLSX, an attachment named `<name>.<format>`. */
const fileAnswer = (name: string) => ({
  description: 'The file (Content-Disposition: attachment).',
  content: {
    'text/csv': z.string(),
    'application/json': s.resultRows,
    'application/x-ndjson': z.string().describe('One JSON row per line.'),
    [CONTENT_TYPES.xlsx]: z.string().describe('An Excel workbook (binary): one sheet, the CSV’s header row and cells.'),
  },
  headers: {
    'Content-Disposition': { schema: { type: 'string' }, description: `attachment; filename="${name}.<format>"` },
  },
});

const RUN_LOOKUP: RouteDoc['errors'] = { 404: ['not_found'] };
const DOWNLOADABLE: RouteDoc['errors'] = { 404: ['not_found'], 409: ['run_not_finished'], 410: ['results_expired'] };

// The tools of the registry: one start route each (plus the spec's aliases), priced in the description.

function toolDescription(tool: ToolDefinition): string {
  const cancellable = 'yes (POST /api/v1/scrape/cancel/{runId}); rows stored so far are kept and billed';
  return [
    tool.description,
    '',
    `**Price:** ${tool.price.text}.${tool.plan ? ` Needs ${planText(tool.plan)}.` : ''}`,
    '',
    `**Cancellable:** ${tool.cancellable ? cancellable : 'no'}.`,
    '',
    ...(tool.notes?.length ? [...tool.notes.map((n) => `- ${n}`), ''] : []),
    'The run starts at once: poll GET /api/v1/scrape/status/{runId} until it ends, ' +
      'then download GET /api/downloads/{runId}. ' +
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
        query: startParams,
        body: { schema: ref(toolSchemaName(tool)), example: tool.example },
        idempotent: true,
        ok: {
          description: 'The run started; with dryRun=true, its quote (nothing started, the Idempotency-Key unused).',
          content: { 'application/json': { oneOf: [ref('RunStart'), ref('StartQuote')] } },
        },
        errors: errorsOf(
          JSON_BODY,
          { 400: ['cost_limit_exceeded'] },
          tool.price.unitMicros > 0n ? { 402: ['insufficient_funds'] } : {},
          tool.plan ? { 403: ['plan_required'] } : {},
          tool.permissibleUse ? { 403: ['permissible_use_required'] } : {},
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
  `**Deprecated** since ${d.since}: served until at least ${d.sunset} (the Sunset header), ` +
  `with Deprecation, Sunset and Link headers on every answer. Use ${replacement}.`;

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
        "The spec's Run object. " +
        'With waitForFinish the request is held until the run ends or that many seconds pass (at most 60).',
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
        'A waiting (READY) run ends ABORTED at once; a RUNNING one becomes ABORTING and ends ABORTED ' +
        'after the batch in hand, keeping and billing the rows stored so far. Cancelling twice is harmless.',
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
        'The rows of a finished run (partial rows of ABORTED, FAILED and TIMED-OUT runs too), as a file: ' +
        "CSV with a header row of the tool's columns (default), a JSON array, or NDJSON; " +
        `\`offset\` and \`limit\` take a page of rows. ` +
        `Results are kept ${limits.resultRetentionHours} hours after the run ends.\n\n` +
        `Without a key, a signed link opens the file: \`account\`, \`expires\` and \`signature\` ` +
        `as GraphQL's \`Run.downloadUrl\` gives them (for the console's session), ` +
        `valid ${DOWNLOAD_LINK_SECS / 60} minutes for that run and format; an altered or expired link answers 401. ` +
        'The same route serves the signed links of a pipeline’s table (`plp_…`), of a dataset (`ds_…`) and of the ' +
        'audit log (`audit-log`, GraphQL’s `exportAuditLog`). ' +
        `A file of more than ${DOWNLOAD_AUDIT_ROWS.toLocaleString('en-US')} rows is recorded in the audit log.`,
      query: downloadParams.extend(signedLinkParams),
      security: [{ bearerAuth: [] }, { downloadLink: [] }],
      ok: fileAnswer('<fileName or tool-runId>'),
      errors: errorsOf({ 400: ['validation_failed'] }, DOWNLOADABLE),
    },
    {
      method: 'get',
      path: '/api/v1/datasets/:id/export',
      operationId: 'exportDataset',
      tag: 'Datasets',
      summary: 'Download a dataset',
      description:
        "Every row a dataset holds now, oldest delivery first, as a file: CSV with a header row of its tool's " +
        'columns (default), a JSON array, or NDJSON. A row goes with its run’s rows ' +
        `(${limits.resultRetentionHours} hours after the run ended).`,
      query: datasetExportParams,
      ok: fileAnswer('<name>'),
      errors: errorsOf({ 400: ['validation_failed'], 404: ['dataset_not_found'] }),
    },
    {
      method: 'get',
      path: '/api/v1/pipelines/:id/download',
      operationId: 'downloadPipeline',
      tag: 'Workflows',
      summary: 'Download a pipeline’s table',
      description:
        'Once the pipeline has ended: each row of its first step joined with what the later steps found for it ' +
        '(one row per match, as a left join; a row with none keeps its own cells), every step’s columns named ' +
        'after its tool (`maps.name`, `website-finder.email`, `email-validator.status`). CSV (default), a JSON ' +
        `array, or NDJSON; kept as long as its first step's rows (${limits.resultRetentionHours} hours).`,
      query: datasetExportParams,
      ok: fileAnswer('pipeline-<id>'),
      errors: errorsOf(
        { 400: ['validation_failed'], 404: ['pipeline_not_found'], 409: ['run_not_finished'] },
        { 410: ['results_expired'] },
      ),
    },
    {
      method: 'get',
      path: '/api/v1/audit-events/export',
      operationId: 'exportAuditEvents',
      tag: 'Audit',
      summary: 'Export the audit log',
      description:
        'The events GET /api/v1/audit-events lists, by the same filter, newest first, as one file: CSV with a ' +
        'header row (default), a JSON array, or NDJSON. The export is itself an event (`audit_log.exported`), ' +
        'recorded before the file is sent; the file holds the matching events before it. Owners and admins.',
      query: auditExportParams,
      ok: fileAnswer('audit-log-<accountId>'),
      errors: { 400: ['validation_failed'], 403: ['role_required'] },
    },
    {
      method: 'post',
      path: '/api/v1/maps/run',
      operationId: 'startMapsRun',
      tag: 'Runs',
      summary: 'Start a map-listing scrape (overview route)',
      description:
        `The overview's short form of POST ${mapsTool.rest.path}: "dentists in Denver, ` +
        `CO" searches dentists in Denver.\n\n**Price:** ${mapsTool.price.text}.`,
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

/**
 * Every configured limit the OpenAPI texts state: the daily allowances,
 * the rate limit, the run queue and result retention.
 */
export type DocumentedLimits = Allowances &
  Pick<Config, 'rateLimitPerMinute' | 'maxRunningRuns' | 'resultRetentionHours'>;

const dailyOf = (endpoint: EndpointDefinition, allowances: Allowances) =>
  (endpoint.allowance === 'enrichment'
    ? allowances.dailyEnrichmentMatches
    : allowances.dailyDatabaseRecords
  ).toLocaleString('en-US');

/**
 * An endpoint's description: its own text, then the price (its plan gate) and limits (its daily allowance) by family.
 */
function endpointDescription(endpoint: EndpointDefinition, allowances: Allowances): string | undefined {
  const price = endpoint.plan ? `**Price:** included with ${planText(endpoint.plan)}.` : undefined;
  if (endpoint.tag === 'Database') {
    // A search pages (GET or POST); a POST-only call (the reveal) names its records.
    const paged = endpoint.rest.methods.includes('get');
    const daily = endpoint.allowance
      ? ` and ${dailyOf(endpoint, allowances)} per UTC day`
      : '; nothing counts against the daily allowance';
    return [
      endpoint.description,
      '',
      `${price} At most 100 records per request${paged ? ' (limit, default 50)' : ''}${daily}.`,
      ...(paged
        ? [
            '',
            'Page with page (from 1) or with after (0 first, then pagination.next_after until it is null). ' +
              'List parameters may be repeated, sent with "[]", or comma-separated.',
          ]
        : []),
    ].join('\n');
  }
  if (endpoint.tag === 'Enrichment') {
    return (
      `${endpoint.description}\n\n${price} Up to 1,000 rows per request and ` +
      `${dailyOf(endpoint, allowances)} matches per UTC day; previews do not count.`
    );
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

/** The operator API (src/rest/operator.ts), from its declarations: the operator token, not an API key. */
const operatorRoutes = (): RouteDoc[] =>
  OPERATOR_ROUTES.map(({ handle: _, ...route }) => ({
    ...route,
    errors: errorsOf(route.body ? JSON_BODY : {}, route.errors, { 404: ['not_found'] }),
  }));

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
  return [...toolRoutes(), ...runRoutes(limits), ...endpointRoutes(limits), ...operatorRoutes(), ...metaRoutes()];
}
