/**
 * The errors of outbound connections: a DNS answer that is not a record set, and a connection that did
 * not happen or broke. The guarded clients of this folder throw them; tools and webhook deliveries
 * tell the reasons apart by them.
 */

/** A DNS answer that is not a record set: no such name, no record of that type, or a failure. */
export class DnsError extends Error {
  constructor(
    /** notfound: NXDOMAIN; nodata: the name exists without such records; failure: timeout, SERVFAIL, refused. */
    readonly kind: 'notfound' | 'nodata' | 'failure',
    readonly domain: string,
    /** The answer without the name, e.g. "no such domain (NXDOMAIN)". */
    readonly detail: string,
  ) {
    super(`${domain}: ${detail}`);
    this.name = 'DnsError';
  }
}

/**
 * A connection that did not happen or broke: refused by the outbound guard, unresolvable, unreachable,
 * too slow, too large or redirected too often. `message` is the per-target reason shown to callers.
 */
export class NetError extends Error {
  constructor(
    readonly kind: 'refused' | 'dns' | 'connect' | 'timeout' | 'tls' | 'redirects' | 'protocol' | 'aborted',
    readonly target: string,
    message: string,
  ) {
    super(message);
    this.name = 'NetError';
  }
}
