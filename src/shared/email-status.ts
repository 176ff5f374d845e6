import { LEAD_EMAIL_STATUSES, type LeadEmailStatus } from '../../db/tables/leads.ts';

/*
 * The one vocabulary of email statuses. The email validator (and the finders that validate what they
 * find) answers a check's word; the lead database stores its own (LEAD_EMAIL_STATUSES, kept with the
 * table so the seed and the importer read them). The database's emailStatus filter takes both: a
 * check's word is read as the stored word it means.
 */

export { LEAD_EMAIL_STATUSES, type LeadEmailStatus };

/** What the email validator answers of an address, in the order its progress message counts them. */
export const EMAIL_CHECK_STATUSES = ['valid', 'invalid', 'catch-all', 'unknown'] as const;
export type EmailCheckStatus = (typeof EMAIL_CHECK_STATUSES)[number];

/**
 * A check's word as the lead database's: valid is a confirmed mailbox (verified); catch-all and unknown
 * are addresses the mail server did not confirm (guessed). The database keeps no address known to be
 * invalid, so the filter refuses that word rather than match nothing.
 */
const STORED_OF_CHECK: Readonly<Record<EmailCheckStatus, LeadEmailStatus | undefined>> = {
  valid: 'verified',
  invalid: undefined,
  'catch-all': 'guessed',
  unknown: 'guessed',
};

/** Every word the lead database's emailStatus filter takes: its own, then the validator's it maps. */
export const EMAIL_STATUS_FILTER_VALUES = [
  ...LEAD_EMAIL_STATUSES,
  ...EMAIL_CHECK_STATUSES.filter((status) => STORED_OF_CHECK[status] !== undefined),
] as unknown as readonly [string, ...string[]];

/** The stored word a filter value stands for ("valid" → "verified"; a stored word is itself). */
export function leadEmailStatusOf(value: string): LeadEmailStatus | undefined {
  if ((LEAD_EMAIL_STATUSES as readonly string[]).includes(value)) return value as LeadEmailStatus;
  return STORED_OF_CHECK[value as EmailCheckStatus];
}

/** "a, b or c" (or "a, b and c"). */
export const wordList = (words: readonly string[], last: 'or' | 'and' = 'or') =>
  words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1)}`;

const MEANING: Readonly<Record<LeadEmailStatus, string>> = {
  verified: 'mailbox confirmed',
  guessed: 'from the company’s address pattern, not confirmed',
  unavailable: 'no email',
};

/** "valid reads as verified, catch-all and unknown as guessed". */
const MAPPED = LEAD_EMAIL_STATUSES.map((stored) => ({
  stored,
  checks: EMAIL_CHECK_STATUSES.filter((check) => STORED_OF_CHECK[check] === stored),
}))
  .filter(({ checks }) => checks.length > 0)
  .map(({ stored, checks }, i) => `${wordList(checks, 'and')} ${i === 0 ? 'reads as' : 'as'} ${stored}`)
  .join(', ');

/** The emailStatus filter in words, for its description. */
export const EMAIL_STATUS_FILTER_TEXT =
  `Email status, any of: ${wordList(LEAD_EMAIL_STATUSES.map((s) => `${s} (${MEANING[s]})`))}; ` +
  `the email validator’s ${MAPPED}.`;

/** Why the emailStatus filter refuses `value`, naming what it takes. */
export function unknownEmailStatusMessage(value: unknown): string {
  const head = `unknown email status ${JSON.stringify(value)}`;
  const why = value === 'invalid' ? ' (the lead database keeps no address known to be invalid)' : '';
  return `${head}${why}: one of ${wordList(EMAIL_STATUS_FILTER_VALUES)}`;
}
