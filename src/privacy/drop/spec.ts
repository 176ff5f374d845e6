/**
 * California DROP (Delete Request and Opt-out Platform), as its technical specification names things
 * (privacy.ca.gov/drop-for-data-brokers/technical-specifications/, version 1.2.0; every rule is listed
 * with its source in test/fixtures/drop/SOURCES.md).
 *
 * Glossary
 * - list type: one of the six consumer deletion lists (Email, Phone, MAID, CTVID, NDZ, NameVIN).
 * - data type: the word in a file name — a list type, or `Removed` (a file type, not a list).
 * - work item: one consumer deletion request row, named by its 12-character Base62 ID.
 * - hash: SHA-256 of the standardized identifier's UTF-8 bytes, Base64 (44 characters).
 * - composite hash: NDZ and NameVIN — each field hashed, the Base64 hashes concatenated, hashed again.
 * - status: what we answer per work item — 2 exempted, 3 deleted, 4 opted out, 5 not found.
 * - batch: one downloaded ZIP; the next download waits until every work item of it has a status.
 */
import { AppError } from '../../shared/errors.ts';

export const LIST_TYPES = ['NDZ', 'Email', 'Phone', 'MAID', 'NameVIN', 'CTVID'] as const;
export type ListType = (typeof LIST_TYPES)[number];

/** `Removed` carries identifiers withdrawn since an earlier download, across every selected list. */
export const DATA_TYPES = [...LIST_TYPES, 'Removed'] as const;
export type DataType = (typeof DATA_TYPES)[number];

export const STATUS = { exempted: 2, deleted: 3, optedOut: 4, notFound: 5 } as const;
export type StatusCode = (typeof STATUS)[keyof typeof STATUS];
export const STATUS_CODES: readonly StatusCode[] = [2, 3, 4, 5];

export const isListType = (value: string): value is ListType => (LIST_TYPES as readonly string[]).includes(value);
export const isStatusCode = (value: number): value is StatusCode => (STATUS_CODES as readonly number[]).includes(value);

/** Work item IDs: 12 case-sensitive Base62 characters, unique across lists, permanent. */
export const WORK_ITEM_ID = /^[A-Za-z0-9]{12}$/;
/** A SHA-256 digest in Base64: 43 characters and one `=`. */
export const HASH = /^[A-Za-z0-9+/]{43}=$/;
export const DATA_BROKER_ID = /^[0-9]{4}$/;
export const OPTIONAL_SUFFIX = /^[A-Za-z0-9]{1,10}$/;

/** Headers exactly as the files carry them: download lists, the Removed file, and our response. */
export const LIST_HEADER = ['ID', 'Hash'] as const;
export const REMOVED_HEADER = ['ID', 'Hash', 'ListType'] as const;
export const RESPONSE_HEADER = ['Id', 'Status'] as const;

export interface DropFileName {
  /** `YYYYMMDD`, as in the file name. */
  date: string;
  dataBrokerId: string;
  dataType: DataType;
  suffix?: string;
  extension: 'csv' | 'zip';
}

const FILE_NAME = /^(\d{8})_(\d{4})_([A-Za-z]+)(?:_([A-Za-z0-9]{1,10}))?\.(csv|zip)$/;

/**
 * Reads `<YYYYMMDD>_<DataBrokerId>_<DataType>[_<OptionalSuffix>].csv` (and the download's
 * `<YYYYMMDD>_<DataBrokerId>_DROP.zip`, data type `DROP`); undefined when the name is not one.
 */
export function parseDropFileName(name: string): (Omit<DropFileName, 'dataType'> & { dataType: string }) | undefined {
  const match = FILE_NAME.exec(name);
  if (!match) return undefined;
  const [, date = '', dataBrokerId = '', dataType = '', suffix, extension] = match;
  if (!isCalendarDate(date)) return undefined;
  return { date, dataBrokerId, dataType, extension: extension as 'csv' | 'zip', ...(suffix ? { suffix } : {}) };
}

/** A `YYYYMMDD` string that names a real day. */
export function isCalendarDate(yyyymmdd: string): boolean {
  if (!/^\d{8}$/.test(yyyymmdd)) return false;
  const [y, m, d] = [+yyyymmdd.slice(0, 4), +yyyymmdd.slice(4, 6), +yyyymmdd.slice(6, 8)];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** A DROP file that does not follow the specification (a bad header, ID, hash, status or name). */
export class DropFormatError extends AppError {
  constructor(message: string, details?: { file?: string; line?: number }) {
    super(422, 'drop_file_invalid', message, details);
    this.name = 'DropFormatError';
  }
}
