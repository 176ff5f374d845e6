/**
 * The row a statement always returns (an `insert … returning`, an aggregate, a row the caller holds a
 * lock on): an error naming `what` when there is none, rather than an `undefined` that fails later.
 */
export function oneRow<T>(rows: readonly T[], what: string): T {
  const [row] = rows;
  if (row === undefined) throw new Error(`${what}: the statement returned no row`);
  return row;
}
