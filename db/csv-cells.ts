/**
 * CSV cells a spreadsheet opens safely: the one formula-escaping rule of every CSV the house writes
 * (run downloads in src/runs/exports.ts, the importer's errors file, the console's exports in console/src/lib/csv.ts).
 * Under db/ so all of them may import it (db/ imports nothing of src/).
 */

const FORMULA_START = /^[=+\-@\t\r]/;
/**
 * "+1 303-555-0100", "-12.5", "+1 303-555-0100; +1 512-555-0199": signs,
 * digits and separators without a letter cannot call anything.
 */
const PLAIN_NUMBER = /^[+-][\d\s().;+-]*$/;

/** Cells a spreadsheet would run as a formula are prefixed with an apostrophe. */
export function escapeFormula(text: string): string {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}
