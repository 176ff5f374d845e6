import { z } from 'zod';
import { EmailChecker, type EmailCheck } from './lib/email/checker.ts';
import { companyDomain } from './lib/email/domains.ts';
import { asciiLetters, contactName, splitFullName } from './lib/email/names.ts';
import { candidates, learnPatterns } from './lib/email/patterns.ts';
import { inOrder } from './lib/email/rows.ts';
import type { CompanyProfile, DomainPerson } from '../sources/contacts.ts';
import { perFound } from '../billing/pricing.ts';
import { cell, defineTool, type Column, type Row } from './types.ts';
import { plural } from '../shared/text.ts';

export const MAX_CONTACTS = 1_000;
/** Known addresses read per domain to learn its pattern. */
const KNOWN_PER_DOMAIN = 50;

const text = (max: number, description: string) =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .max(max, `must be at most ${max} characters`)
    .optional()
    .describe(description);

const contactSchema = z
  .object({
    first_name: text(100, 'First name; required if full_name is absent.').meta({
      title: 'First name',
      examples: ['Jane'],
    }),
    last_name: text(100, 'Last name.').meta({ title: 'Last name', examples: ['Doe'] }),
    full_name: text(200, 'Full name, an alternative to first_name plus last_name ("Jane Doe", "Doe, Jane").').meta({
      title: 'Full name',
      examples: ['Jane Doe'],
    }),
    domain: text(253, 'Company domain (acme.com, or a URL of the site); preferred over company_name.').meta({
      title: 'Company domain',
      examples: ['acme.com'],
    }),
    company_name: text(
      200,
      'Company name, resolved to a domain through the lead database; used when no domain is given.',
    ).meta({ title: 'Company name', examples: ['Acme'] }),
  })
  .describe('A person to find the address of: a name and a company.');

export const emailFinderInput = z
  .object({
    contacts: z
      .array(contactSchema, {
        error: (issue) =>
          issue.input === undefined
            ? 'contacts is required: a list of {first_name, last_name, domain} objects'
            : 'must be an array of objects',
      })
      .min(1, 'send at least one contact')
      .max(MAX_CONTACTS, `at most ${MAX_CONTACTS} contacts per request; split the list`)
      .describe(
        'Contacts to look up; each needs a name (first_name or full_name) and a company (domain or company_name).',
      )
      .meta({ title: 'Contacts', examples: [[{ first_name: 'Jane', last_name: 'Doe', domain: 'acme.com' }]] }),
  })
  .superRefine((input, ctx) => {
    for (const [i, c] of input.contacts.entries()) {
      if (!c.first_name && !c.full_name)
        ctx.addIssue({ code: 'custom', path: ['contacts', i], message: 'needs a name: first_name or full_name' });
      else if (!contactName(c))
        ctx.addIssue({
          code: 'custom',
          path: ['contacts', i],
          message: 'the name has no letters to build an address from',
        });
      if (!c.domain && !c.company_name)
        ctx.addIssue({ code: 'custom', path: ['contacts', i], message: 'needs a company: domain or company_name' });
      if (c.domain && !companyDomain(c.domain))
        ctx.addIssue({ code: 'custom', path: ['contacts', i, 'domain'], message: `"${c.domain}" is not a domain` });
    }
  });
export type EmailFinderInput = z.output<typeof emailFinderInput>;
type Contact = EmailFinderInput['contacts'][number];

export type FinderStatus = 'found' | 'catch-all' | 'not_found' | 'unknown' | 'company_not_found' | 'no_mail_server';

const column = (key: string, description: string, type?: Column['type']): Column => ({
  key,
  header: key,
  description,
  ...(type ? { type } : {}),
});

export const EMAIL_FINDER_COLUMNS: Column[] = [
  column('first_name', 'First name as sent (or read from full_name)'),
  column('last_name', 'Last name as sent (or read from full_name)'),
  column('full_name', 'Full name as sent'),
  column('domain', 'Company domain searched'),
  column('company_name', 'Company name (from the lead database when known)'),
  column(
    'email',
    'The address found: confirmed by the mail server, or the best pattern on a catch-all domain (billed when present)',
  ),
  column('status', 'found, catch-all, not_found, unknown, company_not_found or no_mail_server'),
  column(
    'confidence',
    '0–100: 95 when the mail server confirms the address; ' +
      'on a catch-all domain, how strongly the catalog supports the pattern',
    cell.int,
  ),
  column('pattern', 'Address pattern of the email, e.g. first.last or flast'),
  column(
    'pattern_source',
    'catalog_person (this person’s own address in the lead database), ' +
      'catalog_pattern (learned from other addresses at the domain) or default (the usual order)',
  ),
  column('known_emails', 'Addresses at the domain in the lead database the pattern was learned from', cell.texts),
  column('candidates_checked', 'Addresses asked of the mail server', cell.int),
  column('reason', 'Why this status'),
  column('best_guess', 'Most likely address when the mail server could not be asked (not billed)'),
  column('email_status', 'Validation of the email: valid or catch-all'),
  column('mx_host', 'Mail server asked'),
  column('provider', 'Mail provider recognised from MX'),
  column('is_role_account', 'The address names a function rather than a person', cell.bool),
  column('is_disposable', 'The domain is a disposable-address service', cell.bool),
  column('is_free_webmail', 'The domain is a free webmail provider', cell.bool),
];

const empty = Object.fromEntries(EMAIL_FINDER_COLUMNS.map((c) => [c.key, null])) as Row;

function nameFields(c: Contact): Row {
  if (c.first_name) return { first_name: c.first_name, last_name: c.last_name || null, full_name: c.full_name ?? null };
  const split = splitFullName(c.full_name ?? '');
  return { first_name: split.first || null, last_name: c.last_name || split.last, full_name: c.full_name ?? null };
}

function checkFields(check: EmailCheck): Row {
  return {
    email_status: check.status,
    mx_host: check.mxHost,
    provider: check.provider,
    is_role_account: check.role,
    is_disposable: check.disposable,
    is_free_webmail: check.freeWebmail,
  };
}

interface Lookup {
  byName: Map<string, CompanyProfile>;
  byDomain: Map<string, CompanyProfile>;
  known: Map<string, DomainPerson[]>;
  checker: EmailChecker;
}

/**
 * Finds one contact's address: candidates from the catalog and the
 * usual patterns, asked of the mail server in one session.
 */
async function findContact(c: Contact, lookup: Lookup): Promise<Row> {
  const base = { ...empty, ...nameFields(c) };
  const byName = c.company_name ? lookup.byName.get(c.company_name) : undefined;
  const domain = c.domain ? companyDomain(c.domain) : (byName?.domain ?? null);
  if (!domain) {
    return {
      ...base,
      company_name: c.company_name ?? null,
      status: 'company_not_found',
      reason: `no company named "${c.company_name}" in the lead database; send its domain instead`,
    };
  }
  const company = lookup.byDomain.get(domain);
  const located = { ...base, domain, company_name: company?.name ?? c.company_name ?? null };
  const mail = await lookup.checker.domainMail(domain);
  if (mail.kind === 'none') return { ...located, status: 'no_mail_server', reason: mail.reason };

  const name = contactName(c);
  if (!name) throw new Error('a contact without a usable name passed validation');
  const people = lookup.known.get(domain) ?? [];
  const learned = learnPatterns(people);
  const self = name.last
    ? people.find((p) => p.email && asciiLetters(p.firstName) === name.first && asciiLetters(p.lastName) === name.last)
    : undefined;
  const list = candidates(name, domain, learned, self?.email ?? null);
  const facts = { known_emails: learned.sample, candidates_checked: list.length };
  const [best] = list;
  if (mail.kind === 'failed')
    return {
      ...located,
      ...facts,
      candidates_checked: 0,
      status: 'unknown',
      reason: mail.reason,
      best_guess: best?.email ?? null,
    };

  const checks = await lookup.checker.checkAll(list.map((l) => l.email));
  const confirmed = checks.findIndex((check) => check.status === 'valid');
  const hit = list[confirmed];
  const hitCheck = checks[confirmed];
  if (hit && hitCheck) {
    return {
      ...located,
      ...facts,
      email: hit.email,
      status: 'found',
      confidence: 95,
      pattern: hit.pattern,
      pattern_source: hit.source,
      reason: hitCheck.reason,
      ...checkFields(hitCheck),
    };
  }
  const [firstCheck] = checks;
  if (best && firstCheck && checks.some((check) => check.status === 'catch-all')) {
    const learnedFrom =
      learned.sample > 0 ? ` (learned from ${plural(learned.sample, 'known address', 'known addresses')})` : '';
    return {
      ...located,
      ...facts,
      email: best.email,
      status: 'catch-all',
      confidence: best.confidence,
      pattern: best.pattern,
      pattern_source: best.source,
      reason: `the mail server accepts any address at ${domain}; this is the most likely pattern${learnedFrom}`,
      ...checkFields({ ...firstCheck, status: 'catch-all' }),
    };
  }
  if (checks.every((check) => check.status === 'invalid')) {
    return {
      ...located,
      ...facts,
      status: 'not_found',
      reason: `the mail server refused all ${plural(list.length, 'candidate address', 'candidate addresses')}`,
    };
  }
  const unknown = checks.find((check) => check.status === 'unknown');
  return { ...located, ...facts, status: 'unknown', reason: unknown?.reason ?? null, best_guess: best?.email ?? null };
}

const price = perFound('email', '0.05', (row) => typeof row.email === 'string' && row.email.length > 0);

export const emailFinderTool = defineTool({
  name: 'email-finder',
  title: 'Email finder',
  description:
    'Work email addresses of named people at companies: address patterns learned from the lead database, ' +
    'confirmed by asking the company’s mail server (SMTP RCPT, no mail sent); every address found is validated.',
  rest: { path: '/api/v1/scrape/email-finder' },
  graphql: { mutation: 'startEmailFinder', inputType: 'StartEmailFinderInput' },
  mcp: { name: 'find_emails', toolset: 'emails', openWorld: true },
  example: {
    contacts: [
      { first_name: 'Jane', last_name: 'Doe', domain: 'acme.com' },
      { full_name: 'John Smith', company_name: 'Globex' },
    ],
  },
  input: emailFinderInput,
  price,
  cancellable: false,
  notes: [
    'Each contact needs a name (first_name, or full_name) and a company (domain, preferred, or company_name); ' +
      'a request with a contact missing either is refused with 400 naming `contacts.<index>`.',
    'A company_name is resolved through the lead database: ' +
      'the same name ignoring case (the largest company when several share it), ' +
      'else the most similar name (trigram similarity ≥ 0.5); an unknown company gives status company_not_found.',
    'Candidates, best first: the person’s own address if the lead database has it at that domain, ' +
      'then the patterns the domain’s known addresses follow (most addresses explained first), ' +
      'then the usual patterns (first.last, flast, first, firstlast, firstl, ' +
      'f.last, first_last, last.first, lastf, last, first-last, lastfirst, fl).',
    'All candidates of a contact are asked of the mail server in one SMTP session with a random address ' +
      'to detect catch-all domains; the first candidate the server accepts is found (confidence 95).',
    'On a catch-all domain the best candidate is returned with status catch-all and a confidence from ' +
      'the evidence: 90 for the person’s own catalog address, 40–95 for a learned pattern by the share of ' +
      'known addresses it explains (full weight from 3 addresses), the usual share of the pattern otherwise.',
    'Found and catch-all addresses are validated automatically (the same checks as the ' +
      `email validator) and billed ${price.each}; not_found, unknown (the server could not be asked; ` +
      'best_guess given), company_not_found and no_mail_server rows are free.',
    `At most ${MAX_CONTACTS} contacts per request; one row per contact, in the order sent.`,
  ],
  columns: EMAIL_FINDER_COLUMNS,
  identity: ['email'],
  requested: (input) => input.contacts.length,
  describeStart(input) {
    const named = input.contacts.filter((c) => !c.domain).length;
    return {
      message:
        'Finding emails for ' +
        `${plural(input.contacts.length, 'contact')}${named > 0 ? ` (${named} by company name)` : ''}; ` +
        `${price.each} per email found, free if not found`,
    };
  },
  async *run(ctx) {
    const { contacts } = ctx.input;
    // Rows an earlier attempt stored: the engine skips them by count, so they are not looked up again.
    if (ctx.startAt > 0) yield { rows: new Array<Row>(Math.min(ctx.startAt, contacts.length)).fill({}), handled: 0 };
    const todo = contacts.slice(ctx.startAt);
    if (todo.length === 0) return;

    const { catalog, settings } = ctx.sources.contacts;
    const byName = await catalog.companiesByName(
      todo.flatMap((c) => (!c.domain && c.company_name ? [c.company_name] : [])),
    );
    const domains = new Set<string>();
    for (const c of todo) {
      const domain = c.domain
        ? companyDomain(c.domain)
        : c.company_name
          ? byName.get(c.company_name)?.domain
          : undefined;
      if (domain) domains.add(domain);
    }
    const [byDomain, known] = await Promise.all([
      catalog.companiesByDomain([...domains]),
      catalog.peopleWithEmails([...domains], KNOWN_PER_DOMAIN),
    ]);
    const checker = new EmailChecker(ctx.sources.contacts, {
      concurrency: settings.emailConcurrency,
      greylistRetryMs: settings.greylistRetryMs,
      signal: ctx.signal,
    });
    const lookup: Lookup = { byName, byDomain, known, checker };

    let done = ctx.startAt;
    let found = 0;
    for await (const rows of inOrder(todo.map((c) => findContact(c, lookup)))) {
      if (ctx.signal.aborted) return;
      done += rows.length;
      found += rows.filter((r) => r.email).length;
      yield {
        rows,
        message: `${done} of ${contacts.length} contacts looked up: ${plural(found, 'email')} found`,
        last: done >= contacts.length,
      };
    }
  },
});
