import { pagingParams } from '../src/shared/params.ts';
import { localBusinessSearchParams } from '../src/endpoints/local-business-search.ts';
import { storeSearchParams } from '../src/endpoints/store-search.ts';
import { localBusinessDatabase, storeDatabase } from '../src/endpoints/api/database.ts';
import { leadEnrichment, localBusinessEnrichment } from '../src/endpoints/api/enrichment.ts';
import type { EndpointDefinition } from '../src/endpoints/define.ts';
import type { SearchPage } from '../src/endpoints/search.ts';
import { callEndpoint } from '../src/http/pipeline.ts';
import { MAX_ENRICH_ROWS } from '../src/endpoints/enrichment.ts';
import { builder } from './builder.ts';
import { inputTypeOf, withoutNulls } from './zod-input.ts';

type Rec = Record<string, unknown>;
const str = (k: string) => (r: Rec) => (r[k] ?? null) as string | null;
const num = (k: string) => (r: Rec) => (r[k] ?? null) as number | null;
const list = (k: string) => (r: Rec) => (r[k] ?? []) as string[];

const LocalBusinessRef = builder.objectRef<Rec>('LocalBusiness').implement({
  description: 'A local business of the map-listing catalog.',
  fields: (t) => ({
    id: t.id({ resolve: (r) => String(r.id) }),
    placeId: t.string({ resolve: (r) => r.place_id as string }),
    name: t.string({ resolve: (r) => r.name as string }),
    category: t.string({ resolve: (r) => r.category as string }),
    street: t.string({ nullable: true, resolve: str('street') }),
    city: t.string({ resolve: (r) => r.city as string }),
    state: t.string({ nullable: true, resolve: str('state') }),
    postalCode: t.string({ nullable: true, resolve: str('postal_code') }),
    countryCode: t.string({ resolve: (r) => r.country_code as string }),
    latitude: t.float({ resolve: (r) => r.lat as number }),
    longitude: t.float({ resolve: (r) => r.lng as number }),
    phone: t.string({ nullable: true, resolve: str('phone') }),
    website: t.string({ nullable: true, resolve: str('website') }),
    emails: t.stringList({ resolve: list('emails') }),
    rating: t.float({ nullable: true, resolve: num('rating') }),
    reviewCount: t.int({ resolve: (r) => r.review_count as number }),
    openingHours: t.stringList({ resolve: list('opening_hours') }),
    contactName: t.string({ nullable: true, resolve: str('contact_name') }),
  }),
});

const StoreRef = builder.objectRef<Rec>('Store').implement({
  description: 'An e-commerce store.',
  fields: (t) => ({
    id: t.id({ resolve: (r) => String(r.id) }),
    domain: t.string({ resolve: (r) => r.domain as string }),
    name: t.string({ resolve: (r) => r.name as string }),
    platform: t.string({ resolve: (r) => r.platform as string }),
    planTier: t.string({ nullable: true, resolve: str('plan_tier') }),
    countryCode: t.string({ nullable: true, resolve: str('country_code') }),
    city: t.string({ nullable: true, resolve: str('city') }),
    state: t.string({ nullable: true, resolve: str('state') }),
    category: t.string({ nullable: true, resolve: str('category') }),
    technologies: t.stringList({ resolve: list('technologies') }),
    apps: t.stringList({ resolve: list('apps') }),
    emails: t.stringList({ resolve: list('emails') }),
    phones: t.stringList({ resolve: list('phones') }),
    socialProfiles: t.field({ type: 'JSON', description: 'instagram, facebook, tiktok, youtube, linkedin, twitter, pinterest URLs.', resolve: (r) => Object.fromEntries(Object.entries(r).filter(([k, v]) => k.endsWith('_url') && v !== null).map(([k, v]) => [k.replace(/_url$/, ''), v])) }),
    estimatedMonthlyVisits: t.int({ nullable: true, resolve: num('estimated_monthly_visits') }),
    estimatedMonthlySales: t.float({ nullable: true, description: 'USD per month.', resolve: num('estimated_monthly_sales') }),
    employeeCount: t.int({ nullable: true, resolve: num('employee_count') }),
  }),
});

interface Page {
  nodes: Rec[];
  totalCount: number;
  hasNextPage: boolean;
  endCursor: string | null;
  dailyAllowanceRemaining: number;
}

function pageType(name: string, node: typeof LocalBusinessRef) {
  const edge = builder.objectRef<Rec>(`${name}Edge`).implement({
    fields: (t) => ({ cursor: t.string({ resolve: (r) => String(r.id) }), node: t.field({ type: node, resolve: (r) => r }) }),
  });
  return builder.objectRef<Page>(`${name}Connection`).implement({
    fields: (t) => ({
      edges: t.field({ type: [edge], resolve: (p) => p.nodes }),
      totalCount: t.exposeInt('totalCount', { description: 'Size of the whole search.' }),
      hasNextPage: t.exposeBoolean('hasNextPage'),
      endCursor: t.exposeString('endCursor', { nullable: true }),
      dailyAllowanceRemaining: t.exposeInt('dailyAllowanceRemaining'),
    }),
  });
}

const LocalBusinessConnection = pageType('LocalBusiness', LocalBusinessRef);
const StoreConnection = pageType('Store', StoreRef);

/** A database search's page as a connection. */
const pageOf = (result: SearchPage<Rec>): Page => ({
  nodes: result.rows,
  totalCount: result.total,
  hasNextPage: result.hasMore,
  endCursor: result.nextAfter,
  dailyAllowanceRemaining: result.allowanceRemaining,
});

type Search = EndpointDefinition<unknown, SearchPage<Rec>>;

/** Paging is `first` and `after` in GraphQL, so the REST paging parameters are left out of the filters. */
const PAGING = Object.keys(pagingParams);

/**
 * The filters of a catalog database API as a typed input, derived from the service's parameter
 * schema; the service validates them with that schema, as for REST.
 */
const LocalBusinessFilterInput = inputTypeOf(localBusinessSearchParams, 'LocalBusinessFilter', {
  description: 'The filters of GET /api/v1/database/local-businesses (see docs/api.md); lists are any-of, every filter is combined with AND.',
  omit: PAGING,
});
const StoreFilterInput = inputTypeOf(storeSearchParams, 'StoreFilter', {
  description: 'The filters of GET /api/v1/database/stores (see docs/api.md); lists are any-of, every filter is combined with AND.',
  omit: PAGING,
});

/** A catalog database API as a connection: `filter` takes the REST parameters (paging aside). */
function catalogQuery(connection: typeof LocalBusinessConnection, filter: typeof LocalBusinessFilterInput, search: Search, plan: string) {
  builder.queryField(search.graphql!.field, (t) =>
    t.field({
      type: connection,
      description: `${plan}; the filters of GET ${search.rest.path}, in id order; the cursor is the last id.`,
      args: { filter: t.arg({ type: filter }), first: t.arg.int({ defaultValue: 50 }), after: t.arg.string() },
      complexity: (args) => ({ field: 10, multiplier: Math.min(args.first ?? 50, 100) }),
      resolve: async (_, args, ctx) => {
        const input = { ...(withoutNulls(args.filter ?? {}) as object), limit: args.first ?? 50, after: args.after ?? '0' };
        return (await callEndpoint(ctx.core, ctx.principal, search, input, { shape: pageOf })).body;
      },
    }),
  );
}

catalogQuery(LocalBusinessConnection, LocalBusinessFilterInput, localBusinessDatabase as unknown as Search, `The local-business database (${localBusinessDatabase.plan} plan and up)`);
catalogQuery(StoreConnection, StoreFilterInput, storeDatabase as unknown as Search, `The e-commerce store database (${storeDatabase.plan} plan and up)`);

builder.mutationField(leadEnrichment.graphql!.field, (t) =>
  t.field({
    type: 'JSON',
    description: `Lead enrichment (${leadEnrichment.plan} plan and up): rows of {email | social | mobile | domain}, up to ${MAX_ENRICH_ROWS.toLocaleString('en-US')}; the same result as POST ${leadEnrichment.rest.path}.`,
    args: { rows: t.arg({ type: ['JSON'], required: true }), preview: t.arg.boolean() },
    resolve: async (_, args, ctx) => (await callEndpoint(ctx.core, ctx.principal, leadEnrichment, { rows: args.rows, preview: args.preview ?? undefined }, { shape: (r) => r })).body,
  }),
);

builder.mutationField(localBusinessEnrichment.graphql!.field, (t) =>
  t.field({
    type: 'JSON',
    description: `Local-business enrichment (${localBusinessEnrichment.plan} plan): rows of {phone | name + city/postal_code | website}, up to ${MAX_ENRICH_ROWS.toLocaleString('en-US')}; the same result as POST ${localBusinessEnrichment.rest.path}.`,
    args: { rows: t.arg({ type: ['JSON'], required: true }), preview: t.arg.boolean() },
    resolve: async (_, args, ctx) => (await callEndpoint(ctx.core, ctx.principal, localBusinessEnrichment, { rows: args.rows, preview: args.preview ?? undefined }, { shape: (r) => r })).body,
  }),
);
