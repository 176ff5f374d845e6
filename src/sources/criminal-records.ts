import type { PersonName } from './people.ts';

/** One criminal record as the criminal records search sees it. */
export interface CriminalRecordHit {
  id: number;
  /** Stable key of the record at its source (source, state and case number). */
  recordKey: string;
  firstName: string;
  middleName: string | null;
  lastName: string;
  /** YYYY-MM-DD, when the source has it. */
  dateOfBirth: string | null;
  /** Two-letter state code. */
  state: string;
  county: string | null;
  /** sex_offender_registry, department_of_corrections, arrest or court. */
  source: string;
  caseNumber: string | null;
  offense: string;
  offenseDate: string | null;
  disposition: string | null;
}

export interface CriminalRecordQuery {
  /**
   * First and last name match exactly, ignoring case; a searched middle name matches records without
   * one, with the same one, or where one of them is the other's initial.
   */
  name: PersonName;
  /** Two-letter code; absent means every state. */
  state?: string;
  /** YYYY-MM-DD; when set, only records with exactly this date of birth. */
  dateOfBirth?: string;
  limit: number;
  /** Keyset cursor: only records with a larger id, in id order. */
  afterId?: number;
}

/** Criminal records (criminal records search). */
export interface CriminalRecordSource {
  searchRecords(query: CriminalRecordQuery): Promise<CriminalRecordHit[]>;
}
