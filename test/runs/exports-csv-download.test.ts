import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * Formula escaping on the real download path: places whose names and categories a spreadsheet would run
 * as formulas go into the catalog, a maps run finds them, and the CSV served by /api/downloads holds
 * each such cell prefixed with an apostrophe, while JSON keeps the values as stored.
 */

let t: TestApp;
let key: string;

const HOSTILE = [
  '=HYPERLINK("http://evil.example","x")',
  '+SUM(A1:A9)',
  "-2+3+cmd|' /C calc'!A0",
  '@SUM(1)',
  '\t=1+1',
  '\r=2+2',
];

beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key } = await t.account());
  const sql = t.app.core.sql;
  for (const [i, name] of HOSTILE.entries()) {
    await sql`
      insert into local_business (place_id, name, category, city, state, country_code, lat, lng, phone, website)
      values (${`csv-escape-${i}`}, ${name}, ${'Zorbmonger'}, ${'Denver'}, ${'CO'}, ${'US'}, ${39.74 + i / 1000}, ${-104.99}, ${'+1 303-555-0100'}, ${`=cmd|' /C calc'!A${i}`})`;
  }
});
afterAll(() => t?.stop());

describe('CSV download of a real run', () => {
  it('prefixes every cell that starts with =, +, -, @, tab or CR, and leaves plain numbers and JSON alone', async () => {
    const { start, rows } = await t.runTool(key, '/api/v1/scrape/maps', {
      searchStringsArray: ['zorbmonger'],
      locationQuery: 'Denver, CO',
      maxCrawledPlacesPerSearch: 20,
    });
    expect(rows.map((r) => r.name).sort()).toEqual([...HOSTILE].sort());

    const res = await fetch(`${t.url}/api/downloads/${start.runId}?format=csv`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/csv');
    const cells = parse(await res.text(), { columns: true, relax_quotes: false }) as Record<string, string>[];
    expect(cells).toHaveLength(HOSTILE.length);
    expect(cells.map((c) => c.name).sort()).toEqual(HOSTILE.map((name) => `'${name}`).sort());
    for (const cell of cells) {
      expect(cell.website).toMatch(/^'=cmd\|/);
      // A phone number is signs and digits: nothing a spreadsheet could call.
      expect(cell.phone).toBe('+1 303-555-0100');
      expect(cell.category).toBe('Zorbmonger');
    }

    // JSON is data, not a spreadsheet: the values come back exactly as stored.
    const json = rows.map((r) => r.website).sort();
    expect(json).toEqual(HOSTILE.map((_, i) => `=cmd|' /C calc'!A${i}`).sort());
  });
});
