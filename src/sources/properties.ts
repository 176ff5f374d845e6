import type { Comparable, PriceEvent, School, TaxYear } from '../../db/tables/properties.ts';

export type { Comparable, PriceEvent, School, TaxYear };

/** Where a property is: enough to match an address and to print it. */
export interface PropertyAddress {
  id: number;
  /** Natural key "street|city|state|zip", lower case (db/tables/properties.ts addressKey). */
  addressKey: string;
  street: string;
  city: string;
  state: string;
  zip: string;
}

/** What property lookup returns for a property (owner contact details excluded). */
export interface PropertyDetails extends PropertyAddress {
  lat: number | null;
  lng: number | null;
  propertyType: string | null;
  beds: number | null;
  baths: number | null;
  sqft: number | null;
  lotSqft: number | null;
  yearBuilt: number | null;
  /** USD. */
  estimatedValue: number | null;
  /** off_market, for_sale, pending or sold. */
  listingStatus: string | null;
  /** USD. */
  listPrice: number | null;
  daysOnMarket: number | null;
  lastSoldDate: string | null;
  lastSoldPrice: number | null;
  priceHistory: PriceEvent[];
  taxHistory: TaxYear[];
  comparables: Comparable[];
  schools: School[];
  ownerName: string | null;
  ownerMailingAddress: string | null;
}

/** What the owner-contact run returns for a property. */
export interface OwnerContact extends PropertyAddress {
  ownerName: string | null;
  ownerMailingAddress: string | null;
  ownerPhones: string[];
  ownerEmails: string[];
}

/** Properties by natural key or by id (at most a few hundred per call). */
export interface PropertySelector {
  keys?: string[];
  ids?: number[];
}

/**
 * A partial address's search: properties with this house number in a zip code, or in a city
 * (and state). `houseNumber` matches the first word of the street, ignoring case.
 */
export interface AddressCandidateQuery {
  houseNumber: string;
  zip?: string;
  /** Lower case; compared with the city ignoring case. */
  city?: string;
  /** Two-letter code. */
  state?: string;
}

/** Where deals are looked for; at least a zip code or a state. */
export interface DealArea {
  city?: string;
  state?: string;
  zip?: string;
}

export interface DealQuery {
  area: DealArea;
  /** List price at least this many percent below the estimated value (0–95). */
  minDiscountPercent: number;
  /** List price bounds, USD. */
  minPrice?: number;
  maxPrice?: number;
  propertyTypes?: string[];
  minBeds?: number;
  maxBeds?: number;
  limit: number;
  /** Keyset cursor: deals after this one in the order largest discount first, then id. */
  after?: { discount: string; id: number };
}

/** A for-sale property listed below its estimated value. */
export interface Deal extends PropertyAddress {
  lat: number | null;
  lng: number | null;
  propertyType: string | null;
  beds: number | null;
  baths: number | null;
  sqft: number | null;
  yearBuilt: number | null;
  listPrice: number;
  estimatedValue: number;
  /** (estimated value − list price) / estimated value, as exact decimal text (the paging cursor). */
  discount: string;
  daysOnMarket: number | null;
  lastSoldDate: string | null;
  lastSoldPrice: number | null;
}

/** Residential properties and their owners (property lookup, owner contact, deal finder). */
export interface PropertySource {
  /** Property details of the selected properties, in no particular order. */
  details(select: PropertySelector): Promise<PropertyDetails[]>;
  /** Owner contact details of the selected properties, in no particular order. */
  ownerContacts(select: PropertySelector): Promise<OwnerContact[]>;
  /** Candidates for partial addresses: for each query (in order), at most `limitEach` properties, in id order. */
  addressCandidates(queries: AddressCandidateQuery[], limitEach: number): Promise<PropertyAddress[][]>;
  /**
   * For-sale properties listed at least `minDiscountPercent` below
   * their estimated value, largest discount first, then by id.
   */
  findDeals(query: DealQuery): Promise<Deal[]>;
}
