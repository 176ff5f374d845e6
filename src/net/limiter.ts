/** At most `limit` tasks at once per key; the rest wait in order. */
export class KeyedLimiter {
  private readonly slots = new Map<string, { active: number; waiting: (() => void)[] }>();

  constructor(private readonly limit: number) {}

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { active: 0, waiting: [] };
      this.slots.set(key, slot);
    }
    // A finishing task hands its slot straight to the next waiter, so the count never overshoots.
    if (slot.active >= this.limit) await new Promise<void>((resolve) => slot.waiting.push(resolve));
    else slot.active += 1;
    try {
      return await task();
    } finally {
      const next = slot.waiting.shift();
      if (next) next();
      else if (--slot.active === 0) this.slots.delete(key);
    }
  }
}

/** Runs `task` over `items` with at most `concurrency` at once; results in the order of `items`. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  // One iterator shared by the workers: each takes the next item when it is free.
  const queue = items.entries();
  const worker = async () => {
    for (const [i, item] of queue) results[i] = await task(item, i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
