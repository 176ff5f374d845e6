import { GraphQLError, Kind } from 'graphql';
import { formatDollars, usdToMicros } from '../src/billing/money.ts';
import { builder } from './builder.ts';

/**
 * Where the Money and Decimal formats are specified: a URL reference relative to the repository root
 * (docs/graphql.md, section "Scalars"), as no public page of this service is fixed at build time.
 */
const SCALARS_SPEC = 'docs/graphql.md#scalars';

builder.scalarType('DateTime', {
  description:
    'A point in time: an RFC 3339 timestamp in UTC with milliseconds, e.g. ' +
    '"2026-01-31T17:05:09.123Z". Input accepts any RFC 3339 timestamp with an offset.',
  specifiedByURL: 'https://scalars.graphql.org/andimarek/date-time',
  serialize: (value) => (value instanceof Date ? value.toISOString() : new Date(value).toISOString()),
  parseValue: (value) => {
    const date =
      typeof value === 'string' && /T.*(Z|[+-]\d\d:\d\d)$/i.test(value) ? new Date(value) : new Date(Number.NaN);
    if (Number.isNaN(date.getTime()))
      throw new GraphQLError('DateTime must be an RFC 3339 timestamp with an offset, e.g. "2026-01-31T17:05:09Z"');
    return date;
  },
});

const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * A dollar number as Money's decimal string: rounded to the micro-dollar as usdToMicros rounds it
 * (toFixed(6)), then trailing zeros dropped down to two decimals, without the round trip through
 * bigint micro-dollars (every run's cost and price are numbers: this runs for most Money fields).
 */
export function dollarsOfNumber(value: number): string {
  const fixed = value.toFixed(6);
  const point = fixed.length - 7;
  let end = fixed.length;
  while (end > point + 3 && fixed.charCodeAt(end - 1) === 48) end--;
  const text = fixed.slice(0, end);
  return text === '-0.00' ? '0.00' : text;
}

/** Micro-dollars, a decimal string or a dollar number (a run's costs) as Money's decimal string. */
export function moneyString(value: unknown): string {
  if (typeof value === 'bigint') return formatDollars(value);
  if (typeof value === 'number' && Math.abs(value) < 1e15) return dollarsOfNumber(value);
  if (typeof value === 'number' && Number.isFinite(value)) return formatDollars(usdToMicros(value));
  if (typeof value === 'string' && DECIMAL.test(value)) return formatDollars(usdToMicros(value));
  throw new GraphQLError(`Money cannot represent ${String(value)}`);
}

function parseMoney(value: unknown): string {
  if (typeof value !== 'string' || !/^-?\d+(\.\d{1,6})?$/.test(value)) {
    throw new GraphQLError(
      'Money must be a decimal string of US dollars with at most 6 decimals, e.g. "100" or "47.9961"',
    );
  }
  return value;
}

builder.scalarType('Money', {
  description:
    'An amount of US dollars as a decimal string, exact to the micro-dollar: at least 2 and at most 6 decimals ' +
    'in answers ("48.00", "47.9961"); inputs take a string with at most 6 decimals ("100", "0.5"). Never a float.',
  specifiedByURL: SCALARS_SPEC,
  serialize: moneyString,
  parseValue: parseMoney,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('Money must be a string, e.g. "100.00"');
    return parseMoney(ast.value);
  },
});

function parseDecimal(value: unknown): string {
  if (typeof value !== 'string' || !DECIMAL.test(value))
    throw new GraphQLError('Decimal must be a decimal string, e.g. "120" or "89.5"');
  return value;
}

builder.scalarType('Decimal', {
  description:
    'A decimal number as a string ("89.50"), for amounts in a currency other than US dollars; ' +
    'the currency is named beside it.',
  specifiedByURL: SCALARS_SPEC,
  serialize: (value) => {
    const text = typeof value === 'number' ? String(value) : value;
    if (typeof text !== 'string' || !/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text))
      throw new GraphQLError(`Decimal cannot represent ${String(value)}`);
    return text;
  },
  parseValue: parseDecimal,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('Decimal must be a string, e.g. "89.50"');
    return parseDecimal(ast.value);
  },
});

builder.scalarType('JSON', {
  description: 'Any JSON value: the input a run was started with (`Run.input`) or a saved task keeps (`Task.input`).',
  serialize: (value) => value,
  parseValue: (value) => value,
});
