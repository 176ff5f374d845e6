import { leadSearchParams } from '../../catalog/leads/params.ts';
import { leadRecordsOf } from '../../catalog/leads/search.ts';
import { defineEndpoint } from '../define.ts';
import { searchLeads, type LeadSearchResult } from '../lead-search.ts';
import { localBusinessSearchParams, searchLocalBusinesses } from '../local-business-search.ts';
import { searchStores, storeSearchParams } from '../store-search.ts';
import type { SearchPage } from '../search.ts';
import { leadSearchResponse, localBusinessSearchResponse, storeSearchResponse } from '../schemas.ts';

/** The spec's `pagination` and `daily_allowance` of a database API answer. */
function pagingOf(p: SearchPage<unknown>) {
  return {
    pagination: {
      page: p.page,
      limit: p.limit,
      total: p.total,
      total_is_estimate: p.totalIsEstimate,
      next_after: p.nextAfter,
      has_more: p.hasMore,
    },
    daily_allowance: { remaining: p.allowanceRemaining },
  };
}

/** The lead search as REST and MCP answer it: the records with their company, paging and the url's translation. */
function leadSearchBody(result: LeadSearchResult) {
  return {
    leads: leadRecordsOf(result.rows, result.companies),
    ...pagingOf(result),
    ...(result.translation ? { search_translation: result.translation } : {}),
  };
}

/** A catalog row as the local-business and store APIs answer it: the id as a number, missing fields left out. */
const catalogRecord = (row: { id: string | number } & Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries({ ...row, id: Number(row.id) }).filter(([, v]) => v !== null));

const PAGED = { errors: { 400: ['validation_failed'], 503: ['query_timeout'] } } as const;

export const leadDatabase = defineEndpoint({
  name: 'searchLeads',
  title: 'Lead database',
  tag: 'Database',
  description:
    'People with their company. A saved people-search url forms the search (other filters ' +
    'override its matching ones; search_translation reports what was applied, broadened or unsupported). ' +
    'Every lead returned is saved to the account; leads already delivered do not count ' +
    'against the daily allowance again, and excludeDelivered leaves them out.',
  rest: {
    path: '/api/v1/database/leads',
    methods: ['get', 'post'],
    ok: 'One page of records.',
    example: { limit: 10 },
  },
  graphql: { field: 'leads' },
  mcp: {
    tool: 'query_lead_database',
    toolset: 'database',
    title: 'Query the lead database',
    description: [
      'Search the lead database: people with their company (title, seniority, department, ' +
        'email, phone, company industry, size, revenue, location, keywords, technologies).',
    ],
    limits: {
      perCall: 'limit at most 100 records per call (default 50)',
      besides: 'leads the account already received do not count again',
    },
    notes: [
      'Filters combine with AND; list parameters take arrays. Page with page (from 1), ' +
        'or with after: 0 first, then pagination.next_after until it is null.',
      'A saved people-search url (older format, array parameters ending in []) may form the search; ' +
        'other filters override its matching ones, and search_translation reports what was applied.',
      'Every lead returned is saved to the account; excludeDelivered leaves out leads already received.',
    ],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  plan: 'growth',
  planSubject: 'The lead database API',
  allowance: 'database',
  request: leadSearchParams,
  response: leadSearchResponse,
  errors: {
    400: ['validation_failed', 'no_usable_filters', 'unsupported_url_format'],
    409: ['filters_not_applied_yet'],
    503: ['query_timeout'],
  },
  handler: ({ core, principal }, input: unknown) => searchLeads(core, principal, input),
  respond: leadSearchBody,
});

export const localBusinessDatabase = defineEndpoint({
  name: 'searchLocalBusinesses',
  title: 'Local business database',
  tag: 'Database',
  description: 'The map-listing catalog.',
  rest: {
    path: '/api/v1/database/local-businesses',
    methods: ['get', 'post'],
    ok: 'One page of records.',
    example: { limit: 10 },
  },
  graphql: { field: 'localBusinesses' },
  plan: 'growth',
  planSubject: 'The local business database API',
  allowance: 'database',
  request: localBusinessSearchParams,
  response: localBusinessSearchResponse,
  ...PAGED,
  handler: ({ core, principal }, input: unknown) => searchLocalBusinesses(core, principal, input),
  respond: (result) => ({ businesses: result.rows.map(catalogRecord), ...pagingOf(result) }),
});

export const storeDatabase = defineEndpoint({
  name: 'searchStores',
  title: 'E-commerce store database',
  tag: 'Database',
  description: 'The e-commerce store catalog, with the store-leads filters.',
  rest: {
    path: '/api/v1/database/stores',
    methods: ['get', 'post'],
    ok: 'One page of records.',
    example: { limit: 10 },
  },
  graphql: { field: 'stores' },
  plan: 'growth',
  planSubject: 'The e-commerce store database API',
  allowance: 'database',
  request: storeSearchParams,
  response: storeSearchResponse,
  ...PAGED,
  handler: ({ core, principal }, input: unknown) => searchStores(core, principal, input),
  respond: (result) => ({ stores: result.rows.map(catalogRecord), ...pagingOf(result) }),
});
