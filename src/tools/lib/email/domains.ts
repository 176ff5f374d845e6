import { bareHost } from '../../../shared/hosts.ts';
import { checkDomain } from './syntax.ts';

/**
 * The domain of a company from what a caller sends: "acme.com", "www.acme.com", "https://acme.com/about"
 * all give "acme.com". The host is read as everywhere else (bareHost); a mail domain must then also be
 * a real domain name, so this one is checked (labels, a dot, no address) and an IDN becomes punycode.
 * Null when it is not a domain.
 */
export function companyDomain(input: string): string | null {
  const host = bareHost(input).replace(/\.$/, '');
  if (!host || host.includes('@')) return null;
  const checked = checkDomain(host);
  return checked.ok ? checked.domain : null;
}
