/** A home-service professional as the home services scraper sees it. */
export interface ServicePro {
  id: number;
  profileUrl: string;
  name: string;
  /** One of the 167 category slugs. */
  category: string;
  /** Customer grade A to F; null when not graded. */
  grade: string | null;
  phone: string | null;
  email: string | null;
  website: string | null;
  street: string | null;
  city: string;
  state: string;
  zip: string;
  /** Ordered lines such as "Monday: 8 AM–6 PM". */
  hours: string[];
  licensed: boolean;
  insured: boolean;
  yearsInBusiness: number | null;
  /** ZIP codes the pro serves. */
  serviceZips: string[];
  rating: number | null;
  reviewCount: number;
}

export interface ServiceProQuery {
  /** Category slug, exactly as listed. */
  category: string;
  /** Pros serving any of these 5-digit ZIP codes; empty means nationwide. */
  zipCodes: string[];
  limit: number;
  /** Keyset cursor: only pros with a larger id, in id order. */
  afterId?: number;
}

/** Home-service pros (home services scraper). */
export interface HomeServiceSource {
  searchPros(query: ServiceProQuery): Promise<ServicePro[]>;
}
