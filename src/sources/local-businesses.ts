import type { Area } from '../shared/geo.ts';

/** A business as the map-listing tools see it. */
export interface Place {
  id: number;
  placeId: string;
  name: string;
  category: string;
  street: string | null;
  city: string;
  state: string | null;
  postalCode: string | null;
  countryCode: string;
  lat: number;
  lng: number;
  phone: string | null;
  website: string | null;
  emails: string[];
  rating: number | null;
  reviewCount: number;
  openingHours: string[] | null;
}

export interface PlaceQuery {
  /** Words matched against name and category, stemmed ("dentists" finds "Dentist"). */
  keyword: string;
  area: Area;
  limit: number;
  /** Keyset cursor: only places with a larger id, in id order. */
  afterId?: number;
}

/** One business named by a link: by its place id, by name (nearest to a point first), or by its website's host. */
export type PlaceLookup =
  | { placeId: string }
  | { name: string; area: Area; near?: { lat: number; lng: number } }
  | { websiteHost: string };

/** A review of a business. */
export interface PlaceReview {
  /** Stable identifier of the review. */
  reviewId: string;
  /** Place id of the business reviewed. */
  placeId: string;
  author: string;
  /** 1 to 5 stars. */
  rating: number;
  text: string | null;
  /** YYYY-MM-DD. */
  date: string;
}

export interface LocalBusinessSource {
  searchPlaces(query: PlaceQuery): Promise<Place[]>;
  /** The business a lookup names, or null; several candidates resolve to the nearest, then the oldest catalog entry. */
  findPlace(lookup: PlaceLookup): Promise<Place | null>;
  /** `findPlace` for many lookups at once, answers in their order. */
  findPlaces(lookups: PlaceLookup[]): Promise<(Place | null)[]>;
  /** Up to `perPlace` reviews of each business, newest first, grouped by business in the order of `placeIds`. */
  latestReviews(placeIds: string[], perPlace: number): Promise<PlaceReview[]>;
}
