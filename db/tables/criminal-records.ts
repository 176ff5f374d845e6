import { sql } from 'drizzle-orm';
import { date, index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { catalogId } from './columns.ts';

export const CRIMINAL_SOURCES = ['sex_offender_registry', 'department_of_corrections', 'arrest', 'court'] as const;

/** Criminal records; `record_key` (source, state and case number) is the natural key. */
export const criminalRecordTable = pgTable(
  'criminal_record',
  {
    id: catalogId(),
    recordKey: text('record_key').notNull(),
    firstName: text('first_name').notNull(),
    middleName: text('middle_name'),
    lastName: text('last_name').notNull(),
    dateOfBirth: date('date_of_birth', { mode: 'string' }),
    /** Two-letter state code. */
    state: text('state').notNull(),
    county: text('county'),
    source: text('source').notNull(),
    caseNumber: text('case_number'),
    offense: text('offense').notNull(),
    offenseDate: date('offense_date', { mode: 'string' }),
    disposition: text('disposition'),
  },
  (t) => [
    uniqueIndex('criminal_record_key').on(t.recordKey),
    index('criminal_record_name_idx').on(sql`lower(${t.lastName})`, sql`lower(${t.firstName})`, t.state),
    index('criminal_record_dob_idx').on(t.dateOfBirth),
  ],
);
export type CriminalRecord = typeof criminalRecordTable.$inferSelect;
