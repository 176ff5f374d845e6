import type { Executor } from '../../../db/client.ts';
import type { PersonSource } from '../persons.ts';

/** Consumer records from the catalog tables. */
export function catalogPersons(db: Executor): PersonSource {
  void db;
  return {};
}
