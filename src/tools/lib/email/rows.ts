import { cell, type Column, type Row } from '../../types.ts';
import type { CompanyProfile } from '../../../sources/contacts.ts';
import type { EmailCheck } from './checker.ts';
import { EMAIL_CHECK_STATUSES, wordList } from '../../../shared/email-status.ts';

const column = (key: string, description: string, type?: Column['type']): Column => ({
  key,
  header: key,
  description,
  ...(type ? { type } : {}),
});

/** The validation columns, shared by the validator and the finders' automatic validation. */
export const VALIDATION_COLUMNS: Column[] = [
  column('status', wordList(EMAIL_CHECK_STATUSES)),
  column('reason', 'Why: the syntax problem, the DNS answer or the mail server reply'),
  column('domain', 'Domain of the address (lower case, IDN as punycode)'),
  column('syntax_valid', 'The address is an RFC 5321 mailbox', cell.bool),
  column('mx_found', 'The domain publishes MX records', cell.bool),
  column('mx_fallback', 'No MX records: the domain’s own A/AAAA address receives its mail', cell.bool),
  column('mx_host', 'Mail server asked (highest-preference MX, or the domain itself)'),
  column('provider', 'Mail provider recognised from the MX hosts (Google Workspace, Microsoft 365, …)'),
  column('smtp_code', 'Reply code of the mail server to RCPT TO for this address', cell.int),
  column('is_disposable', 'The domain is a disposable-address service', cell.bool),
  column('is_role_account', 'The local part names a function (info, sales, support…) rather than a person', cell.bool),
  column('is_free_webmail', 'The domain is a free webmail provider', cell.bool),
];

export const COMPANY_COLUMNS: Column[] = [
  column('company_name', 'Company at the domain, from the lead database'),
  column('company_industry', 'Industry'),
  column('company_size', 'Employee band, e.g. 51-200'),
  column('company_employees', 'Employee count', cell.int),
  column('company_founded', 'Year founded', cell.int),
  column('company_location', 'Headquarters: city, state, country'),
  column('company_linkedin_url', 'Company page on the professional network'),
  column('company_twitter_url', 'Company microblog profile'),
  column('company_facebook_url', 'Company social network page'),
];

export function validationFields(check: EmailCheck): Row {
  return {
    status: check.status,
    reason: check.reason,
    domain: check.domain,
    syntax_valid: check.syntaxValid,
    mx_found: check.mxFound,
    mx_fallback: check.mxFallback,
    mx_host: check.mxHost,
    provider: check.provider,
    smtp_code: check.smtpCode,
    is_disposable: check.disposable,
    is_role_account: check.role,
    is_free_webmail: check.freeWebmail,
  };
}

export function companyFields(company: CompanyProfile | undefined): Row {
  return {
    company_name: company?.name ?? null,
    company_industry: company?.industry ?? null,
    company_size: company?.sizeBand ?? null,
    company_employees: company?.employeesCount ?? null,
    company_founded: company?.founded ?? null,
    company_location: company
      ? [company.city, company.state, company.country].filter(Boolean).join(', ') || null
      : null,
    company_linkedin_url: company?.linkedinUrl ?? null,
    company_twitter_url: company?.twitterUrl ?? null,
    company_facebook_url: company?.facebookUrl ?? null,
  };
}

/**
 * Yields the results of `pending` in order, as soon as each is ready, in batches of those ready
 * together (at most `maxBatch`).
 */
export async function* inOrder<T>(pending: readonly Promise<T>[], maxBatch = 200): AsyncGenerator<Awaited<T>[]> {
  const ready: (Awaited<T> | undefined)[] = new Array(pending.length);
  const settled: boolean[] = new Array(pending.length).fill(false);
  for (const [i, p] of pending.entries()) {
    p.then(
      (value) => {
        ready[i] = value as Awaited<T>;
        settled[i] = true;
      },
      () => {},
    );
  }
  let next = 0;
  for (let first = pending[0]; first !== undefined; first = pending[next]) {
    const batch = [await first];
    next += 1;
    while (next < pending.length && settled[next] && batch.length < maxBatch) batch.push(ready[next++] as Awaited<T>);
    yield batch;
  }
}
