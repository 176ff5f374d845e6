import { isDisposableDomain } from '../tools/lib/email/flags.ts';
import { hashToken } from './tokens.ts';
import { normalizeEmail } from './users.ts';

/**
 * The mailbox an address delivers to, as one sign-up trial is counted (docs/console.md#sign-up-and-the-trial):
 * the variants a provider delivers to one inbox are one mailbox. Lower-cased; at the providers that
 * ignore a tag after `+` (Gmail, Outlook.com and its Hotmail/Live/MSN names, iCloud, Fastmail, Proton)
 * the tag is dropped, at Yahoo a tag after `-` (its disposable addresses); Gmail also ignores dots.
 * Domains that are one mailbox service under several names fold into one (googlemail.com into
 * gmail.com, me.com and mac.com into icloud.com, Proton's into proton.me). Other domains keep their
 * addresses as typed: whoever owns a domain has as many mailboxes as they like anyway.
 */

interface Provider {
  /** The domain its other names fold into. */
  domain?: string;
  /** What starts the tag the provider ignores. */
  tag: '+' | '-';
  /** The provider ignores dots in the local part. */
  dots?: boolean;
}

const GMAIL: Provider = { domain: 'gmail.com', tag: '+', dots: true };
const ICLOUD: Provider = { domain: 'icloud.com', tag: '+' };
const PROTON: Provider = { domain: 'proton.me', tag: '+' };
const PLUS: Provider = { tag: '+' };
const YAHOO: Provider = { tag: '-' };

const BY_DOMAIN: Record<string, Provider> = {
  'gmail.com': GMAIL,
  'googlemail.com': GMAIL,
  'icloud.com': ICLOUD,
  'me.com': ICLOUD,
  'mac.com': ICLOUD,
  'proton.me': PROTON,
  'protonmail.com': PROTON,
  'protonmail.ch': PROTON,
  'pm.me': PROTON,
  'fastmail.com': PLUS,
  'fastmail.fm': PLUS,
  'ymail.com': YAHOO,
  'rocketmail.com': YAHOO,
};

/** A provider's national domains: hotmail.co.uk, live.fr, outlook.com.br, yahoo.de, … */
const NATIONAL = /^(outlook|hotmail|live|msn|yahoo)\.(?:com|[a-z]{2}|co\.[a-z]{2}|com\.[a-z]{2})$/;

function providerOf(domain: string): Provider | undefined {
  const known = BY_DOMAIN[domain];
  if (known) return known;
  const national = NATIONAL.exec(domain);
  if (!national) return undefined;
  return national[1] === 'yahoo' ? YAHOO : PLUS;
}

/** The canonical mailbox of `email`: `J.Doe+news@GoogleMail.com` is `jdoe@gmail.com`. */
export function canonicalMailbox(email: string): string {
  const address = normalizeEmail(email);
  const at = address.lastIndexOf('@');
  if (at <= 0) return address;
  let local = address.slice(0, at);
  let domain = address.slice(at + 1).replace(/\.$/, '');
  const provider = providerOf(domain);
  if (!provider) return `${local}@${domain}`;
  const tag = local.indexOf(provider.tag);
  if (tag > 0) local = local.slice(0, tag);
  if (provider.dots) local = local.replace(/\./g, '');
  domain = provider.domain ?? domain;
  return `${local}@${domain}`;
}

/** What the trial claims table stores of a mailbox: the SHA-256 of its canonical form, never the address. */
export const mailboxHash = (email: string) => hashToken(canonicalMailbox(email));

/** Whether the address is at a throwaway-mail service (the disposable-domain list the email tools use). */
export function isThrowawayMailbox(email: string): boolean {
  const domain = normalizeEmail(email).split('@').pop() ?? '';
  return isDisposableDomain(domain);
}
