import type { Executor } from '../../../db/client.ts';
import type { StoreSource } from '../stores.ts';

/** E-commerce stores with technologies and apps from the catalog tables. */
export function catalogStores(db: Executor): StoreSource {
  void db;
  return {};
}
