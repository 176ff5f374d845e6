import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../core.ts';
import { admitOperator, operatorApiEnabled } from '../http/operator-auth.ts';
import { clientAddress } from '../http/pipeline.ts';
import { accessRequest, erasePerson } from '../privacy/erasure.ts';
import { findReceipt, listReceipts, personRequestInput, receiptAnswer, receiptView } from '../privacy/requests.ts';
import { AppError } from '../shared/errors.ts';
import { assertKnownFields, NO_FIELDS } from '../shared/fields.ts';
import { param, parseParams } from '../shared/params.ts';

/**
 * The operator API (docs/operations.md#the-operator-api): what the deployment's operator does over HTTP
 * rather than the command line, today the requests of people about their data (docs/privacy.md). Its
 * way in is OPERATOR_TOKEN, not an API key (src/http/operator-auth.ts); while the token is unset every
 * route answers 404, as a route that does not exist. Each route is declared once here: the routes are
 * registered, and OpenAPI documents them (tag `Operator`), from these declarations.
 */

export const OPERATOR_PREFIX = '/operator/v1';
const PRIVACY = `${OPERATOR_PREFIX}/privacy`;

/** Who asked, on the receipt, when a request through the API does not say. */
export const API_REQUESTER = 'operator API';

export interface OperatorRequest {
  params: Record<string, string>;
  query: unknown;
  body: unknown;
}

/** A route of the operator API, in the words of the OpenAPI document's routes (openapi-routes.ts `RouteDoc`). */
export interface OperatorRoute {
  method: 'get' | 'post';
  /** Written the Fastify way (`:id`). */
  path: string;
  operationId: string;
  tag: 'Operator';
  summary: string;
  description: string;
  security: [{ operatorToken: [] }];
  body?: { schema: z.ZodType; example: unknown };
  query?: z.ZodType;
  ok: {
    status: 200 | 201;
    description: string;
    content: { 'application/json': z.ZodType };
    headers?: Record<string, unknown>;
  };
  /** Refusals besides a bad body, a missing token, the rate limit and 404 (also while the API is off). */
  errors: { 400?: readonly string[] };
  /** The answer's body and, for a request that made a receipt, where it is. */
  handle(core: Core, request: OperatorRequest): Promise<{ body: unknown; location?: string }>;
}

/** What every route of the operator API is, and says. */
const OPERATOR = {
  tag: 'Operator',
  security: [{ operatorToken: [] }],
} as const satisfies Pick<OperatorRoute, 'tag' | 'security'>;
const OFF = '\n\nWith OPERATOR_TOKEN as a Bearer token; while it is unset, 404.';
const created = (description: string, schema: z.ZodType): OperatorRoute['ok'] => ({
  status: 201,
  description,
  content: { 'application/json': schema },
  headers: { Location: { schema: { type: 'string' }, description: 'The receipt’s URL.' } },
});

const receiptsParams = z
  .object({
    limit: param.num(1, 100).describe('Receipts per page, 1 to 100; default 50.'),
    before: param.text.describe('The `nextBefore` of the page before.'),
  })
  .strict();

const EXAMPLE = {
  identifiers: [{ kind: 'email', value: 'jane.doe@example.com' }],
  note: 'Asked by e-mail, ticket 4711',
};
const receiptLocation = (id: string) => `${PRIVACY}/receipts/${id}`;
const receiptsPage = z.object({ receipts: z.array(receiptView), nextBefore: z.string().nullable() }).strict();

export const OPERATOR_ROUTES: readonly OperatorRoute[] = [
  {
    method: 'post',
    path: `${PRIVACY}/erasures`,
    operationId: 'erasePerson',
    ...OPERATOR,
    summary: 'Erase a person (GDPR art. 17)',
    description:
      'Removes everything held about the person the identifiers name: their records in the catalog (a lead, a ' +
      'property’s owner, a rental host), stored run rows still within retention, the lead database’s delivery ' +
      'records, and the identities of accounts’ datasets that name them; then keeps them out for good (the ' +
      'deployment’s suppression list, and the list of every account they were delivered to), in one transaction. ' +
      'Answers the receipt, which keeps the identifiers as keyed hashes only. A second erasure of the same person ' +
      'finds nothing more and says so in its receipt.' +
      OFF,
    body: { schema: personRequestInput, example: EXAMPLE },
    ok: created('Done: the receipt (Location names it).', receiptView),
    errors: { 400: ['validation_failed'] },
    handle: async (core, request) => {
      const input = parseParams(personRequestInput, request.body ?? {});
      const receipt = await erasePerson(core.db, {
        identifiers: input.identifiers,
        source: 'erasure',
        requestedBy: input.requestedBy ?? API_REQUESTER,
        note: input.note,
      });
      return { body: receiptAnswer(receipt), location: receiptLocation(receipt.id) };
    },
  },
  {
    method: 'post',
    path: `${PRIVACY}/access-requests`,
    operationId: 'answerAccessRequest',
    ...OPERATOR,
    summary: 'Answer an access request (GDPR art. 15)',
    description:
      'Everything held about the person the identifiers name, as JSON: catalog records with their fields, stored ' +
      'run rows with their run (tool, account), the accounts the lead database delivered them to, dataset ' +
      'identities, suppression entries, and the receipts of earlier requests for the same identifiers. Answers ' +
      'with the request’s own receipt.' +
      OFF,
    body: { schema: personRequestInput, example: EXAMPLE },
    ok: created(
      'What is held (`data`), and the receipt (Location names it).',
      z
        .object({
          receipt: receiptView,
          data: z.record(z.string(), z.unknown()).describe('What is held, to hand to the person.'),
        })
        .strict(),
    ),
    errors: { 400: ['validation_failed'] },
    handle: async (core, request) => {
      const input = parseParams(personRequestInput, request.body ?? {});
      const { receipt, data } = await accessRequest(core.db, {
        identifiers: input.identifiers,
        requestedBy: input.requestedBy ?? API_REQUESTER,
        note: input.note,
      });
      return { body: { receipt: receiptAnswer(receipt), data }, location: receiptLocation(receipt.id) };
    },
  },
  {
    method: 'get',
    path: `${PRIVACY}/receipts`,
    operationId: 'listPrivacyReceipts',
    ...OPERATOR,
    summary: 'Receipts of erasures and access requests',
    description: `Newest first; \`before\` with the \`nextBefore\` of a page reads the next.${OFF}`,
    query: receiptsParams,
    ok: { status: 200, description: 'A page of receipts.', content: { 'application/json': receiptsPage } },
    errors: { 400: ['validation_failed'] },
    handle: async (core, request) => {
      const { limit = 50, before } = parseParams(receiptsParams, request.query);
      const receipts = await listReceipts(core.db, { limit, before });
      const next = receipts.length === limit ? (receipts.at(-1)?.id ?? null) : null;
      return { body: { receipts: receipts.map(receiptAnswer), nextBefore: next } };
    },
  },
  {
    method: 'get',
    path: `${PRIVACY}/receipts/:id`,
    operationId: 'getPrivacyReceipt',
    ...OPERATOR,
    summary: 'One receipt',
    description: `A receipt by its id (\`prq_…\`).${OFF}`,
    ok: { status: 200, description: 'The receipt.', content: { 'application/json': receiptView } },
    errors: {},
    handle: async (core, request) => ({ body: receiptAnswer(await findReceipt(core.db, request.params.id ?? '')) }),
  },
];

/** The operator API's routes: admitted by the operator token, answered `no-store` (they carry personal data). */
export async function operatorRoutes(app: FastifyInstance, { core }: { core: Core }) {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    if (!operatorApiEnabled(core))
      throw new AppError(404, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`);
    await admitOperator(core, request.headers.authorization, clientAddress(core.config, request.raw), (headers) =>
      reply.headers(headers),
    );
    assertKnownFields(request.routeOptions.config.query ?? NO_FIELDS, request.query);
  });
  for (const route of OPERATOR_ROUTES) {
    app.route({
      method: route.method === 'get' ? 'GET' : 'POST',
      url: route.path,
      config: { query: route.query },
      handler: async (request, reply) => {
        const params = request.params as Record<string, string>;
        const answer = await route.handle(core, { params, query: request.query, body: request.body });
        if (answer.location) reply.header('location', answer.location);
        return reply.status(route.ok.status).send(answer.body);
      },
    });
  }
}
