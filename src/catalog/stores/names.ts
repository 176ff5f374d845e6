import type { StoreSource } from '../../sources/stores.ts';
import type { StoreNameLists } from './filters.ts';

/** The stores' technology and app names, read from a store source. */
export const storeNameLists = (source: StoreSource): StoreNameLists => ({
  technologies: () => source.names('storeTechnologies'),
  apps: () => source.names('storeApps'),
});
