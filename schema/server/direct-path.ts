import type { FastifyReply, FastifyRequest } from 'fastify';
import { getOperationAST, type DocumentNode, type ExecutionResult, type GraphQLError } from 'graphql';
import { processRegularResult } from 'graphql-yoga';
import type { Core } from '../../src/core.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import { coded, maskError } from './errors.ts';
import type { RequestParams, Yoga } from './types.ts';

/**
 * A direct answer path beside yoga (answerDirectly, below): the commonest request without yoga's Fetch round trip.
 * docs/benchmarks.md `graphql-run`, 2026-11-26: GraphQL `run(id)` 1,657 req/s vs the REST status poll 1,942 req/s,
 * 0.85× (goal ≥ 0.7×).
 */

/** POST body keys yoga takes (useCheckGraphQLQueryParams); any other key is yoga's to refuse. */
const PARAM_KEYS = new Set(['query', 'variables', 'operationName', 'extensions']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body as GraphQL parameters yoga would take without a word, or undefined for yoga to judge. */
function plainParams(body: unknown): RequestParams | undefined {
  if (!isObject(body)) return undefined;
  for (const key in body) if (body[key] != null && !PARAM_KEYS.has(key)) return undefined;
  const { query, variables, operationName, extensions } = body;
  if (query != null && typeof query !== 'string') return undefined;
  if (variables != null && !isObject(variables)) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (extensions != null && !isObject(extensions)) return undefined;
  return body as RequestParams;
}

const REGULAR_MEDIA_TYPES = ['application/graphql-response+json', 'application/json'] as const;

/**
 * The media type yoga answers a single result in for this Accept header (its useResultProcessors: the
 * last match wins, and the regular processor comes last), or undefined when another processor (server-
 * sent events, multipart) or none would take it.
 */
function regularMediaType(accept: string | undefined): (typeof REGULAR_MEDIA_TYPES)[number] | undefined {
  // A client sends the same Accept header on every request: its answer is remembered (a few kinds).
  const key = accept ?? '';
  if (mediaTypes.has(key)) return mediaTypes.get(key);
  const chosen = chooseMediaType(accept);
  if (mediaTypes.size >= 64) mediaTypes.clear();
  mediaTypes.set(key, chosen);
  return chosen;
}

const mediaTypes = new Map<string, (typeof REGULAR_MEDIA_TYPES)[number] | undefined>();

function chooseMediaType(accept: string | undefined): (typeof REGULAR_MEDIA_TYPES)[number] | undefined {
  let chosen: (typeof REGULAR_MEDIA_TYPES)[number] | undefined;
  const asked = (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',').reverse();
  for (const entry of asked) {
    const [mediaType = '', ...params] = entry.split(';');
    if ((params.find((p) => p.includes('charset=')) ?? 'charset=utf-8') !== 'charset=utf-8') continue;
    const [pre, suf] = mediaType.split('/');
    for (const type of REGULAR_MEDIA_TYPES) {
      const [typePre, typeSuf] = type.split('/');
      if ((pre === '*' || pre === typePre) && (suf === '*' || suf === typeSuf)) chosen = type;
    }
  }
  return chosen;
}

/**
 * The common request, answered without yoga's Fetch-API round trip (a Request built from the Node
 * request, its plugins' request hooks, a Response read back): an admitted POST of a JSON body with a
 * query or a mutation, answered as JSON. It takes the steps yoga takes, through the same envelop
 * (`getEnveloped`: the token limit, the cached parse and validation, the complexity limits with the
 * request's variables, the context, masked errors), and the same persisted-operation plugins as
 * graphql-ws (`resolveParams`). Anything that is not a plain run of an operation (a request yoga would
 * refuse, a document that does not parse or validate, a subscription, another Accept) is left to yoga
 * before anything has run, so its answers stay exactly yoga's; a result with errors is shaped by
 * yoga's own result processor.
 */
export async function answerDirectly(
  yoga: Yoga,
  resolveParams: (params: RequestParams) => Promise<RequestParams>,
  log: Core['logger'],
  req: FastifyRequest,
  reply: FastifyReply,
  principal: Principal,
): Promise<boolean> {
  if (req.method !== 'POST') return false;
  const body = plainParams(req.body);
  const mediaType = regularMediaType(req.headers.accept);
  if (!body || !mediaType) return false;
  let params: RequestParams;
  try {
    params = await resolveParams(body);
  } catch {
    return false;
  }
  if (typeof params.query !== 'string') return false;
  const enveloped = yoga.getEnveloped({ req, reply, principal, params } as never);
  let document: DocumentNode;
  try {
    document = enveloped.parse(params.query);
    if (enveloped.validate(enveloped.schema, document).length > 0) return false;
  } catch {
    return false;
  }
  const operation = getOperationAST(document, params.operationName);
  if (!operation || operation.operation === 'subscription') return false;
  let contextValue: unknown;
  try {
    contextValue = await enveloped.contextFactory();
  } catch {
    return false;
  }
  // From here the operation runs, once: every outcome is answered here.
  let result: ExecutionResult;
  try {
    result = (await enveloped.execute({
      schema: enveloped.schema,
      document,
      contextValue,
      variableValues: params.variables,
      operationName: params.operationName,
    })) as ExecutionResult;
  } catch (err) {
    log.error({ err }, 'GraphQL execution failed');
    result = { errors: [maskError(err, 'Unexpected error.') as GraphQLError] };
  }
  result = coded(result as { errors?: GraphQLError[] }) as ExecutionResult;
  if (!result.errors?.length && !(result.extensions as { http?: unknown } | undefined)?.http) {
    const stringify = (result as { stringify?: (r: unknown) => string }).stringify ?? JSON.stringify;
    reply.status(200).header('content-type', `${mediaType}; charset=utf-8`).send(stringify(result));
    return true;
  }
  const response = processRegularResult(result as never, yoga.fetchAPI, mediaType);
  response.headers.forEach((value, key) => void reply.header(key, value));
  reply.status(response.status).send(await response.text());
  return true;
}
