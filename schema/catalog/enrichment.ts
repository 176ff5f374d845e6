import { leadEnrichment, localBusinessEnrichment } from '../../src/endpoints/api/enrichment.ts';
import { graphqlFieldOf, type EndpointContext, type EndpointDefinition } from '../../src/endpoints/define.ts';
import { enrichLeads } from '../../src/endpoints/enrich-leads.ts';
import { enrichLocalBusinesses } from '../../src/endpoints/enrich-local-businesses.ts';
import {
  MAX_ENRICH_ROWS,
  PREVIEW_DESCRIPTION,
  PREVIEW_SAMPLE_SIZE,
  type EnrichOptions,
  type EnrichResult,
} from '../../src/endpoints/enrichment.ts';
import { findEnrichmentJob, MAX_FILE_NAME } from '../../src/endpoints/enrichment-jobs.ts';
import { callEndpoint } from '../../src/http/pipeline.ts';
import { builder } from '../builder.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from '../errors.ts';
import { EnrichmentJobRef } from './enrichment-jobs.ts';
import { LeadEnrichmentRowRef, LocalBusinessEnrichmentRowRef, rowsWithSent, SkippedRowRef } from './enrichment-rows.ts';
import type { Rec } from './records.ts';

/**
 * Enrichment (`enrichLeads`, `enrichLocalBusinesses`): typed rows in, and for each row what the lead or
 * local-business database matched, with the summary and the daily allowance left. Unlike REST (which
 * refuses a request with a row it cannot match, as the spec says), rows with nothing usable to match on
 * are skipped and reported, people are also matched by full name at a company, and a `fileName` records
 * the enrichment in the account's history (enrichment-jobs.ts).
 */

const LeadEnrichmentInput = builder.inputType('LeadEnrichmentInput', {
  description: 'A row to match against the lead database: at least one of its fields.',
  fields: (t) => ({
    email: t.string({ description: 'An email address.' }),
    social: t.string({ description: 'A social profile URL (LinkedIn), however written.' }),
    mobile: t.string({ description: 'A mobile number; the last 10 digits are matched, country codes ignored.' }),
    domain: t.string({
      description: 'A company domain or website: the person named at it, or else its most senior person.',
    }),
    fullName: t.string({ description: 'The person’s full name, matched at the company (domain or companyName).' }),
    firstName: t.string({ description: 'The first name, with lastName when there is no fullName.' }),
    lastName: t.string({ description: 'The last name, with firstName when there is no fullName.' }),
    companyName: t.string({ description: 'The company’s name, for a name match when there is no domain.' }),
  }),
});

const LocalBusinessEnrichmentInput = builder.inputType('LocalBusinessEnrichmentInput', {
  description:
    'A row to match against the local-business database: a phone, a name with a city or postal code, or a website.',
  fields: (t) => ({
    phone: t.string({ description: 'A phone number; one without a country is tried as US and as Canadian.' }),
    name: t.string({ description: 'The business’s name (with city or postalCode).' }),
    city: t.string({ description: 'The city of a name match.' }),
    postalCode: t.string({ description: 'The postal code of a name match.' }),
    state: t.string({ description: 'The state, which separates same-name places.' }),
    country: t.string({ description: 'The country, ISO code or name.' }),
    website: t.string({ description: 'The business’s website (one location of the business).' }),
  }),
});

interface EnrichPayload {
  result?: EnrichResult<string>;
  sentEmails?: ReadonlySet<unknown>;
  userErrors: UserError[];
}

const EnrichmentSummaryRef = builder.objectRef<EnrichResult<string>['summary']>('EnrichmentSummary').implement({
  description: 'How an enrichment went.',
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'Rows sent.' }),
    matched: t.exposeInt('matched', { description: 'Rows matched (and counted, unless a preview).' }),
    notFound: t.int({ description: 'Rows looked up with no match.', resolve: (s) => s.not_found }),
    skipped: t.int({
      description: 'Rows skipped for having nothing usable to match on (see `skipped`); never counted.',
      resolve: (s) => s.skipped ?? 0,
    }),
    matchedBy: t.field({
      type: [
        builder.objectRef<{ key: string; count: number }>('EnrichmentMatchCount').implement({
          description: 'How many rows matched by one key.',
          fields: (f) => ({
            key: f.exposeString('key', {
              description: 'The match key, as the row’s `matchedBy` names it (lower case).',
            }),
            count: f.exposeInt('count', { description: 'Rows matched by it.' }),
          }),
        }),
      ],
      description: 'Rows matched by each key, in order of priority.',
      resolve: (s) => Object.entries(s.by).map(([key, count]) => ({ key, count: count as number })),
    }),
  }),
});

function enrichPayloadType(name: string, rowRef: typeof LeadEnrichmentRowRef, what: string) {
  const rowsOf = (p: EnrichPayload, rows: Rec[] | undefined) =>
    rows ? rowsWithSent(rows, p.sentEmails ?? new Set()) : null;
  return builder.objectRef<EnrichPayload>(name).implement({
    description:
      `What ${what} answers: every row with what was found (or, for a preview, the count and a sample), or ` +
      `\`userErrors\`.`,
    fields: (t) => ({
      rows: t.field({
        type: [rowRef],
        nullable: true,
        description: 'Every row sent, in order (a skipped one as SKIPPED); null for a preview or when refused.',
        resolve: (p) => rowsOf(p, p.result?.rows),
      }),
      skipped: t.field({
        type: [SkippedRowRef],
        nullable: true,
        description: 'The rows skipped for having nothing usable to match on, with why; null when refused.',
        resolve: (p) => p.result?.skipped ?? (p.result ? [] : null),
      }),
      job: t.field({
        type: EnrichmentJobRef,
        nullable: true,
        description: 'The job recorded in the account’s history (`fileName` given, not a preview); null otherwise.',
        resolve: async (p, _, ctx) =>
          p.result?.job
            ? ((await findEnrichmentJob(ctx.core.db, ctx.principal.accountId, p.result.job.id)) ?? null)
            : null,
      }),
      sample: t.field({
        type: [rowRef],
        nullable: true,
        description:
          `A preview’s first ${PREVIEW_SAMPLE_SIZE} matched rows, their emails, phone numbers and profile URLs ` +
          `masked (j***@acme.com, +1 ***-***-0142); null unless a preview.`,
        resolve: (p) => rowsOf(p, p.result?.sample),
      }),
      preview: t.boolean({
        nullable: true,
        description: 'True for a preview, which counts nothing; null when refused.',
        resolve: (p) => (p.result ? p.result.preview === true : null),
      }),
      summary: t.field({
        type: EnrichmentSummaryRef,
        nullable: true,
        description: 'Counts of the rows; null when refused.',
        resolve: (p) => p.result?.summary ?? null,
      }),
      dailyAllowanceRemaining: t.int({
        nullable: true,
        description: 'Matches left in today’s allowance; null for a preview or when refused.',
        resolve: (p) => p.result?.daily_allowance?.remaining ?? null,
      }),
      userErrors: t.field({ type: [UserErrorRef], description: USER_ERRORS_DESCRIPTION, resolve: (p) => p.userErrors }),
    }),
  });
}

const EnrichLeadsPayloadRef = enrichPayloadType('EnrichLeadsPayload', LeadEnrichmentRowRef, '`enrichLeads`');
const EnrichLocalBusinessesPayloadRef = enrichPayloadType(
  'EnrichLocalBusinessesPayload',
  LocalBusinessEnrichmentRowRef,
  '`enrichLocalBusinesses`',
);

/** A typed input row as the service reads it (REST field names), without the fields not given. */
const restRow = (row: Rec, names: Record<string, string> = {}) =>
  Object.fromEntries(
    Object.entries(row)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [names[k] ?? k, v]),
  );

type EnrichDomain = (
  core: EndpointContext['core'],
  principal: EndpointContext['principal'],
  body: unknown,
  options: EnrichOptions,
) => Promise<EnrichResult<string>>;

/**
 * One enrichment mutation: the endpoint's declaration (plan gate, allowance) around its domain function,
 * asked to skip unusable rows, to match names (`matchNames`), and to record a job when a `fileName` is given.
 */
function enrichMutation(
  endpoint: EndpointDefinition<unknown, EnrichResult<string>>,
  enrich: { run: EnrichDomain; kind: 'leads' | 'local_businesses'; matchNames: boolean },
  payload: typeof EnrichLeadsPayloadRef,
  rowInput: typeof LeadEnrichmentInput,
  what: string,
  names?: Record<string, string>,
) {
  builder.mutationField(graphqlFieldOf(endpoint), (t) =>
    t.field({
      type: payload,
      description:
        `${what} (${endpoint.plan} plan and up; user error PLAN_REQUIRED below it): up to ` +
        `${MAX_ENRICH_ROWS.toLocaleString('en-US')} rows; matches count against the daily allowance ` +
        `(DAILY_LIMIT_REACHED once used up), a preview counts nothing. As REST POST ${endpoint.rest.path}, except ` +
        'that a row with nothing usable to match on is skipped and reported in `skipped` (REST refuses the request), ' +
        'and that a `fileName` records the enrichment in `enrichmentJobs`.',
      args: {
        rows: t.arg({
          type: [rowInput],
          required: true,
          description: `Rows to match, 1 to ${MAX_ENRICH_ROWS.toLocaleString('en-US')}.`,
        }),
        preview: t.arg.boolean({ description: PREVIEW_DESCRIPTION }),
        fileName: t.arg.string({
          description:
            'The name of the file the rows come from: the enrichment (not a preview) is then recorded in the ' +
            `account’s history (\`enrichmentJobs\`) with its rows, kept 48 hours. At most ${MAX_FILE_NAME} characters.`,
        }),
      },
      resolve: (_, args, ctx) =>
        mutationPayload(async () => {
          const inputs = (args.rows as Rec[]).map((row) => restRow(row, names));
          const options: EnrichOptions = {
            skipUnusable: true,
            matchNames: enrich.matchNames,
            job: args.fileName && !args.preview ? { kind: enrich.kind, fileName: args.fileName } : undefined,
          };
          const { body } = await callEndpoint(
            ctx.core,
            ctx.principal,
            { ...endpoint, handler: (c, input) => enrich.run(c.core, c.principal, input, options) },
            { rows: inputs, preview: args.preview ?? undefined },
            { shape: (r) => r },
          );
          return { result: body, sentEmails: new Set(inputs.map((row) => row.email).filter(Boolean)) };
        }),
    }),
  );
}

// A mobile and a company name are sent under aliases the lead's fields never take, so REST's row cannot mix the
// caller's values with the lead's.
enrichMutation(
  leadEnrichment as never,
  { run: enrichLeads as EnrichDomain, kind: 'leads', matchNames: true },
  EnrichLeadsPayloadRef,
  LeadEnrichmentInput,
  'Lead enrichment: the person and company found for each row (match priority email, social, mobile, full name at ' +
    'the company, domain)',
  {
    mobile: 'mobile_phone',
    fullName: 'full_name',
    firstName: 'first_name',
    lastName: 'last_name',
    companyName: 'company',
  },
);
enrichMutation(
  localBusinessEnrichment as never,
  { run: enrichLocalBusinesses as EnrichDomain, kind: 'local_businesses', matchNames: false },
  EnrichLocalBusinessesPayloadRef,
  LocalBusinessEnrichmentInput as never,
  'Local-business enrichment: the business found for each row (match priority phone, name with city or postal code, ' +
    'website)',
  { postalCode: 'postal_code' },
);
