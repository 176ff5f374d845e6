import { US_STATES } from '../../shared/geo.ts';
import type { LeadFilters } from '../../sources/leads.ts';
import { LEAD_COLUMNS, planLeadSearch, type LeadScraperInput } from '../lead-scraper.ts';
import { defineUpstream, int, num, text, texts, type UpstreamDeclaration } from './types.ts';

/*
 * The actor's vocabulary (its input schema, test/fixtures/apify/input-schemas/code_crafter~leads-finder.json):
 * where the lead database's words differ from the actor's, the actor's word, or null for a value it has
 * no word for (such a start is refused: the search would be wider than asked). Industries and countries
 * are its lowercase names of ours; a US state is "<name>, us". A test checks every word sent is in its
 * schema.
 */
const SENIORITY: Record<string, string | null> = { intern: 'trainee' };
const FUNCTIONAL_LEVEL: Record<string, string | null> = {
  executive: 'c_suite',
  product: 'product_management',
  customer_success: 'support',
  medical: null,
};
const EMAIL_STATUS: Record<string, string | null> = {
  verified: 'validated',
  guessed: 'not_validated',
  unavailable: null,
};
const INDUSTRY: Record<string, string | null> = { manufacturing: null };
/** The actor's company sizes, employees from and to (it has no 5,001–10,000). */
const SIZES: readonly [number, number, string][] = [
  [0, 1, '0-1'],
  [2, 10, '2-10'],
  [11, 20, '11-20'],
  [21, 50, '21-50'],
  [51, 100, '51-100'],
  [101, 200, '101-200'],
  [201, 500, '201-500'],
  [501, 1000, '501-1000'],
  [1001, 2000, '1001-2000'],
  [2001, 5000, '2001-5000'],
  [10000, Number.MAX_SAFE_INTEGER, '10000+'],
];
/** The actor's revenue steps, USD. */
const REVENUES: readonly [number, string][] = [
  [1e5, '100K'],
  [5e5, '500K'],
  [1e6, '1M'],
  [5e6, '5M'],
  [1e7, '10M'],
  [2.5e7, '25M'],
  [5e7, '50M'],
  [1e8, '100M'],
  [5e8, '500M'],
  [1e9, '1B'],
  [5e9, '5B'],
  [1e10, '10B'],
];

/** Values in the actor's words: each through `table` (its own word when the table has none); nulls dropped. */
const inWords = (values: string[] | undefined, table: Record<string, string | null>, lower = false) => {
  const out = (values ?? [])
    .map((value) => {
      const key = value.toLowerCase();
      return key in table ? table[key] : lower ? key : value;
    })
    .filter((v): v is string => typeof v === 'string');
  return out.length > 0 ? out : undefined;
};

/** Values `table` has no word for. */
const wordless = (values: string[] | undefined, table: Record<string, string | null>) =>
  (values ?? []).filter((value) => table[value.toLowerCase()] === null);

/** A state filter as the actor's location ("colorado, us"); undefined for one that is not a US state. */
const stateLocation = (state: string) => {
  const name = US_STATES[state.toUpperCase()];
  return name ? `${name.toLowerCase()}, us` : undefined;
};

/** The actor's size buckets that overlap the employee range; undefined without one. */
function sizes(f: LeadFilters) {
  if (f.minEmployees === undefined && f.maxEmployees === undefined) return undefined;
  const from = f.minEmployees ?? 0;
  const to = f.maxEmployees ?? Number.MAX_SAFE_INTEGER;
  return SIZES.filter(([low, high]) => low <= to && high >= from).map(([, , bucket]) => bucket);
}

/** The revenue bounds as the actor's steps, widened to the nearest step out. */
function revenues(f: LeadFilters) {
  const { revenueMin: low, revenueMax: high } = f;
  const min = low === undefined ? undefined : REVENUES.findLast(([usd]) => usd <= low)?.[1];
  const max = high === undefined ? undefined : REVENUES.find(([usd]) => usd >= high)?.[1];
  return { ...(min ? { min_revenue: min } : {}), ...(max ? { max_revenue: max } : {}) };
}

/** Words of a list field, whether the actor wrote a list or one comma-separated text. */
const words = (value: unknown) =>
  texts(value) ??
  text(value)
    ?.split(',')
    .map((w) => w.trim())
    .filter(Boolean) ??
  null;

const some = (values: (string[] | string | undefined)[]) => {
  const out = values.flatMap((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));
  return out.length > 0 ? out : undefined;
};

/**
 * The lead scraper on Apify's Leads Finder (code_crafter/leads-finder): the people-search URL is read
 * into filters exactly as for the catalog (the start refuses the same URLs), and the filters become
 * the actor's include and exclude lists in its own words; `fetch_count` is the run's bound. With a city,
 * the city alone is sent: the actor takes a location or a city, not both.
 */
export const leadScraperUpstream: UpstreamDeclaration<LeadScraperInput> = defineUpstream<LeadScraperInput>({
  tool: 'lead-scraper',
  defaultActor: 'code_crafter~leads-finder',
  // The actor's minimalMaxTotalChargeUsd (test/fixtures/apify/SOURCES.md).
  minimumChargeUsd: 0.5,
  actorUrl: 'https://apify.com/code_crafter/leads-finder',
  unavailableColumns: {
    id: 'the lead database’s own id',
    mobile: 'not among the actor’s published output fields',
    phone: 'not among the actor’s published output fields (it has the company’s phone)',
    email_status: 'not among the actor’s published output fields',
    employees_count: 'the actor gives a size range (company_size), not a count',
    company_facebook_url: 'not among the actor’s published output fields',
    company_twitter_url: 'not among the actor’s published output fields',
  },
  input(input, maxItems) {
    const { filters: f } = planLeadSearch(input.url);
    const fields: Record<string, string[] | undefined> = {
      contact_job_title: f.titles,
      contact_not_job_title: f.notTitles,
      seniority_level: inWords(f.seniorities, SENIORITY),
      functional_level: inWords(f.departments, FUNCTIONAL_LEVEL),
      contact_location: f.city
        ? undefined
        : some([
            f.countries?.map((country) => country.toLowerCase()),
            f.states?.map(stateLocation).filter((s): s is string => s !== undefined),
          ]),
      contact_city: some([f.city]),
      email_status: inWords(f.emailStatuses, EMAIL_STATUS),
      company_domain: f.companyDomains,
      company_industry: inWords(f.industries, INDUSTRY, true),
      company_not_industry: inWords(f.notIndustries, INDUSTRY, true),
      company_keywords: f.keywords,
      company_not_keywords: f.notKeywords,
      size: sizes(f),
    };
    return {
      ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v && v.length > 0)),
      ...revenues(f),
      fetch_count: Math.min(input.count, maxItems),
      ...(input.fileName ? { file_name: input.fileName } : {}),
    };
  },
  unsupported(input) {
    const { filters: f } = planLeadSearch(input.url);
    const named = (what: string, values: string[]) => (values.length > 0 ? [`${what} ${values.join(', ')}`] : []);
    return [
      ...named('department', wordless(f.departments, FUNCTIONAL_LEVEL)),
      ...named('email status', wordless(f.emailStatuses, EMAIL_STATUS)),
      ...named('industry', [...wordless(f.industries, INDUSTRY), ...wordless(f.notIndustries, INDUSTRY)]),
      ...named('region', f.city ? [] : (f.states ?? []).filter((state) => !stateLocation(state))),
      ...named('company technology', [
        ...(f.technologies ?? []),
        ...(f.technologiesAll ?? []),
        ...(f.notTechnologies ?? []),
      ]),
      ...(f.hasPhone !== undefined ? ['having a phone number'] : []),
      ...(f.socialUrl ? [`social profile ${f.socialUrl}`] : []),
      ...named('company location', [...(f.companyCountries ?? []), ...(f.companyStates ?? [])]),
      ...(f.companyCity ? [`company city ${f.companyCity}`] : []),
      ...(f.companyName ? [`company name ${f.companyName}`] : []),
      ...(sizes(f) && (f.minEmployees ?? 0) < 10000 && (f.maxEmployees ?? Number.MAX_SAFE_INTEGER) > 5000
        ? ['company sizes of 5,001 to 9,999 employees (its sizes skip from 2,001–5,000 to 10,000+)']
        : []),
    ];
  },
  row(item) {
    const first = text(item.first_name);
    const last = text(item.last_name);
    const full = text(item.full_name) ?? ([first, last].filter(Boolean).join(' ') || null);
    if (!full && !text(item.email) && !text(item.linkedin)) return null;
    const values: Record<string, unknown> = {
      first_name: first,
      last_name: last,
      full_name: full,
      title: text(item.job_title),
      seniority: text(item.seniority_level),
      department: text(item.functional_level),
      email: text(item.email),
      mobile: text(item.mobile_number),
      linkedin_url: text(item.linkedin),
      city: text(item.city),
      state: text(item.state),
      country: text(item.country),
      company_name: text(item.company_name),
      company_domain: text(item.company_domain),
      company_website: text(item.company_website),
      company_industry: text(item.industry),
      company_size: text(item.company_size),
      company_annual_revenue: num(item.company_annual_revenue_clean),
      company_city: text(item.company_city),
      company_state: text(item.company_state),
      company_country: text(item.company_country),
      keywords: words(item.keywords),
      company_technologies: words(item.company_technologies),
      company_founded: int(item.company_founded_year),
      company_phone: text(item.company_phone),
      company_linkedin_url: text(item.company_linkedin),
    };
    // Every column of the tool, null where the actor has no such field (the lead database id among them).
    return Object.fromEntries(LEAD_COLUMNS.map((c) => [c.key, values[c.key] ?? null]));
  },
});
