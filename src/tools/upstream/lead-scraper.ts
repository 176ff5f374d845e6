import { LEAD_COLUMNS, planLeadSearch, type LeadScraperInput } from '../lead-scraper.ts';
import { defineUpstream, int, num, text, texts, type UpstreamDeclaration } from './types.ts';

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
 * the actor's include and exclude lists; `fetch_count` is the run's bound.
 */
export const leadScraperUpstream: UpstreamDeclaration<LeadScraperInput> = defineUpstream<LeadScraperInput>({
  tool: 'lead-scraper',
  defaultActor: 'code_crafter~leads-finder',
  // The actor's minimalMaxTotalChargeUsd (test/fixtures/apify/SOURCES.md).
  minimumChargeUsd: 0.5,
  actorUrl: 'https://apify.com/code_crafter/leads-finder',
  input(input, maxItems) {
    const { filters: f } = planLeadSearch(input.url);
    const fields: Record<string, string[] | undefined> = {
      contact_job_title: f.titles,
      contact_not_job_title: f.notTitles,
      seniority_level: f.seniorities,
      functional_level: f.departments,
      contact_location: some([f.countries, f.states]),
      contact_city: some([f.city]),
      email_status: f.emailStatuses,
      company_domain: f.companyDomains,
      company_industry: f.industries,
      company_not_industry: f.notIndustries,
      company_keywords: f.keywords,
      company_not_keywords: f.notKeywords,
    };
    return {
      ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v && v.length > 0)),
      fetch_count: Math.min(input.count, maxItems),
      ...(input.fileName ? { file_name: input.fileName } : {}),
    };
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
