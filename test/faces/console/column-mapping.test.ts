import { describe, expect, it } from 'vitest';
import {
  autoMap,
  BUSINESS_SYNONYMS,
  compact,
  PEOPLE_SYNONYMS,
  readCsv,
} from '../../../console/src/lib/column-mapping.ts';

/** The enrichment page's column auto-mapping (console/src/lib/column-mapping.ts) and its CSV reading. */

describe('autoMap', () => {
  it('compares headers without case, spaces, underscores or punctuation', () => {
    expect(compact(' LinkedIn_Profile-URL ')).toBe('linkedinprofileurl');
    expect(compact('E-mail')).toBe('email');
  });

  it('maps the usual spellings of each people field', () => {
    const cases: [string, keyof typeof PEOPLE_SYNONYMS][] = [
      ['LinkedIn', 'social'],
      ['LinkedIn URL', 'social'],
      ['linkedin_profile', 'social'],
      ['Person Linkedin Url', 'social'],
      ['Email Address', 'email'],
      ['E-mail', 'email'],
      ['work email', 'email'],
      ['Company', 'companyName'],
      ['Company Name', 'companyName'],
      ['Account Name', 'companyName'],
      ['Website', 'domain'],
      ['Domain', 'domain'],
      ['Company Domain', 'domain'],
      ['First Name', 'firstName'],
      ['first_name', 'firstName'],
      ['Last Name', 'lastName'],
      ['Full Name', 'fullName'],
      ['Name', 'fullName'],
      ['Mobile Phone', 'mobile'],
    ];
    for (const [header, field] of cases)
      expect(autoMap(['Notes', header], PEOPLE_SYNONYMS)[field], `${header} → ${field}`).toBe(header);
  });

  it('gives each header to one field, prefers exact synonyms to contained words, and leaves the rest unused', () => {
    const mapping = autoMap(
      ['Work Email', 'Email', 'Company Domain', 'Company', 'Person Linkedin Url', 'Owner'],
      PEOPLE_SYNONYMS,
    );
    expect(mapping).toEqual({
      email: 'Email',
      social: 'Person Linkedin Url',
      mobile: '',
      domain: 'Company Domain',
      fullName: '',
      firstName: '',
      lastName: '',
      companyName: 'Company',
    });
    // A header holding a field's word but no exact synonym still maps, when nothing better does.
    expect(autoMap(['Primary Email (verified)'], PEOPLE_SYNONYMS).email).toBe('Primary Email (verified)');
  });

  it('maps local-business columns', () => {
    expect(autoMap(['Business Name', 'Zip', 'Town', 'Telephone', 'Web Site', 'Province'], BUSINESS_SYNONYMS)).toEqual({
      phone: 'Telephone',
      name: 'Business Name',
      city: 'Town',
      postalCode: 'Zip',
      state: 'Province',
      country: '',
      website: 'Web Site',
    });
  });
});

describe('readCsv', () => {
  it('names each row by the line it starts on, past empty lines and quoted line breaks', () => {
    const file = readCsv('Email,Note\na@b.co,x\n\n,"two\nlines"\nc@d.co,z\n');
    expect(file.headers).toEqual(['Email', 'Note']);
    expect(file.rows).toEqual([
      { Email: 'a@b.co', Note: 'x' },
      { Email: '', Note: 'two\nlines' },
      { Email: 'c@d.co', Note: 'z' },
    ]);
    expect(file.lines).toEqual([2, 4, 6]);
    expect(readCsv('A\r\n1\r\n\r\n2').lines).toEqual([2, 4]);
  });
});
