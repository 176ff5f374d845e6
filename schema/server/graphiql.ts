import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { shouldRenderGraphiQL, type GraphiQLOptions } from 'graphql-yoga';
import { AppError } from '../../src/shared/errors.ts';

/** GraphiQL, served by the gateway itself: no CDN, no inline script, under GRAPHIQL_CSP. */

const GRAPHIQL_VERSION = (
  createRequire(import.meta.url)('@graphql-yoga/render-graphiql/package.json') as { version: string }
).version;

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

const attribute = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function graphiqlPage(options: GraphiQLOptions): string {
  const dataOptions = attribute(JSON.stringify(options));
  const dataWorkers = attribute(JSON.stringify(GRAPHIQL_WORKERS));
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
    <div id="root" data-options="${dataOptions}" data-workers="${dataWorkers}"></div>
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
      [
        'favicon.ico',
        { type: 'image/x-icon', body: Buffer.from(g.favicon.slice(g.favicon.indexOf(',') + 1), 'base64') },
      ],
    ]);
  });
  return assets;
}

/** Whether a request to /graphql asks for the GraphiQL page (a browser's GET), which needs no key. */
export function isGraphiQLRequest(req: FastifyRequest): boolean {
  // Only a GET renders it: the POSTs of every query skip building the Headers yoga's test reads.
  return (
    req.method === 'GET' &&
    shouldRenderGraphiQL({
      method: req.method,
      headers: new Headers({ accept: String(req.headers.accept ?? '') }),
    } as Request)
  );
}

/** The GraphiQL page's files, public like the page. */
export async function graphiqlRoutes(app: FastifyInstance) {
  app.get<{ Params: { file: string } }>(`${GRAPHIQL_ASSETS}/:file`, async (request, reply) => {
    const asset = (await graphiqlAssets()).get(request.params.file);
    if (!asset) throw new AppError(404, 'not_found', `No GraphiQL file ${request.params.file}`);
    return reply
      .type(asset.type)
      .header('Cache-Control', 'public, max-age=86400')
      .header('X-Content-Type-Options', 'nosniff')
      .send(asset.body);
  });
}
