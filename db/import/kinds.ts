import type { PgColumn } from 'drizzle-orm/pg-core';

/** A value that failed to parse or a rule; carries the reason reported for the row. */
export class Invalid {
  constructor(readonly reason: string) {}
}

/** How the values of one column type are read (CSV text or JSON) and written to COPY's text format. */
export interface Codec {
  /** Postgres type of the column (and of its staging column). */
  readonly sqlType: string;
  /** How a value is written in a CSV cell. */
  readonly csvDoc: string;
  /** Parses a non-empty CSV cell. */
  fromCsv(raw: string): unknown;
  /** Checks a non-null NDJSON value. */
  fromJson(value: unknown): unknown;
  /** Encodes a parsed, non-null value as a COPY text-format field. */
  toCopy(value: unknown): string;
}

export const COPY_NULL = '\\N';
const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIAL_ALL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Escapes text for COPY's text format (backslash, tab, newline, carriage return). */
export function escapeCopy(text: string): string {
  return COPY_SPECIAL.test(text) ? text.replace(COPY_SPECIAL_ALL, (c) => COPY_ESCAPES[c] ?? c) : text;
}

/** Shows a rejected value in a reason, shortened. */
export function show(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  const short = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return typeof value === 'string' ? JSON.stringify(short) : short;
}

const NUL = '\u0000';
const SURROGATE = /[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why Postgres would refuse a string (NUL, or a lone surrogate from a JSON escape), or undefined. */
function textProblem(text: string): string | undefined {
  if (text.includes(NUL)) return 'contains a NUL character';
  if (SURROGATE.test(text) && LONE_SURROGATE.test(text)) return 'contains an unpaired surrogate (invalid Unicode)';
  return undefined;
}

function checkText(text: string): string | Invalid {
  const problem = textProblem(text);
  return problem === undefined ? text : new Invalid(problem);
}

/** CSV cells come from UTF-8 bytes, so only NUL needs checking; JSON strings may hold any escape. */
const text: Codec = {
  sqlType: 'text',
  csvDoc: 'as is',
  fromCsv: (raw) => (raw.includes(NUL) ? new Invalid('contains a NUL character') : raw),
  fromJson: (value) =>
    typeof value === 'string' ? checkText(value) : new Invalid(`expected a string, got ${show(value)}`),
  toCopy: escapeCopy,
};

const INTEGER = /^[+-]?\d+$/;

function integer(sqlType: string, min: number, max: number): Codec {
  const check = (n: number, shown: unknown) =>
    n >= min && n <= max ? n : new Invalid(`${show(shown)} is out of range for ${sqlType} (${min} to ${max})`);
  return {
    sqlType,
    csvDoc: 'whole number, e.g. 42',
    fromCsv: (raw) =>
      INTEGER.test(raw) ? check(Number(raw), raw) : new Invalid(`expected a whole number, got ${show(raw)}`),
    fromJson: (value) =>
      typeof value === 'number' && Number.isInteger(value)
        ? check(value, value)
        : new Invalid(`expected a whole number, got ${show(value)}`),
    toCopy: String,
  };
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const FLOAT4_MAX = 3.4028234663852886e38;

function float(sqlType: 'real' | 'double precision'): Codec {
  const check = (n: number, shown: unknown) => {
    if (!Number.isFinite(n)) return new Invalid(`${show(shown)} is out of range for ${sqlType}`);
    if (sqlType === 'real' && (Math.abs(n) > FLOAT4_MAX || (n !== 0 && Math.fround(n) === 0))) {
      return new Invalid(`${show(shown)} is out of range for real`);
    }
    if (n === 0 && /[1-9]/.test(String(shown).split(/[eE]/)[0] ?? ''))
      return new Invalid(`${show(shown)} is out of range for ${sqlType}`);
    return n;
  };
  return {
    sqlType,
    csvDoc: 'decimal number, e.g. 4.5 or -104.99',
    fromCsv: (raw) =>
      DECIMAL.test(raw) ? check(Number(raw), raw) : new Invalid(`expected a number, got ${show(raw)}`),
    fromJson: (value) =>
      typeof value === 'number' ? check(value, value) : new Invalid(`expected a number, got ${show(value)}`),
    toCopy: String,
  };
}

function numeric(precision: number, scale: number): Codec {
  const sqlType = `numeric(${precision}, ${scale})`;
  const shape = new RegExp(`^[+-]?\\d+(?:\\.\\d{1,${scale}})?$`);
  const maxWhole = precision - scale;
  const check = (textual: string, shown: unknown) => {
    if (!shape.test(textual))
      return new Invalid(`expected a number with at most ${scale} decimals, got ${show(shown)}`);
    const whole = (textual.replace(/^[+-]/, '').split('.')[0] ?? '').replace(/^0+/, '');
    if (whole.length > maxWhole) return new Invalid(`${show(shown)} is out of range for ${sqlType}`);
    return Number(textual);
  };
  return {
    sqlType,
    csvDoc: `decimal number with at most ${scale} decimals, e.g. 129.50`,
    fromCsv: (raw) => check(raw, raw),
    fromJson: (value) =>
      typeof value === 'number' ? check(String(value), value) : new Invalid(`expected a number, got ${show(value)}`),
    toCopy: String,
  };
}

const TRUE_WORDS = new Set(['true', '1', 'yes']);
const FALSE_WORDS = new Set(['false', '0', 'no']);

const boolean: Codec = {
  sqlType: 'boolean',
  csvDoc: 'true/false, 1/0 or yes/no',
  fromCsv: (raw) => {
    const word = raw.toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
    return new Invalid(`expected true/false, 1/0 or yes/no, got ${show(raw)}`);
  },
  fromJson: (value) => (typeof value === 'boolean' ? value : new Invalid(`expected true or false, got ${show(value)}`)),
  toCopy: (value: boolean) => (value ? 't' : 'f'),
};

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function parseDate(value: string): string | Invalid {
  const m = DATE.exec(value);
  if (m) {
    const year = Number(m[1]);
    const month = Number(m[2]);
    const day = Number(m[3]);
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    if (
      year >= 1 &&
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= (month === 2 && leap ? 29 : (DAYS[month - 1] ?? 0))
    )
      return value;
  }
  return new Invalid(`expected a date as YYYY-MM-DD, got ${show(value)}`);
}

const date: Codec = {
  sqlType: 'date',
  csvDoc: 'YYYY-MM-DD',
  fromCsv: parseDate,
  fromJson: (value) =>
    typeof value === 'string'
      ? parseDate(value)
      : new Invalid(`expected a date string as YYYY-MM-DD, got ${show(value)}`),
  toCopy: String,
};

/** The first string (or key) Postgres would refuse inside a JSON value. */
function jsonProblem(value: unknown): string | undefined {
  if (typeof value === 'string') return textProblem(value);
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = jsonProblem(item);
      if (problem !== undefined) return problem;
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const problem = textProblem(key) ?? jsonProblem(item);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

function checkJson(value: unknown): unknown {
  const problem = jsonProblem(value);
  return problem === undefined ? value : new Invalid(problem);
}

function json(sqlType: 'json' | 'jsonb'): Codec {
  return {
    sqlType,
    csvDoc: 'JSON text',
    fromCsv: (raw) => {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (err) {
        return new Invalid(`not valid JSON (${(err as Error).message})`);
      }
      return value === null ? null : checkJson(value);
    },
    fromJson: checkJson,
    toCopy: (value: unknown) => escapeCopy(JSON.stringify(value)),
  };
}

function checkList(value: unknown): string[] | Invalid {
  if (!Array.isArray(value)) return new Invalid(`expected a list of strings, got ${show(value)}`);
  for (const item of value) {
    if (typeof item !== 'string') return new Invalid(`expected a list of strings, got an item ${show(item)}`);
    const problem = textProblem(item);
    if (problem !== undefined) return new Invalid(problem);
  }
  return value as string[];
}

const LIST_ITEM_SPECIAL = /["\\]/g;
const listItem = (item: string) => `"${item.replace(LIST_ITEM_SPECIAL, (c) => `\\${c}`)}"`;

const textList: Codec = {
  sqlType: 'text[]',
  csvDoc: 'items separated by `; `, or a JSON array',
  fromCsv: (raw) => {
    if (raw.startsWith('[')) {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (err) {
        return new Invalid(`not a valid JSON array (${(err as Error).message})`);
      }
      return checkList(value);
    }
    const items: string[] = [];
    for (const part of raw.split(';')) {
      const item = part.trim();
      if (item !== '') items.push(item);
    }
    return checkList(items);
  },
  fromJson: checkList,
  toCopy: (value: string[]) => escapeCopy(`{${value.map(listItem).join(',')}}`),
};

/** Ranges of Postgres integer types; bigint columns are read as JS numbers, so they stop at 2^53. */
const INT_TYPES: Record<string, [number, number]> = {
  smallint: [-32768, 32767],
  integer: [-2147483648, 2147483647],
  bigint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** The codec of a drizzle column, from its SQL type; unknown types are refused so a schema change is noticed. */
export function codecFor(column: PgColumn): Codec {
  const sqlType = column.getSQLType();
  if (sqlType === 'text' || sqlType.startsWith('varchar') || sqlType.startsWith('char')) return { ...text, sqlType };
  const bounds = INT_TYPES[sqlType];
  if (bounds) return integer(sqlType, ...bounds);
  if (sqlType === 'real' || sqlType === 'double precision') return float(sqlType);
  const decimal = /^numeric\((\d+), ?(\d+)\)$/.exec(sqlType);
  if (decimal) return numeric(Number(decimal[1]), Number(decimal[2]));
  if (sqlType === 'boolean') return boolean;
  if (sqlType === 'date') return date;
  if (sqlType === 'json' || sqlType === 'jsonb') return json(sqlType);
  if (sqlType === 'text[]') return textList;
  throw new Error(`column ${column.name}: no import codec for type ${sqlType}`);
}
