import { z } from 'zod';
import { ValidationError } from '../../shared/errors.ts';
import { bareHost } from '../../shared/hosts.ts';
import { param, pagingParams, parseParams } from '../../shared/params.ts';
import { isSet } from './filters.ts';
import type { LeadFilters } from '../../sources/leads.ts';
import { canonicalTechnology, normaliseCountry, normaliseDepartment, normaliseSeniority } from './vocabulary.ts';

const { list, text, bool, num } = param;
const spaced = param.list(100, /[,\s]+/);

export const leadSearchParams = z
  .object({
    ...pagingParams,
    title: text,
    industry: list(),
    country: list(),
    state: list(),
    city: text,
    companyName: text,
    companyDomain: spaced,
    seniority: list(),
    department: list(),
    emailStatus: list(),
    hasEmail: bool,
    hasPhone: bool,
    minEmployees: num(0, 10_000_000),
    maxEmployees: num(0, 10_000_000),
    socialUrl: text,
    keywords: list(),
    revenueMin: num(0, 1e15, false),
    revenueMax: num(0, 1e15, false),
    companyCountry: list(),
    companyState: list(),
    companyCity: text,
    notTitle: list(),
    notKeywords: list(),
    notIndustry: list(),
    technologies: list(),
    technologiesAll: list(10),
    notTechnologies: list(),
    url: z.string().trim().min(1).max(16_000).optional(),
    excludeDelivered: bool,
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
  for (const [i, s] of (p.seniority ?? []).entries())
    if (!normaliseSeniority(s)) errors.push({ path: `seniority.${i}`, message: `unknown seniority "${s}"` });
  for (const [i, d] of (p.department ?? []).entries())
    if (!normaliseDepartment(d)) errors.push({ path: `department.${i}`, message: `unknown department "${d}"` });
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
    // Checked by parseLeadSearch: every value is known.
    seniorities: p.seniority?.flatMap((s) => normaliseSeniority(s) ?? []),
    departments: p.department?.flatMap((d) => normaliseDepartment(d)?.department ?? []),
    emailStatuses: p.emailStatus?.map((s) => s.toLowerCase()),
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
