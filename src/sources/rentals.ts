/** The host of a short-term rental listing. */
export interface RentalHost {
  /** Link of the host's profile; identifies the host. */
  profileUrl: string;
  name: string;
  email: string | null;
  phone: string | null;
  isPro: boolean;
  isSuperhost: boolean;
  /** Listings the host has on the site. */
  listingsCount: number;
}

/** A short-term rental listing with its host (rental host scraper). */
export interface RentalListing {
  id: number;
  listingUrl: string;
  title: string;
  city: string;
  country: string;
  countryCode: string;
  lat: number | null;
  lng: number | null;
  /** Per night, in `currency`. */
  pricePerNight: number | null;
  currency: string;
  amenities: string[];
  bedrooms: number | null;
  guests: number | null;
  rating: number | null;
  reviewCount: number;
  host: RentalHost;
}

export interface RentalSearch {
  /** City name, matched ignoring case. */
  city: string;
  /** ISO 3166-1 alpha-2 code of the city's country. */
  countryCode: string;
  /** Amenities the listing must all have, matched ignoring case. */
  amenities: string[];
  onlySuperhosts: boolean;
  onlyProHosts: boolean;
  /** Nightly price bounds, inclusive, in the listing's currency; a listing without a price fails any bound. */
  minPrice?: number;
  maxPrice?: number;
  limit: number;
  /** Keyset cursor: only listings with a larger id, in id order. */
  afterId?: number;
}

/**
 * Listing links end their path in `/rooms/<digits>` (a locale or other prefix before it is fine),
 * whatever the host, scheme, query or fragment; returns the room id, or undefined.
 */
export function roomIdOf(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  return /\/rooms\/(?:plus\/)?(\d{1,20})\/?$/.exec(parsed.pathname)?.[1];
}

export interface RentalSource {
  /** Listings of a city that pass the filters, in id order. */
  searchListings(search: RentalSearch): Promise<RentalListing[]>;
  /**
   * The listings of these links, matched by room id (see `roomIdOf`) whatever the host, each with the
   * link it was found by; links of no listing are left out.
   */
  listingsByUrls(urls: string[]): Promise<(RentalListing & { requestedUrl: string })[]>;
}
