import { defineEndpoint, type RestRequest } from '../define.ts';
import { enrichLeads } from '../enrich-leads.ts';
import { PREVIEW_SAMPLE_SIZE } from '../enrichment.ts';
import { enrichLocalBusinesses } from '../enrich-local-businesses.ts';
import {
  enrichLeadsRequest,
  enrichLeadsResponse,
  enrichLocalBusinessesRequest,
  enrichLocalBusinessesResponse,
} from '../schemas.ts';

// The spec's route heading says GET, every example POSTs a JSON body: both are served, with the same body.
const body = (request: RestRequest) => request.body;
const PREVIEW_OK =
  'Every row with what was found; or, for a preview, the counts and a sample with contact values masked.';
const MCP_ANNOTATIONS = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const MCP_LIMITS = {
  perCall: 'rows up to 1,000 per call',
  besides:
    `preview: true answers the match count and ${PREVIEW_SAMPLE_SIZE} matched rows with emails, ` +
    'phone numbers and profile URLs masked, without counting',
};

export const leadEnrichment = defineEndpoint({
  name: 'enrichLeads',
  title: 'Lead enrichment',
  tag: 'Enrichment',
  description:
    'Match priority: email, social profile URL, mobile (last 10 digits, country codes ignored), ' +
    'company domain (its most senior person: CEO, other C-suite, VP, Director, then others).',
  rest: {
    path: '/api/v1/enrich',
    methods: ['post', 'get'],
    bodyOnGet: true,
    input: body,
    example: { rows: [{ email: 'jane.doe@example.com' }, { domain: 'example.com' }] },
    ok: PREVIEW_OK,
  },
  graphql: { field: 'enrichLeads' },
  mcp: {
    tool: 'enrich_leads',
    toolset: 'enrichment',
    title: 'Enrich leads',
    description: [
      'Match rows against the lead database and append the person ' +
        'and company found (email, phone, title, company data).',
      'Match priority: email, social profile URL, mobile (last 10 digits), company domain (its most senior person).',
    ],
    limits: MCP_LIMITS,
    annotations: MCP_ANNOTATIONS,
  },
  plan: 'growth',
  planSubject: 'Lead enrichment',
  allowance: 'enrichment',
  request: enrichLeadsRequest,
  response: enrichLeadsResponse,
  errors: {},
  handler: ({ core, principal }, input: unknown) => enrichLeads(core, principal, input),
});

export const localBusinessEnrichment = defineEndpoint({
  name: 'enrichLocalBusinesses',
  title: 'Local business enrichment',
  tag: 'Enrichment',
  description:
    'Match priority: phone (a number without country is tried as US and as Canadian), ' +
    'then name with city or postal code, then website (one location of the business).',
  rest: {
    path: '/api/v1/enrich/local-businesses',
    methods: ['post', 'get'],
    bodyOnGet: true,
    input: body,
    example: { rows: [{ phone: '+1 303-555-0100' }, { name: 'Denver Dental', city: 'Denver' }] },
    ok: PREVIEW_OK,
  },
  graphql: { field: 'enrichLocalBusinesses' },
  mcp: {
    tool: 'enrich_local_businesses',
    toolset: 'enrichment',
    title: 'Enrich local businesses',
    description: [
      'Match rows against the local business database and append phone, ' +
        'website, emails, address, category, rating, reviews and contact person.',
      'Match priority: phone (tried as US and Canadian without country), ' +
        'then name with city or postal code, then website.',
    ],
    limits: MCP_LIMITS,
    annotations: MCP_ANNOTATIONS,
  },
  plan: 'scale',
  planSubject: 'Local business enrichment',
  allowance: 'enrichment',
  request: enrichLocalBusinessesRequest,
  response: enrichLocalBusinessesResponse,
  errors: {},
  handler: ({ core, principal }, input: unknown) => enrichLocalBusinesses(core, principal, input),
});
