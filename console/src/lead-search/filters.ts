import type { LeadFilter } from '../gql/graphql.ts';

/**
 * The lead search's facets as the sidebar holds them, and the LeadFilter they make. Closed vocabularies
 * (seniority, department, email status) are the values the API lists in LeadFilter's descriptions;
 * the rest is typed by the user.
 */
export interface Facets {
  title: string;
  seniority: string[];
  department: string[];
  emailStatus: string[];
  industry: string[];
  country: string[];
  state: string[];
  companyName: string;
  companyCountry: string[];
  companyState: string[];
  keywords: string[];
  technologies: string[];
  minEmployees: number | '';
  maxEmployees: number | '';
  revenueMin: number | '';
  revenueMax: number | '';
  hasEmail: boolean;
  hasPhone: boolean;
  excludeDelivered: boolean;
}

export const NO_FACETS: Facets = {
  title: '',
  seniority: [],
  department: [],
  emailStatus: [],
  industry: [],
  country: [],
  state: [],
  companyName: '',
  companyCountry: [],
  companyState: [],
  keywords: [],
  technologies: [],
  minEmployees: '',
  maxEmployees: '',
  revenueMin: '',
  revenueMax: '',
  hasEmail: false,
  hasPhone: false,
  excludeDelivered: false,
};

type ListFacet = {
  [K in keyof Facets]: Facets[K] extends string[] ? K : never;
}[keyof Facets];
type NumberFacet = 'minEmployees' | 'maxEmployees' | 'revenueMin' | 'revenueMax';
type FlagFacet = 'hasEmail' | 'hasPhone' | 'excludeDelivered';

export const LIST_FACETS: readonly ListFacet[] = [
  'seniority',
  'department',
  'emailStatus',
  'industry',
  'country',
  'state',
  'companyCountry',
  'companyState',
  'keywords',
  'technologies',
];
const NUMBER_FACETS: readonly NumberFacet[] = ['minEmployees', 'maxEmployees', 'revenueMin', 'revenueMax'];
const FLAG_FACETS: readonly FlagFacet[] = ['hasEmail', 'hasPhone', 'excludeDelivered'];

/** The LeadFilter of the facets: only what is set (revenue bounds as Money strings). */
export function filterOf(f: Facets): LeadFilter {
  const filter: LeadFilter = {};
  const text = (value: string) => value.trim() || undefined;
  if (text(f.title)) filter.title = text(f.title);
  if (text(f.companyName)) filter.companyName = text(f.companyName);
  for (const key of LIST_FACETS) if (f[key].length > 0) filter[key] = f[key];
  if (f.minEmployees !== '') filter.minEmployees = f.minEmployees;
  if (f.maxEmployees !== '') filter.maxEmployees = f.maxEmployees;
  if (f.revenueMin !== '') filter.revenueMin = String(f.revenueMin);
  if (f.revenueMax !== '') filter.revenueMax = String(f.revenueMax);
  for (const key of FLAG_FACETS) if (f[key]) filter[key] = true;
  return filter;
}

/** The facets of a saved search's filter (SavedLeadFilter: unset fields null, revenue as Money strings). */
export function facetsOf(saved: unknown): Facets {
  const f = (saved ?? {}) as Record<string, unknown>;
  const facets: Facets = { ...NO_FACETS };
  const strings = (value: unknown) => (Array.isArray(value) ? value.map(String) : []);
  if (typeof f.title === 'string') facets.title = f.title;
  if (typeof f.companyName === 'string') facets.companyName = f.companyName;
  for (const key of LIST_FACETS) facets[key] = strings(f[key]);
  for (const key of NUMBER_FACETS) if (f[key] !== undefined && f[key] !== null) facets[key] = Number(f[key]);
  for (const key of FLAG_FACETS) facets[key] = f[key] === true;
  return facets;
}

/** How many facets are set (the sidebar's "Clear filters" counts them). */
export const setCount = (f: Facets) => Object.keys(filterOf(f)).length;

/** Departments of the lead database (LeadFilter.department's values), as people write them. */
export const DEPARTMENT_WORDS: Readonly<Record<string, string>> = {
  executive: 'Executive',
  engineering: 'Engineering',
  sales: 'Sales',
  marketing: 'Marketing',
  finance: 'Finance',
  human_resources: 'Human resources',
  operations: 'Operations',
  information_technology: 'Information technology',
  legal: 'Legal',
  product: 'Product',
  customer_success: 'Customer success',
  design: 'Design',
  education: 'Education',
  medical: 'Medical',
};

/** What the lead database knows of an email (LeadFilter.emailStatus's stored values), in words. */
export const EMAIL_STATUS_WORDS: Readonly<Record<string, string>> = {
  verified: 'Verified',
  guessed: 'Guessed',
  unavailable: 'Unavailable',
};
