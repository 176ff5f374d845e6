import type { Executor } from '../../../db/client.ts';
import type { RentalSource } from '../rentals.ts';

/** Rental listings and their hosts from the catalog tables. */
export function catalogRentals(db: Executor): RentalSource {
  void db;
  return {};
}
