import { z } from 'zod';
import { usStateParam } from '../shared/geo.ts';
import { parseDateOfBirth } from '../catalog/people/dates.ts';
import { parseFullName } from '../catalog/people/names.ts';
import type { CriminalRecordHit } from '../sources/criminal-records.ts';
import { perSearchWhenFound } from '../billing/pricing.ts';
import { defineTool, type Row } from './types.ts';
import { plural } from '../shared/text.ts';

const PAGE_SIZE = 200;

export const SOURCE_NAMES: Record<string, string> = {
  sex_offender_registry: 'Sex offender registry',
  department_of_corrections: 'Department of corrections',
  arrest: 'Arrest records',
  court: 'Court records',
};

const PERMITTED_USE_NOTE =
  'Not for employment or tenant screening or any other regulated purpose: these results are not a consumer ' +
  'report under the FCRA and must not be used to decide on employment, housing, credit or insurance.';

const today = () => new Date().toISOString().slice(0, 10);

export const criminalRecordsInput = z.object({
  name: z
    .string({ error: (issue) => (issue.input === undefined ? 'name is required' : 'must be a string') })
    .trim()
    .min(1, 'name is required')
    .max(200, 'must be at most 200 characters')
    .transform((value) => value.replace(/\s+/g, ' '))
    .superRefine((value, ctx) => {
      if (!parseFullName(value))
        ctx.addIssue({
          code: 'custom',
          message: 'give the full name: first and last name, e.g. "John Smith" or "Smith, John"',
        });
    })
    .describe(
      'Full name, one per request: "First Last", "First Middle Last" or "Last, ' +
        'First" (for compound last names). Case is ignored.',
    )
    .meta({ title: 'Full name', examples: ['John Smith'] }),
  state: usStateParam()
    .optional()
    .describe(
      'US state: two-letter code or full name, any case, e.g. ' +
        '"tx" or "Texas"; normalised to the code. Omitted means all states.',
    )
    .meta({ title: 'State', examples: ['CO'] }),
  dob: z
    .string()
    .trim()
    .transform((value, ctx) => {
      const parsed = parseDateOfBirth(value, today());
      if ('error' in parsed) {
        ctx.addIssue({ code: 'custom', message: parsed.error });
        return z.NEVER;
      }
      return parsed.date;
    })
    .optional()
    .describe(
      'Date of birth: 1980-03-05, 3/5/1980 or March 5, 1980. ' +
        'When given, only records with exactly this date of birth are returned.',
    )
    .meta({ title: 'Date of birth', examples: ['1980-04-12'] }),
});
export type CriminalRecordsInput = z.output<typeof criminalRecordsInput>;

function toRow(r: CriminalRecordHit): Row {
  return {
    name: [r.firstName, r.middleName, r.lastName].filter(Boolean).join(' '),
    first_name: r.firstName,
    middle_name: r.middleName,
    last_name: r.lastName,
    dob: r.dateOfBirth,
    state: r.state,
    county: r.county,
    source: r.source,
    source_name: SOURCE_NAMES[r.source] ?? r.source,
    offense: r.offense,
    offense_date: r.offenseDate,
    disposition: r.disposition,
    case_number: r.caseNumber,
    record_id: r.recordKey,
  };
}

const price = perSearchWhenFound('search', '1.00', (each) => `${each} per search, charged only if records are found`);

export const criminalRecordsTool = defineTool({
  name: 'criminal-records',
  title: 'Criminal records search',
  description:
    'Criminal records for one person by name, optionally narrowed to a state and an exact date of birth, ' +
    'from sex offender registries, departments of corrections, arrest records and court records.',
  rest: { path: '/api/v1/scrape/criminal-records' },
  graphql: { mutation: 'startCriminalRecordsSearch', inputType: 'StartCriminalRecordsSearchInput' },
  mcp: { name: 'search_criminal_records', toolset: 'database' },
  permissibleUse: true,
  example: { name: 'John Smith', state: 'CO', dob: '1980-04-12' },
  input: criminalRecordsInput,
  price,
  rowUnit: 'record',
  cancellable: false,
  notes: [
    'Not for employment or tenant screening or any other regulated purpose (the results ' +
      'are not a consumer report under the FCRA); every start response carries this `note`.',
    'One name per request: first and last name must both match, ignoring case; ' +
      'without a comma the last word is the last name, and "Last, First Middle" names a compound last name.',
    'A trailing Jr, Sr, II, III, IV or V and periods in the name are ignored.',
    'A middle name or initial narrows the search: it matches records without a middle name, ' +
      'with the same middle name, or where one is the initial of the other; without one, every middle name matches.',
    '`state` takes a two-letter code or a full name in any case and is normalised to the code (the ' +
      'start response shows it; null means all states); anything else is refused with 400 naming `state`.',
    '`dob` accepts ISO (1980-03-05), slashes in US order (3/5/1980; ' +
      'day first only when the first number is over 12) and long forms (March 5, 1980 or 5 March 1980); ' +
      'two-digit years, impossible dates and future dates are refused with 400 naming `dob`.',
    'With `dob`, only records with exactly that date of birth are returned; ' +
      'records without a date of birth are left out.',
    `The search costs ${price.each} only when at least one record is returned (after the state and date-of-birth ` +
      `filters); a search that finds nothing is free, and the wallet must hold ${price.each} to start one.`,
    'Sources covered: sex offender registry, department of corrections, ' +
      'arrest records and court records (`source` holds the code, ' +
      '`source_name` the label); rows come in catalog order.',
  ],
  identity: ['record_id'],
  columns: [
    { key: 'name', header: 'name', description: 'Full name on the record' },
    { key: 'first_name', header: 'first_name', description: 'First name' },
    { key: 'middle_name', header: 'middle_name', description: 'Middle name, when recorded' },
    { key: 'last_name', header: 'last_name', description: 'Last name' },
    { key: 'dob', header: 'dob', description: 'Date of birth (YYYY-MM-DD), when recorded' },
    { key: 'state', header: 'state', description: 'Two-letter state code of the record' },
    { key: 'county', header: 'county', description: 'County' },
    {
      key: 'source',
      header: 'source',
      description: 'sex_offender_registry, department_of_corrections, arrest or court',
    },
    { key: 'source_name', header: 'source_name', description: 'The source in words, e.g. "Court records"' },
    { key: 'offense', header: 'offense', description: 'Offense' },
    { key: 'offense_date', header: 'offense_date', description: 'Date of the offense (YYYY-MM-DD)' },
    {
      key: 'disposition',
      header: 'disposition',
      description: 'Disposition, e.g. Convicted, Dismissed, Pending, Registered',
    },
    { key: 'case_number', header: 'case_number', description: 'Case or booking number' },
    {
      key: 'record_id',
      header: 'record_id',
      description: 'Stable identifier of the record (source, state and case number)',
    },
  ],
  requested: () => 1,
  startDetails: z.object({
    name: z.string().describe('The name searched.'),
    state: z.string().nullable().describe('The state searched; null for every state.'),
    note: z.string().describe('The permitted uses of the records.'),
  }),
  describeStart(input) {
    const where = input.state ? `in ${input.state}` : 'in all states';
    const born = input.dob ? `, born ${input.dob}` : '';
    return {
      message:
        `Searching criminal records for "${input.name}"${born} ${where}; ` +
        `${price.each} is charged only if records are found`,
      extra: { name: input.name, state: input.state ?? null, note: PERMITTED_USE_NOTE },
    };
  },
  async *run(ctx) {
    const name = parseFullName(ctx.input.name);
    if (!name) throw new Error(`the name "${ctx.input.name}" passed validation but does not parse`);
    let afterId: number | undefined;
    let found = 0;
    while (!ctx.signal.aborted) {
      const page = await ctx.sources.criminalRecords.searchRecords({
        name,
        state: ctx.input.state,
        dateOfBirth: ctx.input.dob,
        limit: PAGE_SIZE,
        afterId,
      });
      afterId = page.at(-1)?.id;
      found += page.length;
      // A short page is the search's end: it comes with the search handled, the run's last batch.
      if (page.length < PAGE_SIZE) {
        yield {
          rows: page.map(toRow),
          handled: 1,
          message: found ? `${plural(found, 'record')} found` : 'No records found',
          last: true,
        };
        return;
      }
      yield { rows: page.map(toRow), handled: 0, message: `${plural(found, 'record')} found so far` };
    }
  },
});
