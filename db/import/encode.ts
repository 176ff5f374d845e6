import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { CsvReader, CsvSyntaxError } from './csv.ts';
import type { Dataset, ImportColumn } from './datasets.ts';
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

/** `list` with `item` added: the list itself, or a new one for the first item. */
function adding(list: string[] | undefined, item: string): string[] {
  if (!list) return [item];
  list.push(item);
  return list;
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
  references: (Map<string, [string, ...string[]]> | undefined)[];
  /** Per input column: the default written for an empty cell, if the column has one. */
  defaults: (string | undefined)[];
  /**
   * Per copied column: the input column (a reference) it comes through, its place among that
   * reference's values (after the id), and its value when the reference is empty.
   */
  copied: { from: number; at: number; withoutReference: string }[];
}

/** What the encoder knows of an input column. */
interface ColumnEncoding {
  name: string;
  codec: Codec;
  /** The COPY text is the value itself unless it holds characters to escape. */
  plainText: boolean;
  required: boolean;
  rules: Rule[];
  reference: ImportColumn['reference'];
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
  /** The input columns, in the dataset's order (the order of `values`). */
  private readonly columns: ColumnEncoding[];
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
    this.columns = columns.map(({ name, codec, required, rules, reference }) => ({
      name,
      codec,
      plainText: codec.toCopy === escapeCopy,
      required,
      rules,
      reference,
    }));
    const index = new Map(this.names.map((name, i) => [name, i]));
    this.index = index;
    const indexOf = (name: string) => {
      const i = index.get(name);
      if (i === undefined) throw new Error(`the ${dataset.name} dataset names an unknown column, ${name}`);
      return i;
    };
    this.anyOf = dataset.anyOf.map((group) => ({
      columns: group.map(indexOf),
      reason: `one of ${group.join(', ')} is required`,
    }));
    this.computed = dataset.computed.map((c) => ({ from: c.from.map(indexOf), compute: c.compute }));
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
    const missing = this.columns.filter((c) => c.required && !names.includes(c.name)).map((c) => c.name);
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
    let i = 0;
    for (const column of this.columns) {
      // A column missing from the header reads as empty; `fields` has the header's width (checked above).
      const position = this.positions[i] ?? -1;
      const raw = position < 0 ? '' : (fields[position] ?? '');
      reasons = this.accept(i, column, raw === '' ? null : column.codec.fromCsv(raw), reasons);
      i += 1;
    }
    return this.finish(line, reasons, plain);
  }

  /** One NDJSON object: the COPY line, or undefined when the row is bad. */
  fromObject(object: Record<string, unknown>, line: number): string | undefined {
    this.rows += 1;
    let reasons: string[] | undefined;
    let unknown: string[] | undefined;
    for (const key in object) if (!this.index.has(key)) unknown = adding(unknown, key);
    if (unknown) reasons = [`unknown columns: ${unknown.join(', ')}`];
    let i = 0;
    for (const column of this.columns) {
      const value = object[column.name];
      reasons = this.accept(
        i,
        column,
        value === undefined || value === null ? null : column.codec.fromJson(value),
        reasons,
      );
      i += 1;
    }
    return this.finish(line, reasons);
  }

  /** A row that could not be read at all. */
  reject(line: number, reason: string): void {
    this.rows += 1;
    this.errors.push({ line, reason });
  }

  /** Takes the value of the `i`th column, `column`; a bad one adds its reason to `reasons`. */
  private accept(
    i: number,
    column: ColumnEncoding,
    value: unknown,
    reasons: string[] | undefined,
  ): string[] | undefined {
    this.values[i] = null;
    if (value instanceof Invalid) {
      reasons = adding(reasons, `${column.name}: ${value.reason}`);
    } else if (value === null) {
      if (column.required) reasons = adding(reasons, `${column.name}: required`);
    } else {
      for (const rule of column.rules) {
        const reason = rule.check(value);
        if (reason !== undefined) {
          return adding(reasons, `${column.name}: ${reason}`);
        }
      }
      this.values[i] = value;
    }
    return reasons;
  }

  private finish(line: number, reasons: string[] | undefined, plain = false): string | undefined {
    const values = this.values;
    for (const group of this.anyOf) {
      if (group.columns.every((i) => values[i] === null)) reasons = adding(reasons, group.reason);
    }
    if (reasons) {
      this.errors.push({ line, reason: reasons.join('; ') });
      return undefined;
    }
    if (this.direct) return this.finishDirect(this.direct, line, plain);
    let out = String(line);
    let i = 0;
    for (const column of this.columns) {
      const value = values[i++];
      out +=
        value === null
          ? `\t${COPY_NULL}`
          : plain && column.plainText
            ? `\t${value as string}`
            : `\t${column.codec.toCopy(value)}`;
    }
    for (const c of this.computed) out += `\t${escapeCopy(c.compute(c.from.map((i) => values[i] as string)))}`;
    this.staged += 1;
    return `${out}\n`;
  }

  /** A valid row as a line for the table itself, or undefined when a reference names no row. */
  private finishDirect(direct: DirectRows, line: number, plain: boolean): string | undefined {
    const { references, defaults, copied } = direct;
    const values = this.values;
    const referenced: (string[] | undefined)[] = [];
    let out = '';
    let i = 0;
    for (const column of this.columns) {
      const value = values[i];
      if (i > 0) out += '\t';
      const rows = references[i];
      const ref = column.reference;
      if (rows !== undefined && ref !== undefined && value !== null) {
        const row = rows.get(value as string);
        if (row === undefined) {
          this.errors.push({ line, reason: `${column.name}: no ${ref.table} has ${ref.column} ${show(value)}` });
          this.badReferences += 1;
          return undefined;
        }
        referenced[i] = row;
        out += row[0];
      } else if (value === null) {
        out += defaults[i] ?? COPY_NULL;
      } else {
        out += plain && column.plainText ? (value as string) : column.codec.toCopy(value);
      }
      i += 1;
    }
    for (const c of this.computed) out += `\t${escapeCopy(c.compute(c.from.map((i) => values[i] as string)))}`;
    for (const { from, at, withoutReference } of copied) {
      const row = referenced[from];
      // A copied value missing from the referenced row (none is: it was read with it) is written as NULL.
      out += `\t${row === undefined ? withoutReference : (row[at] ?? COPY_NULL)}`;
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
