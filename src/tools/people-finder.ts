import { z } from 'zod';
import { usStateParam } from '../shared/geo.ts';
import { parseAddress } from '../catalog/people/address.ts';
import { formatName, parseFullName } from '../catalog/people/names.ts';
import type { PersonQuery, PersonRecord } from '../sources/people.ts';
import { perResultAtLeastOne } from '../billing/pricing.ts';
import { cell, defineTool, type Row } from './types.ts';

const PAGE_SIZE = 50;

const optionalText = (max: number) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

export const peopleFinderInput = z
  .object({
    name: optionalText(200)
      .transform((value) => value.replace(/\s+/g, ' '))
      .superRefine((value, ctx) => {
        if (!parseFullName(value))
          ctx.addIssue({
            code: 'custom',
            message: 'give the full name: first and last name, e.g. "John Smith" or "Smith, John"',
          });
      })
      .optional()
      .describe(
        'Full name: "First Last", "First Middle Last" or "Last, First". Needs a state, ZIP code or address beside it.',
      )
      .meta({ title: 'Full name', examples: ['Jane Doe'] }),
    address: optionalText(300)
      .superRefine((value, ctx) => {
        const parsed = parseAddress(value);
        if ('error' in parsed) ctx.addIssue({ code: 'custom', message: parsed.error });
      })
      .optional()
      .describe(
        'US street address, e.g. "123 Main St, Denver, CO 80202"; ' +
          'city, state and ZIP code in it are used unless given separately.',
      )
      .meta({ title: 'Street address', examples: ['123 Main St, Denver, CO 80202'] }),
    city: optionalText(100)
      .optional()
      .describe('City; needs a state or ZIP code beside it.')
      .meta({ title: 'City', examples: ['Denver'] }),
    state: usStateParam()
      .optional()
      .describe('US state: two-letter code or full name, any case; normalised to the code.')
      .meta({ title: 'State', examples: ['CO'] }),
    zip: z
      .string()
      .trim()
      .regex(/^\d{5}(-\d{4})?$/, 'must be a US ZIP code: 5 digits, or ZIP+4 like 80202-1234')
      .transform((value) => value.slice(0, 5))
      .optional()
      .describe('US ZIP code (5 digits or ZIP+4).')
      .meta({ title: 'ZIP code', examples: ['80202'] }),
    phone: z
      .string()
      .trim()
      .transform((value, ctx) => {
        const digits = value.replace(/\D/g, '');
        const national = digits.length === 11 && digits.startsWith('1') ? digits.slice(1) : digits;
        if (national.length !== 10 || /[a-z]/i.test(value)) {
          ctx.addIssue({ code: 'custom', message: 'must be a US phone number with 10 digits, e.g. "+1 303-555-0147"' });
          return z.NEVER;
        }
        return national;
      })
      .optional()
      .describe('US phone number in any format, e.g. "(303) 555-0147" or "+1 303-555-0147"; matched on its 10 digits.')
      .meta({ title: 'Phone', examples: ['(303) 555-0147'] }),
    email: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.email('must be an email address'))
      .optional()
      .describe('Email address; matched ignoring case.')
      .meta({ title: 'Email', examples: ['jane.doe@acme.com'] }),
    maxResults: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(100, 'must be at most 100')
      .default(10)
      .describe('Most persons to return; default 10. Each is billed.')
      .meta({ title: 'Number of persons', examples: [10] }),
  })
  .superRefine((input, ctx) => {
    // An unreadable name or address is reported on its own field.
    if ((input.name && !parseFullName(input.name)) || (input.address && 'error' in parseAddress(input.address))) return;
    const q = personQuery(input);
    if (q.city && !q.state && !q.zip) {
      ctx.addIssue({ code: 'custom', path: ['city'], message: 'a city needs a state or ZIP code beside it' });
      return;
    }
    if (q.phone || q.email) return;
    if (q.name && !q.state && !q.zip) {
      ctx.addIssue({
        code: 'custom',
        path: ['state'],
        message: 'a name search needs a state, a ZIP code or an address with one (or search by phone or email)',
      });
    } else if (!q.name && q.street && !q.state && !q.zip) {
      ctx.addIssue({
        code: 'custom',
        path: ['address'],
        message: 'an address search needs the state or ZIP code, e.g. "123 Main St, Denver, CO 80202"',
      });
    } else if (!q.name && !q.street) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message:
          'send a phone, an email, a name with a state or ZIP code, or a street address with its state or ZIP code',
      });
    }
  });
export type PeopleFinderInput = z.output<typeof peopleFinderInput>;

/** What the input searches for: the address's parts fill in a city, state or ZIP code not given on their own. */
export function personQuery(input: Omit<PeopleFinderInput, 'maxResults'>): PersonQuery {
  const fromAddress = input.address ? parseAddress(input.address) : {};
  const address = 'error' in fromAddress ? {} : fromAddress;
  const name = input.name ? parseFullName(input.name) : undefined;
  const query: PersonQuery = {
    name,
    street: address.street,
    city: input.city ?? address.city,
    state: input.state ?? address.state,
    zip: input.zip ?? address.zip,
    phone: input.phone,
    email: input.email,
  };
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) as PersonQuery;
}

function describeQuery(q: PersonQuery): string {
  const parts: string[] = [];
  if (q.name) parts.push(`name "${formatName(q.name)}"`);
  if (q.street) parts.push(`street "${q.street}"`);
  const place = [q.city, [q.state, q.zip].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  if (place) parts.push(`in ${place}`);
  if (q.phone) parts.push(`phone ${q.phone}`);
  if (q.email) parts.push(`email ${q.email}`);
  return parts.join(', ');
}

function toRow(p: PersonRecord): Row {
  return {
    person_id: p.personId,
    name: p.fullName,
    first_name: p.firstName,
    middle_name: p.middleName,
    last_name: p.lastName,
    address: p.address,
    street: p.street,
    city: p.city,
    state: p.state,
    zip: p.zip,
    phones: p.phones,
    emails: p.emails,
    addresses: p.addresses,
    owned_properties: p.ownedProperties,
    relatives: p.relatives,
    employer: p.employer,
    job_title: p.jobTitle,
    source: p.source,
  };
}

const lastTen = (phone: string) => phone.replace(/\D/g, '').slice(-10);

/** The same person from two records: same name, and a phone or an email in common. */
function samePerson(a: PersonRecord, b: PersonRecord): boolean {
  if (a.fullName.toLowerCase() !== b.fullName.toLowerCase()) return false;
  const phones = new Set(a.phones.map(lastTen));
  const emails = new Set(a.emails.map((e) => e.toLowerCase()));
  return b.phones.some((p) => phones.has(lastTen(p))) || b.emails.some((e) => emails.has(e.toLowerCase()));
}

const price = perResultAtLeastOne(
  'person',
  '0.0199',
  (each) => `${each} per result; a search with 0 matches bills as 1 result`,
);

export const peopleFinderTool = defineTool({
  name: 'people-finder',
  title: 'People finder (skiptrace)',
  description:
    'Persons by name with an address, city, state or ZIP code, or by phone or email: ' +
    'their current address, phones, emails, other known addresses, properties owned and likely relatives.',
  rest: { path: '/api/v1/scrape/people-finder' },
  graphql: { mutation: 'startPeopleFinder', inputType: 'StartPeopleFinderInput' },
  mcp: { name: 'find_people', toolset: 'database' },
  permissibleUse: true,
  example: { name: 'Jane Doe', city: 'Denver', state: 'CO' },
  input: peopleFinderInput,
  price,
  cancellable: false,
  notes: [
    'One search per request; searchable combinations: a phone; an email; a full name with a state or ZIP code ' +
      '(from `state`, `zip` or `address`); or a street address with its state or ZIP code (who owns or lives there).',
    'A name alone, nationwide, is refused with 400 naming `state`: it would return, ' +
      'and bill, a crowd of namesakes; a city needs a state or ZIP code beside it.',
    'Every criterion given must hold; ' +
      '`city`, `state` and `zip` given on their own take precedence over the same parts of `address`.',
    'Names match like the criminal records search: first and last name exactly, ignoring case; ' +
      '"Last, First" for compound last names; a middle name or initial narrows.',
    'Persons come from property records (one person per owner name and mailing address, ' +
      'with every property they own, their phones and emails) and from the lead database (work email, ' +
      'mobile, employer, city and state); companies, trusts and other entity owners are not persons and are left out.',
    'A property owner matches a location through the mailing address or the address of a property they own; ' +
      'streets match with the street type and direction abbreviated or in full ("Main Street" finds "Main St").',
    'Lead database people have no street or ZIP code, so they are searched only by name with a city or state, ' +
      'by mobile number or by email; their office lines are shared by colleagues and are not matched.',
    "Relatives are other owners sharing the person's last name at the same mailing address; " +
      'lead database people have none.',
    'Property owners come first (oldest record first), then lead database people (by id); ' +
      'a lead database person with the same name and a phone or ' +
      'email in common with a person already returned is not repeated.',
    `Each person returned costs ${price.each}, up to \`maxResults\` (default 10, ` +
      `at most 100); a search that finds nobody bills as 1 result (${price.each}).`,
  ],
  identity: ['person_id'],
  columns: [
    {
      key: 'person_id',
      header: 'person_id',
      description: 'Stable identifier: owner-<n> (property records) or lead-<n> (lead database)',
    },
    { key: 'name', header: 'name', description: 'Full name' },
    { key: 'first_name', header: 'first_name', description: 'First name' },
    { key: 'middle_name', header: 'middle_name', description: 'Middle name or initial, when known' },
    { key: 'last_name', header: 'last_name', description: 'Last name' },
    {
      key: 'address',
      header: 'address',
      description: 'Current address: the mailing address, or city and state from the lead database',
    },
    { key: 'street', header: 'street', description: 'Street of the current address' },
    { key: 'city', header: 'city', description: 'City of the current address' },
    { key: 'state', header: 'state', description: 'State of the current address' },
    { key: 'zip', header: 'zip', description: 'ZIP code of the current address' },
    { key: 'phones', header: 'phones', description: 'Phone numbers', type: cell.texts },
    { key: 'emails', header: 'emails', description: 'Email addresses', type: cell.texts },
    {
      key: 'addresses',
      header: 'addresses',
      description: 'Every known address, the current one first',
      type: cell.texts,
    },
    {
      key: 'owned_properties',
      header: 'owned_properties',
      description: 'Addresses of the properties the person owns',
      type: cell.texts,
    },
    {
      key: 'relatives',
      header: 'relatives',
      description: 'Likely relatives: same last name at the same mailing address',
      type: cell.texts,
    },
    { key: 'employer', header: 'employer', description: 'Employer (lead database)' },
    { key: 'job_title', header: 'job_title', description: 'Job title (lead database)' },
    { key: 'source', header: 'source', description: 'property_records or lead_database' },
  ],
  requested: (input) => input.maxResults,
  startDetails: z.object({
    search: z
      .object({
        name: z.string().optional().describe('The name searched, formatted.'),
        street: z.string().optional().describe('The street line, normalised ("123 main st").'),
        city: z.string().optional().describe('The city.'),
        state: z.string().optional().describe('Two-letter state code.'),
        zip: z.string().optional().describe('Five-digit ZIP code.'),
        phone: z.string().optional().describe('The last ten digits of the phone.'),
        email: z.string().optional().describe('The email, lower case.'),
      })
      .describe('What is searched, as read from the input.'),
  }),
  describeStart(input) {
    const query = personQuery(input);
    return {
      message:
        `Searching for persons by ${describeQuery(query)}; ` +
        `up to ${input.maxResults} result${input.maxResults === 1 ? '' : 's'} ` +
        `at ${price.each} each (a search with no match bills as 1 result)`,
      extra: { search: { ...query, name: query.name ? formatName(query.name) : undefined } },
    };
  },
  async *run(ctx) {
    const query = personQuery(ctx.input);
    const returned: PersonRecord[] = [];
    let after: string | undefined;
    while (returned.length < ctx.input.maxResults && !ctx.signal.aborted) {
      const page = await ctx.sources.people.searchPeople({
        ...query,
        limit: Math.min(PAGE_SIZE, ctx.input.maxResults - returned.length),
        after,
      });
      const rows: Row[] = [];
      for (const person of page.people) {
        if (returned.length >= ctx.input.maxResults) break;
        if (returned.some((r) => samePerson(r, person))) continue;
        returned.push(person);
        rows.push(toRow(person));
      }
      if (rows.length > 0 || page.next === null) {
        yield {
          rows,
          message: `${returned.length} person${returned.length === 1 ? '' : 's'} found`,
          last: page.next === null || returned.length >= ctx.input.maxResults,
        };
      }
      if (page.next === null) break;
      after = page.next;
    }
  },
});
