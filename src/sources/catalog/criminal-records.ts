import type { Executor } from '../../../db/client.ts';
import type { CriminalRecordSource } from '../criminal-records.ts';

/** Criminal records from the catalog tables. */
export function catalogCriminalRecords(db: Executor): CriminalRecordSource {
  void db;
  return {};
}
