import { z } from 'zod';
import { classifyContactInput, type ContactInput } from '../catalog/leads/contact-inputs.ts';
import type { PersonContact } from '../sources/leads.ts';
import { perFound } from '../billing/pricing.ts';
import { defineTool, type Caller, type Column, type Row } from './types.ts';
import { plural } from '../shared/text.ts';

/** Inputs looked up per source round (one query per input kind). */
const BATCH = 500;
export const MAX_INPUTS = 10_000;
/** The spec: trial accounts look up at most this many inputs per search. */
export const TRIAL_LOOKUP_CAP = 3_500;

export const mobileFinderInput = z.object({
  inputs: z
    .array(
      z
        .string({ error: 'each input must be a string: an email address or a social profile URL' })
        .max(2_000, 'must be at most 2000 characters'),
      {
        error: (issue) =>
          issue.input === undefined
            ? 'inputs is required: email addresses and social profile URLs'
            : 'must be an array of strings',
      },
    )
    .min(1, 'send at least one email address or social profile URL')
    .max(MAX_INPUTS, `at most ${MAX_INPUTS} inputs per request; split the list`)
    .describe(
      'Social profile URLs (e.g. https://www.linkedin.com/in/jane-doe) ' +
        'and email addresses, mixed; the type of each is detected.',
    )
    .meta({
      title: 'Profile links and emails',
      examples: [['https://www.linkedin.com/in/jane-doe', 'jane.doe@acme.com']],
    }),
});
export type MobileFinderInput = z.output<typeof mobileFinderInput>;

export type FinderStatus = 'found' | 'not_found' | 'unrecognised_input' | 'duplicate';

/** One input as the run treats it: what it is, and the earlier input it repeats, if any. */
type PlannedInput = ContactInput & { input: string; duplicateOf?: number };

/** Classifies every input; a repeat of an earlier lookup (same normalised key) points at it (1-based). */
export function planLookups(inputs: readonly string[]): { planned: PlannedInput[]; lookups: number } {
  const firstByKey = new Map<string, number>();
  let lookups = 0;
  const planned = inputs.map((input, i): PlannedInput => {
    const kind = classifyContactInput(input);
    if (kind.kind === 'unrecognised') return { ...kind, input };
    const key = `${kind.kind}:${kind.key}`;
    const first = firstByKey.get(key);
    if (first !== undefined) return { ...kind, input, duplicateOf: first };
    firstByKey.set(key, i + 1);
    lookups += 1;
    return { ...kind, input };
  });
  return { planned, lookups };
}

/** Trial accounts: the inputs up to the 3,500th lookup; everything after it is left out. */
export function capForTrial(inputs: readonly string[]): { inputs: string[]; dropped: number } {
  const { planned } = planLookups(inputs);
  let lookups = 0;
  for (const [i, p] of planned.entries()) {
    if (p.kind === 'unrecognised' || p.duplicateOf !== undefined) continue;
    lookups += 1;
    if (lookups > TRIAL_LOOKUP_CAP) return { inputs: inputs.slice(0, i), dropped: inputs.length - i };
  }
  return { inputs: [...inputs], dropped: 0 };
}

const column = (key: string, description: string): Column => ({ key, header: key, description });

export const MOBILE_FINDER_COLUMNS: Column[] = [
  column('input', 'The input as sent'),
  column('input_type', 'email or social_url; empty when the input was not recognised'),
  column('status', 'found (billed), not_found, unrecognised_input or duplicate (none of these billed)'),
  column(
    'reason',
    'Why no number is given: what was not found, why the input was not recognised, or which input it repeats',
  ),
  column('mobile', 'Mobile phone number'),
  column('full_name', 'Name of the person found'),
  column('first_name', 'First name'),
  column('last_name', 'Last name'),
  column('title', 'Job title'),
  column('company_name', 'Company name'),
  column('company_domain', 'Company root domain'),
  column('email', 'Work email address'),
  column('linkedin_url', 'Social (professional network) profile URL'),
  column('city', 'City'),
  column('state', 'State or region'),
  column('country', 'Country'),
];

const empty = Object.fromEntries(MOBILE_FINDER_COLUMNS.map((c) => [c.key, null])) as Row;

function rowFor(p: PlannedInput, person: PersonContact | undefined): Row {
  if (p.kind === 'unrecognised') return { ...empty, input: p.input, status: 'unrecognised_input', reason: p.reason };
  const base = { ...empty, input: p.input, input_type: p.kind };
  if (p.duplicateOf !== undefined)
    return { ...base, status: 'duplicate', reason: `same lookup as input ${p.duplicateOf}; its row has the result` };
  const what = p.kind === 'email' ? 'email address' : 'social profile';
  if (!person) return { ...base, status: 'not_found', reason: `no person with this ${what} in the lead database` };
  if (!person.mobile)
    return { ...base, status: 'not_found', reason: `the person with this ${what} has no known mobile number` };
  return {
    ...base,
    status: 'found',
    mobile: person.mobile,
    full_name: `${person.firstName} ${person.lastName}`,
    first_name: person.firstName,
    last_name: person.lastName,
    title: person.title,
    company_name: person.companyName,
    company_domain: person.companyDomain,
    email: person.email,
    linkedin_url: person.linkedinUrl,
    city: person.city,
    state: person.state,
    country: person.country,
  };
}

function describeInputs(inputs: readonly string[]): string {
  const { planned, lookups } = planLookups(inputs);
  const emails = planned.filter((p) => p.kind === 'email' && p.duplicateOf === undefined).length;
  const unrecognised = planned.filter((p) => p.kind === 'unrecognised').length;
  const duplicates = planned.filter((p) => p.kind !== 'unrecognised' && p.duplicateOf !== undefined).length;
  const parts = [
    `Looking up mobile numbers for ${plural(lookups, 'input')} ` +
      `(${plural(emails, 'email address', 'email addresses')}, ${plural(lookups - emails, 'social profile URL')})`,
  ];
  if (unrecognised > 0)
    parts.push(
      `${plural(unrecognised, 'input was', 'inputs were')} not recognised and ` +
        `${unrecognised === 1 ? 'is' : 'are'} reported in ${unrecognised === 1 ? 'its row' : 'their rows'}, free`,
    );
  if (duplicates > 0)
    parts.push(
      `${plural(duplicates, 'repeated input')} ${duplicates === 1 ? 'points' : 'point'} ` +
        'at the first row with the same lookup, free',
    );
  return `${parts.join('; ')}.`;
}

const price = perFound(
  'mobile number',
  '0.25',
  (row) => row.status === 'found',
  (each) => `${each} per number found; free if not found`,
);

export const mobileFinderTool = defineTool({
  name: 'mobile-finder',
  title: 'Mobile finder',
  description:
    'Mobile phone numbers for a mixed list of social profile URLs and email addresses, ' +
    'looked up in the lead database; one result row per input.',
  rest: { path: '/api/v1/scrape/mobile-finder' },
  graphql: { mutation: 'startMobileFinder', inputType: 'StartMobileFinderInput' },
  mcp: { name: 'find_mobiles', toolset: 'enrichment' },
  example: { inputs: ['https://www.linkedin.com/in/jane-doe', 'jane.doe@acme.com'] },
  input: mobileFinderInput,
  rowUnit: 'input',
  price,
  cancellable: false,
  notes: [
    'Each input is detected as an email address or a social profile URL; ' +
      'a profile URL is read by its path on any host (/in/<name>), ' +
      'with or without https:// and www, ignoring case, query and trailing slash.',
    `Every input gets one row, in the order sent: found (billed ${price.each}), not_found, ` +
      'unrecognised_input with the reason, or duplicate (a repeat of an earlier input, ' +
      'pointing at its row); only found rows are billed.',
    'A person known to the lead database without a mobile number is not_found, and nothing about them is returned.',
    `At most ${MAX_INPUTS} inputs per request.`,
    `Trial accounts look up at most ${TRIAL_LOOKUP_CAP} inputs per search: a longer list is cut after ` +
      `the ${TRIAL_LOOKUP_CAP}th lookup, the start message says how many inputs were left out, ` +
      'and the run looks up only the inputs before the cut (unrecognised and repeated inputs are not lookups).',
    `The run holds ${price.each} per input, capped at the wallet balance, and settles on the numbers found.`,
  ],
  columns: MOBILE_FINDER_COLUMNS,
  identity: ['input'],
  requested: (input) => input.inputs.length,
  startDetails: z.object({
    trialCap: z
      .object({
        lookups: z.int().describe('Most lookups of a trial search.'),
        inputsAccepted: z.int().describe('Inputs searched.'),
        inputsDropped: z.int().describe('Inputs left out after the cap.'),
      })
      .optional()
      .describe('How a trial account’s cap cut the list; absent otherwise.'),
  }),
  describeStart(input, caller: Caller) {
    if (caller.subscriptionStatus !== 'TRIAL') return { message: describeInputs(input.inputs) };
    const capped = capForTrial(input.inputs);
    if (capped.dropped === 0) return { message: describeInputs(input.inputs) };
    return {
      input: { ...input, inputs: capped.inputs },
      message:
        `Trial accounts can look up ${TRIAL_LOOKUP_CAP} inputs per search: ` +
        `the first ${capped.inputs.length} inputs (${TRIAL_LOOKUP_CAP} lookups) are searched, ` +
        `the last ${plural(capped.dropped, 'input was', 'inputs were')} left out and will not be billed. ` +
        `${describeInputs(capped.inputs)}`,
      extra: {
        trialCap: { lookups: TRIAL_LOOKUP_CAP, inputsAccepted: capped.inputs.length, inputsDropped: capped.dropped },
      },
    };
  },
  async *run(ctx) {
    const { planned } = planLookups(ctx.input.inputs);
    let found = 0;
    for (let start = 0; start < planned.length && !ctx.signal.aborted; start += BATCH) {
      const batch = planned.slice(start, start + BATCH);
      const fresh = batch.filter((p) => p.kind !== 'unrecognised' && p.duplicateOf === undefined);
      const emails = fresh.flatMap((p) => (p.kind === 'email' ? [p.key] : []));
      const socialUrls = fresh.flatMap((p) => (p.kind === 'social_url' ? [p.key] : []));
      const matches = fresh.length > 0 ? await ctx.sources.leads.findContacts({ emails, socialUrls }) : undefined;
      const rows = batch.map((p) => {
        const person =
          p.kind === 'email'
            ? matches?.byEmail.get(p.key)
            : p.kind === 'social_url'
              ? matches?.bySocialUrl.get(p.key)
              : undefined;
        return rowFor(p, p.kind !== 'unrecognised' && p.duplicateOf === undefined ? person : undefined);
      });
      found += rows.filter((r) => r.status === 'found').length;
      yield {
        rows,
        message: `${start + batch.length} of ${planned.length} inputs looked up: ${plural(found, 'number')} found`,
        last: start + batch.length >= planned.length,
      };
    }
  },
});
