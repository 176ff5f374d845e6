import type { LeadFilters } from '../../sources/leads.ts';

/** Filters on company data, refused with 409 while the companies dataset is being prepared. */
export const COMPANY_FILTERS = [
  'keywords',
  'notKeywords',
  'revenueMin',
  'revenueMax',
  'companyCountries',
  'companyStates',
  'companyCity',
  'technologies',
  'technologiesAll',
  'notTechnologies',
] as const satisfies readonly (keyof LeadFilters)[];

/** The request parameter that sets each filter (the spec's names). */
export const PARAMETER_OF: Record<keyof LeadFilters, string> = {
  titles: 'title',
  notTitles: 'notTitle',
  industries: 'industry',
  notIndustries: 'notIndustry',
  countries: 'country',
  states: 'state',
  city: 'city',
  companyName: 'companyName',
  companyDomains: 'companyDomain',
  seniorities: 'seniority',
  departments: 'department',
  emailStatuses: 'emailStatus',
  hasEmail: 'hasEmail',
  hasPhone: 'hasPhone',
  minEmployees: 'minEmployees',
  maxEmployees: 'maxEmployees',
  revenueMin: 'revenueMin',
  revenueMax: 'revenueMax',
  socialUrl: 'socialUrl',
  keywords: 'keywords',
  notKeywords: 'notKeywords',
  technologies: 'technologies',
  technologiesAll: 'technologiesAll',
  notTechnologies: 'notTechnologies',
  companyCountries: 'companyCountry',
  companyStates: 'companyState',
  companyCity: 'companyCity',
};

export const isSet = (value: unknown) => value !== undefined && !(Array.isArray(value) && value.length === 0);
