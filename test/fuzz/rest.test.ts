import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, OPENAPI_PATH } from '../../src/rest/openapi.ts';
import { fuzzSuite } from '../helpers/fuzz-suite.ts';
import { getWithBody } from '../helpers/get-with-body.ts';
import {
  assertHealthy,
  checkWrites,
  describeCase,
  FUZZ_CASES,
  fuzzParameters,
  restCase,
  restRoutesOf,
  restViolation,
  routeTimeout,
  type Lane,
  type RestCase,
} from '../helpers/fuzz.ts';

/*
 * Every REST route of the OpenAPI document, fuzzed (test/helpers/fuzz.ts): no answer is a 5xx the route
 * does not document (a documented one, such as `secrets_not_configured` on this server without
 * SECRETS_KEYS, is the deployment's state), every 4xx and 5xx is the error body, JSON answers parse, a refused request writes nothing, and /health answers
 * after each route.
 */

const DOC = buildOpenApiDocument({ serverUrl: 'http://localhost' });
const ROUTES = restRoutesOf(DOC);
const operations = (doc: { paths: Record<string, Record<string, unknown>> }) =>
  Object.entries(doc.paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();

const suite = fuzzSuite('REST', 'route');

/** Sends a case with the lane's key; a broken transfer is a failure like a 5xx. */
async function send(lane: Lane, c: RestCase): Promise<{ status: number; contentType: string; text: string }> {
  if (c.method === 'GET' && c.body !== undefined) {
    // fetch sends no GET body; the enrichment routes take one (their OpenAPI GET has a requestBody).
    const res = await getWithBody(suite.t.url, c.url, {
      rawBody: c.body,
      headers: { authorization: `Bearer ${lane.key}`, ...c.headers },
    });
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: res.text };
  }
  const res = await fetch(`${suite.t.url}${c.url}`, {
    method: c.method,
    headers: { authorization: `Bearer ${lane.key}`, ...c.headers },
    body: c.body,
  });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

it('fuzzes every operation of the document the service serves', async () => {
  const served = await suite.t.request('GET', OPENAPI_PATH);
  expect(served.status).toBe(200);
  expect(operations(served.body)).toEqual(operations(DOC));
  expect(ROUTES.length).toBe(operations(DOC).length);
});

describe.concurrent(`every REST route, ${FUZZ_CASES} generated requests each`, () => {
  for (const route of ROUTES) {
    it(
      `${route.method} ${route.path}`,
      async () => {
        let cases = 0;
        await suite.pool.use(async (lane) => {
          const requests = restCase(route, {
            root: DOC,
            ids: lane.ids,
            idsByParam: { runId: [lane.runId], id: [lane.webhookId] },
          });
          await fc.assert(
            fc.asyncProperty(requests, async (c) => {
              cases++;
              const what = () => `${c.method} ${describeCase(c)}`;
              let answer: Awaited<ReturnType<typeof send>>;
              try {
                answer = await send(lane, c);
              } catch (err) {
                throw new Error(
                  `the transfer broke (${(err as Error).message}; ${String((err as Error).cause ?? '')})\n${what()}`,
                );
              }
              suite.statuses.count(`${route.method} ${route.path}`, String(answer.status));
              const violation = restViolation(answer.status, answer.contentType, answer.text, route.serverErrors);
              if (violation) throw new Error(`${violation}\n${what()}`);
              await checkWrites(suite.t, lane, answer.status >= 400, what);
            }),
            fuzzParameters(),
          );
        });
        expect(cases).toBeGreaterThanOrEqual(FUZZ_CASES);
        await assertHealthy(suite.t);
      },
      routeTimeout(),
    );
  }
});
