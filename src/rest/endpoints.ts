import {
  errorCodes,
  type FastifyBodyParser,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Core } from '../core.ts';
import { callEndpoint } from '../http/pipeline.ts';
import { respondOf, type EndpointDefinition, type RestMethod, type RestRequest } from '../endpoints/define.ts';
import { ENDPOINTS } from '../endpoints/index.ts';
import { assertKnownFields, NO_FIELDS } from '../shared/fields.ts';

const METHOD = { get: 'GET', post: 'POST', delete: 'DELETE' } as const;

/**
 * Whether a method of the endpoint takes its fields as a JSON body
 * (a POST, or a GET that takes one); else as the query string.
 */
const takesBody = (endpoint: EndpointDefinition, method: RestMethod) =>
  method === 'post' || (method === 'get' && endpoint.rest.bodyOnGet === true);

/**
 * The handler's input: the declaration's own reading, or the query of a GET and the body of a POST ({} when absent).
 */
function inputOf(endpoint: EndpointDefinition, request: RestRequest): unknown {
  if (endpoint.rest.input) return endpoint.rest.input(request);
  return request.method === 'GET' ? request.query : (request.body ?? {});
}

/**
 * The JSON body of a GET, read as Fastify reads a POST's (the same size limit, media type and parser,
 * so the same refusals): Fastify reads no GET body itself. No body is no input, like a POST without one.
 */
async function bodyOfGet(request: FastifyRequest, parseJson: FastifyBodyParser<string>): Promise<unknown> {
  const limit = request.server.initialConfig.bodyLimit ?? 1024 * 1024;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? ''))
    throw new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE();
  return new Promise((resolve, reject) => {
    void parseJson(request, Buffer.concat(chunks).toString('utf8'), (err, body) => (err ? reject(err) : resolve(body)));
  });
}

/** One route per method of every declared endpoint (the caller is admitted by the REST onRequest hook). */
export async function endpointRoutes(app: FastifyInstance, { core }: { core: Core }) {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  for (const endpoint of ENDPOINTS as readonly EndpointDefinition[]) {
    const { rest } = endpoint;
    const handle = (method: RestMethod) => async (request: FastifyRequest, reply: FastifyReply) => {
      const body = method === 'get' && rest.bodyOnGet ? await bodyOfGet(request, parseJson) : request.body;
      const restRequest: RestRequest = {
        method: METHOD[method],
        params: request.params as Record<string, string>,
        query: request.query,
        body,
      };
      // The unknown-field rule, from the declaration (the REST hook checks query strings, from the route's `query`).
      if (takesBody(endpoint, method)) assertKnownFields(endpoint.request ?? NO_FIELDS, body);
      const key = request.headers['idempotency-key'];
      const answer = await callEndpoint(core, request.principal, endpoint, inputOf(endpoint, restRequest), {
        idempotency: { key: Array.isArray(key) ? key[0] : key, scope: `POST ${rest.path}`, request: body ?? null },
        shape: (result) => respondOf(endpoint, result),
      });
      if (answer.replayed) reply.header('Idempotent-Replayed', 'true');
      const status = rest.status ?? 200;
      return status === 204 ? reply.status(204).send() : reply.status(status).send(answer.body);
    };
    for (const method of rest.methods) {
      const query = takesBody(endpoint, method) ? NO_FIELDS : (endpoint.request ?? NO_FIELDS);
      app.route({
        method: METHOD[method],
        url: rest.path,
        config: { deprecated: rest.deprecated, query },
        handler: handle(method),
      });
    }
  }
}
