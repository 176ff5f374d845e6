/**
 * Our answer to a downloaded list: a CSV with the header `Id,Status` and one row per work item, status 2
 * (exempted), 3 (deleted), 4 (opted out) or 5 (not found). It carries the downloaded list's file name,
 * `<YYYYMMDD>_<DataBrokerId>_<DataType>.csv`, or that name with `_<OptionalSuffix>` (1 to 10 letters or
 * digits) when one list is answered in several files. The Removed file is never answered.
 */
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { csvRows } from './csv.ts';
import {
  DATA_BROKER_ID,
  DropFormatError,
  isCalendarDate,
  isListType,
  isStatusCode,
  type ListType,
  OPTIONAL_SUFFIX,
  parseDropFileName,
  RESPONSE_HEADER,
  type StatusCode,
  WORK_ITEM_ID,
} from './spec.ts';

export interface ResponseRow {
  workItemId: string;
  status: StatusCode;
}

export interface ResponseFileParts {
  /** `YYYYMMDD`: the date in the downloaded file's name. */
  date: string;
  dataBrokerId: string;
  listType: ListType;
  suffix?: string;
}

/** `<YYYYMMDD>_<DataBrokerId>_<DataType>[_<OptionalSuffix>].csv`, every part checked. */
export function responseFileName(parts: ResponseFileParts): string {
  const { date, dataBrokerId, listType, suffix } = parts;
  if (!isCalendarDate(date)) throw new DropFormatError(`date ${JSON.stringify(date)} is not YYYYMMDD`);
  if (!DATA_BROKER_ID.test(dataBrokerId)) throw new DropFormatError('data broker ID must be 4 digits');
  if (!isListType(listType)) throw new DropFormatError(`${JSON.stringify(listType)} is not a list type`);
  if (suffix !== undefined && !OPTIONAL_SUFFIX.test(suffix))
    throw new DropFormatError('optional suffix must be 1 to 10 letters or digits');
  return `${date}_${dataBrokerId}_${listType}${suffix === undefined ? '' : `_${suffix}`}.csv`;
}

/** The response file name for a downloaded list file (its own name, or with a suffix). */
export function responseFileNameFor(downloadedFile: string, suffix?: string): string {
  const parsed = parseDropFileName(downloadedFile);
  if (parsed?.extension !== 'csv' || !isListType(parsed.dataType))
    throw new DropFormatError(`${downloadedFile}: not a downloaded list file that takes a response`);
  const { date, dataBrokerId, dataType } = parsed;
  return responseFileName({ date, dataBrokerId, listType: dataType, ...(suffix === undefined ? {} : { suffix }) });
}

function checkRow(row: ResponseRow, line: number, file: string): void {
  if (!WORK_ITEM_ID.test(row.workItemId))
    throw new DropFormatError(`${file} line ${line}: Id must be 12 letters or digits`, { file, line });
  if (!isStatusCode(row.status))
    throw new DropFormatError(`${file} line ${line}: Status must be 2, 3, 4 or 5`, { file, line });
}

/**
 * Writes `Id,Status` and the rows to `out`, streaming (rows may be an async generator over a million items).
 * A row with a bad ID or status stops the write. Resolves with the number of rows written.
 */
export async function writeResponseCsv(
  rows: Iterable<ResponseRow> | AsyncIterable<ResponseRow>,
  out: Writable,
  file = 'response',
): Promise<number> {
  let count = 0;
  async function* lines() {
    let chunk = `${RESPONSE_HEADER.join(',')}\n`;
    for await (const row of rows) {
      count++;
      checkRow(row, count + 1, file);
      chunk += `${row.workItemId},${row.status}\n`;
      if (chunk.length >= 64 * 1024) {
        yield chunk;
        chunk = '';
      }
    }
    yield chunk;
  }
  await pipeline(Readable.from(lines()), out);
  return count;
}

/** The rows of a response CSV, checked as DROP checks them: header exactly `Id,Status`, statuses 2–5. */
export async function* readResponseCsv(input: Readable, file = 'response'): AsyncGenerator<ResponseRow> {
  let first = true;
  for await (const { cells, line } of csvRows(input, file)) {
    if (first) {
      first = false;
      if (cells.join(',') !== RESPONSE_HEADER.join(','))
        throw new DropFormatError(`${file}: Invalid CSV header. Expected: Id,Status.`, { file, line });
      continue;
    }
    if (cells.length !== 2) throw new DropFormatError(`${file} line ${line}: expected 2 columns`, { file, line });
    const [workItemId = '', status = ''] = cells;
    const row = { workItemId, status: (/^[0-9]$/.test(status) ? Number(status) : Number.NaN) as StatusCode };
    checkRow(row, line, file);
    yield row;
  }
  if (first) throw new DropFormatError(`${file}: Invalid CSV header. Expected: Id,Status.`, { file, line: 1 });
}
