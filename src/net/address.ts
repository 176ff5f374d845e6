import ipaddr from 'ipaddr.js';

/** Why an address may not be reached from the service, or null when it may. */
export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

const V4_REASONS: Record<string, string> = {
  unspecified: 'unspecified address (0.0.0.0/8)',
  broadcast: 'broadcast address',
  multicast: 'multicast address (224.0.0.0/4)',
  linkLocal: 'link-local address (169.254.0.0/16)',
  loopback: 'loopback address (127.0.0.0/8)',
  carrierGradeNat: 'shared carrier-grade NAT address (100.64.0.0/10)',
  private: 'private address (RFC 1918)',
  reserved: 'reserved or documentation address',
  as112: 'AS112 address',
  amt: 'AMT relay address',
};

const V6_REASONS: Record<string, string> = {
  unspecified: 'unspecified address (::)',
  linkLocal: 'link-local address (fe80::/10)',
  multicast: 'multicast address (ff00::/8)',
  loopback: 'loopback address (::1)',
  uniqueLocal: 'unique-local address (fc00::/7)',
  deprecatedSiteLocal: 'site-local address (fec0::/10)',
  discard: 'discard-only address (100::/64)',
  rfc6052: 'NAT64 address (64:ff9b::/96), may reach any IPv4 address',
  '6to4': '6to4 tunnel address (2002::/16), may reach any IPv4 address',
  teredo: 'Teredo tunnel address (2001::/32)',
  rfc6145: 'IPv4-translated address',
  reserved: 'reserved or documentation address',
};

function classifyV4(ip: ipaddr.IPv4): AddressVerdict {
  const text = ip.toString();
  if (METADATA.has(text)) return { allowed: false, reason: `cloud metadata address ${text}` };
  const range = ip.range();
  if (range === 'unicast') return { allowed: true };
  return { allowed: false, reason: `${V4_REASONS[range] ?? `${range} address`} ${text}` };
}

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

function classifyV6(ip: ipaddr.IPv6): AddressVerdict {
  const text = ip.toString();
  if (METADATA.has(text)) return { allowed: false, reason: `cloud metadata address ${text}` };
  if (ip.isIPv4MappedAddress()) {
    const inner = classifyV4(ip.toIPv4Address());
    return inner.allowed ? inner : { allowed: false, reason: `IPv4-mapped ${inner.reason}` };
  }
  const range = ip.range();
  if (range !== 'unicast') return { allowed: false, reason: `${V6_REASONS[range] ?? `${range} address`} ${text}` };
  if (!ip.match(GLOBAL_UNICAST)) return { allowed: false, reason: `non-global IPv6 address ${text}` };
  return { allowed: true };
}

/** Parses an IP literal in canonical form only (what sockets and DNS answers carry); undefined otherwise. */
export function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (ipaddr.IPv6.isValid(bare)) return ipaddr.IPv6.parse(bare);
  return undefined;
}

/**
 * Whether the service may connect to `address`: only public unicast addresses. Refuses loopback,
 * private, link-local, unique-local, multicast, metadata, unspecified, shared, reserved and
 * tunnelling ranges (NAT64, 6to4, Teredo can carry any IPv4 destination).
 */
export function classifyAddress(address: string): AddressVerdict {
  const ip = parseIp(address);
  if (!ip) return { allowed: false, reason: `not an IP address: ${address}` };
  return ip.kind() === 'ipv4' ? classifyV4(ip as ipaddr.IPv4) : classifyV6(ip as ipaddr.IPv6);
}

/** The canonical text of an address, for comparisons ("::ffff:7f00:1" and "::ffff:127.0.0.1" agree). */
export function canonicalIp(address: string): string {
  const ip = parseIp(address);
  return ip ? ip.toNormalizedString() : address.toLowerCase();
}
