import { bareHost } from '../../shared/hosts.ts';

/**
 * Second-level labels under which country domains register names ("example.co.uk",
 * "example.com.au", "example.ne.jp"): under a two-letter top-level domain, these make the last
 * three labels the registrable domain.
 */
const COUNTRY_SECOND_LEVELS = new Set([
  'co',
  'com',
  'net',
  'org',
  'ac',
  'edu',
  'gov',
  'govt',
  'mil',
  'ne',
  'or',
  'go',
  'ltd',
  'plc',
  'me',
  'id',
  'asn',
  'web',
  'nom',
  'gen',
  'firm',
  'ind',
  'sch',
  'nhs',
  'gob',
]);

/**
 * "https://www.Shop.Example.co.uk:443/path" → "shop.example.co.uk" (bareHost,
 * trailing dots dropped); null when it is not host-like.
 */
export function hostOf(value: string): string | null {
  const host = bareHost(value).replace(/\.+$/, '');
  return /^[\p{L}\p{N}-]+(\.[\p{L}\p{N}-]+)+$/u.test(host) ? host : null;
}

/**
 * The registrable root domain of a domain or URL: "www.example.com", "shop.example.com" →
 * "example.com"; "store.example.co.uk" → "example.co.uk". Null for values that are not domains.
 */
export function rootDomain(value: string): string | null {
  if (/^[a-z0-9-]+\.[a-z]+$/.test(value)) return value;
  const host = hostOf(value);
  if (!host) return null;
  if (/^\d+(\.\d+){3}$/.test(host)) return host;
  const labels = host.split('.');
  const [second, tld] = labels.slice(-2);
  if (labels.length <= 2 || second === undefined || tld === undefined) return host;
  const suffixLabels = tld.length === 2 && COUNTRY_SECOND_LEVELS.has(second) ? 2 : 1;
  return labels.slice(-(suffixLabels + 1)).join('.');
}
