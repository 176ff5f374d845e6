/**
 * What a destination's driver does with rows, whatever the provider: rows go in batches the provider
 * takes, each row's outcome is reported (a row the provider refuses fails alone, with its reason), and a
 * provider asking to wait (429) says how long.
 */

/** A row as a destination sends it: the provider's fields, and its place in the delivery. */
export interface MappedRow {
  row: number;
  fields: Record<string, string>;
}

export interface BatchOutcome {
  created: number;
  updated: number;
  problems: { row: number; outcome: 'skipped' | 'failed'; reason: string }[];
}

/** The provider asked to wait (429): retry the same batch after `ms`. */
export class RetryLater extends Error {
  constructor(
    readonly ms: number,
    message: string,
  ) {
    super(message);
  }
}

/** The provider refused the grant (revoked, expired beyond refresh): the connection is broken. */
export class GrantRefused extends Error {}

/** The provider refused a request that will not pass if asked again (a Slack channel that is not there). */
export class Refused extends Error {}

/** A provider answer that may pass if asked again (a 5xx, a reset connection). */
export class ProviderUnavailable extends Error {}

/** Milliseconds a provider's Retry-After asks for (seconds or an HTTP date), or `fallback`. */
export function retryAfterMs(value: string | undefined | null, fallback: number, now = Date.now()): number {
  if (!value) return fallback;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : fallback;
}
