import { createRequire } from 'node:module';
import type { WebClient, WebResponse } from '../../../sources/contacts.ts';
import { NetError } from '../../../net/errors.ts';
import { bareHost } from '../../../shared/hosts.ts';
import { extractPage, type PagePerson } from './extract.ts';

// robots-parser is CommonJS whose typings declare an ES default export; load it as what it is.
const robotsParser = createRequire(import.meta.url)('robots-parser') as (
  url: string,
  contents: string,
) => { isAllowed(url: string, ua?: string): boolean | undefined };

/** The spec: up to 5 pages per domain are searched. */
export const MAX_PAGES_PER_DOMAIN = 5;

export type SiteStatus = 'ok' | 'unreachable' | 'blocked_by_robots' | 'refused';

export interface CrawledPage {
  url: string;
  status: number | null;
  error: string | null;
}

export interface SitePerson extends PagePerson {
  pageUrl: string;
}

export interface SiteCrawl {
  domain: string;
  status: SiteStatus;
  /** Why the site could not be read, when it could not. */
  reason: string | null;
  /** Pages fetched, in order (at most 5). */
  pages: CrawledPage[];
  /** Links robots.txt kept the crawler from. */
  disallowed: string[];
  /** Addresses found on the site, each with the first page it was seen on. */
  emails: { email: string; pageUrl: string }[];
  people: SitePerson[];
}

/** How likely a link leads to people's names and titles, from its path and text; 0 = not worth a page. */
const LINK_SCORES: [RegExp, number][] = [
  [
    new RegExp(
      String.raw`\b(team|our-?team|the-?team|people|staff|leadership|management|executives?|founders?|board|` +
        String.raw`directors|who-?we-?are|meet|partners|attorneys|lawyers|doctors|our-?experts)\b`,
    ),
    10,
  ],
  [/\b(about|about-?us|company|our-?story|story|firm)\b/, 6],
  [/\b(contact|contact-?us|get-?in-?touch|locations?|offices?)\b/, 5],
  [/\b(press|media|news|investors?)\b/, 1],
];
const FILE = /\.(pdf|jpe?g|png|gif|webp|svg|zip|docx?|xlsx?|pptx?|mp4|mp3|css|js|xml|json|ics)$/i;

/** The path of `url` as text, or undefined when its percent-escapes are not UTF-8 (`/team%E0%A4`). */
function decodedPath(url: URL): string | undefined {
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return undefined;
  }
}

/**
 * 0 for a link the crawler skips: a file, or a path whose escapes do not decode (one bad link never costs the site).
 */
export function linkScore(url: URL, text: string): number {
  const path = decodedPath(url);
  if (path === undefined || FILE.test(url.pathname)) return 0;
  const subject = `${path.toLowerCase().replace(/[_/.]+/g, ' ')} ${text.toLowerCase()}`;
  let best = 0;
  for (const [pattern, score] of LINK_SCORES) if (pattern.test(subject)) best = Math.max(best, score);
  return best;
}

const sameSite = (host: string, domains: Set<string>) => {
  const h = bareHost(host);
  for (const d of domains) if (h === d || h.endsWith(`.${d}`)) return true;
  return false;
};

const isHtml = (contentType: string) => contentType === '' || /html|xml\+xhtml|text\/plain/i.test(contentType);

interface Robots {
  allows(url: string): boolean;
}

/** robots.txt of an origin per RFC 9309: 4xx means no rules, an unreachable or failing file means disallow all. */
async function readRobots(web: WebClient, origin: URL, userAgent: string, signal?: AbortSignal): Promise<Robots> {
  const robotsUrl = new URL('/robots.txt', origin).href;
  let res: WebResponse;
  try {
    res = await web.get(robotsUrl, signal);
  } catch (err) {
    if (err instanceof NetError && err.kind === 'redirects') return { allows: () => true };
    throw err;
  }
  if (res.status >= 400 && res.status < 500) return { allows: () => true };
  if (res.status >= 500 || res.status < 200) return { allows: () => false };
  const robots = robotsParser(res.url, res.body);
  return { allows: (url) => robots.isAllowed(url, userAgent) !== false };
}

const unreachable = (err: unknown) =>
  err instanceof NetError && ['connect', 'tls', 'timeout', 'protocol'].includes(err.kind);

/**
 * Crawls one domain politely: robots.txt first (https, else http), then the home page, then the
 * links most likely to name people (team, leadership, about, contact), best first as they are
 * discovered, at most 5 pages in all, one at a time. Never throws for the site's own failures: an
 * unreachable or refused site is reported in `status` and `reason`.
 */
export async function crawlSite(
  web: WebClient,
  domain: string,
  options: { userAgent: string; signal?: AbortSignal; maxPages?: number },
): Promise<SiteCrawl> {
  const maxPages = Math.min(options.maxPages ?? MAX_PAGES_PER_DOMAIN, MAX_PAGES_PER_DOMAIN);
  const crawl: SiteCrawl = { domain, status: 'ok', reason: null, pages: [], disallowed: [], emails: [], people: [] };
  const fail = (status: SiteStatus, reason: string) => Object.assign(crawl, { status, reason });

  let origin: URL | undefined;
  let robots: Robots | undefined;
  let lastError: unknown;
  for (const scheme of ['https', 'http'] as const) {
    const candidate = web.siteUrl(domain, scheme);
    try {
      robots = await readRobots(web, candidate, options.userAgent, options.signal);
      origin = candidate;
      break;
    } catch (err) {
      lastError = err;
      if (!unreachable(err)) break;
    }
  }
  if (!origin || !robots) {
    if (lastError instanceof NetError)
      return fail(lastError.kind === 'refused' ? 'refused' : 'unreachable', lastError.message);
    throw lastError;
  }

  const home = origin.href;
  if (!robots.allows(home)) {
    crawl.disallowed.push(home);
    return fail('blocked_by_robots', 'robots.txt disallows the home page');
  }

  const site = new Set([domain]);
  const queued = new Map<string, { url: string; score: number; order: number }>();
  const visited = new Set<string>();
  let order = 0;
  const seenEmails = new Set<string>();
  const seenPeople = new Set<string>();

  let next: string | undefined = home;
  while (next && crawl.pages.length < maxPages && !options.signal?.aborted) {
    const url = next;
    visited.add(url);
    queued.delete(url);
    let res: WebResponse | undefined;
    try {
      res = await web.get(url, options.signal);
      crawl.pages.push({ url: res.url, status: res.status, error: null });
    } catch (err) {
      if (!(err instanceof NetError)) throw err;
      crawl.pages.push({ url, status: null, error: err.message });
      if (url === home) return fail(err.kind === 'refused' ? 'refused' : 'unreachable', err.message);
    }
    if (res) {
      visited.add(res.url);
      if (url === home) {
        if (res.status >= 400) return fail('unreachable', `the home page answered HTTP ${res.status}`);
        // A home page that redirects to another domain makes that domain part of the site.
        site.add(bareHost(new URL(res.url).hostname));
      }
      if (res.status < 400 && isHtml(res.contentType)) {
        const facts = extractPage(res.body, res.url);
        for (const email of facts.emails) {
          if (seenEmails.has(email)) continue;
          seenEmails.add(email);
          crawl.emails.push({ email, pageUrl: res.url });
        }
        for (const person of facts.people) {
          const key = person.name.toLowerCase();
          if (seenPeople.has(key)) continue;
          seenPeople.add(key);
          crawl.people.push({ ...person, pageUrl: res.url });
        }
        for (const link of facts.links) {
          const target = new URL(link.url);
          if (target.protocol !== 'http:' && target.protocol !== 'https:') continue;
          if (!sameSite(target.hostname, site) || visited.has(target.href)) continue;
          const score = linkScore(target, link.text);
          if (score === 0) continue;
          const known = queued.get(target.href);
          if (known) known.score = Math.max(known.score, score);
          else queued.set(target.href, { url: target.href, score, order: order++ });
        }
      }
    }
    next = undefined;
    for (const candidate of [...queued.values()].sort((a, b) => b.score - a.score || a.order - b.order)) {
      if (robots.allows(candidate.url)) {
        next = candidate.url;
        break;
      }
      queued.delete(candidate.url);
      crawl.disallowed.push(candidate.url);
    }
  }
  return crawl;
}
