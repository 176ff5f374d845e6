import { pagingParams } from '../src/shared/params.ts';
import { localBusinessSearchParams } from '../src/endpoints/local-business-search.ts';
import { storeSearchParams } from '../src/endpoints/store-search.ts';
import { localBusinessDatabase, storeDatabase } from '../src/endpoints/api/database.ts';
import { leadEnrichment, localBusinessEnrichment } from '../src/endpoints/api/enrichment.ts';
import type { EndpointDefinition } from '../src/endpoints/define.ts';
import type { SearchPage } from '../src/endpoints/search.ts';
import { leadRecord } from '../src/endpoints/schemas.ts';
import type { EnrichResult } from '../src/endpoints/enrichment.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { MAX_ENRICH_ROWS, PREVIEW_DESCRIPTION, PREVIEW_SAMPLE_SIZE } from '../src/endpoints/enrichment.ts';
import { STORE_SOCIALS } from '../db/tables/stores.ts';
import { builder } from './builder.ts';
import { AFTER_DESCRIPTION, connectionOf, connectionType, FIRST_DESCRIPTION, pageSize } from './connection.ts';
import { mutationPayload, USER_ERRORS_DESCRIPTION, UserErrorRef, type UserError } from './errors.ts';
import { globalId } from './node.ts';
import { inputTypeOf } from './zod-input.ts';
import { outputTypeOf } from './zod-output.ts';

type Rec = Record<string, unknown>;
const str = (k: string) => (r: Rec) => (r[k] ?? null) as string | null;
const num = (k: string) => (r: Rec) => (r[k] ?? null) as number | null;
const list = (k: string) => (r: Rec) => (r[k] ?? []) as string[];

/*
 * Local businesses and stores have global ids (unique across types) but are not Nodes: no record
 * says which of them an account has received, and refetching any by id would read the catalog
 * around its plan gate and daily allowance (docs/graphql.md, "Conventions").
 */

const LocalBusinessRef = builder.objectRef<Rec>('LocalBusiness').implement({
  description: 'A local business of the map-listing catalog.',
  fields: (t) => ({
    id: t.id({ description: 'The business’s global id.', resolve: (r) => globalId('biz', r.id as number) }),
    databaseId: t.id({
      description: 'The business’s id in the catalog (the `id` of REST’s records).',
      resolve: (r) => String(r.id),
    }),
    placeId: t.string({ description: 'The map listing’s place id.', resolve: (r) => r.place_id as string }),
    name: t.string({ description: 'The business’s name.', resolve: (r) => r.name as string }),
    category: t.string({ description: 'Its category, e.g. "Dentist".', resolve: (r) => r.category as string }),
    street: t.string({ nullable: true, description: 'Street and number.', resolve: str('street') }),
    city: t.string({ description: 'City.', resolve: (r) => r.city as string }),
    state: t.string({ nullable: true, description: 'State or region.', resolve: str('state') }),
    postalCode: t.string({ nullable: true, description: 'Postal code.', resolve: str('postal_code') }),
    countryCode: t.string({ description: 'Two-letter ISO country code.', resolve: (r) => r.country_code as string }),
    latitude: t.float({ description: 'Latitude.', resolve: (r) => r.lat as number }),
    longitude: t.float({ description: 'Longitude.', resolve: (r) => r.lng as number }),
    phone: t.string({ nullable: true, description: 'Phone number.', resolve: str('phone') }),
    website: t.string({ nullable: true, description: 'Website.', resolve: str('website') }),
    emails: t.stringList({ description: 'Email addresses found.', resolve: list('emails') }),
    rating: t.float({ nullable: true, description: 'Average rating, 1 to 5.', resolve: num('rating') }),
    reviewCount: t.int({ description: 'Number of reviews.', resolve: (r) => r.review_count as number }),
    openingHours: t.stringList({ description: 'Opening hours, one line per day.', resolve: list('opening_hours') }),
    contactName: t.string({
      nullable: true,
      description: 'A contact person, when known.',
      resolve: str('contact_name'),
    }),
  }),
});

const SOCIAL_TEXT = (s: string) => `The store’s ${s} profile.`;

const StoreSocialProfilesRef = builder.objectRef<Rec>('StoreSocialProfiles').implement({
  description: 'A store’s social profiles; null where it has none.',
  fields: (t) =>
    Object.fromEntries(
      STORE_SOCIALS.map((s) => [
        s,
        t.string({ nullable: true, description: SOCIAL_TEXT(s), resolve: str(`${s}_url`) }),
      ]),
    ),
});

const StoreRef = builder.objectRef<Rec>('Store').implement({
  description: 'An e-commerce store.',
  fields: (t) => ({
    id: t.id({ description: 'The store’s global id.', resolve: (r) => globalId('store', r.id as number) }),
    databaseId: t.id({
      description: 'The store’s id in the catalog (the `id` of REST’s records).',
      resolve: (r) => String(r.id),
    }),
    domain: t.string({ description: 'The store’s domain.', resolve: (r) => r.domain as string }),
    name: t.string({ description: 'The store’s name.', resolve: (r) => r.name as string }),
    platform: t.string({ description: 'Its e-commerce platform, e.g. shopify.', resolve: (r) => r.platform as string }),
    planTier: t.string({
      nullable: true,
      description: 'Its plan on the platform, when known.',
      resolve: str('plan_tier'),
    }),
    countryCode: t.string({
      nullable: true,
      description: 'Two-letter ISO country code.',
      resolve: str('country_code'),
    }),
    city: t.string({ nullable: true, description: 'City.', resolve: str('city') }),
    state: t.string({ nullable: true, description: 'State or region.', resolve: str('state') }),
    category: t.string({ nullable: true, description: 'Store category.', resolve: str('category') }),
    technologies: t.stringList({ description: 'Technologies the store uses.', resolve: list('technologies') }),
    apps: t.stringList({ description: 'Installed apps (shopify stores).', resolve: list('apps') }),
    emails: t.stringList({ description: 'Email addresses.', resolve: list('emails') }),
    phones: t.stringList({ description: 'Phone numbers.', resolve: list('phones') }),
    socialProfiles: t.field({ type: StoreSocialProfilesRef, description: 'Social profiles.', resolve: (r) => r }),
    estimatedMonthlyVisits: t.int({
      nullable: true,
      description: 'Estimated visits per month.',
      resolve: num('estimated_monthly_visits'),
    }),
    estimatedMonthlySales: t.field({
      type: 'Money',
      nullable: true,
      description: 'Estimated sales per month.',
      resolve: num('estimated_monthly_sales'),
    }),
    employeeCount: t.int({ nullable: true, description: 'Employees.', resolve: num('employee_count') }),
  }),
});

type Page = SearchPage<Rec>;
type CatalogConnection = ReturnType<
  typeof connectionOf<Rec, { totalCountIsEstimate: boolean; dailyAllowanceRemaining: number }>
>;

function catalogConnection(name: string, node: typeof LocalBusinessRef, what: string) {
  return connectionType<Rec, { totalCountIsEstimate: boolean; dailyAllowanceRemaining: number }>(name, node, {
    totalCountMayBeEstimate: true,
    description: `A page of a search of the ${what} database, in id order.`,
    totalCount: 'Size of the whole search: exact, or an estimate when `totalCountIsEstimate`.',
    fields: (t) => ({
      dailyAllowanceRemaining: t.int({
        description: 'Records left in today’s allowance (resets at midnight UTC).',
        resolve: (p: CatalogConnection) => p.dailyAllowanceRemaining,
      }),
    }),
  });
}

const LocalBusinessConnection = catalogConnection('LocalBusiness', LocalBusinessRef, 'local-business');
const StoreConnection = catalogConnection('Store', StoreRef, 'e-commerce store');

/** A database search's page as a connection; a row's cursor is its id, as REST's `next_after` is. */
const connectionOfPage = (result: Page) =>
  connectionOf(
    result.rows,
    { cursorOf: (r) => String(r.id), hasNextPage: result.hasMore, totalCount: result.total },
    { totalCountIsEstimate: result.totalIsEstimate, dailyAllowanceRemaining: result.allowanceRemaining },
  );

type Search = EndpointDefinition<unknown, Page>;

/** Paging is `first` and `after` in GraphQL, so the REST paging parameters are left out of the filters. */
const PAGING = Object.keys(pagingParams);

/**
 * The filters of a catalog database API as a typed input, derived from the service's parameter
 * schema; the service validates them with that schema, as for REST.
 */
const LocalBusinessFilterInput = inputTypeOf(localBusinessSearchParams, 'LocalBusinessFilter', {
  description:
    'The filters of the local-business database (REST GET /api/v1/database/local-businesses; docs/api.md); lists are any-of, every filter is combined with AND.',
  omit: PAGING,
});
const StoreFilterInput = inputTypeOf(storeSearchParams, 'StoreFilter', {
  description:
    'The filters of the e-commerce store database (REST GET /api/v1/database/stores; docs/api.md); lists are any-of, every filter is combined with AND.',
  omit: PAGING,
});

const MAX_RECORDS = 100;

/** A catalog database API as a connection: `filter` takes the REST parameters (paging aside). */
function catalogQuery(
  connection: typeof LocalBusinessConnection,
  filter: typeof LocalBusinessFilterInput,
  search: Search,
  what: string,
) {
  builder.queryField(search.graphql!.field, (t) =>
    t.field({
      type: connection,
      nullable: true,
      description: `The ${what} database (${search.plan} plan and up; null with error PLAN_REQUIRED below it), in id order. Counts against the daily allowance like REST.`,
      args: {
        filter: t.arg({ type: filter.ref as never, description: 'What to search for; no filter searches everything.' }),
        first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_RECORDS, 50) }),
        after: t.arg.string({ description: AFTER_DESCRIPTION }),
      },
      complexity: (args) => ({ field: 10, multiplier: Math.min(args.first ?? 50, MAX_RECORDS) }),
      resolve: async (_, args, ctx) => {
        const first = pageSize(args.first, { max: MAX_RECORDS, byDefault: 50 });
        const input = { ...(filter.decode(args.filter ?? {}) as object), limit: first, after: args.after ?? '0' };
        return (await callEndpoint(ctx.core, ctx.principal, search, input, { shape: connectionOfPage })).body;
      },
    }),
  );
}

catalogQuery(
  LocalBusinessConnection,
  LocalBusinessFilterInput,
  localBusinessDatabase as unknown as Search,
  'local-business',
);
catalogQuery(StoreConnection, StoreFilterInput, storeDatabase as unknown as Search, 'e-commerce store');

// Enrichment: typed rows in and out.

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
    description: `What ${what} answers: every row with what was found (or, for a preview, the count and a sample), or \`userErrors\`.`,
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
        description: `A preview’s first ${PREVIEW_SAMPLE_SIZE} matched rows, their emails, phone numbers and profile URLs masked (j***@acme.com, +1 ***-***-0142); null unless a preview.`,
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
  builder.mutationField(endpoint.graphql!.field, (t) =>
    t.field({
      type: payload,
      description: `${what} (${endpoint.plan} plan and up; user error PLAN_REQUIRED below it): up to ${MAX_ENRICH_ROWS.toLocaleString('en-US')} rows; matches count against the daily allowance (DAILY_LIMIT_REACHED once used up), a preview counts nothing. The same as REST POST ${endpoint.rest.path}.`,
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

// A mobile is sent under an alias the lead's fields never take, so REST's row cannot mix the caller's number with the lead's.
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
  'Local-business enrichment: the business found for each row (match priority phone, name with city or postal code, website)',
  { postalCode: 'postal_code' },
);
