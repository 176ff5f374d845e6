import type { Cell } from './copy.ts';

/** One table's worth of generated rows, in COPY column order. */
export interface TableRows {
  dataset: string;
  table: string;
  columns: readonly string[];
  /** Exact number of rows `rows()` yields (for progress). */
  count: number;
  rows(): Iterable<Cell[]>;
}

/** Row counts per scale; `large` has at least 1,000,000 people and 100,000 companies. */
export interface Sizes {
  companies: number;
  people: number;
  /** Businesses per city × category, on average. */
  businessesPerCityCategory: number;
  reviewsPerBusiness: number;
  stores: number;
  properties: number;
  agents: number;
  businessListings: number;
  commercialProperties: number;
  rentalHosts: number;
  rentalListings: number;
  prosPerCategory: number;
  criminalRecords: number;
}
