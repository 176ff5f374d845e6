import { z } from 'zod';
import { KeyedLimiter } from '../net/limiter.ts';
import { fanOutSignal } from '../net/signal.ts';
import { EmailChecker, type EmailCheck } from './lib/email/checker.ts';
import { crawlSite, MAX_PAGES_PER_DOMAIN, type SiteCrawl } from './lib/email/crawl.ts';
import { companyDomain } from './lib/email/domains.ts';
import { asciiLetters, splitFullName } from './lib/email/names.ts';
import { patternOf } from './lib/email/patterns.ts';
import { inOrder } from './lib/email/rows.ts';
import { matchTitle, titleTokens } from './lib/email/titles.ts';
import type { DomainPerson } from '../sources/contacts.ts';
import { perFound } from '../billing/pricing.ts';
import { cell, defineTool, type Column, type Row, type RunContext } from './types.ts';
import { plural } from '../shared/text.ts';
import { EMAIL_CHECK_STATUSES, wordList } from '../shared/email-status.ts';

export const MAX_DOMAINS = 1_000;
/** Contacts returned per domain at most: the closest title matches. */
export const MAX_CONTACTS_PER_DOMAIN = 5;
/** Catalog people read per domain to merge with the site's. */
const CATALOG_PEOPLE_PER_DOMAIN = 1_000;

export const websiteFinderInput = z
  .object({
    domains: z
      .array(
        z
          .string({ error: 'each domain must be a string' })
          .trim()
          .min(1, 'must not be empty')
          .max(253, 'must be at most 253 characters'),
        {
          error: (issue) =>
            issue.input === undefined
              ? 'domains is required: company root domains such as ["acme.com"]'
              : 'must be an array of strings',
        },
      )
      .min(1, 'send at least one domain')
      .max(MAX_DOMAINS, `at most ${MAX_DOMAINS} domains per request; split the list`)
      .describe(
        'Company root domains, e.g. ["acme.com", "globex.io"]; ' +
          'a URL or www. form is read as its domain; repeats are searched once.',
      )
      .meta({ title: 'Company domains', examples: [['acme.com']] }),
    jobTitle: z
      .string({
        error: (issue) =>
          issue.input === undefined ? 'jobTitle is required' : 'must be a string: one job title per request',
      })
      .trim()
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .describe('One job title per request, matched loosely ("CEO" finds "Co-Founder & Chief Executive Officer").')
      .meta({ title: 'Job title', examples: ['CEO'] }),
    autoValidateEmails: z
      .boolean()
      .default(false)
      .describe('Validate each email found (the email validator’s checks); default false.')
      .meta({ title: 'Validate the emails found', examples: [false] }),
    autoFindMobiles: z
      .boolean()
      .default(false)
      .describe('Look up a mobile number for each contact in the lead database; default false.')
      .meta({ title: 'Find mobile numbers', examples: [false] }),
  })
  .superRefine((input, ctx) => {
    for (const [i, d] of input.domains.entries()) {
      if (!companyDomain(d)) ctx.addIssue({ code: 'custom', path: ['domains', i], message: `"${d}" is not a domain` });
    }
    if (input.jobTitle && titleTokens(input.jobTitle).length === 0)
      ctx.addIssue({ code: 'custom', path: ['jobTitle'], message: 'must contain a word to match' });
  });
export type WebsiteFinderInput = z.output<typeof websiteFinderInput>;

const column = (key: string, description: string, type?: Column['type']): Column => ({
  key,
  header: key,
  description,
  ...(type ? { type } : {}),
});

export const WEBSITE_FINDER_COLUMNS: Column[] = [
  column('domain', 'The domain searched'),
  column(
    'status',
    'found (one contact, billed), no_match (site read, nobody with that title), unreachable, ' +
      'blocked_by_robots or refused (the site could not be read and the lead database has nobody either)',
  ),
  column('reason', 'Why a domain row has no contact'),
  column('full_name', 'Contact name'),
  column('first_name', 'First name'),
  column('last_name', 'Last name'),
  column('title', 'Job title (as the website gives it, else the lead database)'),
  column(
    'title_match',
    '0–100: how much of the contact’s title the requested title covers (100 = the same title)',
    cell.int,
  ),
  column('email', 'Email address'),
  column('email_source', 'website (on the contact’s card or a page of the site) or catalog (the lead database)'),
  column('source', 'Where the contact was found: website, catalog or website+catalog'),
  column('page_url', 'Page of the site naming the contact'),
  column('linkedin_url', 'Professional network profile'),
  column('mobile', 'Mobile number (autoFindMobiles)'),
  column('email_status', `${wordList(EMAIL_CHECK_STATUSES)} (autoValidateEmails)`),
  column('email_status_reason', 'Why that validation status'),
  column('site_status', 'ok, unreachable, blocked_by_robots or refused'),
  column('site_reason', 'Why the site could not be read'),
  column('pages_crawled', `Pages of the site read (at most ${MAX_PAGES_PER_DOMAIN})`, cell.int),
  column('domain_emails', 'Other addresses found on the site (info@, sales@ …)', cell.texts),
];

const empty = Object.fromEntries(WEBSITE_FINDER_COLUMNS.map((c) => [c.key, null])) as Row;

interface Contact {
  key: string;
  fullName: string;
  firstName: string;
  lastName: string | null;
  title: string | null;
  score: number;
  email: string | null;
  emailSource: 'website' | 'catalog' | null;
  fromSite: boolean;
  fromCatalog: boolean;
  pageUrl: string | null;
  linkedinUrl: string | null;
  order: number;
}

const personKey = (first: string, last: string | null) => `${asciiLetters(first)}|${asciiLetters(last ?? '')}`;
const onDomain = (email: string, domain: string) => {
  const host = email.slice(email.lastIndexOf('@') + 1);
  return host === domain || host.endsWith(`.${domain}`);
};

/** The site's people and the catalog's people at the domain, merged by name, matched against the title. */
export function mergeContacts(
  domain: string,
  jobTitle: string,
  crawl: SiteCrawl,
  catalogPeople: readonly DomainPerson[],
): Contact[] {
  const contacts = new Map<string, Contact>();
  let order = 0;
  for (const person of crawl.people) {
    const { first, last } = splitFullName(person.name);
    if (!first) continue;
    const key = personKey(first, last);
    if (contacts.has(key)) continue;
    let email = person.email;
    if (!email && last) {
      const name = { first: asciiLetters(first), last: asciiLetters(last) || null };
      email = crawl.emails.find((e) => onDomain(e.email, domain) && patternOf(name, e.email) !== null)?.email ?? null;
    }
    contacts.set(key, {
      key,
      fullName: person.name,
      firstName: first,
      lastName: last,
      title: person.title,
      score: matchTitle(jobTitle, person.title),
      email,
      emailSource: email ? 'website' : null,
      fromSite: true,
      fromCatalog: false,
      pageUrl: person.pageUrl,
      linkedinUrl: person.linkedinUrl,
      order: order++,
    });
  }
  for (const person of catalogPeople) {
    const key = personKey(person.firstName, person.lastName);
    const score = matchTitle(jobTitle, person.title);
    const seen = contacts.get(key);
    if (seen) {
      seen.fromCatalog = true;
      seen.score = Math.max(seen.score, score);
      seen.title ??= person.title;
      seen.linkedinUrl ??= person.linkedinUrl;
      if (!seen.email && person.email)
        Object.assign(seen, { email: person.email.toLowerCase(), emailSource: 'catalog' });
      continue;
    }
    if (score === 0) continue;
    contacts.set(key, {
      key,
      fullName: `${person.firstName} ${person.lastName}`.trim(),
      firstName: person.firstName,
      lastName: person.lastName || null,
      title: person.title,
      score,
      email: person.email?.toLowerCase() ?? null,
      emailSource: person.email ? 'catalog' : null,
      fromSite: false,
      fromCatalog: true,
      pageUrl: null,
      linkedinUrl: person.linkedinUrl,
      order: order++,
    });
  }
  return [...contacts.values()]
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score || Number(b.fromSite) - Number(a.fromSite) || a.order - b.order)
    .slice(0, MAX_CONTACTS_PER_DOMAIN);
}

interface Helpers {
  checker: EmailChecker | null;
  /** Domains searched at once (crawl, catalog, validation). */
  crawls: KeyedLimiter;
  /** The run's signal, shared by every crawl. */
  signal: AbortSignal;
}

async function searchDomain(ctx: RunContext<WebsiteFinderInput>, domain: string, helpers: Helpers): Promise<Row[]> {
  const { web, catalog, settings } = ctx.sources.contacts;
  const [crawl, catalogPeople] = await Promise.all([
    // A site that breaks the crawler is reported on its row; it never fails the run.
    crawlSite(web, domain, { userAgent: settings.userAgent, signal: helpers.signal }).catch(
      (err: unknown): SiteCrawl => ({
        domain,
        status: 'unreachable',
        reason: `the site could not be read: ${(err as Error).message}`,
        pages: [],
        disallowed: [],
        emails: [],
        people: [],
      }),
    ),
    catalog.peopleAtDomain(domain, CATALOG_PEOPLE_PER_DOMAIN),
  ]);
  const contacts = mergeContacts(domain, ctx.input.jobTitle, crawl, catalogPeople);
  const used = new Set(contacts.map((c) => c.email).filter(Boolean));
  const site = {
    site_status: crawl.status,
    site_reason: crawl.reason,
    pages_crawled: crawl.pages.length,
    domain_emails: crawl.emails.map((e) => e.email).filter((e) => !used.has(e) && onDomain(e, domain)),
  };
  if (contacts.length === 0) {
    const reason =
      crawl.status === 'ok'
        ? `nobody with a title matching "${ctx.input.jobTitle}" on the site or in the lead database`
        : crawl.reason;
    return [{ ...empty, domain, status: crawl.status === 'ok' ? 'no_match' : crawl.status, reason, ...site }];
  }

  const checks = new Map<string, EmailCheck>();
  if (helpers.checker) {
    const emails = contacts.flatMap((c) => (c.email ? [c.email] : []));
    for (const check of await helpers.checker.checkAll(emails)) checks.set(check.input, check);
  }
  const mobiles = new Map<string, string>();
  if (ctx.input.autoFindMobiles) {
    const emails = contacts.flatMap((c) => (c.email ? [c.email.toLowerCase()] : []));
    const socialUrls = contacts.flatMap((c) => (c.fromCatalog && c.linkedinUrl ? [c.linkedinUrl] : []));
    const matches = await ctx.sources.leads.findContacts({ emails, socialUrls });
    for (const c of contacts) {
      const person =
        (c.email ? matches.byEmail.get(c.email.toLowerCase()) : undefined) ??
        (c.linkedinUrl ? matches.bySocialUrl.get(c.linkedinUrl) : undefined);
      if (person?.mobile) mobiles.set(c.key, person.mobile);
    }
  }
  return contacts.map((c) => {
    const check = c.email ? checks.get(c.email) : undefined;
    return {
      ...empty,
      domain,
      status: 'found',
      full_name: c.fullName,
      first_name: c.firstName,
      last_name: c.lastName,
      title: c.title,
      title_match: Math.round(c.score * 100),
      email: c.email,
      email_source: c.emailSource,
      source: c.fromSite && c.fromCatalog ? 'website+catalog' : c.fromSite ? 'website' : 'catalog',
      page_url: c.pageUrl,
      linkedin_url: c.linkedinUrl,
      mobile: mobiles.get(c.key) ?? null,
      email_status: check?.status ?? null,
      email_status_reason: check?.reason ?? null,
      ...site,
    };
  });
}

const contactPrice = perFound(
  'contact',
  '0.0499',
  (row) => row.status === 'found',
  (each) => `${each} per contact found`,
);

export const websiteFinderTool = defineTool({
  name: 'website-finder',
  title: 'Domain email finder',
  description:
    'Contacts with a given job title at company domains: crawls up to 5 pages of each site (home, ' +
    'then team, leadership, about and contact pages), honouring robots.txt, ' +
    'extracts emails and people, and merges them with the lead database.',
  rest: { path: '/api/v1/scrape/website-finder' },
  graphql: { mutation: 'startWebsiteFinder', inputType: 'StartWebsiteFinderInput' },
  mcp: { name: 'find_domain_emails', toolset: 'emails', openWorld: true },
  example: { domains: ['acme.com', 'globex.com'], jobTitle: 'CEO' },
  input: websiteFinderInput,
  // The hold covers the most a run can cost: five contacts per domain.
  price: {
    ...contactPrice,
    estimate: (_, requested) => contactPrice.unitMicros * BigInt(requested * MAX_CONTACTS_PER_DOMAIN),
  },
  cancellable: true,
  notes: [
    'Domains are read as root domains (a URL or www. ' +
      'form gives its domain) and searched once each; one job title per request.',
    `At most ${MAX_PAGES_PER_DOMAIN} pages per domain: robots.txt (https, else http; ` +
      'a missing file allows everything, an unreachable or failing one disallows everything), ' +
      'the home page, then the links most likely to name people (team, leadership, people, ' +
      'about, contact), best first as they are found; pages robots.txt disallows are not fetched.',
    'Emails are read from mailto links, text, obfuscated forms (name [at] domain [dot] com, ' +
      'name(at)domain.com, name at domain dot com) and Cloudflare-protected addresses; ' +
      'people from schema.org Person (JSON-LD and microdata) ' +
      'and team-card markup (a member block with a name and a job title).',
    'The title matches loosely: every word of the requested title must appear in the person’s ' +
      'title once abbreviations are expanded (CEO, CTO, VP, SVP, MD, HR, …) and plurals folded; ' +
      'a site person without an address gets the site’s address that follows a pattern of their name.',
    'Site people and lead-database people at the domain are merged by name (website+catalog); ' +
      'at most 5 contacts per domain, the closest titles first.',
    'Every domain gets rows: found contacts, or one row no_match (site read, nobody matching), unreachable, ' +
      'blocked_by_robots or refused (outbound guard) with the reason; a domain that fails never fails the run.',
    `Billed ${contactPrice.each} per found contact; domain rows without a contact are free. ` +
      'The run holds the price of five contacts per domain and settles on what it finds.',
    'autoValidateEmails runs the email validator’s checks on each address (email_status); ' +
      'autoFindMobiles looks each contact up in the lead database by ' +
      'email or profile (the mobile finder’s lookup), at no extra charge.',
    'Cancellable: the contacts of domains finished so far are kept and billed. ' +
      'A resumed run searches its domains again and skips the rows it already stored.',
  ],
  columns: WEBSITE_FINDER_COLUMNS,
  identity: ['domain', 'email'],
  requested: (input) => input.domains.length,
  describeStart(input) {
    // Validated: every domain reads as one.
    const domains = [...new Set(input.domains.flatMap((d) => companyDomain(d) ?? []))];
    const removed = input.domains.length - domains.length;
    return {
      input: { ...input, domains },
      message:
        `Searching ${plural(domains.length, 'domain')} for "${input.jobTitle}", ` +
        `up to ${MAX_PAGES_PER_DOMAIN} pages ` +
        `each${removed > 0 ? ` (${plural(removed, 'repeated domain')} removed)` : ''}`,
    };
  },
  async *run(ctx) {
    const { domains } = ctx.input;
    const { settings } = ctx.sources.contacts;
    const helpers: Helpers = {
      checker: ctx.input.autoValidateEmails
        ? new EmailChecker(ctx.sources.contacts, {
            concurrency: settings.emailConcurrency,
            greylistRetryMs: settings.greylistRetryMs,
            signal: ctx.signal,
          })
        : null,
      crawls: new KeyedLimiter(settings.crawlConcurrency),
      signal: fanOutSignal(ctx.signal),
    };
    let done = 0;
    let found = 0;
    for await (const [rows] of inOrder(
      domains.map((domain) => helpers.crawls.run('domains', () => searchDomain(ctx, domain, helpers))),
      1,
    )) {
      if (ctx.signal.aborted) return;
      if (!rows) continue;
      done += 1;
      found += rows.filter((r) => r.status === 'found').length;
      yield {
        rows,
        handled: 1,
        message: `${done} of ${domains.length} domains searched: ${plural(found, 'contact')} found`,
        last: done >= domains.length,
      };
    }
  },
});
