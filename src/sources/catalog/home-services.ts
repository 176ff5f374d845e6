import type { Executor } from '../../../db/client.ts';
import type { HomeServiceSource } from '../home-services.ts';

/** Home-service pros from the catalog tables. */
export function catalogHomeServices(db: Executor): HomeServiceSource {
  void db;
  return {};
}
