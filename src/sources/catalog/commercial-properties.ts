import type { Executor } from '../../../db/client.ts';
import type { CommercialPropertySource } from '../commercial-properties.ts';

/** Commercial properties and their brokers from the catalog tables. */
export function catalogCommercialProperties(db: Executor): CommercialPropertySource {
  void db;
  return {};
}
