/**
 * Rows as an Excel workbook (XLSX), written as they are read with exceljs' streaming writer: one sheet,
 * a header row, one row a record; the file's bytes go out while later rows are still being read.
 */
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import ExcelJS from 'exceljs';

/** A cell as a sheet holds it: numbers and booleans as such, everything else as text. */
export type SheetCell = string | number | boolean | null;

/** Excel keeps at most this many characters in a cell; longer text is cut, marked with an ellipsis. */
export const MAX_CELL_CHARS = 32_767;

/** Rows written between turns of the event loop, so the zip stream drains as the file grows. */
const ROWS_A_TURN = 500;

const sheetName = (name: string) => name.replace(/[\\/?*[\]:]/g, ' ').slice(0, 31) || 'Rows';

const clip = (value: SheetCell): SheetCell =>
  typeof value === 'string' && value.length > MAX_CELL_CHARS ? `${value.slice(0, MAX_CELL_CHARS - 1)}…` : value;

/**
 * `records` as an XLSX file with a header row of `columns`' headers; a failure while reading them
 * is an error of the returned stream.
 */
export function xlsxStream(
  records: AsyncIterable<Record<string, SheetCell>>,
  columns: readonly { key: string; header: string }[],
  name: string,
): Readable {
  const out = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: false, useSharedStrings: false });
  const sheet = workbook.addWorksheet(sheetName(name));
  (async () => {
    sheet.addRow(columns.map((c) => c.header)).commit();
    let written = 0;
    for await (const record of records) {
      sheet.addRow(columns.map((c) => clip(record[c.key] ?? null))).commit();
      written += 1;
      // The reader went away: stop reading (leaving the loop closes the rows' cursor).
      if (out.destroyed) return;
      // The reader is slower than the rows: wait for it rather than hold the file in memory.
      if (out.writableNeedDrain) await Promise.race([once(out, 'drain'), once(out, 'close')]);
      else if (written % ROWS_A_TURN === 0) await nextTurn();
    }
    sheet.commit();
    await workbook.commit();
  })().catch((err: unknown) => out.destroy(err instanceof Error ? err : new Error(String(err))));
  return out;
}
