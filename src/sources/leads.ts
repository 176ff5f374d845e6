/** The lead database's search, normalised: what REST, GraphQL, links and the lead scraper all reduce to. */
export interface LeadFilters {
  /** Any of these, partial, case-insensitive. */
  titles?: string[];
  notTitles?: string[];
  industries?: string[];
  notIndustries?: string[];
  countries?: string[];
  states?: string[];
  city?: string;
  companyName?: string;
  /** Any of these, partial. */
  companyDomains?: string[];
  seniorities?: string[];
  departments?: string[];
  emailStatuses?: string[];
  hasEmail?: boolean;
  hasPhone?: boolean;
  minEmployees?: number;
  maxEmployees?: number;
  revenueMin?: number;
  revenueMax?: number;
  socialUrl?: string;
  /** Company keywords, whole words, any of. */
  keywords?: string[];
  notKeywords?: string[];
  technologies?: string[];
  technologiesAll?: string[];
  notTechnologies?: string[];
  companyCountries?: string[];
  companyStates?: string[];
  companyCity?: string;
}

/**
 * One lead as the spec's lead record: person fields (first_name, title, email, mobile, linkedin_url,
 * city …), then company fields (company_name, company_industry, company_size, employees_count,
 * company_website, company_annual_revenue, company_city, company_state, company_country, keywords …).
 * Fields without data are left out.
 */
export type LeadRecord = { id: number } & Record<string, unknown>;

export interface LeadPageQuery {
  /** The lead database's normalised search (from a people-search URL or explicit filters). */
  filters: LeadFilters;
  limit: number;
  /** Keyset cursor: only leads with a larger id, in id order. */
  afterId?: number;
}

/** A person found by email or social profile URL, with what the mobile finder returns. */
export interface PersonContact {
  id: number;
  firstName: string;
  lastName: string;
  title: string | null;
  email: string | null;
  mobile: string | null;
  linkedinUrl: string | null;
  city: string | null;
  state: string | null;
  country: string | null;
  companyName: string | null;
  companyDomain: string | null;
}

export interface ContactKeys {
  /** Lower-cased addresses. */
  emails: string[];
  /** Profile URLs in the stored form (`normaliseSocialUrl`). */
  socialUrls: string[];
}

export interface ContactMatches {
  /** Per key, the person with a mobile if any has one, else the first; keys absent when nobody matches. */
  byEmail: Map<string, PersonContact>;
  bySocialUrl: Map<string, PersonContact>;
}

/** People and companies of the lead database (lead scraper, mobile finder). */
export interface LeadSource {
  /** False while company data is being prepared: company filters cannot be applied yet. */
  companyDataReady(): Promise<boolean>;
  /** Leads matching the filters, in id order, at most `limit`. */
  searchLeads(query: LeadPageQuery): Promise<LeadRecord[]>;
  /** People by email and by social profile URL, in one round of lookups. */
  findContacts(keys: ContactKeys): Promise<ContactMatches>;
}
