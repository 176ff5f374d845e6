/**
 * A delivery's changes on the event bus: its view as the faces show it, published to its account's
 * followers (the `delivery` subscription, the console) when it is queued, starts sending, has a batch
 * acknowledged, ends or pauses.
 */
import { eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { type Delivery, deliveryTable } from '../../db/tables/destinations.ts';
import type { Core } from '../core.ts';
import type { DeliveryEvent } from '../events/topics.ts';

/** A delivery as the faces show it. */
export const deliveryView = (d: Delivery) =>
  ({
    id: d.id,
    destinationId: d.destinationId,
    runId: d.runId,
    pipelineId: d.pipelineId,
    status: d.status,
    message: d.message,
    total: d.total,
    sent: d.sent,
    created: d.created,
    updated: d.updated,
    skipped: d.skipped,
    failed: d.failed,
    createdAt: d.createdAt.toISOString(),
    finishedAt: d.finishedAt?.toISOString() ?? null,
  }) satisfies DeliveryEvent;

/**
 * Publishes delivery `id` as `executor` reads it now, to its account's followers once `executor`'s
 * transaction commits (at once, given the pool).
 */
export async function publishDelivery(core: Pick<Core, 'events'>, executor: Executor, id: string): Promise<void> {
  const [delivery] = await executor.select().from(deliveryTable).where(eq(deliveryTable.id, id));
  if (delivery) await core.events.publishDelivery(executor, delivery.accountId, deliveryView(delivery));
}
