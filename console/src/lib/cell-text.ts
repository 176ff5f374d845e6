import { sentence } from './format.ts';

/**
 * Values that are not one piece of text, as the console's cells read them (cells.tsx draws them): a list
 * of objects (contacts, reviews, a property's schools) is a nested list of rows, with every field any of
 * its items has; `cellText` is any value as plain text, for a title or a CSV.
 */

export type Item = Record<string, unknown>;

/** A field's name in words: `fullName` and `full_name` “Full name”. */
export const words = (field: string) => sentence(field.replace(/([a-z0-9])([A-Z])/g, '$1_$2'));

export const isItem = (value: unknown): value is Item =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a value is a list of objects (shown as nested rows). */
export const isNestedList = (value: unknown): value is Item[] =>
  Array.isArray(value) && value.length > 0 && value.every(isItem);

/** The fields of a nested list's items, in the order they first appear; `__typename` (urql's) left out. */
export function nestedFields(items: readonly Item[]): string[] {
  const fields = new Set<string>();
  for (const item of items) for (const key of Object.keys(item)) if (key !== '__typename') fields.add(key);
  return [...fields];
}

/**
 * A value as plain text: scalars as written (a code through `codes`, where its column declares words),
 * yes/no, lists joined with “; ”, an object's fields `name: value`.
 */
export function cellText(value: unknown, codes?: Readonly<Record<string, string>>): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (Array.isArray(value)) return value.map((v) => cellText(v, codes)).join('; ');
  if (isItem(value))
    return nestedFields([value])
      .map((k) => `${words(k)}: ${cellText(value[k])}`)
      .filter((text) => !text.endsWith(': '))
      .join(', ');
  if (typeof value === 'string') return codes?.[value] ?? value;
  return String(value);
}

/**
 * A list of objects as a table's header and rows: one row per item, one column per field (headed in
 * words, or by `headers`), each cell its text.
 */
export function nestedTable(
  items: readonly Item[],
  headers: Readonly<Record<string, string>> = {},
): { head: string[]; body: string[][] } {
  const fields = nestedFields(items);
  return {
    head: fields.map((f) => headers[f] ?? words(f)),
    body: items.map((item) => fields.map((f) => cellText(item[f]))),
  };
}
