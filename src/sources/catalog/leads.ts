import type { Executor } from '../../../db/client.ts';
import type { LeadSource } from '../leads.ts';

/** People and companies of the lead database from the catalog tables. */
export function catalogLeads(db: Executor): LeadSource {
  void db;
  return {};
}
