/** A postgres.js query that can be cancelled (a pending query or its result). */
interface CancellableQuery<T> extends PromiseLike<T> {
  cancel(): unknown;
}

/**
 * The query's answer, or a rejection with `message` once `ms` pass, cancelling the query on the
 * server: a probe (readiness, queue gauges) never hangs on a database that does not answer.
 */
export async function withDeadline<T>(query: CancellableQuery<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void query.cancel();
      reject(new Error(message));
    }, ms);
  });
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
