import type { EventBus } from '../../src/events/bus.ts';
import type { Topics } from '../../src/events/topics.ts';

/**
 * Resolves when code using `events` next subscribes to `topic` for `id` (a REST request holding for a
 * run's end, say) and its subscription holds: from then on that subscriber misses nothing.
 * Subscriptions pass through unchanged; the bus is restored once it resolves.
 */
export function nextSubscription<K extends keyof Topics & string>(
  events: EventBus,
  topic: K,
  id: string,
): Promise<void> {
  const original = events.subscribe;
  return new Promise<void>((resolve) => {
    events.subscribe = ((...args: [K, string]) => {
      const subscription = original.apply(events, args as never);
      if (args[0] === topic && args[1] === id) {
        events.subscribe = original;
        void subscription.then(
          () => resolve(),
          () => {},
        );
      }
      return subscription;
    }) as typeof original;
  });
}

/**
 * The next `count` values of a subscription that `accept` takes (every value unless given), skipping
 * the others; rejects after `timeoutMs` (default 20 s), naming `what` and how many had come.
 */
export async function takeEvents<T>(
  events: AsyncIterator<unknown>,
  count: number,
  what: string,
  options: { accept?: (value: T) => boolean; timeoutMs?: number } = {},
): Promise<T[]> {
  const taken: T[] = [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(
        () => reject(new Error(`no event: ${what} (${taken.length} of ${count})`)),
        options.timeoutMs ?? 20_000,
      )),
  );
  try {
    while (taken.length < count) {
      const { value, done } = await Promise.race([events.next(), deadline]);
      if (done) throw new Error(`the subscription ended before ${what}`);
      if (!options.accept || options.accept(value as T)) taken.push(value as T);
    }
    return taken;
  } finally {
    clearTimeout(timer);
  }
}

/** `bus`, counting the subscriptions open now and ever made through it. */
export function countingEvents(bus: EventBus) {
  const counts = { open: 0, made: 0 };
  const events: EventBus = Object.create(bus);
  events.subscribe = async (topic, id) => {
    const subscription = await bus.subscribe(topic, id);
    counts.open++;
    counts.made++;
    const close = subscription.return.bind(subscription);
    subscription.return = (value) => {
      counts.open--;
      return close(value);
    };
    return subscription;
  };
  return { events, counts };
}
