import { US_STATES } from '../us-states.ts';
import { CRIMINAL_SOURCES } from '../tables/criminal-records.ts';
import { DISPOSITIONS, FIRST_NAMES, LAST_NAMES, OFFENSES } from './reference.ts';
import { dateBetween, Random, weighted } from './random.ts';
import type { Sizes, TableRows } from './types.ts';

const SOURCE_WEIGHT = { sex_offender_registry: 1, department_of_corrections: 3, arrest: 4, court: 5 };
const SOURCE_WEIGHTS = CRIMINAL_SOURCES.map((s) => [s, SOURCE_WEIGHT[s]] as const);
const COUNTIES = [
  'Adams',
  'Franklin',
  'Jefferson',
  'Lincoln',
  'Madison',
  'Washington',
  'Jackson',
  'Marion',
  'Clay',
  'Monroe',
];

export function criminalRecordTables(seed: number, sizes: Sizes): TableRows[] {
  return [
    {
      dataset: 'criminal_records',
      table: 'criminal_record',
      columns: [
        'id',
        'record_key',
        'first_name',
        'middle_name',
        'last_name',
        'date_of_birth',
        'state',
        'county',
        'source',
        'case_number',
        'offense',
        'offense_date',
        'disposition',
      ],
      count: sizes.criminalRecords,
      *rows() {
        const rng = new Random(seed * 1_000_003 + 97);
        const states = Object.keys(US_STATES);
        for (let id = 1; id <= sizes.criminalRecords; id++) {
          const source = weighted(rng, SOURCE_WEIGHTS);
          const state = rng.pick(states);
          const dob = dateBetween(rng, '1950-01-01', '2004-12-31');
          const offenseDate = dateBetween(rng, `${Number(dob.slice(0, 4)) + 18}${dob.slice(4)}`, '2026-10-31');
          const caseNumber = `${offenseDate.slice(0, 4)}-CR-${String(id).padStart(7, '0')}`;
          yield [
            id,
            `${source}:${state}:${caseNumber}`,
            rng.pick(FIRST_NAMES),
            rng.chance(0.4) ? rng.pick(FIRST_NAMES) : null,
            rng.pick(LAST_NAMES),
            rng.chance(0.95) ? dob : null,
            state,
            `${rng.pick(COUNTIES)} County`,
            source,
            caseNumber,
            rng.pick(OFFENSES[source]),
            offenseDate,
            source === 'sex_offender_registry' ? 'Registered' : rng.pick(DISPOSITIONS),
          ];
        }
      },
    },
  ];
}
