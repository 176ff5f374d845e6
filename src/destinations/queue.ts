/**
 * Queues deliveries when what they deliver ends (a run, a pipeline's table), in the transaction of its
 * end; deliveries.ts sends them.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { deliveryTable, destinationTable } from '../../db/tables/destinations.ts';
import type { Core } from '../core.ts';
import { randomBase62 } from '../shared/ids.ts';
import { JOBS } from '../workers/jobs.ts';
import { publishDelivery } from './delivery-events.ts';

export const newDeliveryId = () => `dlv_${randomBase62(16)}`;

/**
 * Queues the deliveries of what ended (a run, or a pipeline's table) to each destination named, in the
 * caller's transaction: one row and one job each, each announced to the account's followers.
 */
export async function queueDeliveries(
  core: Pick<Core, 'events'>,
  tx: Executor,
  accountId: string,
  of: { runId: string } | { pipelineId: string },
  destinationIds: readonly string[],
) {
  if (destinationIds.length === 0) return;
  const destinations = await tx
    .select({ id: destinationTable.id })
    .from(destinationTable)
    .where(and(eq(destinationTable.accountId, accountId), inArray(destinationTable.id, [...destinationIds])));
  for (const destination of destinations) {
    const id = newDeliveryId();
    await tx.insert(deliveryTable).values({
      id,
      accountId,
      destinationId: destination.id,
      runId: 'runId' in of ? of.runId : null,
      pipelineId: 'pipelineId' in of ? of.pipelineId : null,
      message: 'Waiting to be sent',
    });
    await tx.execute(sql`select graphile_worker.add_job(${JOBS.deliverRows}::text,
      json_build_object('deliveryId', ${id}::text), max_attempts => 8, job_key => ${id}::text)`);
    await publishDelivery(core, tx, id);
  }
}
