/** A real estate agent as the real estate agents scraper sees it. */
export interface AgentProfile {
  id: number;
  profileUrl: string;
  name: string;
  brokerage: string | null;
  licenseNumber: string | null;
  phone: string | null;
  email: string | null;
  city: string;
  state: string;
  zip: string | null;
  /** Specialty codes ("1001" buyer's agent, "1002" listing agent, …). */
  specialties: string[];
  languages: string[];
  yearsExperience: number | null;
  rating: number | null;
  reviewCount: number;
  salesLast12Months: number | null;
  priceRangeMin: number | null;
  priceRangeMax: number | null;
}

/** Where agents work: a 5-digit ZIP code, or a city with its state abbreviation. */
export type AgentLocation = { kind: 'zip'; zip: string } | { kind: 'city'; city: string; state: string };

export interface AgentQuery {
  location: AgentLocation;
  /** Only agents with this specialty code. */
  specialty?: string;
  /** Only agents speaking this language, spelled as the catalog spells it ("Spanish"). */
  language?: string;
  limit: number;
  /** Keyset cursor: only agents with a larger id, in id order. */
  afterId?: number;
}

/** Real estate agents (real estate agents scraper). */
export interface AgentSource {
  searchAgents(query: AgentQuery): Promise<AgentProfile[]>;
}
