import type { EventBus, Topics } from '../../src/runs/events.ts';

/**
 * Resolves when code using `events` next subscribes to `topic` for `id` (a REST request holding for a
 * run's end, say). The bus listens from the call on, so from then on that subscriber misses nothing.
 * Subscriptions pass through unchanged; the bus is restored once it resolves.
 */
export function nextSubscription<K extends keyof Topics & string>(events: EventBus, topic: K, id: string): Promise<void> {
  const original = events.subscribe;
  return new Promise<void>((resolve) => {
    events.subscribe = ((...args: [K, string]) => {
      const subscription = original.apply(events, args as never);
      if (args[0] === topic && args[1] === id) {
        events.subscribe = original;
        resolve();
      }
      return subscription;
    }) as typeof original;
  });
}
