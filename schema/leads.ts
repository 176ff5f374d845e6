import type { CompanyRecord } from '../src/endpoints/lead-search.ts';
import { leadDatabase } from '../src/endpoints/api/database.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import type { LeadRow } from '../src/catalog/leads/query.ts';
import { builder } from './builder.ts';

const CompanyRef = builder.objectRef<CompanyRecord>('Company').implement({
  description: 'A company of the lead database.',
  fields: (t) => ({
    id: t.id({ resolve: (c) => String(c.id) }),
    name: t.exposeString('name'),
    domain: t.exposeString('domain'),
    website: t.string({ resolve: (c) => `https://${c.domain}` }),
    industry: t.exposeString('industry', { nullable: true }),
    size: t.exposeString('sizeBand', { nullable: true, description: 'Employee band, e.g. "51-200".' }),
    employeesCount: t.exposeInt('employeesCount', { nullable: true }),
    annualRevenue: t.exposeFloat('annualRevenue', { nullable: true, description: 'USD.' }),
    city: t.exposeString('city', { nullable: true }),
    state: t.exposeString('state', { nullable: true }),
    country: t.exposeString('country', { nullable: true }),
    keywords: t.exposeStringList('keywords'),
    technologies: t.exposeStringList('technologies'),
    founded: t.exposeInt('founded', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true }),
    linkedinUrl: t.exposeString('linkedinUrl', { nullable: true }),
  }),
});

const LeadRef = builder.objectRef<LeadRow>('Lead').implement({
  description: 'A person of the lead database. Every lead returned is saved to the account.',
  fields: (t) => ({
    id: t.id({ resolve: (p) => p.id }),
    firstName: t.exposeString('first_name'),
    lastName: t.exposeString('last_name'),
    fullName: t.string({ resolve: (p) => `${p.first_name} ${p.last_name}` }),
    title: t.exposeString('title', { nullable: true }),
    seniority: t.exposeString('seniority', { nullable: true }),
    department: t.exposeString('department', { nullable: true }),
    email: t.exposeString('email', { nullable: true }),
    emailStatus: t.exposeString('email_status', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true }),
    mobile: t.exposeString('mobile', { nullable: true }),
    linkedinUrl: t.exposeString('linkedin_url', { nullable: true }),
    city: t.exposeString('city', { nullable: true }),
    state: t.exposeString('state', { nullable: true }),
    country: t.exposeString('country', { nullable: true }),
    company: t.field({ type: CompanyRef, nullable: true, resolve: (p, _, ctx) => (p.company_id ? ctx.loaders.company.load(Number(p.company_id)) : null) }),
  }),
});

const LeadFilterInput = builder.inputType('LeadFilter', {
  description: 'The lead database filters of GET /api/v1/database/leads (see docs/api.md for their exact semantics).',
  fields: (t) => ({
    title: t.string({ description: 'Partial match.' }),
    industry: t.stringList(),
    country: t.stringList({ description: 'Country names; US, USA, UK and UAE also work.' }),
    state: t.stringList(),
    city: t.string({ description: 'Partial match.' }),
    companyName: t.string({ description: 'Partial match.' }),
    companyDomain: t.string({ description: 'Partial match; several domains comma or space separated.' }),
    seniority: t.stringList(),
    department: t.stringList(),
    emailStatus: t.stringList(),
    hasEmail: t.boolean(),
    hasPhone: t.boolean(),
    minEmployees: t.int(),
    maxEmployees: t.int(),
    socialUrl: t.string(),
    keywords: t.stringList({ description: 'Company keywords, whole words, any of.' }),
    revenueMin: t.float(),
    revenueMax: t.float(),
    companyCountry: t.stringList(),
    companyState: t.stringList(),
    companyCity: t.string(),
    notTitle: t.stringList(),
    notKeywords: t.stringList(),
    notIndustry: t.stringList(),
    technologies: t.stringList({ description: 'Any of these.' }),
    technologiesAll: t.stringList({ description: 'All of these (keep to 1 to 3).' }),
    notTechnologies: t.stringList(),
    url: t.string({ description: 'A saved people-search URL in the bracket format; explicit filters replace its matching ones.' }),
    excludeDelivered: t.boolean(),
  }),
});

interface LeadPage {
  edges: { cursor: string; node: LeadRow }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount: number;
  searchTranslation: unknown;
  dailyAllowanceRemaining: number;
}

const LeadConnectionRef = builder.objectRef<LeadPage>('LeadConnection').implement({
  fields: (t) => ({
    edges: t.field({
      type: [builder.objectRef<{ cursor: string; node: LeadRow }>('LeadEdge').implement({ fields: (e) => ({ cursor: e.exposeString('cursor'), node: e.field({ type: LeadRef, resolve: (x) => x.node }) }) })],
      resolve: (p) => p.edges,
    }),
    pageInfo: t.field({
      type: builder.objectRef<LeadPage['pageInfo']>('LeadPageInfo').implement({
        fields: (f) => ({
          hasNextPage: f.exposeBoolean('hasNextPage'),
          hasPreviousPage: f.exposeBoolean('hasPreviousPage'),
          startCursor: f.exposeString('startCursor', { nullable: true }),
          endCursor: f.exposeString('endCursor', { nullable: true }),
        }),
      }),
      resolve: (p) => p.pageInfo,
    }),
    totalCount: t.exposeInt('totalCount', { description: 'Size of the whole search.' }),
    searchTranslation: t.field({ type: 'JSON', nullable: true, resolve: (p) => p.searchTranslation ?? null }),
    dailyAllowanceRemaining: t.exposeInt('dailyAllowanceRemaining'),
  }),
});

builder.queryField(leadDatabase.graphql!.field, (t) =>
  t.field({
    type: LeadConnectionRef,
    description: `The lead database (${leadDatabase.plan} plan and up), in id order; the cursor is the last id. Counts against the daily allowance like REST.`,
    args: { filter: t.arg({ type: LeadFilterInput }), first: t.arg.int({ defaultValue: 50 }), after: t.arg.string() },
    complexity: (args) => ({ field: 10, multiplier: Math.min(args.first ?? 50, 100) }),
    resolve: async (_, args, ctx) => {
      const filter = Object.fromEntries(Object.entries(args.filter ?? {}).filter(([, v]) => v !== null && v !== undefined));
      const { body: result } = await callEndpoint(ctx.core, ctx.principal, leadDatabase, { ...filter, limit: args.first ?? 50, after: args.after ?? '0' }, { shape: (r) => r });
      // The page's companies are loaded already: the company field reads them, not the database again.
      for (const [id, company] of result.companies) ctx.loaders.company.prime(id, company);
      const edges = result.rows.map((node) => ({ cursor: node.id, node }));
      return {
        edges,
        pageInfo: { hasNextPage: result.hasMore, hasPreviousPage: false, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
        totalCount: result.total,
        searchTranslation: result.translation,
        dailyAllowanceRemaining: result.allowanceRemaining,
      };
    },
  }),
);
