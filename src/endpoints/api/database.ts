import { z } from 'zod';
import { leadSearchParams } from '../../catalog/leads/params.ts';
import { leadPreviewRecord, MAX_REVEAL } from '../../catalog/leads/preview.ts';
import { leadRecordsOf } from '../../catalog/leads/search.ts';
import { parseParams } from '../../shared/params.ts';
import { defineEndpoint } from '../define.ts';
import { searchLeads, type LeadSearchResult } from '../lead-search.ts';
import { localBusinessSearchParams, searchLocalBusinesses } from '../local-business-search.ts';
import { searchStores, storeSearchParams } from '../store-search.ts';
import type { SearchPage } from '../search.ts';
import { previewLeads, revealLeads } from '../lead-preview.ts';
import {
  leadPreviewResponse,
  leadSearchResponse,
  localBusinessSearchResponse,
  revealLeadsResponse,
  storeSearchResponse,
} from '../schemas.ts';

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

/*
 * Searching is free, contact details cost (as Apollo's people search): the preview is the lead search
 * without email, phone and mobile, counting nothing; the reveal hands chosen people over with them.
 */
export const leadDatabasePreview = defineEndpoint({
  name: 'previewLeads',
  title: 'Lead database preview (free)',
  tag: 'Database',
  description:
    'The lead search with the same parameters, paging, order and total, free: people come without email, ' +
    'phone and mobile (has_email and has_phone say whether each exists, email_status how sure the email is), ' +
    'nothing counts against the daily allowance and nothing is saved to the account. ' +
    'Reveal chosen people with POST /api/v1/database/leads/reveal.',
  rest: {
    path: '/api/v1/database/leads/preview',
    methods: ['get', 'post'],
    ok: 'One page of people without contact details.',
    example: { seniority: ['vp'], limit: 10 },
  },
  graphql: { field: 'leadSearch' },
  mcp: {
    tool: 'preview_lead_database',
    toolset: 'database',
    title: 'Preview the lead database (free)',
    description: [
      'Search the lead database for free: the filters, paging and total of query_lead_database, but people ' +
        'come without email, phone and mobile (has_email and has_phone say whether each exists), and nothing ' +
        'counts against the daily allowance. Use it to size and refine a search; then reveal_leads the people ' +
        'chosen, or query_lead_database the whole page.',
    ],
    limits: { perCall: 'limit at most 100 records per call (default 50)', besides: 'free: counts nothing' },
    notes: [
      'Filters combine with AND; list parameters take arrays. Page with page (from 1), ' +
        'or with after: 0 first, then pagination.next_after until it is null.',
      'received is true for leads the account already has: revealing them again counts nothing.',
    ],
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  plan: leadDatabase.plan,
  planSubject: leadDatabase.planSubject,
  request: leadSearchParams,
  response: leadPreviewResponse,
  errors: leadDatabase.errors,
  handler: ({ core, principal }, input: unknown) => previewLeads(core, principal, input),
  respond: (result) => ({
    leads: result.rows.map((r) =>
      leadPreviewRecord(r, r.company_id ? result.companies.get(Number(r.company_id)) : undefined),
    ),
    ...pagingOf(result),
    ...(result.translation ? { search_translation: result.translation } : {}),
  }),
});

const revealRequest = z
  .object({
    ids: z
      .array(z.union([z.int(), z.string()]))
      .describe(`1 to ${MAX_REVEAL} people's ids (a lead record's id, as the preview and the lead search give it).`),
  })
  .strict();

export const revealLeadsEndpoint = defineEndpoint({
  name: 'revealLeads',
  title: 'Reveal leads',
  tag: 'Database',
  description:
    `Chosen people of the lead database with their contact details (1 to ${MAX_REVEAL} at once): each the account ` +
    'has not received counts one record against the daily allowance and is saved to the account, as the lead ' +
    'search counts; received ones are free. All or nothing: 404 not_found at ids.<i> for an id of no person (or ' +
    'one on a do-not-contact list), 429 daily_limit_reached when the allowance left is smaller than the new ' +
    'people; then nothing is counted.',
  rest: {
    path: '/api/v1/database/leads/reveal',
    methods: ['post'],
    ok: 'The people with their contact details, and what they counted.',
    example: { ids: [1, 2] },
  },
  graphql: { field: 'revealLeads' },
  mcp: {
    tool: 'reveal_leads',
    toolset: 'database',
    title: 'Reveal leads',
    description: [
      'Hand over chosen people of the lead database with their email, phone and mobile, by the ids ' +
        'preview_lead_database gave. People the account already received are free; each other one counts ' +
        'one record. All or nothing: an unknown id or too small an allowance refuses the whole call.',
    ],
    limits: {
      perCall: `at most ${MAX_REVEAL} people per call`,
      besides: 'leads the account already received do not count again',
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  plan: leadDatabase.plan,
  planSubject: leadDatabase.planSubject,
  allowance: 'database',
  request: revealRequest,
  response: revealLeadsResponse,
  errors: { 400: ['validation_failed'], 404: ['not_found'] },
  handler: ({ core, principal }, input: unknown) => {
    const { ids } = parseParams(revealRequest, input);
    return revealLeads(core, principal, ids.map(String));
  },
  respond: (result) => ({
    leads: leadRecordsOf(result.rows, result.companies),
    counted: result.counted,
    daily_allowance: { remaining: result.allowanceRemaining },
  }),
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
