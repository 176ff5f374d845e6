import { z } from 'zod';
import { EmailChecker } from './lib/email/checker.ts';
import { COMPANY_COLUMNS, companyFields, inOrder, VALIDATION_COLUMNS, validationFields } from './lib/email/rows.ts';
import { dedupeKey, parseAddress } from './lib/email/syntax.ts';
import { isFreeWebmailDomain } from './lib/email/flags.ts';
import { perResult } from '../billing/pricing.ts';
import { defineTool, type Row } from './types.ts';
import { plural } from '../shared/text.ts';
import { EMAIL_CHECK_STATUSES, type EmailCheckStatus } from '../shared/email-status.ts';

export const MAX_EMAILS = 10_000;

export const emailValidatorInput = z.object({
  emails: z
    .array(
      z
        .string({ error: 'each email must be a string' })
        .trim()
        .min(1, 'must not be empty')
        .max(320, 'must be at most 320 characters'),
      {
        error: (issue) =>
          issue.input === undefined ? 'emails is required: a list of email addresses' : 'must be an array of strings',
      },
    )
    .min(1, 'send at least one email address')
    .max(MAX_EMAILS, `at most ${MAX_EMAILS} emails per request; split the list`)
    .describe(
      'Email addresses to validate; repeated addresses (the same address in any case) are checked and billed once.',
    )
    .meta({ title: 'Email addresses', examples: [['jane.doe@acme.com']] }),
});
export type EmailValidatorInput = z.output<typeof emailValidatorInput>;

/** The addresses in order of first appearance, each once. */
export function dedupeEmails(emails: readonly string[]): string[] {
  const seen = new Set<string>();
  const unique: string[] = [];
  for (const email of emails) {
    const key = dedupeKey(email);
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(email.trim());
  }
  return unique;
}

export const emailValidatorTool = defineTool({
  name: 'email-validator',
  title: 'Email validator',
  description:
    'Validates email addresses without sending mail: syntax, disposable, role and free-webmail flags, MX lookup, ' +
    'an SMTP mailbox probe with catch-all detection, and the company at the domain from the lead database.',
  rest: { path: '/api/v1/scrape/email-validator' },
  graphql: { mutation: 'startEmailValidator', inputType: 'StartEmailValidatorInput' },
  mcp: { name: 'validate_emails', toolset: 'emails', openWorld: true },
  example: { emails: ['jane.doe@acme.com', 'sales@example.org'] },
  input: emailValidatorInput,
  price: perResult('email', '0.0072'),
  cancellable: false,
  notes: [
    'Addresses are deduplicated before anything runs, in any case (jane.doe@acme.com ' +
      'and Jane.Doe@ACME.com are one address, answered as first written); ' +
      'the start response gives `emailCount` after deduplication, and each address is billed once.',
    'Status valid: the mail server accepts the mailbox and refuses a random address at the same domain. ' +
      'catch-all: it accepts any address, so this one cannot be confirmed. invalid: bad RFC 5321 syntax, ' +
      'a domain that does not exist or has no mail server (no MX and no A/AAAA, or a null MX), ' +
      'or a mailbox the server says does not exist (550/551/553, 5.1.x). ' +
      'unknown: the server could not be asked or would not say (timeouts, ' +
      'policy refusals, temporary refusals twice, outbound refusals).',
    'No MX records means the domain itself receives mail (RFC 5321 §5.1): ' +
      'its A/AAAA address is probed and `mx_fallback` is true.',
    'The SMTP probe says EHLO, upgrades with STARTTLS where offered, MAIL FROM, ' +
      'RCPT TO each address of a domain (up to 20 per session) ' +
      'and once a random address, then RSET and QUIT; it never sends DATA.',
    'A temporary refusal (4xx, typically greylisting) is asked again once after the configured delay; ' +
      'a second one makes the address unknown.',
    'Each domain is looked up and tested for catch-all once per run; ' +
      'sessions per mail domain are limited across the process, and every connection goes through the outbound guard.',
    'Company fields come from the lead database by the address’s domain (not for free webmail domains).',
    `Every address is billed once after deduplication, whatever its status; at most ${MAX_EMAILS} per request.`,
  ],
  identity: ['email'],
  columns: [
    { key: 'email', header: 'email', description: 'The address (domain in lower case)' },
    ...VALIDATION_COLUMNS,
    ...COMPANY_COLUMNS,
  ],
  requested: (input) => input.emails.length,
  startDetails: z.object({
    emailCount: z.int().describe('Addresses to validate after removing repeats (each billed once).'),
  }),
  describeStart(input) {
    const emails = dedupeEmails(input.emails);
    const removed = input.emails.length - emails.length;
    return {
      input: { emails },
      message:
        'Validating ' +
        `${plural(emails.length, 'email')}${removed > 0 ? ` (${plural(removed, 'duplicate')} removed)` : ''}`,
      extra: { emailCount: emails.length },
    };
  },
  async *run(ctx) {
    const { emails } = ctx.input;
    // Rows an earlier attempt stored: the engine skips them by count, so they are not checked again.
    if (ctx.startAt > 0) yield { rows: new Array<Row>(Math.min(ctx.startAt, emails.length)).fill({}), handled: 0 };
    const todo = emails.slice(ctx.startAt);
    if (todo.length === 0) return;

    const { catalog, settings } = ctx.sources.contacts;
    const domains = new Set<string>();
    for (const email of todo) {
      const parsed = parseAddress(email);
      if (parsed.ok && !isFreeWebmailDomain(parsed.domain)) domains.add(parsed.domain);
    }
    const companies = await catalog.companiesByDomain([...domains]);
    const checker = new EmailChecker(ctx.sources.contacts, {
      concurrency: settings.emailConcurrency,
      greylistRetryMs: settings.greylistRetryMs,
      signal: ctx.signal,
    });

    let done = ctx.startAt;
    const counts = Object.fromEntries(EMAIL_CHECK_STATUSES.map((s) => [s, 0])) as Record<EmailCheckStatus, number>;
    for await (const checks of inOrder(todo.map((email) => checker.check(email)))) {
      if (ctx.signal.aborted) return;
      const rows = checks.map((check) => {
        counts[check.status] += 1;
        const company = check.domain && !check.freeWebmail ? companies.get(check.domain) : undefined;
        return { email: check.email, ...validationFields(check), ...companyFields(company) };
      });
      done += rows.length;
      const tally = EMAIL_CHECK_STATUSES.map((s) => `${counts[s]} ${s}`).join(', ');
      yield {
        rows,
        message: `${done} of ${emails.length} emails checked: ${tally}`,
        last: done >= emails.length,
      };
    }
  },
});
