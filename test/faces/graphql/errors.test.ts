import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLError, print, type GraphQLEnumType, type GraphQLFormattedError } from 'graphql';
import { schema } from '../../../schema/index.ts';
import { ENDPOINTS } from '../../../src/endpoints/index.ts';
import { graphQLCode, graphQLErrorOf, graphQLMessage } from '../../../src/http/errors.ts';
import { AppError, ValidationError } from '../../../src/shared/errors.ts';
import { startTestApp, DENVER_DENTISTS, type TestApp } from '../../helpers/app.ts';
import { graphql } from '../../helpers/gql/index.ts';

/**
 * v2 errors a frontend can branch on: `extensions.code` is the REST code in SCREAMING_SNAKE_CASE on
 * every GraphQL error, the `ErrorCode` enum lists every code, mutations answer the caller's mistakes
 * as `userErrors`, top-level errors are left to authentication, rate limiting and internal failures,
 * a plan-gated root field fails alone, and messages name GraphQL fields, not REST routes.
 */

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

const ZeroRuns = graphql(`query ErrorsZeroRuns { runs(first: 0) { totalCount } }`);
const ViewerId = graphql(`query ErrorsViewerId { viewer { id } }`);
const PlanGated = graphql(
  `query ErrorsPlanGated { viewer { plan } leads(first: 1) { totalCount } stores(first: 1) { totalCount } }`,
);
const StartMaps = graphql(`
  mutation ErrorsStartMaps($input: StartMapsScrapeInput!) { startMapsScrape(input: $input) { run { id } userErrors { code field message } } }
`);
const StartEmailFinder = graphql(`
  mutation ErrorsStartEmailFinder($input: StartEmailFinderInput!) { startEmailFinder(input: $input) { run { id } userErrors { code field } } }
`);
const EnrichOne = graphql(
  `mutation ErrorsEnrichOne { enrichLeads(rows: [{ email: "a@b.co" }]) { rows { matchStatus } userErrors { code } } }`,
);
const BuyTwenty = graphql(
  `mutation ErrorsBuyTwenty { buyCredits(amount: "20") { purchase { amount } userErrors { code } } }`,
);
const Enrich = graphql(`
  mutation ErrorsEnrich($rows: [LeadEnrichmentInput!]!) { enrichLeads(rows: $rows) { summary { matched } userErrors { code } } }
`);
const StartEmailValidator = graphql(
  `mutation ErrorsStartEmailValidator { startEmailValidator(input: { emails: ["a@example.com"] }) { run { id } } }`,
);
const Cancel = graphql(
  `mutation ErrorsCancel($id: ID!) { cancelRun(id: $id) { run { id } userErrors { code field } } }`,
);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

/** Every code an AppError is made with in src/ and schema/ (`new AppError(403, 'plan_required', …)`, `super(429, 'rate_limited', …)`). */
function thrownCodes(): Set<string> {
  const codes = new Set<string>();
  for (const file of [...sourceFiles(path.join(ROOT, 'src')), ...sourceFiles(path.join(ROOT, 'schema'))]) {
    for (const match of readFileSync(file, 'utf8').matchAll(/(?:new AppError|super)\(\s*\d{3},\s*'([a-z_]+)'/g))
      codes.add(match[1]!);
  }
  return codes;
}

describe('the ErrorCode enum', () => {
  const values = new Set((schema.getType('ErrorCode') as GraphQLEnumType).getValues().map((v) => v.name));

  it('holds every code an endpoint declares and every code an AppError of src/ carries, in SCREAMING_SNAKE_CASE', () => {
    const thrown = thrownCodes();
    expect(thrown.size).toBeGreaterThan(20);
    const declared = ENDPOINTS.flatMap((e) => Object.values(e.errors).flat());
    const rest = [...thrown, ...declared, 'validation_failed', 'not_found', 'unauthenticated', 'internal_error'];
    const missing = rest.map(graphQLCode).filter((code) => !values.has(code));
    expect(missing).toEqual([]);
    for (const value of values) expect(value).toMatch(/^[A-Z][A-Z0-9_]*$/);
  });

  it('holds the codes of GraphQL documents and variables', () => {
    for (const code of ['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT'])
      expect(values).toContain(code);
  });
});

describe('graphQLErrorOf', () => {
  it('gives an AppError its REST code in SCREAMING_SNAKE_CASE, with its details', () => {
    const err = new ValidationError([{ path: 'amount', message: 'must be at least 10' }]);
    expect(graphQLErrorOf(err)).toEqual({
      message: 'amount: must be at least 10',
      extensions: { code: 'VALIDATION_FAILED', details: [{ path: 'amount', message: 'must be at least 10' }] },
    });
    expect(graphQLErrorOf(new AppError(401, 'unauthenticated', 'Send your key')).extensions).toMatchObject({
      code: 'UNAUTHENTICATED',
      http: { status: 401 },
    });
  });

  it('words a REST route as the GraphQL field that does the same, and leaves REST’s message alone', () => {
    const rest = 'The wallet cannot pay for one place (0.0099 USD). Buy credits with POST /api/v1/buy-credits.';
    const err = new AppError(402, 'insufficient_funds', rest);
    expect(graphQLErrorOf(err).message).toBe(
      'The wallet cannot pay for one place (0.0099 USD). Buy credits with the buyCredits mutation.',
    );
    expect(err.toBody().error.message).toBe(rest);
    expect(graphQLMessage('see search_translation; start with POST /api/v1/scrape/maps')).toBe(
      'see searchTranslation; start with the startMapsScrape mutation',
    );
  });

  it('codes GraphQL’s own errors: documents that do not parse or validate, variables that do not coerce', () => {
    expect(graphQLErrorOf(new GraphQLError('Syntax Error: Expected Name, found <EOF>.')).extensions.code).toBe(
      'GRAPHQL_PARSE_FAILED',
    );
    expect(graphQLErrorOf(new GraphQLError('Cannot query field "nope" on type "Account".')).extensions.code).toBe(
      'GRAPHQL_VALIDATION_FAILED',
    );
    expect(
      graphQLErrorOf(new GraphQLError('Variable "$id" of required type "ID!" was not provided.')).extensions.code,
    ).toBe('BAD_USER_INPUT');
    // A code already given is kept.
    expect(
      graphQLErrorOf(new GraphQLError('x', { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })).extensions.code,
    ).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('masks anything else as INTERNAL_ERROR, never showing its message', () => {
    expect(graphQLErrorOf(new Error('password=hunter2'))).toEqual({
      message: 'Something went wrong on our side; the error was logged.',
      extensions: { code: 'INTERNAL_ERROR' },
    });
    const located = new GraphQLError('boom', { path: ['viewer'], originalError: new TypeError('x is undefined') });
    expect(graphQLErrorOf(located).extensions.code).toBe('INTERNAL_ERROR');
  });
});

describe('over HTTP', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ worker: false, config: { dailyEnrichmentMatches: 1 } });
    ({ apiKey: key } = await t.account());
  });
  afterAll(() => t?.stop());

  it('every top-level error of a document, a validation and a refusal carries a code', async () => {
    // Strings: documents that do not parse or validate, and variables that do not coerce.
    const answers = [
      await t.graphql(key, '{ viewer { nope } }'),
      await t.graphql(key, '{ viewer '),
      await t.graphql(key, 'mutation { buyCredits(amount: 20.5) { userErrors { code } } }'),
      await t.graphql(key, ZeroRuns),
      await t.request('POST', '/graphql', { body: { query: print(ViewerId) } }),
      await t.graphql(key, 'query ($id: ID!) { run(id: $id) { id } }'),
      await t.graphql(key, 'query ($first: Int) { runs(first: $first) { totalCount } }', { first: 'ten' }),
    ];
    const codes = answers.map((res) => res.body.errors!.map((e: GraphQLFormattedError) => e.extensions?.code));
    expect(codes).toEqual([
      ['GRAPHQL_VALIDATION_FAILED'],
      ['GRAPHQL_PARSE_FAILED'],
      ['GRAPHQL_VALIDATION_FAILED'],
      ['VALIDATION_FAILED'],
      ['UNAUTHENTICATED'],
      ['BAD_USER_INPUT'],
      ['BAD_USER_INPUT'],
    ]);
  });

  it('a starter key keeps `viewer` and gets PLAN_REQUIRED for the plan-gated fields alone', async () => {
    const { apiKey } = await t.account({ plan: 'starter' });
    const res = await t.graphql(apiKey, PlanGated);
    expect(res.body.data).toEqual({ viewer: { plan: 'STARTER' }, leads: null, stores: null });
    expect(res.body.errors!.map((e) => [e.path, e.extensions!.code])).toEqual([
      [['leads'], 'PLAN_REQUIRED'],
      [['stores'], 'PLAN_REQUIRED'],
    ]);
  });

  describe('mutations answer the caller’s mistakes as userErrors', () => {
    it('INSUFFICIENT_FUNDS, in GraphQL’s words (REST keeps its own)', async () => {
      const { apiKey } = await t.account({ creditsMicros: 0n });
      const res = await t.graphql(apiKey, StartMaps, { input: DENVER_DENTISTS });
      expect(res.body.errors).toBeUndefined();
      const { run, userErrors } = res.body.data!.startMapsScrape;
      expect(run).toBeNull();
      expect(userErrors).toEqual([
        {
          code: 'INSUFFICIENT_FUNDS',
          field: null,
          message: expect.stringContaining('Buy credits with the buyCredits mutation.'),
        },
      ]);
      expect(userErrors[0]!.message).not.toContain('/api/v1');
      const rest = await t.request('POST', '/api/v1/scrape/maps', { key: apiKey, body: DENVER_DENTISTS });
      expect(rest.body.error.message).toContain('Buy credits with POST /api/v1/buy-credits.');
    });

    it('VALIDATION_FAILED with the input field’s path, in camelCase', async () => {
      const res = await t.graphql(key, StartEmailFinder, {
        input: { contacts: [{ firstName: 'J'.repeat(101), lastName: 'Doe', domain: 'acme.com' }] },
      });
      expect(res.body.data!.startEmailFinder).toEqual({
        run: null,
        userErrors: [{ code: 'VALIDATION_FAILED', field: ['input', 'contacts', '0', 'firstName'] }],
      });
    });

    it('PLAN_REQUIRED, SUBSCRIPTION_INACTIVE and DAILY_LIMIT_REACHED', async () => {
      const starter = await t.account({ plan: 'starter' });
      const gated = await t.graphql(starter.apiKey, EnrichOne);
      expect(gated.body.data!.enrichLeads).toEqual({ rows: null, userErrors: [{ code: 'PLAN_REQUIRED' }] });

      const trial = await t.account({ subscriptionStatus: 'TRIAL' });
      const inactive = await t.graphql(trial.apiKey, BuyTwenty);
      expect(inactive.body.data!.buyCredits).toEqual({
        purchase: null,
        userErrors: [{ code: 'SUBSCRIPTION_INACTIVE' }],
      });

      const [person] = await t.app.core.sql`select email from person where email is not null limit 1`;
      const first = await t.graphql(key, Enrich, { rows: [{ email: person!.email }] });
      expect(first.body.data!.enrichLeads).toEqual({ summary: { matched: 1 }, userErrors: [] });
      const over = await t.graphql(key, Enrich, { rows: [{ email: person!.email }] });
      expect(over.body.errors).toBeUndefined();
      expect(over.body.data!.enrichLeads).toEqual({ summary: null, userErrors: [{ code: 'DAILY_LIMIT_REACHED' }] });
    });

    it('NOT_CANCELLABLE and NOT_FOUND', async () => {
      const started = await t.graphql(key, StartEmailValidator);
      const id = started.body.data!.startEmailValidator.run!.id;
      expect((await t.graphql(key, Cancel, { id })).body.data!.cancelRun).toEqual({
        run: null,
        userErrors: [{ code: 'NOT_CANCELLABLE', field: null }],
      });
      expect((await t.graphql(key, Cancel, { id: 'nope' })).body.data!.cancelRun).toEqual({
        run: null,
        userErrors: [{ code: 'NOT_FOUND', field: null }],
      });
    });
  });
});
