import { describe, expect, it } from 'vitest';
import { cellText, isNestedList, nestedFields, nestedTable } from '../../../console/src/lib/cell-text.ts';

/**
 * How the console's cells read values that are not one piece of text (console/src/lib/cell-text.ts, drawn by
 * console/src/cells.tsx): contacts as rows of a nested table, never JSON.
 */

const contacts = [
  { __typename: 'Contact', fullName: 'Jane Doe', email: 'jane@acme.com', confidence: 95 },
  { __typename: 'Contact', fullName: 'John Roe', email: null, title: 'CTO', verified: true },
];

describe('cells', () => {
  it('reads a list of objects as nested rows, with every field any item has', () => {
    expect(isNestedList(contacts)).toBe(true);
    expect(isNestedList(['a', 'b'])).toBe(false);
    expect(isNestedList([])).toBe(false);
    expect(nestedFields(contacts)).toEqual(['fullName', 'email', 'confidence', 'title', 'verified']);
  });

  it('writes any value as text: lists joined, yes/no, objects by field', () => {
    expect(cellText(['a@x.co', 'b@x.co'])).toBe('a@x.co; b@x.co');
    expect(cellText(true)).toBe('Yes');
    expect(cellText(null)).toBe('');
    expect(cellText(contacts[0])).toBe('Full name: Jane Doe, Email: jane@acme.com, Confidence: 95');
  });

  it('writes a code its column declares words for in those words, alone or in a list', () => {
    const seniority = { c_suite: 'C-suite', vp: 'VP' };
    expect(cellText('c_suite', seniority)).toBe('C-suite');
    expect(cellText(['vp', 'c_suite', 'intern'], seniority)).toBe('VP; C-suite; intern');
    expect(cellText(3, seniority)).toBe('3');
  });

  it('lays contacts out as one row per contact under headers in words', () => {
    expect(nestedTable(contacts, { confidence: 'Confidence (0–100)' })).toEqual({
      head: ['Full name', 'Email', 'Confidence (0–100)', 'Title', 'Verified'],
      body: [
        ['Jane Doe', 'jane@acme.com', '95', '', ''],
        ['John Roe', '', '', 'CTO', 'Yes'],
      ],
    });
  });
});
