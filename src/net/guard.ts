import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';
import type { DnsLookup } from '../sources/contacts.ts';
import { DnsError, NetError } from './errors.ts';
import { canonicalIp, classifyAddress, parseIp } from './address.ts';

/** A checked destination: connect to `address` (never look the host up again). */
export interface Target {
  host: string;
  address: string;
  family: 4 | 6;
  port: number;
}

export interface GuardOptions {
  dns: DnsLookup;
  /** Ports the web is reached on (http, https); any other port in a URL is refused. */
  webPorts: { http: number; https: number };
  /**
   * Tests only: "ip" or "ip:port" entries admitted although they would be refused; when non-empty,
   * every target not on it is refused, so nothing outside the listed local servers is reachable.
   */
  allow?: readonly string[];
}

/**
 * The one gate of every outbound connection (crawler, SMTP probes, webhooks): resolves first, checks
 * every address the name has, and hands back the address to connect to, so no second lookup can
 * answer differently (no DNS-rebinding window). Callers check again on every redirect hop.
 */
export interface OutboundGuard {
  /** Resolves `host` and checks each of its addresses for a connection to `port`. */
  resolve(host: string, port: number): Promise<Target>;
  /** Checks a web URL (http/https on the web ports, no credentials), then resolves its host. */
  checkUrl(url: URL): Promise<Target>;
}

interface AllowEntry {
  address: string;
  port: number | null;
}

function parseAllowEntry(entry: string): AllowEntry {
  const [, bracketed, bracketedPort] = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? [];
  if (bracketed) return { address: canonicalIp(bracketed), port: bracketedPort ? Number(bracketedPort) : null };
  if (isIP(entry)) return { address: canonicalIp(entry), port: null };
  const [, host, port] = /^([^:]+):(\d+)$/.exec(entry) ?? [];
  if (host && isIP(host)) return { address: canonicalIp(host), port: Number(port) };
  throw new Error(`outbound allow-list entry must be "ip", "ip:port" or "[ipv6]:port", got "${entry}"`);
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Why a host name is refused before any lookup, or null. */
function badHostName(host: string): string | null {
  if (host.length === 0) return 'empty host';
  if (host.length > 253) return 'host name longer than 253 characters';
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a localhost name`;
  const labels = host.split('.');
  if (labels.length < 2) return `single-label host name "${host}" (an intranet name)`;
  if (!labels.every((l) => LABEL.test(l))) return `"${host}" is not a valid host name`;
  return null;
}

/** A host written as a loose IPv4 form ("2130706433", "0x7f.1", "017700000001"): its canonical address. */
function looseIpv4(host: string): string | undefined {
  if (!/^[0-9a-fx.]+$/i.test(host) || !/^(0x[0-9a-f]+|\d+)(\.(0x[0-9a-f]+|\d+)){0,3}$/i.test(host)) return undefined;
  try {
    return ipaddr.IPv4.parse(host).toString();
  } catch {
    return undefined;
  }
}

export function createGuard(options: GuardOptions): OutboundGuard {
  const allow = (options.allow ?? []).map(parseAllowEntry);
  const testMode = allow.length > 0;
  const allowed = (address: string, port: number) => {
    const canonical = canonicalIp(address);
    return allow.some((e) => e.address === canonical && (e.port === null || e.port === port));
  };

  /** Null when the address may be used for `port`, else the reason: its range first, then (tests) the allow-list. */
  function verdict(addresses: readonly string[], port: number): string | null {
    for (const address of addresses) {
      if (allowed(address, port)) continue;
      const v = classifyAddress(address);
      if (!v.allowed) return v.reason;
    }
    if (testMode)
      for (const address of addresses)
        if (!allowed(address, port)) return `${address}:${port} is not on the outbound allow-list`;
    return null;
  }

  async function resolve(rawHost: string, port: number): Promise<Target> {
    const host = rawHost
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '')
      .toLowerCase();
    const target = `${host}:${port}`;
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new NetError('refused', target, `port ${port} is out of range`);

    const literal = parseIp(host)?.toString() ?? looseIpv4(host);
    if (literal !== undefined) {
      const bad = verdict([literal], port);
      if (bad) throw new NetError('refused', target, bad);
      return { host, address: literal, family: isIP(literal) === 6 ? 6 : 4, port };
    }

    const nameProblem = badHostName(host);
    if (nameProblem) throw new NetError('refused', target, nameProblem);

    let addresses: string[];
    try {
      addresses = await options.dns.addresses(host);
    } catch (err) {
      if (err instanceof DnsError)
        throw new NetError(
          'dns',
          target,
          err.kind === 'failure' ? `${host}: ${err.detail}` : `${host} does not resolve: ${err.detail}`,
        );
      throw err;
    }
    // Every address must pass: a name mixing a public and a private address is refused as a whole.
    const bad = verdict(addresses, port);
    if (bad) throw new NetError('refused', target, `${host} resolves to ${bad}`);
    const chosen = addresses.find((a) => isIP(a) === 4) ?? addresses[0];
    if (chosen === undefined) throw new NetError('dns', target, `${host} does not resolve: no address`);
    return { host, address: chosen, family: isIP(chosen) === 6 ? 6 : 4, port };
  }

  return {
    resolve,
    async checkUrl(url) {
      const shown = url.href.length > 200 ? `${url.href.slice(0, 200)}…` : url.href;
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new NetError(
          'refused',
          shown,
          `scheme ${url.protocol.replace(/:$/, '')} is not allowed (http and https only)`,
        );
      if (url.username || url.password) throw new NetError('refused', shown, 'credentials in the URL are not allowed');
      const scheme = url.protocol === 'https:' ? 'https' : 'http';
      const port = url.port ? Number(url.port) : scheme === 'https' ? 443 : 80;
      const host = url.hostname;
      if (port !== options.webPorts[scheme]) {
        const portReason = `port ${port} is not allowed for ${scheme} (only ${options.webPorts[scheme]})`;
        // Only an allow-listed test server may be reached on another port.
        if (!testMode) throw new NetError('refused', shown, portReason);
        const target = await resolve(host, port).catch((err: unknown) => {
          throw err instanceof NetError ? new NetError(err.kind, shown, err.message) : err;
        });
        if (!allowed(target.address, port)) throw new NetError('refused', shown, portReason);
        return target;
      }
      try {
        return await resolve(host, port);
      } catch (err) {
        if (err instanceof NetError) throw new NetError(err.kind, shown, err.message);
        throw err;
      }
    },
  };
}
