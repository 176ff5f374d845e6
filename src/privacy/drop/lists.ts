/**
 * Reading a DROP download: a ZIP with one CSV per selected list (`<YYYYMMDD>_<DataBrokerId>_<DataType>.csv`,
 * header `ID,Hash`, header only when the list has nothing new) and, when consumers withdrew requests, one
 * `…_Removed.csv` (`ID,Hash,ListType`) across the lists. Rows come out one at a time as they are inflated
 * and parsed, so a list of a million rows never sits in memory. Every ID and hash is checked against the
 * specification's form; a row that breaks it stops the read with the file and line, rather than being
 * skipped, since a skipped work item would go unanswered.
 *
 * The ZIP is read with yauzl: its central directory (ZIP64 included) entry by entry, and each CSV opened
 * as a stream only when its turn comes. yauzl checks each entry's size but not its CRC-32, so the bytes
 * pass through a CRC-32 check here before the CSV reader sees them.
 */
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { csvRows } from './csv.ts';
import {
  type DataType,
  DATA_TYPES,
  DropFormatError,
  HASH,
  isListType,
  LIST_HEADER,
  type ListType,
  parseDropFileName,
  REMOVED_HEADER,
  WORK_ITEM_ID,
} from './spec.ts';

/** One row of a downloaded file: a deletion request to answer, or a request withdrawn (Removed). */
export interface DropItem {
  kind: 'request' | 'removed';
  listType: ListType;
  workItemId: string;
  hash: string;
  /** The CSV the row came from, and its line (the header is line 1). */
  file: string;
  line: number;
}

export interface DropListFile {
  /** The CSV's name without any folder the archive put it in. */
  name: string;
  date: string;
  dataBrokerId: string;
  dataType: DataType;
  suffix?: string;
  /** The entry as the archive's central directory describes it. */
  entry: Entry;
}

const isDataType = (value: string): value is DataType => (DATA_TYPES as readonly string[]).includes(value);

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
const unreadable = (zipPath: string, why: string, cause?: unknown) =>
  Object.assign(new DropFormatError(`${zipPath} is not a readable ZIP archive: ${why}`), cause ? { cause } : {});
const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/** Opens the archive; everything it reads is checked against the directory, and refused in plain words. */
async function openArchive(zipPath: string): Promise<ZipFile> {
  try {
    return await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false, validateEntrySizes: true });
  } catch (err) {
    throw unreadable(zipPath, lowerFirst(errorText(err)), err);
  }
}

/** The archive's CSV files, each named as the specification names them; anything else is refused. */
async function dropListFiles(zip: ZipFile, zipPath: string): Promise<DropListFile[]> {
  const files: DropListFile[] = [];
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.endsWith('/')) continue;
      const name = path.posix.basename(entry.fileName);
      const parsed = parseDropFileName(name);
      if (parsed?.extension !== 'csv' || !isDataType(parsed.dataType))
        throw new DropFormatError(`${name}: not a DROP list file (<YYYYMMDD>_<DataBrokerId>_<DataType>.csv)`, {
          file: name,
        });
      const { date, dataBrokerId, dataType, suffix } = parsed;
      files.push({ name, date, dataBrokerId, dataType, entry, ...(suffix ? { suffix } : {}) });
    }
  } catch (err) {
    if (err instanceof DropFormatError) throw err;
    throw unreadable(zipPath, lowerFirst(errorText(err)), err);
  }
  return files;
}

/**
 * The entry's uncompressed bytes as a stream. yauzl refuses an entry whose size differs from the directory;
 * the CRC-32 is checked here as the bytes pass, and the stream errors when the entry ends if it differs.
 */
async function openEntry(zip: ZipFile, zipPath: string, entry: Entry): Promise<Readable> {
  const damaged = (why: string, cause?: unknown) => unreadable(zipPath, `${entry.fileName} is damaged (${why})`, cause);
  let bytes: Readable;
  try {
    bytes = await zip.openReadStreamPromise(entry);
  } catch (err) {
    throw unreadable(zipPath, `${entry.fileName}: ${lowerFirst(errorText(err))}`, err);
  }
  let crc = 0;
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      crc = crc32(chunk, crc);
      done(null, chunk);
    },
    flush(done) {
      done(crc >>> 0 === entry.crc32 >>> 0 ? null : damaged('its CRC-32 differs from the directory'));
    },
  });
  bytes.on('error', (err: Error) => checked.destroy(damaged(lowerFirst(err.message), err)));
  checked.on('close', () => bytes.destroy());
  return bytes.pipe(checked);
}

/** The CSV files of a downloaded archive, each named as the specification names them; anything else is refused. */
export async function listDropArchive(zipPath: string): Promise<DropListFile[]> {
  const zip = await openArchive(zipPath);
  try {
    return await dropListFiles(zip, zipPath);
  } finally {
    zip.close();
  }
}

/**
 * Every row of every list in the archive at `zipPath`, file by file; `only` limits it to some data types.
 * Each CSV is opened as a stream when the previous one is done, so only a stream's buffers are in memory.
 */
export async function* readDropArchive(
  zipPath: string,
  options: { only?: readonly DataType[] } = {},
): AsyncGenerator<DropItem> {
  const zip = await openArchive(zipPath);
  try {
    for (const file of await dropListFiles(zip, zipPath)) {
      if (options.only && !options.only.includes(file.dataType)) continue;
      yield* readDropCsv(await openEntry(zip, zipPath, file.entry), file.name, file.dataType);
    }
  } finally {
    zip.close();
  }
}

const sameHeader = (row: string[], header: readonly string[]) =>
  row.length === header.length && row.every((cell, i) => cell.trim().toLowerCase() === header[i]?.toLowerCase());

/** The rows of one list CSV (or the Removed CSV), checked, as a stream. */
export async function* readDropCsv(input: Readable, file: string, dataType: DataType): AsyncGenerator<DropItem> {
  const removed = dataType === 'Removed';
  const header = removed ? REMOVED_HEADER : LIST_HEADER;
  const fail = (line: number, why: string) => new DropFormatError(`${file} line ${line}: ${why}`, { file, line });

  let first = true;
  for await (const { cells, line } of csvRows(input, file)) {
    if (first) {
      first = false;
      if (!sameHeader(cells, header)) throw fail(line, `header must be ${header.join(',')}`);
      continue;
    }
    if (cells.length !== header.length) throw fail(line, `expected ${header.length} columns`);
    const [workItemId = '', hash = '', listType = dataType] = cells.map((cell) => cell.trim());
    if (!WORK_ITEM_ID.test(workItemId)) throw fail(line, 'ID must be 12 letters or digits');
    if (!HASH.test(hash)) throw fail(line, 'Hash must be a Base64 SHA-256 digest (44 characters)');
    if (!isListType(listType)) throw fail(line, `unknown list type ${JSON.stringify(listType)}`);
    yield { kind: removed ? 'removed' : 'request', listType, workItemId, hash, file, line };
  }
  // A file without even its header has no work item either: nothing to answer, nothing to refuse.
}
