import { StringDecoder } from 'node:string_decoder';

/** Malformed CSV: the whole file is refused. `line` is the physical line of the offending character. */
export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;
const UTF8_BOM = [0xef, 0xbb, 0xbf];
const UTF16LE_BOM = [0xff, 0xfe];
/** The parse of a record stopped at the end of the text read so far. */
const MORE = -1;

type RecordDelimiter = '' | '\n' | '\r\n' | '\r';

function countLf(text: string, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

function startsWith(bytes: Buffer, prefix: number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

/**
 * A streaming CSV reader: comma-delimited, `"` quotes with `""` inside quoted values, values may
 * span lines. It reads what csv-parse reads with `{ bom: true, relax_column_count: true,
 * skip_empty_lines: true }` (the importer's reader before this one, kept as the reference in
 * test/db/import/csv-reader.test.ts), record by record and field by field, with the same errors,
 * but several times faster:
 * - The record delimiter is discovered from the first line break outside quotes (`\r\n`, `\n` or
 *   `\r`), and from then on only that one ends a record; other CR or LF characters are data.
 * - A leading UTF-8 BOM is skipped; a UTF-16LE BOM switches decoding to UTF-16LE.
 * - Empty lines are skipped; a last record without a line break is read.
 * - A quote that opens a field after other characters, a closing quote followed by anything but a
 *   comma, a line break or the end, and a quote still open at the end are errors.
 * Each record comes with its physical line: 1 + the line feeds before it (in a file whose records
 * end with a lone CR, those CRs count as lines too).
 *
 * Lines without a quote are split with `String.split`; only records holding quotes go through the
 * character-level path.
 */
export class CsvReader {
  private decoder: StringDecoder | undefined;
  /** Bytes held until the BOM can be told (fewer than 3 bytes read). */
  private head: Buffer | undefined;
  /** Text of a record not yet complete. */
  private rest = '';
  /** Physical line at the start of `rest`. */
  private line = 1;
  private delimiter: RecordDelimiter = '';
  /** Position of the next quote in the text being parsed (-1: none; below the cursor: not yet searched). */
  private quoteAt = -2;

  /**
   * `plain` says that no field holds a backslash, tab, CR or LF (nothing COPY's text format would
   * escape); it is only worked out for records without quotes and may be false for plain ones too.
   */
  constructor(private readonly onRecord: (fields: string[], line: number, plain: boolean) => void) {}

  write(chunk: Buffer): void {
    if (!this.decoder) {
      const bytes: Buffer = this.head ? Buffer.concat([this.head, chunk]) : chunk;
      if (bytes.length < 3 && !startsWith(bytes, UTF16LE_BOM)) {
        this.head = bytes;
        return;
      }
      this.head = undefined;
      this.start(bytes);
      return;
    }
    this.parse(this.rest + this.decoder.write(chunk), false);
  }

  end(): void {
    if (!this.decoder) {
      const bytes = this.head ?? Buffer.alloc(0);
      this.head = undefined;
      this.decoder = new StringDecoder('utf8');
      const skip = startsWith(bytes, UTF8_BOM) ? 3 : 0;
      this.parse(this.decoder.write(bytes.subarray(skip)) + this.decoder.end(), true);
      return;
    }
    this.parse(this.rest + this.decoder.end(), true);
  }

  private start(bytes: Buffer): void {
    if (startsWith(bytes, UTF8_BOM)) {
      this.decoder = new StringDecoder('utf8');
      this.parse(this.decoder.write(bytes.subarray(3)), false);
    } else if (startsWith(bytes, UTF16LE_BOM)) {
      this.decoder = new StringDecoder('utf16le');
      this.parse(this.decoder.write(bytes.subarray(2)), false);
    } else {
      this.decoder = new StringDecoder('utf8');
      this.parse(this.decoder.write(bytes), false);
    }
  }

  private parse(text: string, end: boolean): void {
    const n = text.length;
    let pos = 0;
    let line = this.line;
    this.quoteAt = -2;
    // Whether the text holds no backslash or tab (checked once, when the first record needs it).
    let clean: boolean | undefined;
    while (pos < n) {
      const delimiter = this.delimiter;
      if (delimiter !== '') {
        let stop = text.indexOf(delimiter, pos);
        if (stop === -1) {
          if (!end) break;
          stop = n;
        }
        if (this.quoteAt < pos && this.quoteAt !== -1) this.quoteAt = text.indexOf('"', pos);
        if (this.quoteAt === -1 || this.quoteAt >= stop) {
          // A record without quotes: split it at its commas.
          if (stop > pos) {
            const record = text.slice(pos, stop);
            clean ??= text.indexOf('\\') === -1 && text.indexOf('\t') === -1;
            // With LF records, a CR is the only other character to escape; with CRLF or CR records, a lone CR or LF.
            const plain =
              clean &&
              (delimiter === '\n'
                ? record.indexOf('\r') === -1
                : record.indexOf('\r') === -1 && record.indexOf('\n') === -1);
            this.onRecord(record.split(','), line, plain);
            if (delimiter !== '\n') line += countLf(record, 0, record.length);
          }
          line += 1;
          pos = stop + delimiter.length;
          continue;
        }
      }
      const next = this.record(text, pos, line, end);
      if (next === MORE) break;
      line += countLf(text, pos, next);
      if (this.delimiter === '\r' && text.charCodeAt(next - 1) === CR) line += 1;
      pos = next;
    }
    this.rest = pos < n ? text.slice(pos) : '';
    this.line = line;
  }

  /**
   * Length of the record delimiter at `at` (0: none), discovering it on
   * the first line break; MORE when the text ends too soon to tell.
   */
  private delimiterAt(text: string, at: number, end: boolean): number {
    const c = text.charCodeAt(at);
    if (c !== CR && c !== LF) return 0;
    const crLookahead = c === CR && at + 1 >= text.length && !end;
    if (this.delimiter === '') {
      if (crLookahead) return MORE;
      this.delimiter = c === LF ? '\n' : text.charCodeAt(at + 1) === LF ? '\r\n' : '\r';
      return this.delimiter.length;
    }
    if (this.delimiter === '\r\n') {
      if (c !== CR) return 0;
      if (crLookahead) return MORE;
      return text.charCodeAt(at + 1) === LF ? 2 : 0;
    }
    return text.charCodeAt(at) === this.delimiter.charCodeAt(0) ? 1 : 0;
  }

  private fail(text: string, recordStart: number, recordLine: number, at: number, message: string): never {
    throw new CsvSyntaxError(recordLine + countLf(text, recordStart, at), message);
  }

  /**
   * Reads one record from `start` character by character (quotes, or the delimiter not known
   * yet) and hands it on; returns where the next one starts, or MORE. An empty line is skipped.
   */
  private record(text: string, start: number, line: number, end: boolean): number {
    const n = text.length;
    const fields: string[] = [];
    let i = start;
    for (;;) {
      if (i < n && text.charCodeAt(i) === QUOTE) {
        let value = '';
        let j = i + 1;
        for (;;) {
          const q = text.indexOf('"', j);
          if (q === -1) {
            if (!end) return MORE;
            // At the line of the file's last character.
            this.fail(text, start, line, n - 1, 'Quote Not Closed: the parsing is finished with an opening quote');
          }
          if (q + 1 >= n && !end) return MORE;
          if (text.charCodeAt(q + 1) === QUOTE) {
            value += text.slice(j, q + 1);
            j = q + 2;
            continue;
          }
          value += text.slice(j, q);
          i = q + 1;
          break;
        }
        fields.push(value);
        if (i >= n) {
          if (!end) return MORE;
          this.onRecord(fields, line, false);
          return n;
        }
        if (text.charCodeAt(i) === COMMA) {
          i += 1;
          continue;
        }
        const length = this.delimiterAt(text, i, end);
        if (length === MORE) return MORE;
        if (length > 0) {
          this.onRecord(fields, line, false);
          return i + length;
        }
        this.fail(
          text,
          start,
          line,
          i,
          `Invalid Closing Quote: got "${text[i]}" instead of delimiter, ` +
            'record delimiter, trimable character (if activated) or comment',
        );
      }
      for (let j = i; ; j++) {
        if (j >= n) {
          if (!end) return MORE;
          if (j > start) {
            fields.push(text.slice(i, j));
            this.onRecord(fields, line, false);
          }
          return n;
        }
        const c = text.charCodeAt(j);
        if (c === COMMA) {
          fields.push(text.slice(i, j));
          i = j + 1;
          break;
        }
        if (c === QUOTE) {
          this.fail(
            text,
            start,
            line,
            j,
            `Invalid Opening Quote: a quote is found on field ${fields.length}, ` +
              `value is ${JSON.stringify(text.slice(i, j))}`,
          );
        }
        if (c === CR || c === LF) {
          const length = this.delimiterAt(text, j, end);
          if (length === MORE) return MORE;
          if (length > 0) {
            // An empty line (nothing before its line break) is skipped.
            if (j > start) {
              fields.push(text.slice(i, j));
              this.onRecord(fields, line, false);
            }
            return j + length;
          }
        }
      }
    }
  }
}
