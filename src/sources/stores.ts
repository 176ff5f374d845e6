import type { STORE_SOCIALS } from '../../db/tables/stores.ts';

/** A social network a store may link to. */
export type StoreSocial = (typeof STORE_SOCIALS)[number];

/** Bounds of a number, inclusive; either may be absent. */
export interface Range {
  min?: number;
  max?: number;
}

/** A normalised store filter; every part is combined with AND, lists are any-of. */
export interface StoreFilter {
  /** Platform keys as stored, e.g. "salesforce_commerce_cloud". */
  platforms?: string[];
  /** Upper-case ISO codes. */
  countryCodes?: string[];
  /** Lower case. */
  categories?: string[];
  cities?: string[];
  /** Lower case; a US state by name also matches its abbreviation. */
  states?: string[];
  /** Technology and app names as the caller wrote them; `resolveStoreNames` turns them into stored spellings. */
  technologies?: string[];
  apps?: string[];
  /** Plan tier keys to leave out. */
  planExclude?: string[];
  emails: boolean;
  phones: boolean;
  socials: StoreSocial[];
  visits: Range;
  sales: Range;
  employees: Range;
}

/** An e-commerce store as the store leads tool sees it. */
export interface StoreLead {
  id: number;
  domain: string;
  name: string;
  /** Platform key, e.g. "shopify", "salesforce_commerce_cloud". */
  platform: string;
  planTier: string | null;
  countryCode: string | null;
  city: string | null;
  state: string | null;
  category: string | null;
  technologies: string[];
  /** Installed apps (hosted platform only). */
  apps: string[];
  instagramUrl: string | null;
  facebookUrl: string | null;
  tiktokUrl: string | null;
  youtubeUrl: string | null;
  linkedinUrl: string | null;
  twitterUrl: string | null;
  pinterestUrl: string | null;
  emails: string[];
  phones: string[];
  estimatedMonthlyVisits: number | null;
  /** USD per month. */
  estimatedMonthlySales: number | null;
  employeeCount: number | null;
}

export interface StoreQuery {
  /** Technology and app names already in their stored spellings. */
  filter: StoreFilter;
  limit: number;
  /** Keyset cursor: only stores with a larger id, in id order. */
  afterId?: number;
}

/** Where technology lookups find domains: the stores, or the companies of the lead database. */
export type TechnologyDataset = 'stores' | 'companies';

/** A website found running a technology. */
export interface TechnologyUser {
  id: number;
  domain: string;
  name: string;
  /** Store platform; null for companies. */
  platform: string | null;
  /** Store category, or company industry. */
  category: string | null;
  /** ISO code of a store's country. */
  countryCode: string | null;
  /** Country name of a company. */
  country: string | null;
  city: string | null;
  state: string | null;
  /** The queried technology and app names this website uses. */
  matched: string[];
}

export interface TechnologyQuery {
  dataset: TechnologyDataset;
  /** Users of any of these technologies (stored spellings). */
  technologies: string[];
  /** Stores with any of these apps installed (stores only). */
  apps: string[];
  limit: number;
  /** Keyset cursor: only records with a larger id, in id order. */
  afterId?: number;
}

/** Every distinct name the source knows of one kind, as stored. */
export type NameKind = 'storeTechnologies' | 'storeApps' | 'companyTechnologies';

/** E-commerce stores with technologies and apps (store leads, tech stack), and who runs which technology. */
export interface StoreSource {
  /** Stores matching the filter, in id order. */
  searchStores(query: StoreQuery): Promise<StoreLead[]>;
  /**
   * The id of the `position`-th store (from 1) matching the filter in id order, null when fewer
   * match: a search that skips `position` stores continues after it.
   */
  storeIdAt(filter: StoreFilter, position: number): Promise<number | null>;
  /** The distinct technology or app names in use, so names written another way can be matched. */
  names(kind: NameKind): Promise<string[]>;
  /** Stores or companies running any of the technologies (or, for stores, apps), in id order. */
  technologyUsers(query: TechnologyQuery): Promise<TechnologyUser[]>;
}
