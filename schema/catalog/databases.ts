import { STORE_SOCIALS } from '../../db/tables/stores.ts';
import { localBusinessDatabase, storeDatabase } from '../../src/endpoints/api/database.ts';
import { graphqlFieldOf, type EndpointDefinition } from '../../src/endpoints/define.ts';
import { localBusinessSearchParams } from '../../src/endpoints/local-business-search.ts';
import type { SearchPage } from '../../src/endpoints/search.ts';
import { storeSearchParams } from '../../src/endpoints/store-search.ts';
import { callEndpoint } from '../../src/http/pipeline.ts';
import { pagingParams } from '../../src/shared/params.ts';
import { builder } from '../builder.ts';
import { AFTER_DESCRIPTION, connectionOf, connectionType, FIRST_DESCRIPTION, pageSize } from '../connection.ts';
import { globalId } from '../node.ts';
import { inputTypeOf } from '../zod-input.ts';
import { list, num, str, type Rec } from './records.ts';

/**
 * The catalog's local-business and e-commerce store databases as paged queries: their record types,
 * connections and filters, derived from the REST endpoints' declarations.
 *
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
    'The filters of the local-business database (REST GET /api/v1/database/local-businesses; docs/api.md); lists ' +
    'are any-of, every filter is combined with AND.',
  omit: PAGING,
});
const StoreFilterInput = inputTypeOf(storeSearchParams, 'StoreFilter', {
  description:
    'The filters of the e-commerce store database (REST GET /api/v1/database/stores; docs/api.md); lists are ' +
    'any-of, every filter is combined with AND.',
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
  builder.queryField(graphqlFieldOf(search), (t) =>
    t.field({
      type: connection,
      nullable: true,
      description:
        `The ${what} database (${search.plan} plan and up; null with error PLAN_REQUIRED below it), in id order. ` +
        `Counts against the daily allowance like REST.`,
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
