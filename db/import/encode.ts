import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { CsvReader, CsvSyntaxError } from './csv.ts';
import type { Dataset } from './datasets.ts';
import { COPY_NULL, escapeCopy, Invalid, show, type Codec } from './kinds.ts';
import type { Rule } from './rules.ts';

export interface RowError {
  /** Physical line of the row in the file (1-based; a CSV header is line 1). */
  line: number;
  reason: string;
}

/** A problem with the file as a whole (header, CSV syntax): nothing can be loaded. */
export class FileError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/** Rows are handed to COPY in chunks of about this many characters. */
const BATCH_CHARS = 256 * 1024;

/**
 * How rows are written when they go straight into the dataset's table instead of the staging
 * table (a first load): no `line` column, references replaced by the referenced row's id, columns
 * copied from that row appended, and an empty cell of a column with a default written as that
 * default. Every value is already in COPY's text format.
 */
export interface DirectRows {
  /**
   * Per input column: the referenced rows by natural key, each as [id, ...copied values]; undefined for a plain column.
   */
  references: (Map<string, string[]> | undefined)[];
  /** Per input column: the default written for an empty cell, if the column has one. */
  defaults: (string | undefined)[];
  /**
   * Per copied column: the input column (a reference) it comes through,
   * and its place among that reference's values (after the id).
   */
  copied: { from: number; at: number }[];
  /** Per copied column: its value when the reference is empty. */
  copiedWithoutReference: string[];
}

/**
 * Turns parsed rows into lines for the staging table's COPY (`line`, the input columns, the computed
 * columns), validating every value on the way; bad rows are collected with their reasons.
 */
export class RowEncoder {
  /** Staging columns in COPY order. */
  readonly stagingColumns: string[];
  readonly errors: RowError[] = [];
  /** Data rows read (bad ones included). */
  rows = 0;
  /** Rows handed to COPY. */
  staged = 0;
  /** Rows refused because a reference names no row (direct rows only; also counted in `errors`). */
  badReferences = 0;

  private readonly names: string[];
  private readonly codecs: Codec[];
  /** Columns whose COPY text is the value itself unless it holds characters to escape. */
  private readonly plainText: boolean[];
  private readonly required: boolean[];
  private readonly rules: Rule[][];
  private readonly index: Map<string, number>;
  private readonly anyOf: { columns: number[]; reason: string }[];
  private readonly computed: { from: number[]; compute(parts: string[]): string }[];
  private readonly values: unknown[];
  private positions: number[] = [];
  private width = 0;
  /** Whether a CSV header has been read. */
  headerRead = false;

  /** With `direct`, rows are written for the dataset's table itself (see DirectRows), else for the staging table. */
  constructor(
    readonly dataset: Dataset,
    private readonly direct?: DirectRows,
  ) {
    const columns = dataset.columns;
    this.names = columns.map((c) => c.name);
    this.codecs = columns.map((c) => c.codec);
    this.plainText = this.codecs.map((codec) => codec.toCopy === escapeCopy);
    this.required = columns.map((c) => c.required);
    this.rules = columns.map((c) => c.rules);
    this.index = new Map(this.names.map((name, i) => [name, i]));
    this.anyOf = dataset.anyOf.map((group) => ({
      columns: group.map((name) => this.index.get(name)!),
      reason: `one of ${group.join(', ')} is required`,
    }));
    this.computed = dataset.computed.map((c) => ({
      from: c.from.map((name) => this.index.get(name)!),
      compute: c.compute,
    }));
    this.values = new Array(columns.length).fill(null);
    this.stagingColumns = ['line', ...this.names, ...dataset.computed.map((c) => c.name)];
  }

  /** Maps CSV header names to columns; throws a FileError listing every problem. */
  bindHeader(header: string[]): void {
    const names = header.map((name) => name.trim());
    const problems: string[] = [];
    const unknown = names.filter((name) => !this.index.has(name));
    if (unknown.length > 0) problems.push(`unknown columns: ${unknown.map((n) => n || '(empty)').join(', ')}`);
    const duplicated = [...new Set(names.filter((name, i) => names.indexOf(name) !== i))];
    if (duplicated.length > 0) problems.push(`duplicate columns: ${duplicated.join(', ')}`);
    const missing = this.names.filter((name, i) => this.required[i] && !names.includes(name));
    if (missing.length > 0) problems.push(`missing required columns: ${missing.join(', ')}`);
    for (const group of this.dataset.anyOf) {
      if (!group.some((name) => names.includes(name)))
        problems.push(`missing columns: one of ${group.join(', ')} is required`);
    }
    if (problems.length > 0) throw new FileError(1, problems.join('; '));
    this.positions = this.names.map((name) => names.indexOf(name));
    this.width = names.length;
    this.headerRead = true;
  }

  /**
   * One CSV record: the COPY line, or undefined when the row is bad. `plain`: no field holds a
   * character COPY escapes, so text values are written as they are.
   */
  fromFields(fields: string[], line: number, plain = false): string | undefined {
    this.rows += 1;
    if (fields.length !== this.width) {
      this.errors.push({ line, reason: `expected ${this.width} fields, found ${fields.length}` });
      return undefined;
    }
    let reasons: string[] | undefined;
    for (let i = 0; i < this.names.length; i++) {
      const position = this.positions[i]!;
      const raw = position < 0 ? '' : fields[position]!;
      reasons = this.accept(i, raw === '' ? null : this.codecs[i]!.fromCsv(raw), reasons);
    }
    return this.finish(line, reasons, plain);
  }

  /** One NDJSON object: the COPY line, or undefined when the row is bad. */
  fromObject(object: Record<string, unknown>, line: number): string | undefined {
    this.rows += 1;
    let reasons: string[] | undefined;
    let unknown: string[] | undefined;
    for (const key in object) if (!this.index.has(key)) (unknown ??= []).push(key);
    if (unknown) reasons = [`unknown columns: ${unknown.join(', ')}`];
    for (let i = 0; i < this.names.length; i++) {
      const value = object[this.names[i]!];
      reasons = this.accept(i, value === undefined || value === null ? null : this.codecs[i]!.fromJson(value), reasons);
    }
    return this.finish(line, reasons);
  }

  /** A row that could not be read at all. */
  reject(line: number, reason: string): void {
    this.rows += 1;
    this.errors.push({ line, reason });
  }

  private accept(i: number, value: unknown, reasons: string[] | undefined): string[] | undefined {
    this.values[i] = null;
    if (value instanceof Invalid) {
      (reasons ??= []).push(`${this.names[i]}: ${value.reason}`);
    } else if (value === null) {
      if (this.required[i]) (reasons ??= []).push(`${this.names[i]}: required`);
    } else {
      const rules = this.rules[i]!;
      for (let r = 0; r < rules.length; r++) {
        const reason = rules[r]!.check(value);
        if (reason !== undefined) {
          (reasons ??= []).push(`${this.names[i]}: ${reason}`);
          return reasons;
        }
      }
      this.values[i] = value;
    }
    return reasons;
  }

  private finish(line: number, reasons: string[] | undefined, plain = false): string | undefined {
    const values = this.values;
    for (const group of this.anyOf) {
      if (group.columns.every((i) => values[i] === null)) (reasons ??= []).push(group.reason);
    }
    if (reasons) {
      this.errors.push({ line, reason: reasons.join('; ') });
      return undefined;
    }
    if (this.direct) return this.finishDirect(line, plain);
    let out = String(line);
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      out +=
        value === null
          ? `\t${COPY_NULL}`
          : plain && this.plainText[i]
            ? `\t${value as string}`
            : `\t${this.codecs[i]!.toCopy(value)}`;
    }
    for (const c of this.computed) out += `\t${escapeCopy(c.compute(c.from.map((i) => values[i] as string)))}`;
    this.staged += 1;
    return `${out}\n`;
  }

  /** A valid row as a line for the table itself, or undefined when a reference names no row. */
  private finishDirect(line: number, plain: boolean): string | undefined {
    const { references, defaults, copied, copiedWithoutReference } = this.direct!;
    const values = this.values;
    const referenced: (string[] | undefined)[] = [];
    let out = '';
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (i > 0) out += '\t';
      const rows = references[i];
      if (rows !== undefined && value !== null) {
        const row = rows.get(value as string);
        if (row === undefined) {
          const ref = this.dataset.columns[i]!.reference!;
          this.errors.push({ line, reason: `${this.names[i]}: no ${ref.table} has ${ref.column} ${show(value)}` });
          this.badReferences += 1;
          return undefined;
        }
        referenced[i] = row;
        out += row[0]!;
      } else if (value === null) {
        out += defaults[i] ?? COPY_NULL;
      } else {
        out += plain && this.plainText[i] ? (value as string) : this.codecs[i]!.toCopy(value);
      }
    }
    for (const c of this.computed) out += `\t${escapeCopy(c.compute(c.from.map((i) => values[i] as string)))}`;
    for (let c = 0; c < copied.length; c++) {
      const { from, at } = copied[c]!;
      const row = referenced[from];
      out += `\t${row === undefined ? copiedWithoutReference[c]! : row[at]!}`;
    }
    this.staged += 1;
    return `${out}\n`;
  }
}

/**
 * A CSV file with a header row to staging COPY text. Records come from CsvReader as it reads each
 * chunk, so each is encoded synchronously and only batches of COPY text travel down the stream.
 * Malformed CSV fails the stream with a FileError at the offending line.
 */
export class CsvToCopy extends Transform {
  private header = true;
  private batch = '';
  private readonly reader = new CsvReader((fields, line, plain) => this.record(fields, line, plain));

  constructor(
    private readonly encoder: RowEncoder,
    private readonly onBatch: () => void = () => {},
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.reader.write(chunk);
      this.flush();
      callback();
    } catch (err) {
      callback(fileError(err));
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      this.reader.end();
      this.flush();
      callback();
    } catch (err) {
      callback(fileError(err));
    }
  }

  private record(fields: string[], line: number, plain: boolean): void {
    if (this.header) {
      this.header = false;
      this.encoder.bindHeader(fields);
      return;
    }
    const out = this.encoder.fromFields(fields, line, plain);
    if (out !== undefined) {
      this.batch += out;
      if (this.batch.length >= BATCH_CHARS) this.flush();
    }
  }

  private flush(): void {
    if (this.batch.length > 0) {
      this.push(this.batch);
      this.batch = '';
    }
    this.onBatch();
  }
}

function fileError(err: unknown): Error {
  return err instanceof CsvSyntaxError ? new FileError(err.line, `malformed CSV: ${err.message}`) : (err as Error);
}

/** NDJSON (one JSON object per line; blank lines ignored) to staging COPY text. */
export class NdjsonToCopy extends Transform {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';
  private line = 0;
  private batch = '';

  constructor(
    private readonly encoder: RowEncoder,
    private readonly onBatch: () => void = () => {},
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const text = this.rest + this.decoder.write(chunk);
    let start = 0;
    for (let end = text.indexOf('\n', start); end !== -1; end = text.indexOf('\n', start)) {
      this.row(text.slice(start, end));
      start = end + 1;
    }
    this.rest = text.slice(start);
    this.flush();
    callback();
  }

  override _flush(callback: TransformCallback): void {
    const tail = this.rest + this.decoder.end();
    if (tail !== '') this.row(tail);
    this.flush();
    callback();
  }

  private row(text: string): void {
    this.line += 1;
    if (this.line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === '') return;
    let object: unknown;
    try {
      object = JSON.parse(text);
    } catch (err) {
      this.encoder.reject(this.line, `not valid JSON (${(err as Error).message})`);
      return;
    }
    if (typeof object !== 'object' || object === null || Array.isArray(object)) {
      this.encoder.reject(this.line, 'expected a JSON object');
      return;
    }
    const out = this.encoder.fromObject(object as Record<string, unknown>, this.line);
    if (out !== undefined) {
      this.batch += out;
      if (this.batch.length >= BATCH_CHARS) this.flush();
    }
  }

  private flush(): void {
    if (this.batch.length > 0) {
      this.push(this.batch);
      this.batch = '';
    }
    this.onBatch();
  }
}
