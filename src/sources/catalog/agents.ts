import type { Executor } from '../../../db/client.ts';
import type { AgentSource } from '../agents.ts';

/** Real estate agents from the catalog tables. */
export function catalogAgents(db: Executor): AgentSource {
  void db;
  return {};
}
