import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../core.ts';
import { callEndpoint } from '../http/pipeline.ts';
import { respondOf, type EndpointDefinition, type RestMethod, type RestRequest } from '../endpoints/define.ts';
import { ENDPOINTS } from '../endpoints/index.ts';
import { AppError } from '../shared/errors.ts';

const METHOD = { get: 'GET', post: 'POST', delete: 'DELETE' } as const;

/** The handler's input: the declaration's own reading, or the query of a GET and the body of a POST ({} when absent). */
function inputOf(endpoint: EndpointDefinition, request: RestRequest): unknown {
  if (endpoint.rest.input) return endpoint.rest.input(request);
  return request.method === 'GET' ? request.query : (request.body ?? {});
}

/** One route per method of every declared endpoint (the caller is admitted by the REST onRequest hook). */
export async function endpointRoutes(app: FastifyInstance, { core }: { core: Core }) {
  for (const endpoint of ENDPOINTS as readonly EndpointDefinition[]) {
    const { rest } = endpoint;
    const handle = (method: RestMethod) => async (request: FastifyRequest, reply: FastifyReply) => {
      const restRequest: RestRequest = { method: METHOD[method], params: request.params as Record<string, string>, query: request.query, body: request.body };
      const key = request.headers['idempotency-key'];
      const { body, replayed } = await callEndpoint(core, request.principal, endpoint, inputOf(endpoint, restRequest), {
        idempotency: { key: Array.isArray(key) ? key[0] : key, scope: `POST ${rest.path}`, request: request.body ?? null },
        shape: (result) => respondOf(endpoint, result),
      });
      if (replayed) reply.header('Idempotent-Replayed', 'true');
      const status = rest.status ?? 200;
      return status === 204 ? reply.status(204).send() : reply.status(status).send(body);
    };
    for (const method of rest.methods) app.route({ method: METHOD[method], url: rest.path, handler: handle(method) });
    if (rest.refuseGet) {
      const message = rest.refuseGet;
      app.get(rest.path, async (_, reply) => {
        reply.header('Allow', 'POST');
        throw new AppError(405, 'method_not_allowed', message);
      });
    }
  }
}
