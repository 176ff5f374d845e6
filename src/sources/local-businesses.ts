import type { Area } from '../services/geo.ts';

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

export interface LocalBusinessSource {
  searchPlaces(query: PlaceQuery): Promise<Place[]>;
}
