import type { CompanyRecord } from '../src/endpoints/lead-search.ts';
import { leadDatabase } from '../src/endpoints/api/database.ts';
import { peopleSearchTranslation } from '../src/endpoints/schemas.ts';
import { type EndpointDefinition, graphqlFieldOf } from '../src/endpoints/define.ts';
import type { SearchPage } from '../src/endpoints/search.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import type { LeadRow } from '../src/catalog/leads/query.ts';
import { leadSearchParams } from '../src/catalog/leads/params.ts';
import { DEPARTMENTS, SENIORITIES } from '../db/tables/leads.ts';
import { builder } from './builder.ts';
import type { GraphQLContext } from './context.ts';
import { AFTER_DESCRIPTION, connectionOf, connectionType, FIRST_DESCRIPTION, pageSize } from './connection.ts';
import { globalId, NodeRef, registerNode } from './node.ts';
import { withoutNulls } from './zod-input.ts';
import { outputTypeOf } from './zod-output.ts';

const COMPANY_PREFIX = 'company';
const LEAD_PREFIX = 'lead';

export const CompanyRef = builder.objectRef<CompanyRecord>('Company').implement({
  description: 'A company of the lead database.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.id({
      description: 'The company’s global id; `node(id:)` finds it once the account has received a lead of it.',
      resolve: (c) => globalId(COMPANY_PREFIX, c.id),
    }),
    databaseId: t.id({ description: 'The company’s id in the lead database.', resolve: (c) => String(c.id) }),
    name: t.exposeString('name', { description: 'The company’s name.' }),
    domain: t.exposeString('domain', { description: 'The company’s web domain.' }),
    website: t.string({
      description: 'The company’s website (https://domain).',
      resolve: (c) => `https://${c.domain}`,
    }),
    industry: t.exposeString('industry', { nullable: true, description: 'The company’s industry.' }),
    size: t.exposeString('sizeBand', { nullable: true, description: 'Employee band, e.g. "51-200".' }),
    employeesCount: t.exposeInt('employeesCount', { nullable: true, description: 'Employees.' }),
    annualRevenue: t.field({
      type: 'Money',
      nullable: true,
      description: 'Annual revenue.',
      resolve: (c) => c.annualRevenue,
    }),
    city: t.exposeString('city', { nullable: true, description: 'City of the headquarters.' }),
    state: t.exposeString('state', { nullable: true, description: 'State of the headquarters.' }),
    country: t.exposeString('country', { nullable: true, description: 'Country of the headquarters.' }),
    keywords: t.exposeStringList('keywords', { description: 'The company’s keywords.' }),
    technologies: t.exposeStringList('technologies', { description: 'Technologies the company uses.' }),
    founded: t.exposeInt('founded', { nullable: true, description: 'Year founded.' }),
    phone: t.exposeString('phone', { nullable: true, description: 'The company’s phone.' }),
    linkedinUrl: t.exposeString('linkedinUrl', { nullable: true, description: 'The company’s LinkedIn page.' }),
  }),
});

registerNode(COMPANY_PREFIX, 'Company', {
  load: async (ids, ctx) => {
    const numbers = ids.map(Number);
    const received = await ctx.loaders.deliveredCompany.loadMany(numbers);
    return Promise.all(numbers.map((id, i) => (received[i] === true ? ctx.loaders.company.load(id) : null)));
  },
});

/** What every view of a person of the lead database shows: all but the contact details. */
export type LeadPersonRow = Omit<LeadRow, 'email' | 'phone' | 'mobile'>;

/**
 * A person of the lead database, whether a `Lead` (with contact details, counted) or a `LeadPreview`
 * (the free search's): the fields both show, declared once.
 */
export const LeadPersonRef = builder.interfaceRef<LeadPersonRow>('LeadPerson').implement({
  description:
    'A person of the lead database: a `Lead` (with contact details) or a `LeadPreview` (the free search’s, without).',
  fields: (t) => ({
    databaseId: t.id({
      description: 'The lead’s id in the lead database (the `id` of REST’s lead records).',
      resolve: (p) => p.id,
    }),
    firstName: t.exposeString('first_name', { description: 'First name.' }),
    lastName: t.exposeString('last_name', { description: 'Last name.' }),
    fullName: t.string({ description: 'First and last name.', resolve: (p) => `${p.first_name} ${p.last_name}` }),
    title: t.exposeString('title', { nullable: true, description: 'Job title.' }),
    seniority: t.exposeString('seniority', { nullable: true, description: 'Seniority, e.g. c_suite, vp, director.' }),
    department: t.exposeString('department', { nullable: true, description: 'Department, e.g. sales, engineering.' }),
    linkedinUrl: t.exposeString('linkedin_url', { nullable: true, description: 'LinkedIn profile.' }),
    city: t.exposeString('city', { nullable: true, description: 'The person’s city.' }),
    state: t.exposeString('state', { nullable: true, description: 'The person’s state.' }),
    country: t.exposeString('country', { nullable: true, description: 'The person’s country.' }),
    company: t.field({
      type: CompanyRef,
      nullable: true,
      description: 'Where the person works.',
      resolve: (p, _, ctx) => (p.company_id ? ctx.loaders.company.load(Number(p.company_id)) : null),
    }),
  }),
});

export const LeadRef = builder.objectRef<LeadRow>('Lead').implement({
  description: 'A person of the lead database. Every lead returned is saved to the account.',
  interfaces: [NodeRef, LeadPersonRef],
  fields: (t) => ({
    id: t.id({
      description: 'The lead’s global id; `node(id:)` finds the leads the account has received.',
      resolve: (p) => globalId(LEAD_PREFIX, p.id),
    }),
    email: t.exposeString('email', { nullable: true, description: 'Work email.' }),
    emailStatus: t.exposeString('email_status', {
      nullable: true,
      description: 'How sure the email is, e.g. verified.',
    }),
    phone: t.exposeString('phone', { nullable: true, description: 'Phone.' }),
    mobile: t.exposeString('mobile', { nullable: true, description: 'Mobile phone.' }),
  }),
});

registerNode(LEAD_PREFIX, 'Lead', {
  load: (ids, ctx) =>
    ctx.loaders.deliveredLead.loadMany(ids).then((all) => all.map((l) => (l instanceof Error ? null : l))),
});

/**
 * A filter of a closed vocabulary, described by the lead search's own parameter with its values: GraphQL
 * takes it as strings, since the aliases the search reads ("C-Suite") and "catch-all" are no enum values.
 */
const listed = (field: 'seniority' | 'department', values: readonly string[]) =>
  `${leadSearchParams.shape[field].description} Values: ${values.join(', ')}.`;

/** How a LeadFilter field is typed: text, a list of texts, a flag, a whole number or an amount of USD. */
export type LeadFilterKind = 'string' | 'strings' | 'boolean' | 'int' | 'money';

/**
 * LeadFilter's fields, declared once: the input `LeadFilter` is made from them, and so is the output
 * `SavedLeadFilter` a saved search answers (schema/catalog/saved-searches.ts).
 */
export const LEAD_FILTER_FIELDS: Record<string, [LeadFilterKind, string]> = {
  title: ['string', 'Partial match on the person’s title.'],
  industry: ['strings', 'Company industry, any of (case-insensitive).'],
  country: ['strings', 'The person’s country; US, USA, UK and UAE also work.'],
  state: ['strings', 'The person’s state, name or abbreviation.'],
  city: ['string', 'Partial match on the person’s city.'],
  companyName: ['string', 'Partial match on the company name.'],
  companyDomain: ['string', 'Partial match on the company domain; several domains comma or space separated.'],
  seniority: ['strings', listed('seniority', SENIORITIES)],
  department: ['strings', listed('department', DEPARTMENTS)],
  emailStatus: ['strings', leadSearchParams.shape.emailStatus.description ?? ''],
  hasEmail: ['boolean', 'Only people with an email.'],
  hasPhone: ['boolean', 'Only people with a phone or mobile.'],
  minEmployees: ['int', 'Least company employees.'],
  maxEmployees: ['int', 'Most company employees.'],
  socialUrl: ['string', 'The person’s social profile URL, however it is written.'],
  keywords: ['strings', 'Company keywords, whole words, any of.'],
  revenueMin: ['money', 'Least company annual revenue.'],
  revenueMax: ['money', 'Most company annual revenue.'],
  companyCountry: ['strings', 'Country of the company’s headquarters.'],
  companyState: ['strings', 'State of the company’s headquarters.'],
  companyCity: ['string', 'City of the company’s headquarters.'],
  notTitle: ['strings', 'Leave out titles containing any of these.'],
  notKeywords: ['strings', 'Company keywords, none of.'],
  notIndustry: ['strings', 'Company industry, none of.'],
  technologies: ['strings', 'Technologies the company uses, any of.'],
  technologiesAll: ['strings', 'Technologies the company uses, all of (keep to 1 to 3).'],
  notTechnologies: ['strings', 'Technologies the company uses, none of.'],
  url: ['string', 'A saved people-search URL in the bracket format; explicit filters replace its matching ones.'],
  excludeDelivered: ['boolean', 'Leave out leads this account already received.'],
};

export const LeadFilterInput = builder.inputType('LeadFilter', {
  description:
    'The filters of the lead database (REST GET /api/v1/database/leads; ' +
    'docs/api.md has their exact semantics). Lists are any-of; filters combine with AND.',
  fields: (t) =>
    Object.fromEntries(
      Object.entries(LEAD_FILTER_FIELDS).map(([name, [kind, description]]) => [
        name,
        kind === 'string'
          ? t.string({ description })
          : kind === 'strings'
            ? t.stringList({ description })
            : kind === 'boolean'
              ? t.boolean({ description })
              : kind === 'int'
                ? t.int({ description })
                : t.field({ type: 'Money', description }),
      ]),
    ),
});

export const SearchTranslationRef = outputTypeOf(peopleSearchTranslation, 'PeopleSearchTranslation');

type LeadPage = ReturnType<
  typeof connectionOf<
    LeadRow,
    { totalCountIsEstimate: boolean; searchTranslation: unknown; dailyAllowanceRemaining: number }
  >
>;

const LeadConnectionRef = connectionType<
  LeadRow,
  { totalCountIsEstimate: boolean; searchTranslation: unknown; dailyAllowanceRemaining: number }
>('Lead', LeadRef, {
  totalCountMayBeEstimate: true,
  description: 'A page of a lead search, in id order.',
  totalCount: 'Size of the whole search: exact, or an estimate when `totalCountIsEstimate`.',
  fields: (t) => ({
    searchTranslation: t.field({
      type: SearchTranslationRef as never,
      nullable: true,
      description: 'How the filter’s `url` was read (applied, broadened, unsupported, ignored); null without a url.',
      resolve: (p: LeadPage) => (p.searchTranslation ?? null) as never,
    }),
    dailyAllowanceRemaining: t.int({
      description: 'Records left in today’s allowance (resets at midnight UTC).',
      resolve: (p: LeadPage) => p.dailyAllowanceRemaining,
    }),
  }),
});

export const MAX_LEADS = 100;

/** A LeadFilter as the lead database's parameters read it: nulls left out, Money bounds as numbers. */
export function leadFilterParams(input: object | null | undefined): Record<string, unknown> {
  const filter = withoutNulls(input ?? {}) as Record<string, unknown>;
  for (const bound of ['revenueMin', 'revenueMax'])
    if (typeof filter[bound] === 'string') filter[bound] = Number(filter[bound]);
  return filter;
}

/** What a lead search's endpoint answers (the metered search's, the free preview's). */
type LeadSearchAnswer<R> = SearchPage<R> & { companies: Map<number, CompanyRecord>; translation?: unknown };

/**
 * A page of the lead database through `endpoint` (its plan gate, metering and validation, as REST and
 * MCP call it) as a connection: the `filter`, `first` and `after` of `leads` and `leadSearch`. The page's
 * companies are loaded already: the company field reads them, not the database again.
 */
export async function leadPage<R extends { id: string }>(
  ctx: GraphQLContext,
  endpoint: EndpointDefinition<unknown, LeadSearchAnswer<R>>,
  args: { filter?: object | null; first?: number | null; after?: string | null },
) {
  const first = pageSize(args.first, { max: MAX_LEADS, byDefault: 50 });
  const { body: result } = await callEndpoint(
    ctx.core,
    ctx.principal,
    endpoint,
    { ...leadFilterParams(args.filter), limit: first, after: args.after ?? '0' },
    { shape: (r) => r },
  );
  for (const [id, company] of result.companies) ctx.loaders.company.prime(id, company);
  return connectionOf(
    result.rows,
    { cursorOf: (node) => node.id, hasNextPage: result.hasMore, totalCount: result.total },
    {
      totalCountIsEstimate: result.totalIsEstimate,
      searchTranslation: result.translation ?? null,
      dailyAllowanceRemaining: result.allowanceRemaining,
    },
  );
}

builder.queryField(graphqlFieldOf(leadDatabase), (t) =>
  t.field({
    type: LeadConnectionRef,
    nullable: true,
    description:
      `The lead database (${leadDatabase.plan} plan and up; ` +
      'null with error PLAN_REQUIRED below it), in id order. Counts against the daily allowance like REST.',
    args: {
      filter: t.arg({ type: LeadFilterInput, description: 'What to search for; no filter searches everyone.' }),
      first: t.arg.int({ description: FIRST_DESCRIPTION(MAX_LEADS, 50) }),
      after: t.arg.string({ description: AFTER_DESCRIPTION }),
    },
    complexity: (args) => ({ field: 10, multiplier: Math.min(args.first ?? 50, MAX_LEADS) }),
    resolve: (_, args, ctx) => leadPage(ctx, leadDatabase, args),
  }),
);
