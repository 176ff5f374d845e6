/**
 * Polls `read` until `done` accepts its value and returns that value. State-based: the deadline is only
 * a safety net, never the thing a test waits for.
 */
export async function waitFor<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean = Boolean,
  {
    timeoutMs = 30_000,
    intervalMs = 25,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(
        `${what} not met in ${timeoutMs} ms; last value ${JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`,
      );
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export interface Gate {
  /** Settles once `open()` is called: hand it to whatever must wait. */
  promise: Promise<void>;
  open(): void;
}

/** A promise the test settles when it chooses, e.g. a page or a mail server reply held back. */
export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
