import type { Executor } from '../../../db/client.ts';
import type { ContactNetwork } from '../../sources/contacts.ts';
import type { Sources } from '../../sources/types.ts';
import { catalogLocalBusinesses } from './local-businesses.ts';
import { catalogLeads } from './leads.ts';
import { catalogStores } from './stores.ts';
import { catalogHomeServices } from './home-services.ts';
import { catalogBusinessListings } from './business-listings.ts';
import { catalogCommercialProperties } from './commercial-properties.ts';
import { catalogAgents } from './agents.ts';
import { catalogRentals } from './rentals.ts';
import { catalogProperties } from './properties.ts';
import { catalogCriminalRecords } from './criminal-records.ts';
import { catalogPeople } from './people.ts';
import { catalogContacts } from './contacts.ts';

/** Every source read from the catalog tables; the contact tools also reach the network through `network`. */
export function createCatalogSources(db: Executor, network: ContactNetwork): Sources {
  return {
    localBusinesses: catalogLocalBusinesses(db),
    leads: catalogLeads(db),
    stores: catalogStores(db),
    homeServices: catalogHomeServices(db),
    businessListings: catalogBusinessListings(db),
    commercialProperties: catalogCommercialProperties(db),
    agents: catalogAgents(db),
    rentals: catalogRentals(db),
    properties: catalogProperties(db),
    criminalRecords: catalogCriminalRecords(db),
    people: catalogPeople(db),
    contacts: catalogContacts(db, network),
  };
}
