import type { LocalBusinessSource } from './local-businesses.ts';
import type { LeadSource } from './leads.ts';
import type { StoreSource } from './stores.ts';
import type { HomeServiceSource } from './home-services.ts';
import type { BusinessListingSource } from './business-listings.ts';
import type { CommercialPropertySource } from './commercial-properties.ts';
import type { AgentSource } from './agents.ts';
import type { RentalSource } from './rentals.ts';
import type { PropertySource } from './properties.ts';
import type { CriminalRecordSource } from './criminal-records.ts';
import type { PersonSource } from './people.ts';
import type { ContactSource } from './contacts.ts';

export type * from './local-businesses.ts';

/**
 * Where catalog-backed runners read, one interface per domain; an operator may swap any of them for
 * a live upstream (for example a hosted scraper) without touching the tools.
 */
export interface Sources {
  localBusinesses: LocalBusinessSource;
  leads: LeadSource;
  stores: StoreSource;
  homeServices: HomeServiceSource;
  businessListings: BusinessListingSource;
  commercialProperties: CommercialPropertySource;
  agents: AgentSource;
  rentals: RentalSource;
  properties: PropertySource;
  criminalRecords: CriminalRecordSource;
  people: PersonSource;
  contacts: ContactSource;
}
