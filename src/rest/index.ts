import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Transaction } from '../../db/client.ts';
import type { Core } from '../core.ts';
import type { Principal } from '../accounts/accounts.ts';
import type { Deprecation } from '../shared/deprecation.ts';
import { AppError, fromZodError } from '../shared/errors.ts';
import { datasetExportParams, downloadParams, type ExportFormat } from '../runs/exports.ts';
import { verifyDownload } from '../runs/download-links.ts';
import { type Downloader, openDatasetFile, openFile, openPipelineFile, openRunFile } from '../runs/downloads.ts';
import { actorOfId, byCaller } from '../audit/audit.ts';
import { AUDIT_LOG_FILE, auditExportParams, openAuditExport, openSignedAuditExport } from '../audit/export.ts';
import { getInstallationSecret } from '../accounts/installation.ts';
import { idempotentWrite } from '../accounts/idempotency.ts';
import { admit, clientAddress, deprecationHeaders } from '../http/pipeline.ts';
import { endpointRoutes } from './endpoints.ts';
import { restRunView } from '../http/views.ts';
import { getRun } from '../runs/read.ts';
import { prepareStart, startAnswerOf } from '../runs/start.ts';
import { costLimit, MAX_COST_DESCRIPTION, MAX_COST_USD, quoteStart } from '../runs/quote.ts';
import { MAX_WAIT_FOR_FINISH_SECS, runStatus } from '../runs/follow.ts';
import { cancelRun } from '../runs/engine/index.ts';
import { param, parseParams } from '../shared/params.ts';
import { assertKnownFields, NO_FIELDS } from '../shared/fields.ts';
import { TOOLS } from '../tools/index.ts';
import { overviewMapsRequest } from '../tools/maps.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** The route is on its way out (its declaration's `deprecated`). */
    deprecated?: Deprecation;
    /** The query parameters the route takes (none when absent): any other is refused. */
    query?: z.ZodType;
  }
}

type RunParams = { Params: { runId: string } };

export const statusParams = z
  .object({
    waitForFinish: param
      .num(0, MAX_WAIT_FOR_FINISH_SECS)
      .describe('Seconds to hold the request until the run ends; at most 60.'),
  })
  .strict();

/** What a tool's start route takes in its query beside the input in its body. */
export const startParams = z
  .object({
    maxCostUsd: param.num(MAX_COST_USD.min, MAX_COST_USD.max, false).describe(MAX_COST_DESCRIPTION),
    dryRun: param.bool.describe(
      'true: answers the quote (what the start would hold, whether the wallet covers it); nothing starts.',
    ),
  })
  .strict();

/** The download route's query as the unknown-field rule reads it: the download's parameters and a signed link's. */
const downloadQuery = downloadParams
  .extend({ account: z.string(), expires: z.string(), signature: z.string(), by: z.string() })
  .partial()
  .strict();

/** Aborts when the response is done or the client goes away (a waiting request stops waiting). */
function closedSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => controller.abort());
  return controller.signal;
}

/**
 * Arms `reply` to stream a run's file. The status and headers go out with the first bytes, so a
 * failure after them (the database lost part-way) cannot become an error status: the connection is
 * broken instead, so the client sees an incomplete transfer rather than a cleanly ended file, and the
 * failure is logged.
 */
function abortOnFailure(
  request: FastifyRequest,
  reply: FastifyReply,
  runId: string,
  body: NodeJS.ReadableStream,
): FastifyReply {
  body.once('error', (err) => {
    request.log.error(
      { err, reqId: request.id, runId, url: request.url.split('?')[0] },
      'download failed part-way; connection aborted',
    );
    reply.raw.destroy();
  });
  return reply;
}

/** A request to the download route carrying a signed link's `signature` instead of a key. */
const isSignedDownload = (request: FastifyRequest) =>
  request.url.startsWith('/api/downloads/') &&
  !request.headers.authorization &&
  typeof (request.query as Record<string, unknown> | undefined)?.signature === 'string';

/**
 * Who a signed download link was made for (its account, and who asked for it); 401 when it is not one
 * this installation signed or has expired.
 */
async function signedDownloader(core: Core, request: FastifyRequest, runId: string, format: ExportFormat) {
  const { account, expires, signature, by } = request.query as Record<string, unknown>;
  const signer = typeof by === 'string' ? by : undefined;
  const link = { accountId: String(account ?? ''), runId, format, expires: Number(expires), by: signer };
  if (!verifyDownload(await getInstallationSecret(core.db), link, String(signature), core.clock())) {
    throw new AppError(
      401,
      'unauthenticated',
      'This download link is invalid or has expired; ask for a new one (Run.downloadUrl).',
    );
  }
  return { accountId: link.accountId, actor: actorOfId(signer), client: clientOf(core, request) };
}

/** Where a request came from, for the audit log (a signed link's request is not admitted, so has no principal). */
const clientOf = (core: Core, request: FastifyRequest) => ({
  ip: clientAddress(core.config, request.raw),
  userAgent: request.headers['user-agent'] ?? null,
});

/** The spec's limit on query strings; longer ones must be sent as a POST body. */
export const MAX_QUERY_STRING_BYTES = 16 * 1024;

/** The REST compatibility layer: decode, call a service, encode. */
export async function restRoutes(app: FastifyInstance, { core }: { core: Core }) {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request, reply) => {
    // First, so every answer of a deprecated route says so, refusals included.
    const { deprecated } = request.routeOptions.config;
    if (deprecated) reply.headers(deprecationHeaders(deprecated));
    const query = request.url.indexOf('?');
    if (query >= 0 && Buffer.byteLength(request.url) - query - 1 > MAX_QUERY_STRING_BYTES) {
      throw new AppError(
        414,
        'query_string_too_long',
        'The query string is over 16 KB. Send the same parameters as a JSON body with POST to the same path.',
      );
    }
    // A signed download link (Run.downloadUrl) stands in for a key on the download route only.
    if (request.method === 'GET' && isSignedDownload(request)) return;
    // Before the body is read: a request without a valid key costs
    // no parsing, and its failure counts against its address.
    request.principal = await admit(
      core,
      request.headers.authorization,
      (headers) => reply.headers(headers),
      clientAddress(core.config, request.raw),
      undefined,
      { userAgent: request.headers['user-agent'] },
    );
    // The unknown-field rule for query strings (bodies are checked by what reads them); list names may end in "[]".
    if (request.routeOptions.url !== undefined)
      assertKnownFields(request.routeOptions.config.query ?? NO_FIELDS, request.query, /\[\]$/);
  });

  /**
   * A POST that honours Idempotency-Key (idempotentWrite): `prepare` checks the request and returns its
   * write, `answer` makes the body of its result.
   */
  const idempotent = async <W, A>(
    request: FastifyRequest,
    reply: FastifyReply,
    prepare: () => (tx: Transaction) => Promise<W>,
    answer: (written: W) => A,
  ) => {
    const key = request.headers['idempotency-key'];
    const result = await idempotentWrite(
      core,
      {
        principal: request.principal,
        key: Array.isArray(key) ? key[0] : key,
        scope: `POST ${request.routeOptions.url}`,
        request: request.body ?? null,
      },
      prepare,
      answer,
    );
    if (result.replayed) reply.header('Idempotent-Replayed', 'true');
    return reply.status(result.status).send(result.body);
  };

  for (const tool of TOOLS) {
    if (tool.linkedOnly) continue;
    for (const { path, deprecated } of [
      { path: tool.rest.path, deprecated: undefined },
      ...(tool.rest.aliases ?? []),
    ]) {
      app.post(path, { config: { deprecated, query: startParams } }, async (request, reply) => {
        const { maxCostUsd, dryRun } = parseParams(startParams, request.query);
        const limits = costLimit(maxCostUsd);
        if (dryRun) return reply.send(await quoteStart(core, request.principal, tool.name, request.body, limits));
        return idempotent(
          request,
          reply,
          () => prepareStart(core, request.principal, tool.name, request.body, limits),
          startAnswerOf,
        );
      });
    }
  }

  app.get<RunParams>('/api/v1/scrape/status/:runId', { config: { query: statusParams } }, async (request, reply) => {
    const { waitForFinish } = parseParams(statusParams, request.query);
    return restRunView(
      core.config.publicUrl,
      await runStatus(
        core,
        request.principal,
        request.params.runId,
        waitForFinish,
        waitForFinish ? closedSignal(reply) : undefined,
      ),
    );
  });

  app.post<RunParams>('/api/v1/scrape/cancel/:runId', async (request) =>
    restRunView(core.config.publicUrl, await cancelRun(core, request.principal, request.params.runId)),
  );

  app.get<RunParams>('/api/downloads/:runId', { config: { query: downloadQuery } }, async (request, reply) => {
    const id = request.params.runId;
    // The audit log's export link (GraphQL's exportAuditLog) signs its filter and its signer besides.
    if (id === AUDIT_LOG_FILE && isSignedDownload(request)) {
      const query = request.query as Record<string, unknown>;
      return sendFile(request, reply, { id, file: await openSignedAuditExport(core, query, clientOf(core, request)) });
    }
    const { format, offset, limit } = parseParams(downloadParams, request.query);
    const who: Downloader = isSignedDownload(request)
      ? await signedDownloader(core, request, id, format)
      : byCaller(request.principal);
    // The same route serves a pipeline's joined table and a dataset's rows (their signed links too).
    return sendFile(request, reply, await openFile(core, who, id, format, { offset, limit }));
  });

  app.get<{ Params: { id: string } }>(
    '/api/v1/datasets/:id/export',
    { config: { query: datasetExportParams } },
    async (request, reply) => {
      const { format } = parseParams(datasetExportParams, request.query);
      const who = byCaller(request.principal);
      return sendFile(request, reply, await openDatasetFile(core, who, request.params.id, format));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/pipelines/:id/download',
    { config: { query: datasetExportParams } },
    async (request, reply) => {
      const { format } = parseParams(datasetExportParams, request.query);
      const who = byCaller(request.principal);
      return sendFile(request, reply, await openPipelineFile(core, who, request.params.id, format));
    },
  );

  app.get('/api/v1/audit-events/export', { config: { query: auditExportParams } }, async (request, reply) =>
    sendFile(request, reply, {
      id: AUDIT_LOG_FILE,
      file: await openAuditExport(core, request.principal, request.query),
    }),
  );

  function sendFile(
    request: FastifyRequest,
    reply: FastifyReply,
    { id, file }: { id: string; file: { body: NodeJS.ReadableStream; contentType: string; fileName: string } },
  ) {
    return abortOnFailure(request, reply, id, file.body)
      .header('content-type', file.contentType)
      .header('content-disposition', `attachment; filename="${file.fileName}"`)
      .send(file.body);
  }

  // The overview's alternative routes.
  app.post('/api/v1/maps/run', (request, reply) =>
    idempotent(
      request,
      reply,
      () => {
        assertKnownFields(overviewMapsRequest, request.body);
        const parsed = overviewMapsRequest.safeParse(request.body ?? {});
        if (!parsed.success) throw fromZodError(parsed.error);
        return prepareStart(core, request.principal, 'maps', parsed.data);
      },
      ({ run }) => ({ runId: run.id, status: run.status }),
    ),
  );

  app.get<RunParams>('/api/v1/runs/:runId', async (request) => {
    const run = await getRun(core.db, request.principal.accountId, request.params.runId);
    return { status: run.status, handled: run.handled };
  });

  app.get<RunParams>('/api/v1/runs/:runId/results', async (request, reply) => {
    const { id, file } = await openRunFile(core, byCaller(request.principal), request.params.runId, 'json');
    return abortOnFailure(request, reply, id, file.body).header('content-type', file.contentType).send(file.body);
  });

  // The declared endpoints: database APIs, enrichment, wallet, credits, webhooks, lead scraper mode.
  await app.register(endpointRoutes, { core });
}
