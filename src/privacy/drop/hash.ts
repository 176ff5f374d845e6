/**
 * DROP hashes of our records: SHA-256 over the standardized value's UTF-8 bytes, Base64, no salt. NDZ and
 * NameVIN are composite: each field is standardized and hashed, the Base64 hashes are concatenated in the
 * required order (NDZ: first name, last name, date of birth, ZIP; NameVIN: first name, last name, VIN) and
 * the concatenation is hashed again. Sources: test/fixtures/drop/SOURCES.md.
 */
import { createHash } from 'node:crypto';
import type { ListType } from './spec.ts';
import {
  standardizeCtvid,
  standardizeDob,
  standardizeEmail,
  standardizeMaid,
  standardizeName,
  standardizePhone,
  standardizeVin,
  standardizeZip,
} from './standardize.ts';

/** The identifiers of one person as we hold them; any may be missing. */
export interface PersonRecord {
  email?: string | null;
  phone?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  dob?: string | Date | null;
  zip?: string | null;
  maid?: string | null;
  ctvid?: string | null;
  vin?: string | null;
}

export type StandardizedRecord = { [K in keyof PersonRecord]?: string };

/** One hash per list type the record can be matched on; a list type is absent when a field it needs is. */
export type DropHashes = Partial<Record<ListType, string>>;

/** SHA-256 of the UTF-8 bytes of an already standardized value, in Base64 (44 characters). */
export const dropHash = (standardized: string): string =>
  createHash('sha256').update(standardized, 'utf8').digest('base64');

/** Hash of the concatenated Base64 field hashes, in the order given. */
export const compositeHash = (fieldHashes: readonly string[]): string => dropHash(fieldHashes.join(''));

export function standardizeRecord(record: PersonRecord): StandardizedRecord {
  const fields: StandardizedRecord = {
    email: standardizeEmail(record.email),
    phone: standardizePhone(record.phone),
    firstName: standardizeName(record.firstName),
    lastName: standardizeName(record.lastName),
    dob: standardizeDob(record.dob),
    zip: standardizeZip(record.zip),
    maid: standardizeMaid(record.maid),
    ctvid: standardizeCtvid(record.ctvid),
    vin: standardizeVin(record.vin),
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

/** Composite of standardized parts, or undefined when any part is missing. */
function composite(parts: readonly (string | undefined)[]): string | undefined {
  const present = parts.filter((part): part is string => part !== undefined);
  return present.length === parts.length ? compositeHash(present.map(dropHash)) : undefined;
}

/** The hashes of `record` per DROP list type, to compare with a downloaded list's Hash column. */
export function hashRecord(record: PersonRecord): DropHashes {
  const s = standardizeRecord(record);
  const hashes: DropHashes = {
    Email: s.email === undefined ? undefined : dropHash(s.email),
    Phone: s.phone === undefined ? undefined : dropHash(s.phone),
    MAID: s.maid === undefined ? undefined : dropHash(s.maid),
    CTVID: s.ctvid === undefined ? undefined : dropHash(s.ctvid),
    NDZ: composite([s.firstName, s.lastName, s.dob, s.zip]),
    NameVIN: composite([s.firstName, s.lastName, s.vin]),
  };
  return Object.fromEntries(Object.entries(hashes).filter(([, v]) => v !== undefined));
}
