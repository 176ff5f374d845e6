import Papa from 'papaparse';
import { escapeFormula } from '../../../db/csv-cells.ts';

/** A CSV file of `rows` (objects with the same keys), every text cell formula-escaped as the gateway's downloads are. */
export function csvOf(rows: Record<string, unknown>[]): string {
  return Papa.unparse(
    rows.map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([key, value]) => [key, typeof value === 'string' ? escapeFormula(value) : value]),
      ),
    ),
  );
}
