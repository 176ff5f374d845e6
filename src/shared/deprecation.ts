/**
 * A route on its way out, declared on its endpoint or tool route alias (docs/versioning.md). The
 * request pipeline answers every request to it with the Deprecation (RFC 9745), Sunset (RFC 8594) and
 * Link headers; the OpenAPI document marks it `deprecated`.
 */
export interface Deprecation {
  /** When it was deprecated: an ISO date, e.g. "2026-11-26". */
  since: string;
  /** From when it may stop being served: an ISO date at least six months after `since`. */
  sunset: string;
  /** The notice: what replaces it and how to move (a URL; a path is read against the request's). */
  link: string;
}
