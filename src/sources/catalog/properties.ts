import type { Executor } from '../../../db/client.ts';
import type { PropertySource } from '../properties.ts';

/** Residential properties and their owners from the catalog tables. */
export function catalogProperties(db: Executor): PropertySource {
  void db;
  return {};
}
