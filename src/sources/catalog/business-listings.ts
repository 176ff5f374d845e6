import type { Executor } from '../../../db/client.ts';
import type { BusinessListingSource } from '../business-listings.ts';

/** Business-for-sale listings from the catalog tables. */
export function catalogBusinessListings(db: Executor): BusinessListingSource {
  void db;
  return {};
}
