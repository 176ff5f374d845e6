import type { z } from 'zod';
import { show } from './kinds.ts';

/** A check on a parsed, non-null value: returns the reason when the value breaks it. */
export interface Rule {
  /** One line for docs/datasets.md. */
  readonly doc: string;
  /** A long list of allowed values, printed under the dataset's table in the docs. */
  readonly listing?: { label: string; values: readonly string[] };
  check(value: unknown): string | undefined;
}

export function pattern(re: RegExp, doc: string, what: string): Rule {
  // Files repeat values row after row (a person's company domain): the last value that passed is
  // remembered, so a repeat costs a comparison instead of a match.
  let passed: string | undefined;
  return {
    doc,
    check: (value: string) => {
      if (value === passed) return undefined;
      if (!re.test(value)) return `${show(value)} is not ${what}`;
      passed = value;
      return undefined;
    },
  };
}

/** One of `values`; a long list is named by `label` in reasons and docs instead of being spelled out. */
export function oneOf(values: readonly string[], label?: string): Rule {
  const allowed = new Set(values);
  const listed = values.map((v) => `\`${v}\``).join(', ');
  const expected = label ? `a known ${label}` : `one of ${values.join(', ')}`;
  return {
    doc: label ? `a known ${label} (${values.length} values, listed below)` : `one of ${listed}`,
    listing: label ? { label, values } : undefined,
    check: (value: string) => (allowed.has(value) ? undefined : `${show(value)} is not ${expected}`),
  };
}

export function range(min: number, max: number): Rule {
  return {
    doc: max === Infinity ? `at least ${min}` : `${min} to ${max}`,
    check: (value: number) =>
      value >= min && value <= max
        ? undefined
        : `${value} is not ${max === Infinity ? `at least ${min}` : `between ${min} and ${max}`}`,
  };
}

/** Applies `rule` to every item of a list. */
export function each(rule: Rule): Rule {
  return {
    doc: `each item: ${rule.doc}`,
    check: (value: string[]) => {
      for (const item of value) {
        const reason = rule.check(item);
        if (reason !== undefined) return reason;
      }
      return undefined;
    },
  };
}

/** A JSON value matching a zod schema (compiled once). */
export function shaped(schema: z.ZodType, doc: string): Rule {
  return {
    doc,
    check: (value: unknown) => {
      const parsed = schema.safeParse(value);
      if (parsed.success) return undefined;
      const [issue] = parsed.error.issues;
      if (!issue) return `not ${doc}`;
      const where = issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
      return `not ${doc}${where}: ${issue.message}`;
    },
  };
}

export const email = pattern(/^[^\s@]+@[^\s@]+\.[^\s@.]+$/, 'an email address (name@domain.tld)', 'an email address');
export const url = pattern(/^https?:\/\/[^\s/?#]+\.[^\s]*$/i, 'an http(s) URL', 'an http(s) URL');
export const domain = pattern(
  /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/,
  'a lower-case host name without scheme or path, e.g. `acme.com`',
  'a lower-case host name such as acme.com',
);
export const countryCode = pattern(
  /^[A-Z]{2}$/,
  'two-letter country code, upper case (ISO 3166-1 alpha-2)',
  'a two-letter upper-case country code',
);
export const stateCode = pattern(
  /^[A-Z]{2}$/,
  'two-letter state code, upper case',
  'a two-letter upper-case state code',
);
export const currencyCode = pattern(
  /^[A-Z]{3}$/,
  'three-letter currency code, upper case (ISO 4217)',
  'a three-letter upper-case currency code',
);
export const latitude = range(-90, 90);
export const longitude = range(-180, 180);
export const nonNegative = range(0, Infinity);
export const year = range(1000, 2100);
