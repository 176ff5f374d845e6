import { domainToASCII } from 'node:url';

export type ParsedAddress =
  | { ok: true; local: string; domain: string; address: string }
  | { ok: false; reason: string };

// RFC 5321 §4.1.2: Dot-string of atoms, or a Quoted-string.
const ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+$/;
const QUOTED = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

const fail = (reason: string): ParsedAddress => ({ ok: false, reason: `syntax: ${reason}` });

function checkLocal(local: string): string | null {
  if (local.length === 0) return 'nothing before the @';
  if (Buffer.byteLength(local) > 64) return 'the part before the @ is longer than 64 characters';
  if (local.startsWith('"')) return QUOTED.test(local) ? null : 'badly quoted local part';
  if (/[^\p{ASCII}]/u.test(local)) return 'non-ASCII characters before the @ (needs SMTPUTF8)';
  if (local.startsWith('.') || local.endsWith('.')) return 'the local part starts or ends with a dot';
  if (local.includes('..')) return 'two dots in a row';
  for (const atom of local.split('.')) if (!ATOM.test(atom)) return `character not allowed before the @ in "${atom}"`;
  return null;
}

/** A domain in ASCII (IDN → punycode), lower case, or the reason it is not a mail domain. */
export function checkDomain(raw: string): { ok: true; domain: string } | { ok: false; reason: string } {
  if (raw.length === 0) return { ok: false, reason: 'nothing after the @' };
  if (raw.startsWith('['))
    return { ok: false, reason: 'the domain is an address literal; public mail needs a domain name' };
  const trimmed = raw.replace(/\.$/, '');
  const ascii = /[^\p{ASCII}]/u.test(trimmed) ? domainToASCII(trimmed) : trimmed.toLowerCase();
  if (!ascii) return { ok: false, reason: 'the domain is not a valid internationalised name' };
  if (ascii.length > 253) return { ok: false, reason: 'the domain is longer than 253 characters' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { ok: false, reason: 'the domain has no dot (not fully qualified)' };
  for (const label of labels)
    if (!LABEL.test(label)) return { ok: false, reason: `"${label || '(empty)'}" is not a valid domain label` };
  if (/^\d+$/.test(labels.at(-1) ?? '')) return { ok: false, reason: 'the top-level domain is numeric' };
  return { ok: true, domain: ascii };
}

/**
 * Reads one address as RFC 5321 defines a mailbox (Local-part "@" Domain): the local part keeps its
 * case (servers may distinguish it), the domain is lower-cased and IDNs become punycode.
 */
export function parseAddress(input: string): ParsedAddress {
  const text = input.trim();
  if (text.length === 0) return fail('empty');
  if (text.length > 254) return fail('longer than 254 characters');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it refuses
  if (/[\x00-\x1f\x7f]/.test(text)) return fail('control characters');
  const at = text.lastIndexOf('@');
  if (at < 0) return fail('no @');
  const local = text.slice(0, at);
  const localProblem = checkLocal(local);
  if (localProblem) return fail(localProblem);
  const domain = checkDomain(text.slice(at + 1));
  if (!domain.ok) return fail(domain.reason);
  return { ok: true, local, domain: domain.domain, address: `${local}@${domain.domain}` };
}

/**
 * The key two spellings of one address share: the whole address in any case. RFC 5321 lets a server
 * treat local parts as case-sensitive, but mail systems do not, and a list that writes Jane.Doe and
 * jane.doe means one person: it is checked, counted and billed once.
 */
export function dedupeKey(input: string): string {
  const parsed = parseAddress(input);
  return (parsed.ok ? parsed.address : input.trim()).toLowerCase();
}
