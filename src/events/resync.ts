/**
 * What a process's subscribers missed while the bus's listening session was lost: read again from the
 * run table once it listens again.
 */
import { and, gte, inArray, notInArray, or } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import type { Sql } from '../../db/client.ts';
import { runTable, TERMINAL_STATUSES } from '../../db/tables/runs.ts';
import { isTerminal, snapshotOf } from '../runs/view.ts';
import type { LocalTopics } from './topics.ts';

/** How long before the loss of LISTEN a run may have ended unannounced, against clocks that differ a little. */
const RESYNC_MARGIN_MS = 60_000;

/**
 * After LISTEN was lost and holds again, what was published in between never arrives. Each run topic
 * this process listens to gets its run as it is now; each account topic gets the account's runs in
 * flight and those ended since the loss (as `finished`). Subscribers skip what they have seen, so a
 * subscriber waiting for a run's end is not left waiting.
 */
export async function resync(sql: Sql, target: LocalTopics, lostAt: Date) {
  const runIds: string[] = [];
  const accountIds: string[] = [];
  for (const type of target.topics.keys()) {
    const at = type.indexOf(':');
    if (type.slice(0, at) === 'runProgress') runIds.push(type.slice(at + 1));
    else if (type.slice(0, at) === 'runEvents') accountIds.push(type.slice(at + 1));
  }
  if (runIds.length === 0 && accountIds.length === 0) return;
  const runs = await drizzle(sql)
    .select()
    .from(runTable)
    .where(
      or(
        runIds.length > 0 ? inArray(runTable.id, runIds) : undefined,
        accountIds.length > 0
          ? and(
              inArray(runTable.accountId, accountIds),
              or(
                notInArray(runTable.status, [...TERMINAL_STATUSES]),
                gte(runTable.finishedAt, new Date(lostAt.getTime() - RESYNC_MARGIN_MS)),
              ),
            )
          : undefined,
      ),
    )
    .orderBy(runTable.createdAt);
  for (const run of runs) {
    const kind = isTerminal(run.status) ? 'finished' : 'progress';
    const snapshot = snapshotOf(run);
    if (target.topics.has(`runProgress:${run.id}`)) target.runProgress(snapshot);
    if (target.topics.has(`runEvents:${run.accountId}`)) target.runEvents(run.accountId, kind, snapshot);
  }
}
