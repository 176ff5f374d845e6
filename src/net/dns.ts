import { Resolver } from 'node:dns/promises';
import type { DnsLookup, MxRecord } from '../sources/contacts.ts';
import { DnsError } from './errors.ts';

const NOT_FOUND = new Set(['ENOTFOUND', 'NXDOMAIN']);
const NO_DATA = new Set(['ENODATA']);

function dnsError(err: unknown, name: string): DnsError {
  const code = (err as { code?: string }).code ?? 'EUNKNOWN';
  if (NOT_FOUND.has(code)) return new DnsError('notfound', name, 'no such domain (NXDOMAIN)');
  if (NO_DATA.has(code)) return new DnsError('nodata', name, 'no records of that type');
  const detail =
    code === 'ETIMEOUT'
      ? 'DNS timed out'
      : code === 'ESERVFAIL'
        ? 'DNS server failure (SERVFAIL)'
        : code === 'ECONNREFUSED'
          ? 'DNS server refused'
          : `DNS error ${code}`;
  return new DnsError('failure', name, detail);
}

export interface DnsOptions {
  /** "ip" or "ip:port"; empty uses the system's resolvers. */
  servers: readonly string[];
  timeoutMs: number;
}

/** Answers are kept at most this long, whatever their TTL. */
const MAX_TTL_SECS = 300;
/** "No such name" and "no records" are kept this long; failures are not kept. */
const NEGATIVE_TTL_SECS = 30;
const MAX_ENTRIES = 10_000;

type Cached<T> = { expires: number; value?: T; error?: DnsError };

/** A small cache honouring record TTLs: c-ares asks the server every time, and a run asks about a domain many times. */
class TtlCache {
  private readonly entries = new Map<string, Cached<unknown>>();
  /** Lookups under way: the same question asked twice at once goes to the server once. */
  private readonly pending = new Map<string, Promise<unknown>>();

  get<T>(key: string, load: () => Promise<{ value: T; ttl: number }>): Promise<T> {
    const hit = this.entries.get(key) as Cached<T> | undefined;
    if (hit && hit.expires > Date.now()) return hit.error ? Promise.reject(hit.error) : Promise.resolve(hit.value as T);
    let running = this.pending.get(key) as Promise<T> | undefined;
    if (!running) {
      running = this.load(key, load).finally(() => this.pending.delete(key));
      this.pending.set(key, running);
    }
    return running;
  }

  private async load<T>(key: string, load: () => Promise<{ value: T; ttl: number }>): Promise<T> {
    try {
      const { value, ttl } = await load();
      this.set(key, { expires: Date.now() + Math.min(ttl, MAX_TTL_SECS) * 1000, value });
      return value;
    } catch (err) {
      if (err instanceof DnsError && err.kind !== 'failure')
        this.set(key, { expires: Date.now() + NEGATIVE_TTL_SECS * 1000, error: err });
      throw err;
    }
  }

  private set(key: string, entry: Cached<unknown>) {
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > MAX_ENTRIES) {
      const [oldest] = this.entries.keys();
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }
}

/** MX and address lookups over DNS (c-ares) against the configured servers, cached for their TTL. */
export function createDnsLookup(options: DnsOptions): DnsLookup {
  const resolver = new Resolver({ timeout: Math.max(1, Math.floor(options.timeoutMs / 2)), tries: 2 });
  if (options.servers.length > 0) resolver.setServers([...options.servers]);
  const cache = new TtlCache();

  return {
    mx(domain) {
      return cache.get(`mx:${domain.toLowerCase()}`, async () => {
        let records: MxRecord[];
        try {
          records = await resolver.resolveMx(domain);
        } catch (err) {
          throw dnsError(err, domain);
        }
        const value = records
          .map((r) => ({ exchange: r.exchange.replace(/\.$/, '').toLowerCase(), priority: r.priority }))
          .sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange));
        // resolveMx gives no TTL; the address lookups of the hosts that follow carry theirs.
        return { value, ttl: 60 };
      });
    },

    addresses(host) {
      return cache.get(`addr:${host.toLowerCase()}`, async () => {
        const [v4, v6] = await Promise.allSettled([
          resolver.resolve4(host, { ttl: true }),
          resolver.resolve6(host, { ttl: true }),
        ]);
        const found = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
        if (found.length > 0) return { value: found.map((r) => r.address), ttl: Math.min(...found.map((r) => r.ttl)) };
        const errors = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [dnsError(r.reason, host)] : []));
        // A temporary failure of either family outweighs "no data" from the other.
        throw (
          errors.find((e) => e.kind === 'failure') ??
          errors.find((e) => e.kind === 'notfound') ??
          errors[0] ??
          new DnsError('nodata', host, 'no A or AAAA records')
        );
      });
    },
  };
}
