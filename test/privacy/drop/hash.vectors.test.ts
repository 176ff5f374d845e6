import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compositeHash, dropHash, hashRecord, type PersonRecord } from '../../../src/privacy/drop/hash.ts';
import {
  standardizeCtvid,
  standardizeDob,
  standardizeEmail,
  standardizeMaid,
  standardizeName,
  standardizePhone,
  standardizeVin,
  standardizeZip,
} from '../../../src/privacy/drop/standardize.ts';

interface FieldVector {
  source: 'spec' | 'corroborated';
  field: string;
  input: string;
  standardized: string;
  hash: string;
}
interface CompositeVector {
  list: 'NDZ' | 'NameVIN';
  record: PersonRecord;
  fieldHashes: string[];
  hash: string;
}

const vectors = JSON.parse(readFileSync(new URL('../../fixtures/drop/vectors.json', import.meta.url), 'utf8')) as {
  fields: FieldVector[];
  composites: CompositeVector[];
};

const STANDARDIZE: Record<string, (value: string) => string | undefined> = {
  firstName: standardizeName,
  lastName: standardizeName,
  dob: standardizeDob,
  zip: standardizeZip,
  email: standardizeEmail,
  phone: standardizePhone,
  vin: standardizeVin,
  maid: standardizeMaid,
  ctvid: standardizeCtvid,
};

describe('the specification worked examples (test/fixtures/drop/vectors.json)', () => {
  it.each(vectors.fields.map((v) => [v.field, v.input, v.standardized, v.hash, v.source] as const))(
    '%s %j → %j → %s (%s)',
    (field, input, standardized, hash) => {
      expect(STANDARDIZE[field]?.(input)).toBe(standardized);
      expect(dropHash(standardized)).toBe(hash);
    },
  );

  it.each(vectors.composites.map((v) => [v.list, v] as const))('%s composite', (list, vector) => {
    const hashes = hashRecord(vector.record);
    expect(hashes[list]).toBe(vector.hash);
    expect(compositeHash(vector.fieldHashes)).toBe(vector.hash);
  });

  it('NDZ field hashes are the published ones, in the order first, last, DOB, ZIP', () => {
    const ndz = vectors.composites.find((v) => v.list === 'NDZ');
    expect(ndz).toBeDefined();
    const parts = [standardizeName('Danielle'), standardizeName('Johnson'), standardizeDob('July 4, 1985'), '91790'];
    expect(parts.map((p) => dropHash(p ?? ''))).toEqual(ndz?.fieldHashes);
    // Order matters: any other order is another hash.
    expect(compositeHash([...(ndz?.fieldHashes ?? [])].reverse())).not.toBe(ndz?.hash);
  });
});

describe('hashRecord', () => {
  it('answers every list type a full record can be matched on', () => {
    const hashes = hashRecord({
      email: ' Anna.Smith@Domain.com ',
      phone: '+1 (415) 555-9317',
      firstName: 'Danielle',
      lastName: 'Johnson',
      dob: '1985-07-04',
      zip: '91790-3771',
      maid: 'A3F1C2D4-5678-90AB-CDEF-1234567890AB',
      ctvid: 'SmartTV_9F8E7D6C',
      vin: '1HGCM82633A004352',
    });
    expect(hashes).toEqual({
      Email: 'KA18MT/ph6IHYjzT9zwETySDQyvSh87YuoSBpOQtkhE=',
      Phone: 'vGM7y5n+hBXRSEAklhHDPCbysyNgYTmXdMcagGUOY8E=',
      MAID: '250KY6lOgzYUB3EHrkbDCE2kMEZQE69SF38muhoDudI=',
      CTVID: 'd9fxuTIrKksBXYDlaWsvQbcyUUfCbUx7v78gd+KP+tc=',
      NDZ: 'PQOfn1RffEKmqMmNAzDKKaoZCwxWbQZkQzPWmQo9REA=',
      NameVIN: compositeHash(['danielle', 'johnson', '1hgcm82633a004352'].map(dropHash)),
    });
  });

  it('a Date of birth is read in UTC, as postgres.js returns a date column', () => {
    expect(
      hashRecord({ firstName: 'Danielle', lastName: 'Johnson', dob: new Date('1985-07-04'), zip: '91790' }),
    ).toEqual({ NDZ: 'PQOfn1RffEKmqMmNAzDKKaoZCwxWbQZkQzPWmQo9REA=' });
  });

  it('makes no hash from a missing or empty field, and no composite with a part missing', () => {
    expect(hashRecord({})).toEqual({});
    expect(
      hashRecord({ email: '   ', phone: 'n/a', firstName: 'Danielle', lastName: 'Johnson', zip: '91790' }),
    ).toEqual({});
    expect(hashRecord({ firstName: 'Eve', lastName: null, vin: '1HGCM82633A004352' })).toEqual({});
    expect(hashRecord({ firstName: 'Danielle', lastName: 'Johnson', dob: 'sometime in 1985', zip: '91790' })).toEqual(
      {},
    );
    expect(Object.keys(hashRecord({ email: 'a@b.co', zip: '00000' }))).toEqual(['Email']);
  });

  it('every hash is 44 Base64 characters', () => {
    for (const hash of Object.values(hashRecord({ email: 'x@y.z', phone: '1', maid: 'f'.repeat(32) })))
      expect(hash).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });
});
