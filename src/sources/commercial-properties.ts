/** A commercial property and its broker as the commercial property scraper sees it. */
export interface CommercialProperty {
  id: number;
  listingUrl: string;
  title: string;
  /** office, retail, industrial, multifamily, land, hospitality, mixed_use or healthcare. */
  propertyType: string;
  /** sale or lease. */
  listingType: string;
  street: string | null;
  city: string;
  /** Two-letter state code. */
  state: string;
  zip: string | null;
  /** Metro market, e.g. "Denver". */
  market: string;
  lat: number;
  lng: number;
  /** Asking price (sale) or yearly rent (lease), USD. */
  price: number | null;
  sizeSqft: number | null;
  brokerName: string | null;
  brokerCompany: string | null;
  brokerPhone: string | null;
  brokerEmail: string | null;
  /** Licence as filed, e.g. "CO #01234567". */
  brokerLicence: string | null;
}

/** Inclusive bounds; either side may be absent. */
export interface NumberRange {
  min?: number;
  max?: number;
}

export interface CommercialPropertyQuery {
  /** Two-letter state code. */
  state?: string;
  /** City compared in slug words: lower case, every run of other characters one space ("salt lake city"). */
  city?: string;
  /** Metro market, lower case ("denver"). */
  market?: string;
  /** A place named without a state: properties of that market or of a city of that name (slug words). */
  place?: string;
  zip?: string;
  propertyTypes?: string[];
  listingType?: 'sale' | 'lease';
  price?: NumberRange;
  sizeSqft?: NumberRange;
  /** Part of the broker's name, firm or licence, ignoring case (licence also ignoring spaces and punctuation). */
  brokerName?: string;
  brokerCompany?: string;
  brokerLicence?: string;
  limit: number;
  /** Keyset cursor: only properties with a larger id, in id order. */
  afterId?: number;
}

/** Commercial properties and their brokers (commercial property scraper). */
export interface CommercialPropertySource {
  searchProperties(query: CommercialPropertyQuery): Promise<CommercialProperty[]>;
}
