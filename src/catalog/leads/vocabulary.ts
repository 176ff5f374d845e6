import { createHash } from 'node:crypto';
import { DEPARTMENTS, SENIORITIES } from '../../../db/tables/leads.ts';
import { INDUSTRIES, TECHNOLOGIES } from '../../../db/seed/reference.ts';
import { stateAbbreviation } from '../../shared/geo.ts';

/** Country names and the aliases callers use for them. */
const COUNTRY_ALIASES: Record<string, string> = {
  us: 'United States',
  usa: 'United States',
  'u.s.': 'United States',
  'u.s.a.': 'United States',
  'united states of america': 'United States',
  america: 'United States',
  uk: 'United Kingdom',
  'u.k.': 'United Kingdom',
  'great britain': 'United Kingdom',
  britain: 'United Kingdom',
  england: 'United Kingdom',
  uae: 'United Arab Emirates',
  'u.a.e.': 'United Arab Emirates',
  emirates: 'United Arab Emirates',
};
export const KNOWN_COUNTRIES = [
  'United States',
  'United Kingdom',
  'Canada',
  'Germany',
  'France',
  'Netherlands',
  'Australia',
  'United Arab Emirates',
  'Singapore',
  'Spain',
  'Italy',
  'Ireland',
  'India',
  'Brazil',
  'Mexico',
  'Japan',
  'Sweden',
  'Switzerland',
  'Israel',
  'New Zealand',
];
const COUNTRY_BY_LOWER = new Map(KNOWN_COUNTRIES.map((c) => [c.toLowerCase(), c]));

/** "usa" → "United States"; an unknown name is kept as written (matched case-insensitively). */
export function normaliseCountry(value: string): string {
  const key = value.trim().toLowerCase();
  return COUNTRY_ALIASES[key] ?? COUNTRY_BY_LOWER.get(key) ?? value.trim();
}

export const isKnownCountry = (value: string) => {
  const key = value.trim().toLowerCase();
  return key in COUNTRY_ALIASES || COUNTRY_BY_LOWER.has(key);
};

/** State filter values: a US state matches by name or abbreviation ("Colorado" and "CO"). */
export function stateVariants(value: string): string[] {
  const abbr = stateAbbreviation(value);
  return abbr ? [abbr.toLowerCase(), value.trim().toLowerCase()] : [value.trim().toLowerCase()];
}

const token = (value: string) =>
  value
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

const SENIORITY_ALIASES: Record<string, string> = {
  c_level: 'c_suite',
  csuite: 'c_suite',
  chief: 'c_suite',
  executive: 'c_suite',
  cxo: 'c_suite',
  vice_president: 'vp',
  vp: 'vp',
  svp: 'vp',
  evp: 'vp',
  owner: 'owner',
  founder: 'founder',
  co_founder: 'founder',
  director: 'director',
  head: 'head',
  manager: 'manager',
  senior: 'senior',
  entry: 'entry',
  junior: 'entry',
  intern: 'intern',
  partner: 'partner',
};

/** The seniorities as people write them (the lead scraper's `seniority` column). */
export const SENIORITY_WORDS: Readonly<Record<(typeof SENIORITIES)[number], string>> = {
  owner: 'Owner',
  founder: 'Founder',
  c_suite: 'C-suite',
  partner: 'Partner',
  vp: 'VP',
  head: 'Head',
  director: 'Director',
  manager: 'Manager',
  senior: 'Senior',
  entry: 'Entry level',
  intern: 'Intern',
};

/** "C-Suite", "vice president" → "c_suite", "vp"; undefined when unknown. */
export function normaliseSeniority(value: string): string | undefined {
  const t = token(value);
  const v = (SENIORITIES as readonly string[]).includes(t) ? t : SENIORITY_ALIASES[t];
  return v;
}

const DEPARTMENT_ALIASES: Record<string, string> = {
  hr: 'human_resources',
  people: 'human_resources',
  it: 'information_technology',
  tech: 'engineering',
  engineering_technical: 'engineering',
  c_suite: 'executive',
  executives: 'executive',
  cs: 'customer_success',
  support: 'customer_success',
  finance_accounting: 'finance',
  accounting: 'finance',
};

/** Department names and the people-search subdepartment codes ("master_sales", "engineering_technical"). */
export function normaliseDepartment(value: string): { department: string; broadened: boolean } | undefined {
  const t = token(value).replace(/^master_/, '');
  if ((DEPARTMENTS as readonly string[]).includes(t)) return { department: t, broadened: t !== token(value) };
  if (DEPARTMENT_ALIASES[t]) return { department: DEPARTMENT_ALIASES[t], broadened: true };
  const prefix = (DEPARTMENTS as readonly string[]).find((d) => t.startsWith(`${d}_`));
  return prefix ? { department: prefix, broadened: true } : undefined;
}

/** Stable people-search industry tag ids for the catalog's industries (24 hex characters). */
export const INDUSTRY_TAG_IDS: ReadonlyMap<string, string> = new Map(
  INDUSTRIES.map((i) => [createHash('md5').update(`industry:${i.name}`).digest('hex').slice(0, 24), i.name]),
);

const techKey = (value: string) => value.toLowerCase().replace(/[^a-z0-9]+/g, '');
const KNOWN_TECHNOLOGIES = new Map(TECHNOLOGIES.map((t) => [techKey(t), t]));

/** "google_analytics", "Google-Analytics" → "Google Analytics" (matched ignoring case and spacing). */
export function canonicalTechnology(value: string): string {
  return KNOWN_TECHNOLOGIES.get(techKey(value)) ?? value.trim();
}
