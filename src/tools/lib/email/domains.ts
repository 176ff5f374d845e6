import { checkDomain } from './syntax.ts';

/**
 * The domain of a company from what a caller sends: "acme.com", "www.acme.com", "https://acme.com/about"
 * all give "acme.com" (lower case, IDN as punycode); null when it is not a domain.
 */
export function normaliseDomain(input: string): string | null {
  let text = input.trim().toLowerCase();
  if (!text) return null;
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(text)) {
    try {
      text = new URL(text).hostname;
    } catch {
      return null;
    }
  } else {
    text = text.replace(/[/?#].*$/, '').replace(/:\d+$/, '');
  }
  text = text.replace(/^www\./, '').replace(/\.$/, '');
  if (text.includes('@')) return null;
  const checked = checkDomain(text);
  return checked.ok ? checked.domain : null;
}
