import { z } from 'zod';
import { DEPARTMENTS, SENIORITIES } from '../../../db/tables/leads.ts';
import { ValidationError } from '../../shared/errors.ts';
import {
  EMAIL_STATUS_FILTER_TEXT,
  EMAIL_STATUS_FILTER_VALUES,
  leadEmailStatusOf,
  unknownEmailStatusMessage,
  wordList,
} from '../../shared/email-status.ts';
import { bareHost } from '../../shared/hosts.ts';
import { param, pagingParams, parseParams } from '../../shared/params.ts';
import { isSet } from './filters.ts';
import type { LeadFilters } from '../../sources/leads.ts';
import { canonicalTechnology, normaliseCountry, normaliseDepartment, normaliseSeniority } from './vocabulary.ts';

const { list, text, bool, num } = param;
const spaced = param.list(100, /[,\s]+/);

/** `unknown seniority "x": one of owner, founder, …`. */
const unknownOf = (what: string, values: readonly string[]) => (value: unknown) =>
  `unknown ${what} ${JSON.stringify(value)}: one of ${wordList(values)}`;

/** The lead database's parameters (REST query or body, MCP arguments, GraphQL's filter), each described. */
export const leadSearchParams = z
  .object({
    ...pagingParams,
    title: text.describe('Partial match on the person’s job title, e.g. "sales".'),
    industry: list().describe('Company industry, any of (case-insensitive), e.g. ["Computer Software"].'),
    country: list().describe('The person’s country, any of, e.g. ["United States"]; US, USA, UK and UAE also work.'),
    state: list().describe('The person’s state or region, any of; a US state by name or code ("Colorado" or "CO").'),
    city: text.describe('Partial match on the person’s city.'),
    companyName: text.describe('Partial match on the company name.'),
    companyDomain: spaced.describe('Company domains, any of, partial match; a URL or www. form reads as its domain.'),
    seniority: param
      .oneOfList(SENIORITIES, unknownOf('seniority', SENIORITIES), normaliseSeniority)
      .describe('Seniority, any of these values; aliases such as "C-Suite" or "vice president" are read as them.'),
    department: param
      .oneOfList(DEPARTMENTS, unknownOf('department', DEPARTMENTS), (d) => normaliseDepartment(d)?.department)
      .describe(
        'Department, any of these values; a subdepartment ("engineering_technical") is read as its department.',
      ),
    emailStatus: param
      .oneOfList(EMAIL_STATUS_FILTER_VALUES, unknownEmailStatusMessage)
      .describe(EMAIL_STATUS_FILTER_TEXT),
    hasEmail: bool.describe('true: only people with an email.'),
    hasPhone: bool.describe('true: only people with a phone or mobile number.'),
    minEmployees: num(0, 10_000_000).describe('Company employees, at least.'),
    maxEmployees: num(0, 10_000_000).describe('Company employees, at most.'),
    socialUrl: text.describe('The person’s social profile URL, however it is written.'),
    keywords: list().describe('Company keywords, any of, as whole words (case-insensitive): "saas" finds "B2B SaaS".'),
    revenueMin: num(0, 1e15, false).describe('Company annual revenue in USD, at least.'),
    revenueMax: num(0, 1e15, false).describe('Company annual revenue in USD, at most.'),
    companyCountry: list().describe('Country of the company’s headquarters, any of; US, USA, UK and UAE also work.'),
    companyState: list().describe('State of the company’s headquarters, any of (name or code).'),
    companyCity: text.describe('Partial match on the city of the company’s headquarters.'),
    notTitle: list().describe('Leave out people whose job title contains any of these.'),
    notKeywords: list().describe('Company keywords, none of (whole words).'),
    notIndustry: list().describe('Company industry, none of.'),
    technologies: list().describe('Technologies the company uses, any of, matched ignoring case and spacing.'),
    technologiesAll: list(10).describe('Technologies the company uses, all of (up to 10; 1 to 3 is quickest).'),
    notTechnologies: list().describe('Technologies the company does not use (only companies with known ones).'),
    url: z
      .string()
      .trim()
      .min(1)
      .max(16_000)
      .optional()
      .describe(
        'A saved people-search URL in the older format (array parameters ending in []); ' +
          'other filters replace its matching ones.',
      ),
    excludeDelivered: bool.describe('true: leave out leads this account already received.'),
  })
  .strict();
export type LeadSearchParams = z.output<typeof leadSearchParams>;

/**
 * Reads GET query parameters (repeated, comma separated, or with "[]") or a POST body. Paging (page
 * or after, not both) is read by the database API (pageRequest, endpoints/search.ts).
 */
export function parseLeadSearch(raw: unknown): LeadSearchParams {
  const p = parseParams(leadSearchParams, raw);
  const errors: { path: string; message: string }[] = [];
  if (p.minEmployees !== undefined && p.maxEmployees !== undefined && p.minEmployees > p.maxEmployees)
    errors.push({ path: 'maxEmployees', message: 'must not be below minEmployees' });
  if (p.revenueMin !== undefined && p.revenueMax !== undefined && p.revenueMin > p.revenueMax)
    errors.push({ path: 'revenueMax', message: 'must not be below revenueMin' });
  if (errors.length > 0) throw new ValidationError(errors);
  return p;
}

/** The explicit filters of a request, normalised. */
export function filtersOf(p: LeadSearchParams): LeadFilters {
  const filters: LeadFilters = {
    titles: p.title ? [p.title] : undefined,
    notTitles: p.notTitle,
    industries: p.industry,
    notIndustries: p.notIndustry,
    countries: p.country?.map(normaliseCountry),
    states: p.state,
    city: p.city,
    companyName: p.companyName,
    companyDomains: p.companyDomain?.map(bareHost),
    // Read and checked by the schema: each a stored word (the validator's email words mapped).
    seniorities: p.seniority,
    departments: p.department,
    emailStatuses: p.emailStatus && [...new Set(p.emailStatus.flatMap((s) => leadEmailStatusOf(s) ?? []))],
    hasEmail: p.hasEmail || undefined,
    hasPhone: p.hasPhone || undefined,
    minEmployees: p.minEmployees,
    maxEmployees: p.maxEmployees,
    revenueMin: p.revenueMin,
    revenueMax: p.revenueMax,
    socialUrl: p.socialUrl,
    keywords: p.keywords?.map((k) => k.toLowerCase()),
    notKeywords: p.notKeywords?.map((k) => k.toLowerCase()),
    technologies: p.technologies?.map(canonicalTechnology),
    technologiesAll: p.technologiesAll?.map(canonicalTechnology),
    notTechnologies: p.notTechnologies?.map(canonicalTechnology),
    companyCountries: p.companyCountry?.map(normaliseCountry),
    companyStates: p.companyState,
    companyCity: p.companyCity,
  };
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => isSet(v))) as LeadFilters;
}
