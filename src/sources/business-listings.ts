/** A business for sale as the business-for-sale scraper sees it; money in whole USD. */
export interface BusinessListing {
  id: number;
  listingUrl: string;
  title: string;
  /** Industry, e.g. "Restaurants & Food". */
  category: string | null;
  city: string | null;
  state: string | null;
  /** ISO country code. */
  country: string;
  askingPrice: number | null;
  revenue: number | null;
  ebitda: number | null;
  cashFlow: number | null;
  /** Year the business was established. */
  established: number | null;
  employees: number | null;
  description: string | null;
  brokerName: string | null;
  brokerCompany: string | null;
  brokerPhone: string | null;
  brokerEmail: string | null;
  /** YYYY-MM-DD. */
  listedAt: string | null;
}

/** Inclusive bounds in whole USD; either side may be absent. */
export interface DollarRange {
  min?: number;
  max?: number;
}

export interface BusinessListingQuery {
  /** Two-letter state code. */
  state?: string;
  /** City compared in slug words: lower case, every run of other characters one space ("salt lake city"). */
  city?: string;
  /** Industries exactly as `industries()` names them (compared ignoring case). */
  industries?: string[];
  askingPrice?: DollarRange;
  cashFlow?: DollarRange;
  revenue?: DollarRange;
  ebitda?: DollarRange;
  limit: number;
  /** Keyset cursor: only listings with a larger id, in id order. */
  afterId?: number;
}

/** Business-for-sale listings (business-for-sale scraper). */
export interface BusinessListingSource {
  searchListings(query: BusinessListingQuery): Promise<BusinessListing[]>;
  /**
   * Single listings by the listing id at the end of their link (`…/business-opportunity/<slug>/<id>`),
   * on any host; `urls` are the links as given, tried first as they are. Listings not found are absent.
   */
  findListings(refs: { url: string; listingId: string }[]): Promise<Map<string, BusinessListing>>;
  /** Every industry listings are filed under. */
  industries(): Promise<string[]>;
}
