import { bareHost } from '../../shared/hosts.ts';
import { normaliseSocialUrl } from './query.ts';

/**
 * Free-form lookup inputs (mobile finder): an email address or a social profile URL, told apart by
 * their shape. Profile links are read by their path, on any host: `/in/<name>` (or the older
 * `/pub/<name>`) is a professional-network profile; country and mobile subdomains of the network
 * (`uk.`, `m.`) are the same profile as `www.`.
 */
export type ContactInput =
  | { kind: 'email'; key: string }
  | { kind: 'social_url'; key: string }
  | { kind: 'unrecognised'; reason: string };

const EMAIL = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[a-z]{2,}$/i;
const LOOKS_LIKE_URL = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?(?:[/?#]|$)/i;
const PROFILE_PATH = /^\/(in|pub)\/([^/?#]+)/i;
const NETWORK_HOST = /(^|\.)linkedin\.com$/i;

function readUrl(text: string): URL | undefined {
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Tells what an input is and gives its lookup key: a lower-cased email, or a profile URL in the stored form. */
export function classifyContactInput(raw: string): ContactInput {
  const text = raw.trim().replace(/^mailto:/i, '');
  if (!text) return { kind: 'unrecognised', reason: 'empty input' };
  if (text.includes('@') && !text.includes('/')) {
    return EMAIL.test(text)
      ? { kind: 'email', key: text.toLowerCase() }
      : { kind: 'unrecognised', reason: 'contains "@" but is not a valid email address' };
  }
  if (!LOOKS_LIKE_URL.test(text))
    return { kind: 'unrecognised', reason: 'neither an email address nor a social profile URL' };
  const url = readUrl(text);
  if (!url) return { kind: 'unrecognised', reason: 'not a valid URL' };
  const [, network, handle] = PROFILE_PATH.exec(url.pathname) ?? [];
  if (!network || !handle) {
    return {
      kind: 'unrecognised',
      reason: 'a URL, but not a social profile link (expected a profile path such as linkedin.com/in/<name>)',
    };
  }
  const host = NETWORK_HOST.test(url.hostname) ? 'linkedin.com' : bareHost(url.hostname);
  return {
    kind: 'social_url',
    key: normaliseSocialUrl(`${host}/${network.toLowerCase()}/${decodeSegment(handle)}`),
  };
}
