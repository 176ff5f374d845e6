import { leadEnrichment, localBusinessEnrichment } from '../../src/endpoints/api/enrichment.ts';
import { graphqlFieldOf, type EndpointDefinition } from '../../src/endpoints/define.ts';
import {
  MAX_ENRICH_ROWS,
  PREVIEW_DESCRIPTION,
  PREVIEW_SAMPLE_SIZE,
  type EnrichResult,
} from '../../src/endpoints/enrichment.ts';
import { leadRecord } from '../../src/endpoints/schemas.ts';
import { callEndpoint } from '../../src/http/pipeline.ts';
import { builder } from '../builder.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from '../errors.ts';
import { outputTypeOf } from '../zod-output.ts';
import { list, num, str, type Rec } from './records.ts';

/**
 * Enrichment (`enrichLeads`, `enrichLocalBusinesses`): typed rows in, and for each row what the lead or
 * local-business database matched, with the summary and the daily allowance left.
 */

const MatchStatusEnum = builder.enumType('EnrichmentMatchStatus', {
  description: 'What an enrichment found for a row.',
  values: {
    MATCHED: { value: 'matched', description: 'Found; counted against the daily allowance.' },
    NOT_FOUND: { value: 'not_found', description: 'Nothing matched.' },
    DAILY_LIMIT_REACHED: {
      value: 'daily_limit_reached',
      description: 'Found, but the daily allowance was used up before this row; nothing is shown.',
    },
  } as const,
});

const LeadMatchKeyEnum = builder.enumType('LeadMatchKey', {
  description: 'What a lead was matched by, in order of priority.',
  values: {
    EMAIL: { value: 'email', description: 'The email address.' },
    SOCIAL: { value: 'social', description: 'The social profile URL.' },
    MOBILE: { value: 'mobile', description: 'The mobile number (its last 10 digits).' },
    DOMAIN: { value: 'domain', description: 'The company domain (its most senior person).' },
  } as const,
});

const LocalBusinessMatchKeyEnum = builder.enumType('LocalBusinessMatchKey', {
  description: 'What a local business was matched by, in order of priority.',
  values: {
    PHONE: { value: 'phone', description: 'The phone number.' },
    NAME: { value: 'name', description: 'The name with the city or postal code.' },
    WEBSITE: { value: 'website', description: 'The website.' },
  } as const,
});

const LeadEnrichmentInput = builder.inputType('LeadEnrichmentInput', {
  description: 'A row to match against the lead database: at least one of its fields.',
  fields: (t) => ({
    email: t.string({ description: 'An email address.' }),
    social: t.string({ description: 'A social profile URL (LinkedIn), however written.' }),
    mobile: t.string({ description: 'A mobile number; the last 10 digits are matched, country codes ignored.' }),
    domain: t.string({ description: 'A company domain or website; its most senior person is found.' }),
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

const EnrichedLeadRef = outputTypeOf(
  leadRecord,
  'EnrichedLead',
  'The lead found for a row: the person, then the company (as REST’s lead records); fields without data are null.',
);

const ReviewRef = builder.objectRef<Rec>('EnrichedLocalBusinessReview').implement({
  description: 'A review of a local business.',
  fields: (t) => ({
    author: t.string({ description: 'The reviewer’s name as shown.', resolve: (r) => r.author as string }),
    rating: t.int({ description: 'Stars given, 1 to 5.', resolve: (r) => r.rating as number }),
    text: t.string({ nullable: true, description: 'The review’s text.', resolve: str('text') }),
    publishedAt: t.string({ description: 'When it was published.', resolve: (r) => r.published_at as string }),
  }),
});

const EnrichedLocalBusinessRef = builder.objectRef<Rec>('EnrichedLocalBusiness').implement({
  description: 'The local business found for a row.',
  fields: (t) => ({
    name: t.string({ nullable: true, description: 'The business’s name.', resolve: str('business_name') }),
    phone: t.string({ nullable: true, description: 'Phone number.', resolve: str('phone') }),
    website: t.string({ nullable: true, description: 'Website.', resolve: str('website') }),
    emails: t.stringList({ description: 'Email addresses found.', resolve: list('emails') }),
    address: t.string({ nullable: true, description: 'The address in one line.', resolve: str('address') }),
    city: t.string({ nullable: true, description: 'City.', resolve: str('city') }),
    state: t.string({ nullable: true, description: 'State or region.', resolve: str('state') }),
    postalCode: t.string({ nullable: true, description: 'Postal code.', resolve: str('postal_code') }),
    countryCode: t.string({
      nullable: true,
      description: 'Two-letter ISO country code.',
      resolve: str('country_code'),
    }),
    category: t.string({ nullable: true, description: 'Its category.', resolve: str('category') }),
    rating: t.float({ nullable: true, description: 'Average rating, 1 to 5.', resolve: num('rating') }),
    reviewCount: t.int({ nullable: true, description: 'Number of reviews.', resolve: num('review_count') }),
    reviews: t.field({
      type: [ReviewRef],
      description: 'Its latest reviews.',
      resolve: (r) => (r.reviews ?? []) as Rec[],
    }),
    contactPerson: t.string({
      nullable: true,
      description: 'A contact person, when known.',
      resolve: str('contact_person'),
    }),
  }),
});

/** A REST answer row (the caller's row, then what was found) with the emails the caller sent. */
interface EnrichedRow {
  row: Rec;
  sentEmails: ReadonlySet<unknown>;
}

const LeadEnrichmentRowRef = builder.objectRef<EnrichedRow>('LeadEnrichmentRow').implement({
  description: 'What lead enrichment found for one row, in the order the rows were sent.',
  fields: (t) => ({
    matchStatus: t.field({
      type: MatchStatusEnum,
      description: 'Whether the row matched.',
      resolve: (r) => r.row.match_status as 'matched',
    }),
    matchedBy: t.field({
      type: LeadMatchKeyEnum,
      nullable: true,
      description: 'What it matched by; null unless MATCHED.',
      resolve: (r) => (r.row.matched_by ?? null) as 'email' | null,
    }),
    lead: t.field({
      type: EnrichedLeadRef,
      nullable: true,
      description: 'The lead found; null unless MATCHED.',
      resolve: ({ row, sentEmails }) => {
        if (row.match_status !== 'matched') return null;
        // REST's row is the caller's row with the lead's fields written over it: an email the caller sent
        // stays when the lead found (by another key, as email matches first) has none. It is not the lead's.
        return row.matched_by !== 'email' && sentEmails.has(row.email) ? { ...row, email: null } : row;
      },
    }),
  }),
});

const LocalBusinessEnrichmentRowRef = builder.objectRef<EnrichedRow>('LocalBusinessEnrichmentRow').implement({
  description: 'What local-business enrichment found for one row, in the order the rows were sent.',
  fields: (t) => ({
    matchStatus: t.field({
      type: MatchStatusEnum,
      description: 'Whether the row matched.',
      resolve: (r) => r.row.match_status as 'matched',
    }),
    matchedBy: t.field({
      type: LocalBusinessMatchKeyEnum,
      nullable: true,
      description: 'What it matched by; null unless MATCHED.',
      resolve: (r) => (r.row.matched_by ?? null) as 'phone' | null,
    }),
    business: t.field({
      type: EnrichedLocalBusinessRef,
      nullable: true,
      description: 'The business found; null unless MATCHED.',
      resolve: ({ row }) => (row.match_status === 'matched' ? row : null),
    }),
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
    notFound: t.int({ description: 'Rows with no match.', resolve: (s) => s.not_found }),
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
    rows ? rows.map((row) => ({ row, sentEmails: p.sentEmails ?? new Set() })) : null;
  return builder.objectRef<EnrichPayload>(name).implement({
    description:
      `What ${what} answers: every row with what was found (or, for a preview, the count and a sample), or ` +
      `\`userErrors\`.`,
    fields: (t) => ({
      rows: t.field({
        type: [rowRef],
        nullable: true,
        description: 'Every row sent, in order; null for a preview or when refused.',
        resolve: (p) => rowsOf(p, p.result?.rows),
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

function enrichMutation(
  endpoint: EndpointDefinition<unknown, EnrichResult<string>>,
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
        `(DAILY_LIMIT_REACHED once used up), a preview counts nothing. The same as REST POST ${endpoint.rest.path}.`,
      args: {
        rows: t.arg({
          type: [rowInput],
          required: true,
          description: `Rows to match, 1 to ${MAX_ENRICH_ROWS.toLocaleString('en-US')}.`,
        }),
        preview: t.arg.boolean({ description: PREVIEW_DESCRIPTION }),
      },
      resolve: (_, args, ctx) =>
        mutationPayload(async () => {
          const inputs = (args.rows as Rec[]).map((row) => restRow(row, names));
          const { body } = await callEndpoint(
            ctx.core,
            ctx.principal,
            endpoint,
            { rows: inputs, preview: args.preview ?? undefined },
            { shape: (r) => r },
          );
          return { result: body, sentEmails: new Set(inputs.map((row) => row.email).filter(Boolean)) };
        }),
    }),
  );
}

// A mobile is sent under an alias the lead's fields never take, so REST's row cannot mix the caller's number with the
// lead's.
enrichMutation(
  leadEnrichment as never,
  EnrichLeadsPayloadRef,
  LeadEnrichmentInput,
  'Lead enrichment: the person and company found for each row (match priority email, social, mobile, domain)',
  { mobile: 'mobile_phone' },
);
enrichMutation(
  localBusinessEnrichment as never,
  EnrichLocalBusinessesPayloadRef,
  LocalBusinessEnrichmentInput as never,
  'Local-business enrichment: the business found for each row (match priority phone, name with city or postal code, ' +
    'website)',
  { postalCode: 'postal_code' },
);
