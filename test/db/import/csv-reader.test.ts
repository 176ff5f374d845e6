import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { CsvReader, CsvSyntaxError } from '../../../db/import/csv.ts';

type Outcome = { records: { fields: string[]; line: number }[] } | { error: { line: number; message: string } };

function occurrences(text: string, char: string): number {
  return text.split(char).length - 1;
}

/**
 * The importer's former reader, kept as the reference: csv-parse with the options it used, and
 * its way of turning csv-parse's line count (which counts every CR and LF inside values) into the
 * physical line where a record starts.
 */
function reference(bytes: Buffer): Outcome {
  let skew = 0;
  let counted = 0;
  try {
    const rows = parse(bytes, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      info: true,
    }) as unknown as { record: string[]; info: { lines: number } }[];
    return {
      records: rows.map(({ record, info }) => {
        let breaks = 0;
        if (info.lines - counted > 1) {
          for (const field of record) {
            breaks += occurrences(field, '\n');
            skew += occurrences(field, '\r');
          }
        }
        counted = info.lines;
        return { fields: record, line: info.lines - breaks - skew };
      }),
    };
  } catch (err) {
    const e = err as Error & { code?: string; lines?: number };
    // The former reader reported only csv-parse's CSV_* errors as malformed CSV.
    if (!String(e.code).startsWith('CSV_')) return { error: { line: -1, message: e.message } };
    return { error: { line: (e.lines ?? 1) - skew, message: e.message.replace(/ at line \d+/, '') } };
  }
}

/** CsvReader fed in chunks of the given sizes (cycled). */
function read(bytes: Buffer, sizes: number[] = [bytes.length || 1]): Outcome {
  const records: { fields: string[]; line: number }[] = [];
  const reader = new CsvReader((fields, line, plain) => {
    // `plain` promises that COPY's text format needs no escapes in any field.
    if (plain && fields.some((field) => /[\\\t\r\n]/.test(field)))
      throw new Error(`record at line ${line} is not plain: ${JSON.stringify(fields)}`);
    records.push({ fields: [...fields], line });
  });
  try {
    for (let at = 0, i = 0; at < bytes.length; i++) {
      const size = Math.max(1, sizes[i % sizes.length]!);
      reader.write(bytes.subarray(at, at + size));
      at += size;
    }
    reader.end();
  } catch (err) {
    if (!(err instanceof CsvSyntaxError)) throw err;
    return { error: { line: err.line, message: err.message } };
  }
  return { records };
}

/** A small deterministic PRNG (mulberry32). */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOKENS = ['a', 'bc', 'x y', ',', '"', '""', '\n', '\r', '\r\n', ' ', 'é', '日本', '\t', '\\', ';'];

/** Well-formed CSV: quoted and unquoted fields, one line ending style per file, empty lines, optional BOM. */
function wellFormed(rnd: () => number): string {
  const ending = ['\n', '\r\n', '\r'][Math.floor(rnd() * 3)]!;
  const rows: string[] = [];
  const count = 1 + Math.floor(rnd() * 6);
  for (let r = 0; r < count; r++) {
    if (rnd() < 0.15) rows.push('');
    const fields: string[] = [];
    const width = 1 + Math.floor(rnd() * 4);
    for (let f = 0; f < width; f++) {
      let value = '';
      const length = Math.floor(rnd() * 5);
      for (let k = 0; k < length; k++) value += TOKENS[Math.floor(rnd() * TOKENS.length)]!;
      const mustQuote = /[",\r\n]/.test(value);
      fields.push(mustQuote || rnd() < 0.2 ? `"${value.replaceAll('"', '""')}"` : value);
    }
    rows.push(fields.join(','));
  }
  return (rnd() < 0.1 ? '\ufeff' : '') + rows.join(ending) + (rnd() < 0.5 ? ending : '');
}

/** Anything: random tokens, often malformed. */
function anything(rnd: () => number): string {
  let text = '';
  const length = Math.floor(rnd() * 30);
  for (let k = 0; k < length; k++) text += TOKENS[Math.floor(rnd() * TOKENS.length)]!;
  return text;
}

function chunkSizes(rnd: () => number): number[] {
  return Array.from({ length: 5 }, () => 1 + Math.floor(rnd() * 7));
}

describe('CsvReader', () => {
  it('reads the same records, lines and errors as csv-parse (the former reader) on well-formed files', () => {
    const rnd = random(1);
    for (let i = 0; i < 3000; i++) {
      const bytes = Buffer.from(wellFormed(rnd));
      const expected = reference(bytes);
      expect(read(bytes), JSON.stringify(bytes.toString())).toEqual(expected);
      expect(read(bytes, chunkSizes(rnd)), JSON.stringify(bytes.toString())).toEqual(expected);
    }
  });

  it('agrees with csv-parse on arbitrary (mostly malformed) input', () => {
    const rnd = random(2);
    for (let i = 0; i < 5000; i++) {
      const bytes = Buffer.from(anything(rnd));
      const expected = reference(bytes);
      const actual = read(bytes);
      if ('error' in expected && expected.error.line === -1) {
        // csv-parse's "Invalid Opening Quote" was not reported as malformed CSV before; it is now.
        expect(actual, JSON.stringify(bytes.toString())).toEqual({
          error: { line: expect.any(Number), message: expect.stringMatching(/^Invalid Opening Quote: /) },
        });
        continue;
      }
      if (bytes.includes('\r')) {
        // With stray CRs, csv-parse's line count (each CR a line, a CRLF inside quotes two) was not
        // always turned back into the physical line; the reader counts line feeds (see its doc).
        if ('error' in expected) expected.error.line = expect.any(Number) as unknown as number;
        else for (const record of expected.records) record.line = expect.any(Number) as unknown as number;
      }
      if ('error' in expected) {
        // csv-parse shows the first byte of a multi-byte character after a closing quote; the reader the character.
        for (const outcome of [expected, actual])
          if ('error' in outcome)
            outcome.error.message = outcome.error.message.replace(/got "[^\p{ASCII}]+"/u, 'got "…"');
      }
      expect(actual, JSON.stringify(bytes.toString())).toEqual(expected);
      const chunked = read(bytes, chunkSizes(rnd));
      if ('error' in chunked) chunked.error.message = chunked.error.message.replace(/got "[^\p{ASCII}]+"/u, 'got "…"');
      expect(chunked, JSON.stringify(bytes.toString())).toEqual(expected);
    }
  });

  it('reads a UTF-16LE file with its BOM, and multi-byte characters split across chunks', () => {
    const text = 'name,city\nJosé,Zürich\n"日本, Tokyo",x\n';
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const expected = {
      records: [
        { fields: ['name', 'city'], line: 1 },
        { fields: ['José', 'Zürich'], line: 2 },
        { fields: ['日本, Tokyo', 'x'], line: 3 },
      ],
    };
    expect(reference(utf16)).toEqual(expected);
    expect(read(utf16, [1, 2, 3])).toEqual(expected);
    expect(read(Buffer.from(`\ufeff${text}`), [1])).toEqual(expected);
  });

  it('reports malformed CSV at the line of the offending character', () => {
    expect(read(Buffer.from('a,b\n"x\ny"z,1\n'))).toEqual({
      error: {
        line: 3,
        message:
          'Invalid Closing Quote: got "z" instead of delimiter, record delimiter, trimable character (if activated) or comment',
      },
    });
    expect(read(Buffer.from('a,b\n1,2\n"open\n'))).toEqual({
      error: { line: 3, message: 'Quote Not Closed: the parsing is finished with an opening quote' },
    });
    expect(read(Buffer.from('a,b\n1,x"y\n'))).toEqual({
      error: { line: 2, message: 'Invalid Opening Quote: a quote is found on field 1, value is "x"' },
    });
  });
});
