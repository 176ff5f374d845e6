import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  getOperationAST,
  GraphQLError,
  Kind,
  parse as parseDocument,
  print,
  validate as validateDocument,
  type DocumentNode,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from 'graphql';
import {
  createLRUCache,
  createYoga,
  maskError as defaultMaskError,
  processRegularResult,
  shouldRenderGraphiQL,
  type GraphiQLOptions,
  type OnParamsEventPayload,
  type Plugin,
  type YogaServerInstance,
} from 'graphql-yoga';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { useAPQ, type APQStore } from '@graphql-yoga/plugin-apq';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { CloseCode, MessageType, stringifyMessage, type ExecutionResult } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { WebSocket, WebSocketServer } from 'ws';
import { createLoaders, type GraphQLContext } from './context.ts';
import { tooComplex } from './builder.ts';
import { hasUncoercedVariables, useComplexityAtStart } from './complexity.ts';
import { useResponseSizeLimit } from './response-size.ts';
import { schema } from './index.ts';
import type { Core } from '../src/core.ts';
import type { Principal } from '../src/accounts/accounts.ts';
import { AppError, coerceError, DatabaseUnavailableError } from '../src/shared/errors.ts';
import { errorHeaders, graphQLErrorOf } from '../src/http/errors.ts';
import { observeGraphQLWs, useOperationRoutes } from '../src/http/metrics.ts';
import { admit, authenticate, clientAddress, sessionCredentials, socketSession } from '../src/http/pipeline.ts';
import { guardEvents, LiveAccess } from '../src/http/access.ts';
import { closeReason, guardedSend, socketAccess } from './socket-access.ts';
import { SharedSubscriptions, type DirectSend } from './shared-subscriptions.ts';

/**
 * The GraphQL face's transport: yoga over HTTP, graphql-ws on the same path, and the limits both
 * share. Every rule below holds for an HTTP request and for each graphql-ws `subscribe` message alike:
 * - the key is admitted (authenticated and counted against its per-minute budget) before the document
 *   is looked at; a bad key is 401 over HTTP and closes the socket with 4401;
 * - a document is parsed with a token limit (MAX_TOKENS), so no document can nest deep enough to
 *   exhaust the stack, and its depth, breadth and complexity (the Pothos complexity plugin's limits in
 *   schema/builder.ts), introspection included, are checked when the operation starts, subscriptions
 *   included;
 * - each result, and each event of a subscription, is at most GRAPHQL_MAX_RESPONSE_BYTES of JSON;
 * - automatic persisted queries (Apollo's protocol), or with GRAPHQL_PERSISTED_ONLY only the operations
 *   of the GRAPHQL_PERSISTED_OPERATIONS file.
 */

interface ServerContext {
  req?: FastifyRequest;
  reply?: FastifyReply;
  /** The caller, when the request pipeline admitted it already (graphql-ws operations, keyed HTTP requests). */
  principal?: Principal;
  /** A graphql-ws operation's lasting access (its socket's), which its subscription's events are checked against. */
  access?: LiveAccess;
}

interface RequestParams {
  query?: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  extensions?: Record<string, unknown> | null;
}

interface LocatedError {
  originalError?: unknown;
  nodes?: GraphQLError['nodes'];
  path?: GraphQLError['path'];
}

/**
 * Lexical tokens a document may have: ten for each selection of the broadest query the complexity
 * limits allow (breadth 200). Parsing stops at the limit, so a document costs at most this many
 * tokens of work and nests at most a few hundred levels, whatever its size; large inputs belong in
 * variables, which are not tokens.
 */
export const MAX_TOKENS = 2000;

/** Documents longer than this (UTF-16 units) are neither cached parsed nor registered as APQ. */
const MAX_CACHED_DOCUMENT = 32 * 1024;

/** The extensions of an AppError: its code and details, plus `retryAfter` (seconds) when it comes with Retry-After. */
function extensionsOf(err: AppError): { message: string; extensions: Record<string, unknown> } {
  const { message, extensions } = graphQLErrorOf(err);
  const retryAfter = errorHeaders(err)['Retry-After'];
  return { message, extensions: retryAfter ? { ...extensions, retryAfter: Number(retryAfter) } : extensions };
}

/**
 * An AppError outside execution (the request pipeline's 401 unauthenticated and 429 rate_limited, a
 * document over the limits) as a GraphQL error: the REST code in `extensions.code`, `retryAfter` for a
 * 429, without yoga's internal `http` extension.
 */
export function graphQLRefusal(err: AppError): { message: string; extensions: Record<string, unknown> } {
  const { message, extensions } = extensionsOf(err);
  const { http: _http, ...shown } = extensions;
  return { message, extensions: shown };
}

/**
 * Expected errors keep their code and message; anything else is masked (and logged by yoga). An
 * AppError raised before execution (no path: parsing, the context) answers its own HTTP status.
 */
function maskError(error: unknown, message: string, isDev?: boolean): Error {
  // Duck-typed: graphql's CJS and ESM builds can both be loaded, so instanceof GraphQLError is unreliable.
  const located = (typeof error === 'object' && error !== null ? error : {}) as LocatedError;
  // A lost database is the one 503 DATABASE_UNAVAILABLE, whatever query met it.
  const original = coerceError(located.originalError ?? error);
  if (original instanceof AppError) {
    const { message, extensions } = extensionsOf(original);
    const status = located.path === undefined && extensions.http === undefined ? { http: { status: original.status } } : {};
    return new GraphQLError(message, { nodes: located.nodes, path: located.path, extensions: { ...extensions, ...status } });
  }
  // Unexpected failures: yoga's masked message, with the service's code for them.
  const masked = defaultMaskError(error, message, isDev) as GraphQLError;
  // Errors raised as GraphQL errors with their own code (persisted operations, for one) keep it.
  if (typeof masked.extensions?.code === 'string' && masked.extensions.code !== 'INTERNAL_SERVER_ERROR') return masked;
  // GraphQL's own errors pass unmasked (a variable that does not coerce: BAD_USER_INPUT); the rest are internal.
  const code = masked === error ? graphQLErrorOf(error).extensions.code : graphQLErrorOf(undefined).extensions.code;
  return new GraphQLError(masked.message, { nodes: masked.nodes, source: masked.source, positions: masked.positions, path: masked.path, extensions: { ...masked.extensions, code } });
}

/** Errors GraphQL itself raises (a variable that does not coerce, a document that does not validate) get their code too. */
function withCode(error: GraphQLFormattedError | GraphQLError): GraphQLFormattedError | GraphQLError {
  if (typeof error.extensions?.code === 'string') return error;
  const { extensions } = graphQLErrorOf(error);
  return error instanceof GraphQLError
    ? new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, originalError: error.originalError, extensions: { ...error.extensions, ...extensions } })
    : { ...error, extensions: { ...error.extensions, ...extensions } };
}

/** Every error of a result names its code in `extensions.code`, whatever raised it. */
/** The result with a code on every error, and its errors first (as graphql-js writes them; graphql-jit puts `data` first). */
function coded<R extends { errors?: readonly (GraphQLFormattedError | GraphQLError)[] }>(result: R): R {
  if (!result.errors?.length) return result;
  const { errors, ...rest } = result;
  return { errors: errors.some((e) => typeof e.extensions?.code !== 'string') ? errors.map(withCode) : errors, ...rest } as unknown as R;
}

function useErrorCodes(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result)) setResult(result.map(coded));
      else if (result && typeof result === 'object' && !(Symbol.asyncIterator in result)) setResult(coded(result as { errors?: GraphQLError[] }) as never);
    },
  };
}


/**
 * graphql-js parses with MAX_TOKENS; past it, or nested past what the stack holds, a document is a 400
 * `query_too_complex` (thrown as an AppError, which maskError answers with its status), never a 500.
 */
function useTokenLimit(): Plugin {
  return {
    onParse({ setParseFn }) {
      setParseFn((source, options) => {
        try {
          return parseDocument(source, { ...options, maxLexicalTokens: MAX_TOKENS });
        } catch (err) {
          if (err instanceof GraphQLError && /contains more th[ae]t? \d+ tokens/.test(err.message)) throw tooComplex('tokens', undefined, MAX_TOKENS);
          // The token limit keeps nesting far below this; kept as the last guard.
          if (err instanceof RangeError) throw tooComplex('depth', undefined, MAX_TOKENS);
          throw err;
        }
      });
    },
  };
}

/**
 * Queries and mutations run compiled (graphql-jit, through @envelop/graphql-jit): each document is
 * compiled once, on its first run, and kept with the parsed document (the compiled form goes when the
 * parse cache drops the document). Subscriptions keep graphql-js, whose executions are shared anyway
 * (schema/shared-subscriptions.ts).
 */
function useCompiledQueries(): Plugin {
  return useGraphQlJit(
    {},
    {
      // Variables that do not coerce are refused by graphql-js, in its words (graphql-jit words them otherwise).
      enableIf: (args) => !hasUncoercedVariables(args.contextValue as object) && getOperationAST(args.document, args.operationName)?.operation !== 'subscription',
    },
  ) as Plugin;
}

/** An LRU that leaves out documents too long to be worth keeping (a 1 MB string literal is one token). */
function boundedCache<T extends {}>(max: number) {
  const lru = createLRUCache<T>({ max, ttl: 24 * 3600_000 });
  return {
    get: (key: string) => lru.get(key),
    set: (key: string, value: T) => void (key.length <= MAX_CACHED_DOCUMENT && lru.set(key, value)),
  };
}

/**
 * The operations of a GRAPHQL_PERSISTED_OPERATIONS file: a JSON object mapping each operation's id (the
 * SHA-256 hex of its document, as Apollo's persisted-query link and GraphQL Code Generator's client
 * preset compute it) to the document. Each must parse within the token limit and validate against the
 * schema: a stale file stops the gateway at start rather than failing its frontend later.
 */
export function loadPersistedOperations(file: string, against: GraphQLSchema = schema): Map<string, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`GRAPHQL_PERSISTED_OPERATIONS: cannot read ${file} as JSON: ${(err as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new Error(`GRAPHQL_PERSISTED_OPERATIONS: ${file} must hold a JSON object mapping hashes to documents`);
  }
  const operations = new Map<string, string>();
  for (const [id, document] of Object.entries(raw)) {
    if (typeof document !== 'string') throw new Error(`GRAPHQL_PERSISTED_OPERATIONS: the operation ${id} is not a string`);
    let errors: readonly GraphQLError[];
    try {
      errors = validateDocument(against, parseDocument(document, { maxLexicalTokens: MAX_TOKENS }));
    } catch (err) {
      errors = [err as GraphQLError];
    }
    if (errors.length > 0) throw new Error(`GRAPHQL_PERSISTED_OPERATIONS: the operation ${id} is not valid: ${errors.map((e) => e.message).join('; ')}`);
    operations.set(id, document);
  }
  return operations;
}

/**
 * Automatic persisted queries (Apollo's protocol: `extensions.persistedQuery = {version: 1, sha256Hash}`;
 * a hash alone runs the document registered under it or answers `PersistedQueryNotFound`, a document
 * with its hash registers it), over the operations of the file and those registered in this process.
 */
function apqStore(listed: Map<string, string>): APQStore {
  const registered = boundedCache<string>(1000);
  return {
    get: (hash) => listed.get(hash) ?? registered.get(hash),
    set: (hash, document) => (listed.has(hash) ? undefined : registered.set(hash, document)),
  };
}

/** Only the listed operations (GRAPHQL_PERSISTED_ONLY): a document sent by the client is refused. */
function persistedOnly(listed: Map<string, string>): Plugin {
  const idRequired = {
    message: 'This gateway runs only persisted operations: send extensions.persistedQuery.sha256Hash, without a query',
    extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED', http: { status: 400 } },
  };
  return usePersistedOperations({
    getPersistedOperation: (id) => listed.get(id) ?? null,
    allowArbitraryOperations: false,
    customErrors: {
      notFound: { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 200 } } },
      persistedQueryOnly: idRequired,
      keyNotFound: idRequired,
    },
  });
}

export type Yoga = YogaServerInstance<ServerContext, GraphQLContext>;

export interface GraphQLServer {
  yoga: Yoga;
  /** The request's parameters after the persisted-operation plugins (what yoga's `onParams` does over HTTP), for graphql-ws. */
  resolveParams(params: RequestParams): Promise<RequestParams>;
  /**
   * Answers an admitted POST of a query or mutation in JSON directly (see `answerDirectly`); false when
   * the request is of another kind, for yoga to answer.
   */
  answer(req: FastifyRequest, reply: FastifyReply, principal: Principal): Promise<boolean>;
}

export function createGraphQL(core: Core): GraphQLServer {
  const log = core.logger.child({ component: 'graphql' });
  const { graphqlPersistedOperations: file, graphqlPersistedOnly: only } = core.config;
  const listed = file ? loadPersistedOperations(file) : new Map<string, string>();
  const paramsPlugins: Plugin[] = only ? [persistedOnly(listed)] : [useAPQ({ store: apqStore(listed), responseConfig: { forceStatusCodeOk: true } })];
  const yoga: Yoga = createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS is the HTTP server's (src/app.ts), for every route alike.
    cors: false,
    maskedErrors: { maskError },
    // The document's validation is cached per document; the complexity check runs after it on every
    // request (useComplexityAtStart), with the request's variables: only a measure that cannot depend
    // on them is remembered, per document, never a verdict.
    parserAndValidationCache: {
      documentCache: boundedCache<DocumentNode>(1000),
      errorCache: { get: () => undefined, set: () => {} },
      validationCache: true,
    },
    plugins: [
      ...paramsPlugins,
      useTokenLimit(),
      useComplexityAtStart(),
      useErrorCodes(),
      useOperationRoutes(),
      useCompiledQueries(),
      useResponseSizeLimit(core.config.graphqlMaxResponseBytes),
    ],
    logging: {
      debug: (...args) => log.debug(args.map(String).join(' ')),
      info: (...args) => log.info(args.map(String).join(' ')),
      warn: (...args) => log.warn(args.map(String).join(' ')),
      error: (...args) => log.error({ err: args.find((a) => a instanceof Error) }, args.map(String).join(' ')),
    },
    graphiql: {
      title: 'leadgate GraphQL',
      headers: JSON.stringify({ Authorization: 'Bearer <API_KEY>' }),
      subscriptionsProtocol: 'WS',
    },
    renderGraphiQL: graphiqlPage,
    context: async (initial) => {
      const principal = initial.access?.principal ?? initial.principal ?? (await authenticate(core, initial.request.headers.get('authorization')));
      // Over HTTP, what the request presented: a subscription over SSE checks it again before each event.
      const credential = initial.req && { authorization: initial.req.headers.authorization, session: initial.req.headers.authorization ? undefined : sessionCredentials(initial.req.headers) };
      return { core, principal, loaders: createLoaders(core, principal), access: initial.access, credential };
    },
  });

  async function resolveParams(params: RequestParams): Promise<RequestParams> {
    let current = params;
    for (const plugin of paramsPlugins) {
      const payload = {
        params: current,
        request: undefined,
        context: {},
        fetchAPI: yoga.fetchAPI,
        setParams: (next: RequestParams) => void (current = next),
        setResult: () => {},
      };
      await plugin.onParams?.(payload as unknown as OnParamsEventPayload<Record<string, unknown>>);
    }
    return current;
  }
  const answer = (req: FastifyRequest, reply: FastifyReply, principal: Principal) => answerDirectly(yoga, resolveParams, log, req, reply, principal);
  return { yoga, resolveParams, answer };
}

/** POST body keys yoga takes (useCheckGraphQLQueryParams); any other key is yoga's to refuse. */
const PARAM_KEYS = new Set(['query', 'variables', 'operationName', 'extensions']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

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
    const [mediaType, ...params] = entry.split(';');
    if ((params.find((p) => p.includes('charset=')) ?? 'charset=utf-8') !== 'charset=utf-8') continue;
    const [pre, suf] = mediaType!.split('/');
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
async function answerDirectly(
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
    result = (await enveloped.execute({ schema: enveloped.schema, document, contextValue, variableValues: params.variables, operationName: params.operationName })) as ExecutionResult;
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

// ---------------------------------------------------------------------------------------------
// GraphiQL, served by the gateway itself: no CDN, no inline script, under GRAPHIQL_CSP.

const GRAPHIQL_VERSION = (createRequire(import.meta.url)('@graphql-yoga/render-graphiql/package.json') as { version: string }).version;

/** Where the GraphiQL page's scripts, styles and workers are served (versioned, so they can be cached). */
export const GRAPHIQL_ASSETS = `/graphiql/${GRAPHIQL_VERSION}`;

/**
 * The Content-Security-Policy of the GraphiQL page: everything from the gateway itself, no inline or
 * evaluated script; inline styles only because the editor (Monaco) adds its style elements at run time;
 * fonts and images of the bundled stylesheet are data URLs.
 */
export const GRAPHIQL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const GRAPHIQL_WORKERS = {
  editorWorkerService: `${GRAPHIQL_ASSETS}/editor.worker.js`,
  json: `${GRAPHIQL_ASSETS}/json.worker.js`,
  graphql: `${GRAPHIQL_ASSETS}/graphql.worker.js`,
};

/**
 * Starts GraphiQL with the options and worker URLs the page carries in data attributes (no inline
 * script). Signed in to the console, the browser's session cookie goes with every request and socket;
 * the session's CSRF token (GET /auth/session) is added to each request and to the socket's connection
 * parameters (GraphiQL's graphql-ws client sends `connectionParams`, not the headers), so GraphiQL
 * works signed in as the console, subscriptions included.
 */
const GRAPHIQL_START = `(function () {
  var root = document.getElementById('root');
  var workers = JSON.parse(root.getAttribute('data-workers'));
  var options = JSON.parse(root.getAttribute('data-options'));
  self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: function (moduleId, label) { return workers[label]; } };
  fetch('/auth/session', { credentials: 'same-origin' })
    .then(function (res) { return res.ok ? res.json() : null; })
    .catch(function () { return null; })
    .then(function (session) {
      if (session) {
        // The editor's key placeholder would take precedence over the session: signed in, it starts empty.
        options.headers = '{}';
        options.additionalHeaders = Object.assign({}, options.additionalHeaders, { 'X-CSRF-Token': session.csrfToken });
        options.connectionParams = { 'X-CSRF-Token': session.csrfToken };
      }
      YogaGraphiQL.renderYogaGraphiQL(root, options);
    });
})();
`;

const attribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function graphiqlPage(options: GraphiQLOptions): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${attribute(options.title ?? 'GraphiQL')}</title>
    <link rel="icon" href="${GRAPHIQL_ASSETS}/favicon.ico" />
    <link rel="stylesheet" href="${GRAPHIQL_ASSETS}/graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root" data-options="${attribute(JSON.stringify(options))}" data-workers="${attribute(JSON.stringify(GRAPHIQL_WORKERS))}"></div>
    <script src="${GRAPHIQL_ASSETS}/graphiql.js"></script>
    <script src="${GRAPHIQL_ASSETS}/start.js"></script>
  </body>
</html>
`;
}

type Asset = { type: string; body: string | Buffer };
let assets: Promise<Map<string, Asset>> | undefined;

/** The bundled GraphiQL (about 9 MB of text), loaded on the first request for it. */
function graphiqlAssets(): Promise<Map<string, Asset>> {
  assets ??= import('@graphql-yoga/render-graphiql/graphiql').then((g) => {
    const js = 'text/javascript; charset=utf-8';
    return new Map<string, Asset>([
      ['graphiql.js', { type: js, body: g.js }],
      ['graphiql.css', { type: 'text/css; charset=utf-8', body: g.css }],
      ['start.js', { type: js, body: GRAPHIQL_START }],
      ['editor.worker.js', { type: js, body: g.editorWorkerService }],
      ['json.worker.js', { type: js, body: g.jsonWorker }],
      ['graphql.worker.js', { type: js, body: g.graphqlWorker }],
      ['favicon.ico', { type: 'image/x-icon', body: Buffer.from(g.favicon.slice(g.favicon.indexOf(',') + 1), 'base64') }],
    ]);
  });
  return assets;
}

/** Whether a request to /graphql asks for the GraphiQL page (a browser's GET), which needs no key. */
export function isGraphiQLRequest(req: FastifyRequest): boolean {
  // Only a GET renders it: the POSTs of every query skip building the Headers yoga's test reads.
  return req.method === 'GET' && shouldRenderGraphiQL({ method: req.method, headers: new Headers({ accept: String(req.headers.accept ?? '') }) } as Request);
}

/** The GraphiQL page's files, public like the page. */
export async function graphiqlRoutes(app: FastifyInstance) {
  app.get<{ Params: { file: string } }>(`${GRAPHIQL_ASSETS}/:file`, async (request, reply) => {
    const asset = (await graphiqlAssets()).get(request.params.file);
    if (!asset) throw new AppError(404, 'not_found', `No GraphiQL file ${request.params.file}`);
    return reply.type(asset.type).header('Cache-Control', 'public, max-age=86400').header('X-Content-Type-Options', 'nosniff').send(asset.body);
  });
}

// ---------------------------------------------------------------------------------------------
// graphql-ws

/** Subscriptions whose executions many clients can share: their result depends only on the run and the account. */
const SHAREABLE = new Set(['runProgress']);

/** Documents printed for share keys (parsed documents are cached, so a document is usually printed once). */
const printed = new WeakMap<DocumentNode, string>();

/** The key under which identical subscriptions of one account share an execution, or undefined. */
function shareKey(document: DocumentNode, operationName: string | null | undefined, variables: unknown, principal: Principal | undefined): string | undefined {
  const operation = getOperationAST(document, operationName);
  if (!principal || operation?.operation !== 'subscription') return undefined;
  const fields = operation.selectionSet.selections;
  if (fields.length !== 1 || fields[0]!.kind !== Kind.FIELD || !SHAREABLE.has(fields[0]!.name.value)) return undefined;
  let text = printed.get(document);
  if (text === undefined) printed.set(document, (text = print(document)));
  // Members share an execution only with callers of the same rights, so no field resolves for one with another's.
  return JSON.stringify([principal.accountId, principal.role ?? null, principal.keyRole ?? null, text, operationName ?? null, variables ?? null]);
}

/** Connections corked during this turn's fan-out, uncorked together when the turn is over (see directSend). */
const corked = new Set<Duplex>();

/** Holds a connection's writes until the fan-out of this turn is over. */
function corkForThisTurn(connection: Duplex) {
  if (corked.has(connection)) return;
  if (corked.size === 0) {
    setImmediate(() => {
      const held = [...corked];
      corked.clear();
      for (const c of held) c.uncork();
    });
  }
  connection.cork();
  corked.add(connection);
}

/**
 * Sends a shared subscription's result to one subscriber as graphql-ws's own `next` message
 * (`{"id":…,"type":"next","payload":…}`, byte for byte what its `stringifyMessage` writes), the payload
 * serialised once for every subscriber; false once the socket is no longer open. The connection is
 * corked until the fan-out's turn is over, so what graphql-ws sends in the same turn leaves with it in
 * one write: a run's last result and the `complete` that follows it cost one system call per
 * subscriber, not two. (`_socket` is ws's connection; ws corks it itself around each frame.)
 */
function directSend(socket: WebSocket, id: string): DirectSend {
  const head = `{"id":${JSON.stringify(id)},"type":"${MessageType.Next}","payload":`;
  const connection = (socket as unknown as { _socket?: Duplex })._socket;
  return {
    send(resultJson) {
      if (socket.readyState !== socket.OPEN) return false;
      if (connection) corkForThisTurn(connection);
      socket.send(head + resultJson + '}');
      return true;
    },
  };
}

const authorizationOf = (params: Record<string, unknown> | undefined) => (params?.authorization ?? params?.Authorization) as string | undefined;


/** An error as a graphql-ws message shows it: without yoga's internal extensions (`http`, `unexpected`). */
function formatted(error: GraphQLError): GraphQLFormattedError {
  const json = error.toJSON();
  if (!json.extensions) return json;
  const { http: _http, unexpected: _unexpected, ...extensions } = json.extensions;
  return { ...json, extensions };
}

const asGraphQLError = (err: unknown) =>
  err instanceof GraphQLError ? err : new GraphQLError((err as Error)?.message ?? String(err), { originalError: err instanceof Error ? err : undefined });

/**
 * The close code of a connection refused for a limit: its address past its budget of failed
 * authentications (AUTH_FAILURES_PER_MINUTE), its key past its requests a minute (opening a socket is
 * one), or its key or address holding the most open sockets allowed (WS_MAX_SOCKETS_PER_KEY,
 * WS_MAX_SOCKETS_PER_ADDRESS). graphql-ws's 4429, which its clients take as final like 4401, so they do
 * not hammer the limit; the close reason says when to retry or what to close.
 */
export const TOO_MANY_REQUESTS = 4429;

/** The close code of a socket opened while the database is out of reach (RFC 6455 "Try Again Later"). */
export const TRY_AGAIN_LATER = 1013;

/**
 * graphql-ws on the same path, through the request pipeline: the key (connectionParams.authorization)
 * is authenticated when the socket connects, and every `subscribe` message is admitted again (counted
 * against the key's per-minute budget like an HTTP request; the key checked again, so a revoked key
 * stops working within the key cache time). A missing, unknown or revoked key closes the socket with
 * 4401, which graphql-ws clients do not retry (4403 they retry forever), and counts against the
 * address's failed authentications (past them: 4429, before the key is looked at); a rate-limited operation is
 * a GraphQL error with `retryAfter`. Each operation then takes the HTTP path's steps: persisted
 * operations, the token limit, validation and the complexity limits, yoga's envelop.
 */
export function attachGraphQLWebSocket(core: Core, graphql: GraphQLServer, wss: WebSocketServer) {
  const { yoga } = graphql;
  const log = core.logger.child({ component: 'graphql-ws' });
  const shared = new SharedSubscriptions();
  type Root = { execute: typeof import('graphql').execute; subscribe: typeof import('graphql').subscribe; shareKey?: string; access?: LiveAccess; direct?: DirectSend };

  /** Refuses the operation with `errors`, then closes the socket with 4401 (the error message goes first). */
  const unauthorized = (socket: WebSocket, id: string, error: GraphQLError) => {
    socket.send(stringifyMessage({ id, type: MessageType.Error, payload: [formatted(error)] }));
    socket.close(CloseCode.Unauthorized, closeReason('Unauthorized', error.message));
  };

  const heartbeat = keepAlive(wss);
  const guard = socketAccess(core, log);
  const server = useServer<Record<string, unknown>, { access?: LiveAccess }>(
    observeGraphQLWs({
      execute: (args) => (args.rootValue as Root).execute(args),
      subscribe: async (args) => {
        const root = args.rootValue as Root;
        if (!root.shareKey) return root.subscribe(args);
        const access = root.access!;
        const joined = await shared.join(root.shareKey, () => root.subscribe(args) as never, root.direct);
        // A member of a shared execution needs nothing more of its operation (graphql-ws keeps these
        // arguments for the subscription's life, but only passes them to hooks that do not read them):
        // its context, envelop and key go, so an idle subscriber costs little more than its socket.
        Object.assign(args, { contextValue: undefined, rootValue: undefined });
        // The execution is shared; access is each member's: every result it takes is checked against it.
        return ('next' in joined ? guardEvents(joined, access) : joined) as never;
      },
      onConnect: async (ctx) => {
        const { request, socket } = ctx.extra;
        try {
          const address = clientAddress(core.config, request);
          // Without a key, the console's session: the upgrade's cookie, from the gateway's own origin, with connectionParams.csrfToken.
          const credential = { authorization: authorizationOf(ctx.connectionParams), session: socketSession(core.config, request, ctx.connectionParams) };
          // Opening a socket is a request of the key's budget; its address's failed authentications are counted.
          const principal = await admit(core, credential.authorization, undefined, address, credential.session);
          ctx.extra.access = guard.open(socket, new LiveAccess(core, credential, principal), address);
          delete (ctx.extra as { request?: unknown }).request;
          return true;
        } catch (raised) {
          const err = coerceError(raised);
          // The database out of reach: 1013 (try again later), which graphql-ws clients retry.
          if (err instanceof DatabaseUnavailableError) {
            socket.close(TRY_AGAIN_LATER, closeReason('Try again later', err.message));
            return false;
          }
          // A session's wrong CSRF token (403 csrf_failed) is an unauthorized socket too: 4401.
          if (!(err instanceof AppError) || (err.status !== 401 && err.status !== 403 && err.status !== 429)) throw raised;
          // graphql-ws would close with 4403 on `false`; the socket is closing already, so that is a no-op.
          if (err.status === 429) socket.close(TOO_MANY_REQUESTS, closeReason('Too many requests', err.message));
          else socket.close(CloseCode.Unauthorized, closeReason('Unauthorized', err.message));
          return false;
        }
      },
      onSubscribe: async (ctx, id, payload) => {
        const access = ctx.extra.access!;
        try {
          // Each operation is a request: the credential checked again and counted against its budget.
          access.accept(await admit(core, access.credential.authorization, undefined, undefined, access.credential.session));
        } catch (raised) {
          const err = coerceError(raised);
          if (!(err instanceof AppError)) throw raised;
          const { message, extensions } = graphQLRefusal(err);
          const error = new GraphQLError(message, { extensions });
          if (err.status === 401 || err.status === 403) {
            unauthorized(ctx.extra.socket, id, error);
            access.end(err);
          }
          return [error];
        }
        try {
          // The protocol requires a `query` string: an empty one beside a persisted-query hash asks by hash alone.
          const hashOnly = payload.query === '' && payload.extensions?.persistedQuery !== undefined;
          const params = await graphql.resolveParams(hashOnly ? { ...payload, query: undefined } : payload);
          const { schema: envelopedSchema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({ ...ctx, params } as never);
          const document = parse(params.query ?? '');
          const errors = validate(envelopedSchema, document);
          if (errors.length > 0) return errors;
          const share = shareKey(document, params.operationName, params.variables, access.principal);
          return {
            schema: envelopedSchema,
            operationName: params.operationName,
            document,
            variableValues: params.variables,
            // A shared execution resolves alike for every member, with the caller as it is now; each member's access is checked on its own.
            contextValue: await contextFactory(share ? { principal: { ...access.principal } } : { access }),
            rootValue: { execute, subscribe, shareKey: share, access, direct: guardedSend(directSend(ctx.extra.socket, id), access) },
          };
        } catch (err) {
          if (err instanceof AppError) {
            const { message, extensions } = graphQLRefusal(err);
            return [new GraphQLError(message, { extensions })];
          }
          if (err instanceof GraphQLError || (err as Error)?.name === 'GraphQLError') return [asGraphQLError(err)];
          // Never a 4500 close for one operation's failure: the socket and its other operations go on.
          log.error({ err }, 'graphql-ws operation failed before it started');
          const { message, extensions } = graphQLErrorOf(err);
          return [new GraphQLError(message, { extensions })];
        }
      },
      onError: (_ctx, _id, _payload, errors) => errors.map(formatted),
      onNext: (_ctx, _id, _payload, _args, result) => {
        const { errors } = result as ExecutionResult<unknown, unknown>;
        if (!errors?.length) return undefined;
        return { ...result, errors: (errors as GraphQLError[]).map((e) => (e instanceof GraphQLError ? formatted(e) : e)) } as never;
      },
    }),
    wss,
    // No timers per socket: `keepAlive` pings them all from one.
    0,
  );
  return {
    async dispose() {
      heartbeat.stop();
      guard.stop();
      await server.dispose();
    },
  };
}

/** How often each socket is pinged; one that has not answered the previous ping by then is dropped (graphql-ws's default). */
const KEEP_ALIVE_MS = 12_000;
const KEEP_ALIVE_SLICES = 12;

/**
 * graphql-ws's keep-alive (a ping every 12 s, a socket that has not answered by the next one is
 * terminated) from one timer for every socket, instead of an interval per socket and a timeout and
 * listener per ping: the sockets are spread over 12 slices pinged one per second, so pings do not come
 * in one burst.
 */
function keepAlive(wss: WebSocketServer) {
  const slices = Array.from({ length: KEEP_ALIVE_SLICES }, () => new Set<WebSocket>());
  const waiting = new WeakSet<WebSocket>();
  let next = 0;
  let turn = 0;
  function answered(this: WebSocket) {
    waiting.delete(this);
  }
  wss.on('connection', (socket) => {
    const slice = slices[next++ % KEEP_ALIVE_SLICES]!;
    slice.add(socket);
    socket.on('pong', answered);
    socket.once('close', () => slice.delete(socket));
  });
  const timer = setInterval(() => {
    for (const socket of slices[turn++ % KEEP_ALIVE_SLICES]!) {
      if (socket.readyState !== socket.OPEN) continue;
      if (waiting.has(socket)) {
        socket.terminate();
        continue;
      }
      waiting.add(socket);
      socket.ping();
    }
  }, KEEP_ALIVE_MS / KEEP_ALIVE_SLICES);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
